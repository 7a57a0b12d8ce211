"""The importer's attention (fx_attention.py): F.scaled_dot_product_attention
becomes kb.attention, the explicit spelling (q @ k^T * s, softmax, @ v)
becomes the chain that kb-fuse-attention folds into one, and what kb.attention
does not take (dropout, a boolean mask, GQA) is refused with the reason."""
import math
import re
import subprocess

import pytest
import torch
import torch.nn.functional as F

import kb
from conftest import parse_with_kb_opt

if not hasattr(F, "scaled_dot_product_attention"):
    # PyTorch before 2.0 (Debian's 1.13 on the build machine) has no SDPA: a
    # stand-in with its signature and meaning, which torch.fx records as one
    # call (as it records PyTorch's own) through __torch_function__.
    from torch.overrides import handle_torch_function, has_torch_function

    def _sdpa_standin(*args, **kwargs):
        if has_torch_function(args[:3]):
            return handle_torch_function(_sdpa_standin, args[:3], *args, **kwargs)
        names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale")
        a = dict(zip(names, args), **kwargs)
        q, k, v, m = a["query"], a["key"], a["value"], a.get("attn_mask")
        s = q @ k.transpose(-2, -1) * (a.get("scale") or q.shape[-1] ** -0.5)
        if a.get("is_causal"):
            s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
        if m is not None:
            s = s.masked_fill(~m, float("-inf")) if m.dtype == torch.bool else s + m
        return torch.softmax(s, -1) @ v

    F.scaled_dot_product_attention = _sdpa_standin

Q = (2, 4, 100, 64)   # B, H, S, D
K3 = (8, 100, 64)     # BH, S, D


def imp(fn, *shapes, dtype=torch.float32, precision="tf32"):
    inputs = [torch.randn(*s, dtype=dtype) for s in shapes]
    return kb.import_torch(fn, inputs, precision=precision)


T4 = "tensor<2x4x100x64xf32>"

CASES = [
    ("sdpa default scale", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [Q, Q, Q],
     [f"kb.attention %q, %k, %v scale(0.125) precision(tf32) : {T4}, {T4}, {T4} -> {T4}"]),
    ("sdpa causal scale", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5),
     [Q, Q, Q], ["kb.attention %q, %k, %v scale(0.5) causal precision(tf32)"]),
    ("sdpa 2-D mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), [Q, Q, Q, (100, 100)],
     [f"kb.attention %q, %k, %v mask(%m) scale(0.125) precision(tf32) : {T4}, {T4}, {T4}, tensor<100x100xf32> -> {T4}"]),
    ("sdpa full mask positional", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m), [Q, Q, Q, (2, 4, 100, 100)],
     ["mask(%m)", "tensor<2x4x100x100xf32> -> "]),
    ("sdpa rank 3, Sq != Sk, Dv != D", lambda q, k, v: F.scaled_dot_product_attention(q, k, v),
     [(8, 30, 64), (8, 70, 64), (8, 70, 32)],
     ["kb.attention %q, %k, %v scale(0.125) precision(tf32) : tensor<8x30x64xf32>, tensor<8x70x64xf32>, "
      "tensor<8x70x32xf32> -> tensor<8x30x32xf32>"]),
    ("explicit spelling, rank 3", lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) * 0.125, dim=-1) @ v, [K3, K3, K3],
     ["kb.matmul %q, %k precision(tf32) transpose_b", "kb.scale", "kb.softmax", "kb.matmul"]),
    ("explicit spelling, rank 4", lambda q, k, v: (q @ k.transpose(-2, -1) / math.sqrt(64)).softmax(-1) @ v, [Q, Q, Q],
     ["kb.matmul %q, %k precision(tf32) transpose_b : tensor<8x100x64xf32>", "kb.scale",
      "kb.softmax", "kb.matmul"]),
]


@pytest.mark.parametrize("name, fn, shapes, expect", CASES, ids=[c[0] for c in CASES])
def test_import(name, fn, shapes, expect):
    text = imp(fn, *shapes).program.mlir()
    pos = 0
    for e in expect:
        i = text.find(e, pos)
        assert i >= 0, f"{e!r} not found (in order) in\n{text}"
        pos = i


def test_bf16_has_no_precision_and_converts_an_f32_mask():
    text = imp(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m.float()),
               Q, Q, Q, (100, 100), dtype=torch.bfloat16).program.mlir()
    assert "kb.convert" in text
    assert "scale(0.125) : tensor<2x4x100x64xbf16>" in text
    assert "precision" not in text.split("kb.attention")[1].split("\n")[0]


def test_ieee_import_precision():
    text = imp(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), Q, Q, Q, precision="ieee").program.mlir()
    assert "precision(ieee)" in text


def test_imports_parse_with_kb_opt(kb_opt):
    for name, fn, shapes, expect in CASES:
        parse_with_kb_opt(kb_opt, imp(fn, *shapes).program.mlir())


def test_explicit_spelling_fuses(kb_opt):
    """kb-fuse-attention makes the explicit spelling one kb.attention, the
    same as F.scaled_dot_product_attention's."""
    text = imp(lambda q, k, v: torch.softmax(q @ k.transpose(-2, -1) * 0.125, dim=-1) @ v, K3, K3, K3).program.mlir()
    r = subprocess.run([kb_opt, "-", "--kb-fuse-attention"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "fused into kb.attention" in r.stderr
    assert re.search(r"kb.attention %\S+, %\S+, %\S+ scale\(1.250000e-01\) precision\(tf32\)", r.stdout), r.stdout
    assert "kb.softmax" not in r.stdout


ERRORS = [
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, dropout_p=0.1), [Q, Q, Q], "dropout_p=0.1"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), [Q, (2, 2, 100, 64), (2, 2, 100, 64)],
     "enable_gqa"),
    (lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), [Q, Q, Q, (1, 100, 100)],
     "attn_mask of shape (1, 100, 100)"),
    (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [(2, 2, 2, 8, 4)] * 3, "one rank, 3 or 4"),
]


@pytest.mark.parametrize("fn, shapes, match", ERRORS, ids=[e[2] for e in ERRORS])
def test_refused(fn, shapes, match):
    with pytest.raises(kb.KbError, match=re.escape(match)):
        imp(fn, *shapes)


def test_boolean_mask_refused_with_the_reason():
    q = torch.randn(*Q)
    m = torch.ones(100, 100, dtype=torch.bool).tril()
    with pytest.raises(kb.KbError, match="boolean attn_mask .*additive float mask"):
        kb.import_torch(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), (q, q, q, m))


def test_program_builder_checks_its_operands():
    p = kb.Program("f")
    q = p.input("q", (4, 16, 8))
    with pytest.raises(kb.KbError, match="one rank, 3 or 4"):
        p.attention(p.input("q2", (16, 8)), q, q, 0.5)
    with pytest.raises(kb.KbError, match="do not chain"):
        p.attention(q, p.input("k", (4, 16, 4)), q, 0.5)
    with pytest.raises(kb.KbError, match="mask must be"):
        p.attention(q, q, q, 0.5, mask=p.input("m", (16, 8)))
    with pytest.raises(kb.KbError, match="tf32 or ieee"):
        p.attention(q, q, q, 0.5, precision="tf32x3")
    o = p.attention(q, q, q, 0.5, causal=True)
    assert o.shape == (4, 16, 8)
    assert p.causal_mask(o).shape == (4, 16, 8)
