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

    x.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), -inf) and
    its spellings (== 0, .triu(1))    -> kb.causal_mask (fold_causal_masks,
                                          run by kb.partition, puts
                                          causal_fill in its place), so a
                                          GPT-2 block's hand-written causal
                                          attention becomes one kb.attention

    x.view(B, T, H, D).transpose(1, 2) as q, k and v, and the result's
    .transpose(1, 2)                  -> kb.attention bthd: q, k, v and the
                                          result [B, T, H, D], no copy
                                          (issue #47; a lazy KVal.heads)

dropout_p != 0, enable_gqa and a boolean mask are refused with the reason.
"""

from __future__ import annotations

import math

from .fx_trace import _torch, torch_dtype_of


def _sdpa():
    """F.scaled_dot_product_attention, or None (PyTorch before 2.0)."""
    return getattr(_torch().nn.functional, "scaled_dot_product_attention", None)


def causal_fill(x):
    """x with -inf above the diagonal of its last two axes (query i sees keys
    j <= i, top-left aligned as PyTorch's is_causal): what fold_causal_masks
    puts in place of a masked_fill by a causal mask the program builds; kb
    imports it as kb.causal_mask, PyTorch runs it as this masked_fill."""
    torch = _torch()
    r, c = x.shape[-2], x.shape[-1]
    return x.masked_fill(torch.ones(r, c, dtype=torch.bool, device=x.device).triu(1),
                         float("-inf"))


def _arg(n, i, name, default=None):
    return n.args[i] if len(n.args) > i else n.kwargs.get(name, default)


def _is(n, fn=None, method=None):
    """Whether `n` is an fx node calling function `fn` or method `method`
    (False for a non-node argument)."""
    return hasattr(n, "op") and (
        (fn is not None and n.op == "call_function" and n.target is fn)
        or (method is not None and n.op == "call_method" and n.target == method))


def _tri(n, which):
    """The ones matrix of torch.ones(a, b).tril() / .triu(d) (which: "tril"
    or "triu"), with its diagonal, or (None, None)."""
    torch = _torch()
    if not (_is(n, getattr(torch, which), which)):
        return None, None
    ones, diag = n.args[0], _arg(n, 1, "diagonal", 0)
    if not hasattr(ones, "op") or not _is(ones, torch.ones):
        return None, None
    return ones, diag


def _causal_mask_of(m):
    """Whether node `m` computes the strict upper triangle of a ones matrix
    (what a causal masked_fill hides), from constants and sizes only:
    ~ones(T, T).tril(), ones(T, T).tril() == 0, ones(T, T).triu(1); the ones
    node, else None."""
    import operator
    torch = _torch()
    if (_is(m, operator.invert, "__invert__") or _is(m, torch.logical_not, "logical_not")
            or _is(m, torch.bitwise_not, "bitwise_not")):
        ones, diag = _tri(m.args[0], "tril") if hasattr(m.args[0], "op") else (None, None)
        return ones if diag == 0 else None
    if _is(m, operator.eq, "eq") or _is(m, torch.eq, "__eq__"):
        a, b = m.args[0], m.args[1]
        if hasattr(a, "op") and b == 0:
            ones, diag = _tri(a, "tril")
            return ones if diag == 0 else None
        return None
    ones, diag = _tri(m, "triu")
    return ones if diag == 1 else None


def replace_with_call(gm, n, fn, args, kwargs=None):
    """Puts fn(*args, **kwargs) in n's place (before it, with n's meta: its
    example value) and erases n; returns the new node."""
    with gm.graph.inserting_before(n):
        r = gm.graph.call_function(fn, tuple(args), dict(kwargs or {}))
    r.meta = dict(n.meta)
    n.replace_all_uses_with(r)
    gm.graph.erase_node(n)
    return r


def recompiled(gm, done: int) -> int:
    """After a fold's `done` rewrites: the replaced nodes' inputs go as dead
    code and gm's code is regenerated (nothing where none); returns done."""
    if done:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return done


def fold_causal_masks(gm) -> int:
    """Puts causal_fill(x) in place of each x.masked_fill(mask, -inf) whose
    mask is a causal one built inside the program (_causal_mask_of) at x's
    last two axes (by the nodes' example values, meta["example_value"]);
    returns how many. The mask's nodes go as dead code."""
    torch = _torch()
    done = 0
    for n in list(gm.graph.nodes):
        if not (_is(n, torch.masked_fill, "masked_fill") or _is(n, torch.Tensor.masked_fill)):
            continue
        x, m, fill = n.args[0], _arg(n, 1, "mask"), _arg(n, 2, "value")
        if not (hasattr(m, "op") and isinstance(fill, float) and fill == float("-inf")):
            continue
        ones = _causal_mask_of(m)
        xv, mv = x.meta.get("example_value"), m.meta.get("example_value")
        if ones is None or not isinstance(xv, torch.Tensor) or not isinstance(mv, torch.Tensor):
            continue
        if xv.dim() < 2 or mv.dim() != 2 or [str(d) for d in mv.shape] != [str(d) for d in xv.shape[-2:]]:
            continue
        replace_with_call(gm, n, causal_fill, (x,))
        done += 1
    return recompiled(gm, done)


def _heads_transpose(n):
    """Whether n is x.transpose(1, 2) of a rank-4 x (by its example value)."""
    torch = _torch()
    ev = n.meta.get("example_value") if hasattr(n, "meta") else None
    return (_is(n, None, "transpose") and tuple(n.args[1:]) in ((1, 2), (2, 1))
            and isinstance(ev, torch.Tensor) and ev.dim() == 4)


def fold_explicit_attention(gm) -> int:
    """Puts F.scaled_dot_product_attention(q, k, v, is_causal, scale) in
    place of the written-out softmax(q @ k.transpose(-2, -1) * c
    [causal_fill]) @ v (GPT2Block's default) where q, k and v are all heads'
    transpose(1, 2) of rank-4 tensors and each step has one user: the SDPA
    then imports as kb.attention bthd with those transposes folded (what
    kb-fuse-attention would make of the matmuls, without the copies in
    front). Returns how many; the replaced nodes go as dead code."""
    import operator
    torch, sdpa, done = _torch(), _sdpa(), 0
    # The SDPA put in place passes scale=, which PyTorch has since 2.1.
    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    if sdpa is None or (major, minor) < (2, 1):
        return 0
    F = torch.nn.functional

    def one_user(n):
        return hasattr(n, "op") and len(n.users) == 1

    for n in list(gm.graph.nodes):
        if not (_is(n, operator.matmul, "matmul") or _is(n, torch.matmul)) or len(n.args) != 2:
            continue
        p, v = n.args
        # F.softmax(input, dim, _stacklevel, dtype); torch.softmax and the
        # method take dtype third.
        dtype_at = 3 if _is(p, F.softmax) else 2
        if not (one_user(p) and (_is(p, F.softmax, "softmax") or _is(p, torch.softmax))
                and _arg(p, 1, "dim") in (-1, 3) and _arg(p, dtype_at, "dtype") is None
                and p.kwargs.keys() <= {"dim", "dtype", "_stacklevel"}):
            continue
        x, causal = p.args[0], False
        if _is(x, causal_fill) and one_user(x):
            x, causal = x.args[0], True
        if not (one_user(x) and (_is(x, operator.mul, "mul") or _is(x, torch.mul)) and len(x.args) == 2):
            continue
        qk, c = x.args
        if isinstance(qk, float) and hasattr(c, "op"):
            qk, c = c, qk
        if not (isinstance(c, float) and one_user(qk) and (_is(qk, operator.matmul, "matmul")
                                                           or _is(qk, torch.matmul))):
            continue
        q, kt = qk.args
        if not (one_user(kt) and _is(kt, None, "transpose") and tuple(kt.args[1:]) in ((-2, -1), (-1, -2), (2, 3), (3, 2))):
            continue
        k = kt.args[0]
        if not all(_heads_transpose(t) for t in (q, k, v)):
            continue
        # One [B, H] for the three (a broadcast k or v of fewer heads stays
        # written out: kb.attention would refuse it and PyTorch's SDPA would
        # run it on its slower path).
        lead = {tuple(str(d) for d in t.meta["example_value"].shape[:2]) for t in (q, k, v)}
        if len(lead) != 1:
            continue
        replace_with_call(gm, n, sdpa, (q, k, v), {"is_causal": causal, "scale": c})
        done += 1
    return recompiled(gm, done)


def gather_heads_transposes(gm) -> int:
    """Moves each x.transpose(1, 2) that only a scaled_dot_product_attention
    reads (as q, k or v) to just before it, so that the partitioner's cut in
    front of the first one (where the view under it is a result of the piece
    before) leaves all three with the attention (kb.attention bthd); returns
    how many moved."""
    sdpa, moved = _sdpa(), 0
    if sdpa is None:
        return 0
    for n in list(gm.graph.nodes):
        if not (n.op == "call_function" and n.target is sdpa):
            continue
        for x in n.args[:3]:
            if (_is(x, None, "transpose") and tuple(x.args[1:]) in ((1, 2), (2, 1))
                    and all(u is n for u in x.users) and x.next is not n):
                n.prepend(x)
                moved += 1
    if moved:
        gm.recompile()
    return moved


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
    """kb.attention for F.scaled_dot_product_attention, kb.causal_mask for
    causal_fill, or None for another function."""
    if t is causal_fill:
        return imp.unary(args[0], imp.prog.causal_mask, rows=True)
    if _sdpa() is None or t is not _sdpa():
        return None
    from .fx_emit import KVal
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
    # q, k, v all x.transpose(1, 2) of [B, T, H, D] tensors (a linear's output
    # seen as heads): kb.attention reads them as they are (bthd) and its
    # [B, T, H, Dv] result is the output's transpose(1, 2), no copy either way.
    swapped = [x.heads is not None for x in (q, k, v)]
    bthd = all(swapped)
    if any(swapped) and not bthd:
        imp.fail("scaled_dot_product_attention of q, k, v of which only some are transpose(1, 2) "
                 "of a rank-4 tensor (kb.attention's bthd layout takes all three or none)")
    if bthd:
        from .fx_trace import KbImportError
        ins = []
        for x in (q, k, v):
            try:
                ins.append(imp.read(x.heads, x.heads.shape))
            except KbImportError as e:
                # Not readable here (a reshaped result of this piece): the
                # partitioner cuts the piece before the transpose, so that
                # the transposes go with the attention.
                # The first of the three in graph order (gather_heads_transposes
                # puts them just before the attention).
                order = {n: i for i, n in enumerate(imp.node.graph.nodes)} if imp.node is not None else {}
                first = min((y.heads_node for y in (q, k, v) if y.heads_node is not None),
                            key=lambda n: order.get(n, 0), default=None)
                raise KbImportError(str(e), first or e.node) from None
        qv, kv, vv = ins
    else:
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
            mask = imp.convert(mask, torch_dtype_of(qv.dtype))
        mv = imp.read(mask, mask.shape)
    # tf32x3 asks for near-f32 accuracy: kb.attention's closest is ieee.
    prec = None if qv.dtype != "f32" else ("tf32" if imp.precision == "tf32" else "ieee")
    out = imp.prog.attention(qv, kv, vv, scale, mask=mv, causal=causal, precision=prec, bthd=bthd)
    if bthd:
        from .fx_emit import KVal
        b, t, h = q.heads.shape[:3]
        return KVal(tuple(q.shape[:-1]) + (v.shape[-1],), heads=KVal((b, t, h, v.shape[-1]), value=out))
    return imp.result(out, tuple(q.shape[:-1]) + (v.shape[-1],))
