"""kb.fx's translation of attention.

    F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p=0,
        is_causal, scale)              -> kb.attention (an additive float
                                          mask; is_causal -> causal; scale
                                          None -> 1/sqrt(D), as PyTorch)
    q @ k.transpose(-2, -1) of rank 4 and more (and the @ v after the
    softmax)                          -> kb.matmul on the leading axes
                                          flattened (batched_matmul), so the
                                          explicit spelling imports and
                                          kb-fuse-attention makes it one
                                          kb.attention

dropout_p != 0, enable_gqa and a boolean mask are refused with the reason.
"""

from __future__ import annotations

import math

from .fx_trace import _torch


def _sdpa():
    """F.scaled_dot_product_attention, or None (PyTorch before 2.0)."""
    return getattr(_torch().nn.functional, "scaled_dot_product_attention", None)


def check_masks(gm, placeholders, example_inputs):
    """A boolean attn_mask given as an input: refused before the generic
    check of the inputs' types, with the reason."""
    from .ir import KbError
    torch = _torch()
    inputs, sdpa = dict(zip(placeholders, example_inputs)), _sdpa()
    for n in gm.graph.nodes:
        if sdpa is not None and n.op == "call_function" and n.target is sdpa:
            m = n.args[3] if len(n.args) > 3 else n.kwargs.get("attn_mask")
            if m in inputs and inputs[m].dtype == torch.bool:
                raise KbError(f"scaled_dot_product_attention with a boolean attn_mask ({m.name}): "
                              "kb takes an additive float mask (torch.where(mask, 0.0, -inf))")


def _flat3(imp, x):
    """x read with its leading axes flattened into one ([..., R, C] -> [B, R, C])."""
    shape = (math.prod(x.shape[:-2]),) + tuple(x.shape[-2:])
    if x.value is not None and x.transposed is None and x.source is None and x.value.shape == shape:
        return x.value
    return imp.read(x, shape)


def batched_matmul(imp, a, b):
    """a @ b of one rank >= 4 and equal leading axes, as a batched kb.matmul
    (b lazily transposed: transpose_b); anything else fails as before."""
    ra, rb = len(a.shape), len(b.shape)
    if ra != rb or ra < 4 or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        imp.fail(f"matmul of rank {ra} by rank {rb} ({a.shape} @ {b.shape}); kb multiplies 2-D by 2-D, "
                 "3-D by 3-D, N-D by 2-D and N-D by N-D with equal leading axes")
    av = _flat3(imp, a)
    if b.transposed is not None:
        y = imp.mm(av, _flat3(imp, b.transposed), transpose_b=True)
    else:
        y = imp.mm(av, _flat3(imp, b))
    return imp.result(y, a.shape[:-1] + (b.shape[-1],))


def call_function(imp, t, args, kwargs):
    """kb.attention for F.scaled_dot_product_attention, or None for another
    function."""
    if _sdpa() is None or t is not _sdpa():
        return None
    from .fx import KVal
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale")
    a = dict(zip(names, args))
    a.update(kwargs)
    q, k, v = a.get("query"), a.get("key"), a.get("value")
    mask, causal, scale = a.get("attn_mask"), bool(a.get("is_causal", False)), a.get("scale")
    if any(not isinstance(x, KVal) for x in (q, k, v)):
        imp.fail("scaled_dot_product_attention of a non-tensor q, k or v")
    if float(a.get("dropout_p", 0.0) or 0.0) != 0.0:
        imp.fail(f"scaled_dot_product_attention with dropout_p={a['dropout_p']} (kb.attention has no dropout)")
    if a.get("enable_gqa"):
        imp.fail("scaled_dot_product_attention with enable_gqa (kb.attention needs as many k/v heads as q heads)")
    if len(q.shape) not in (3, 4) or len(k.shape) != len(q.shape) or len(v.shape) != len(q.shape):
        imp.fail(f"scaled_dot_product_attention of shapes {q.shape}, {k.shape}, {v.shape} "
                 "(kb.attention takes q, k, v of one rank, 3 or 4)")
    if k.shape[:-2] != q.shape[:-2] or v.shape[:-2] != q.shape[:-2]:
        imp.fail(f"scaled_dot_product_attention of shapes {q.shape}, {k.shape}, {v.shape} "
                 "(kb does not broadcast the leading axes)")
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    qv, kv, vv = (imp.read(x, x.shape) for x in (q, k, v))
    mv = None
    if mask is not None:
        if not isinstance(mask, KVal):
            imp.fail("scaled_dot_product_attention with a non-tensor attn_mask")
        real = imp.real_result(imp.node.args[3] if len(imp.node.args) > 3 else imp.node.kwargs["attn_mask"])
        if real.dtype == _torch().bool:
            imp.fail("scaled_dot_product_attention with a boolean attn_mask "
                     "(kb takes an additive float mask: torch.where(mask, 0.0, -inf))")
        sq, sk = q.shape[-2], k.shape[-2]
        if tuple(mask.shape) not in ((sq, sk), tuple(q.shape[:-2]) + (sq, sk)):
            imp.fail(f"scaled_dot_product_attention with an attn_mask of shape {mask.shape} "
                     f"(kb takes {(sq, sk)} or {tuple(q.shape[:-2]) + (sq, sk)})")
        if mask.value is not None and mask.value.dtype != qv.dtype or (
                mask.source is not None and mask.source_dtype != qv.dtype):
            mask = imp.convert(mask, {"f32": _torch().float32, "f16": _torch().float16,
                                      "bf16": _torch().bfloat16}[qv.dtype])
        mv = imp.read(mask, mask.shape)
    # tf32x3 asks for near-f32 accuracy: kb.attention's closest is ieee.
    prec = None if qv.dtype != "f32" else ("tf32" if imp.precision == "tf32" else "ieee")
    out = imp.prog.attention(qv, kv, vv, scale, mask=mv, causal=causal, precision=prec)
    return imp.result(out, tuple(q.shape[:-1]) + (v.shape[-1],))
