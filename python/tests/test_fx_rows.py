"""The importer's norms and reductions (fx_rows.py: over the last dim, any
one dim, the whole tensor) and log_softmax, the
kb.Program builders they use, and the errors for what kb does not do."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kb
from conftest import parse_with_kb_opt

X = (8, 16)


def imp(fn, *shapes, dtype=torch.float32):
    inputs = [torch.randn(*s, dtype=dtype) for s in (shapes or [X])]
    return kb.import_torch(fn, inputs)


CASES = [
    ("nn.LayerNorm", nn.LayerNorm(16), [X],
     ["kb.layer_norm %input, %weight, %bias eps(9.999999747378752e-06) : tensor<8x16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16xf32>"]),
    ("nn.LayerNorm no affine", nn.LayerNorm(16, elementwise_affine=False), [X],
     ["kb.layer_norm %input eps(9.999999747378752e-06) : tensor<8x16xf32> -> tensor<8x16xf32>"]),
    ("nn.LayerNorm 3-D", nn.LayerNorm(16, eps=1e-6), [(2, 8, 16)], ["eps(9.99999997", "tensor<16x16xf32>"]),
    ("F.layer_norm", lambda x, w, b: F.layer_norm(x, (16,), w, b, 1e-3), [X, (16,), (16,)],
     ["kb.layer_norm %x, %w, %b eps(0.00100000"]),
    ("F.layer_norm weight only", lambda x, w: F.layer_norm(x, x.shape[-1:], weight=w), [X, (16,)],
     ["kb.layer_norm %x, %w eps"]),
    ("residual + layer_norm", lambda x, r, w, b: F.layer_norm(x + r, (16,), w, b), [X, X, (16,), (16,)],
     ["kb.add %x, %r", "kb.layer_norm"]),
    ("torch.sum keepdim", lambda x: torch.sum(x, dim=-1, keepdim=True), [X],
     ["kb.reduce %x sum keepdim : tensor<8x16xf32> -> tensor<8x1xf32>"]),
    ("mean method", lambda x: x.mean(-1), [X], ["kb.reduce %x mean : tensor<8x16xf32> -> tensor<8xf32>"]),
    ("amax", lambda x: torch.amax(x, 1), [X], ["kb.reduce %x max :"]),
    ("amin method list dim", lambda x: x.amin(dim=[-1], keepdim=True), [X], ["kb.reduce %x min keepdim"]),
    ("mean then relu", lambda x: torch.relu(x.mean(-1, keepdim=True)), [X], ["kb.reduce", "kb.relu"]),
    ("sum 1-D keepdim", lambda x: x.sum(0, keepdim=True), [(16,)], ["tensor<16xf32> -> tensor<1xf32>"]),
    ("sum dim 0", lambda x: torch.sum(x, dim=0), [X], ["kb.reduce %x sum axis(0) : tensor<8x16xf32> -> tensor<16xf32>"]),
    ("amax dim 1 of 3-D keepdim", lambda x: x.amax(1, keepdim=True), [(2, 8, 16)],
     ["kb.reduce %x max axis(1) keepdim : tensor<2x8x16xf32> -> tensor<2x1x16xf32>"]),
    ("mean dim -3", lambda x: torch.mean(x, -3), [(2, 8, 16)], ["kb.reduce %x mean axis(0) : tensor<2x8x16xf32> -> tensor<8x16xf32>"]),
    ("amin dim 0 after relu", lambda x: torch.relu(x).amin(dim=[0]), [X], ["kb.relu", "min axis(0)"]),
    ("sum dim 1 of a reshaped input", lambda x: torch.relu(x.reshape(2, 4, 16)).sum(1), [X],
     ["kb.relu %x : tensor<2x4x16xf32>", "kb.reduce %v1 sum axis(1) : tensor<2x4x16xf32> -> tensor<2x16xf32>"]),
    ("sum all", lambda x: torch.sum(x), [X], ["kb.reduce %x sum all : tensor<8x16xf32> -> tensor<1xf32>"]),
    ("mean all method keepdim", lambda x: x.mean(dim=(0, 1), keepdim=True), [X], ["kb.reduce %x mean all keepdim : tensor<8x16xf32> -> tensor<1x1xf32>"]),
    ("amax all", lambda x: torch.amax(x), [(2, 8, 16)], ["kb.reduce %x max all : tensor<2x8x16xf32> -> tensor<1xf32>"]),
    ("F.log_softmax", lambda x: F.log_softmax(x, dim=-1), [X], ["kb.log_softmax %x : tensor<8x16xf32>"]),
    ("torch.log_softmax dim 1", lambda x: torch.log_softmax(x, 1), [X], ["kb.log_softmax %x"]),
    ("log_softmax method 3-D", lambda x: x.log_softmax(-1), [(2, 8, 16)], ["kb.log_softmax %x : tensor<2x8x16xf32>"]),
    ("nn.LogSoftmax", nn.LogSoftmax(dim=-1), [X], ["kb.log_softmax %input"]),
    ("residual + log_softmax", lambda x, r: F.log_softmax(x + r, -1), [X, X], ["kb.add %x, %r", "kb.log_softmax"]),
]


@pytest.mark.parametrize("name, fn, shapes, expect", CASES, ids=[c[0] for c in CASES])
def test_import(name, fn, shapes, expect):
    text = imp(fn, *shapes).program.mlir()
    pos = 0
    for e in expect:
        i = text.find(e, pos)
        assert i >= 0, f"{e!r} not found (in order) in\n{text}"
        pos = i


def test_imports_parse_with_kb_opt(kb_opt):
    for name, fn, shapes, expect in CASES:
        parse_with_kb_opt(kb_opt, imp(fn, *shapes).program.mlir())


def test_bf16_log_softmax_keeps_its_type(kb_opt):
    text = imp(lambda x: F.log_softmax(x, -1), X, dtype=torch.bfloat16).program.mlir()
    assert "kb.log_softmax %x : tensor<8x16xbf16>" in text
    parse_with_kb_opt(kb_opt, text)


def test_bf16_layer_norm_keeps_its_type(kb_opt):
    text = imp(nn.LayerNorm(16).to(torch.bfloat16), X, dtype=torch.bfloat16).program.mlir()
    assert "tensor<8x16xbf16>, tensor<16xbf16>, tensor<16xbf16> -> tensor<8x16xbf16>" in text
    parse_with_kb_opt(kb_opt, text)


def test_reduce_of_flattened_rows_is_returned_as_is():
    # (2, 8, 16) read as 16 rows: the mean's kb shape is (16,), PyTorch's (2, 8).
    r = imp(lambda x: torch.relu(x).mean(-1), (2, 8, 16))
    out = r.signature["outputs"][0]
    assert out["shape"] == [2, 8]


def test_whole_sum_returns_pytorch_0d_shape():
    r = imp(lambda x: torch.relu(x).sum(), (2, 8, 16))
    assert r.signature["outputs"][0]["shape"] == []


def test_program_builders_check_their_operands():
    p = kb.Program("f")
    x = p.input("x", (4, 8))
    w = p.input("w", (4,))
    with pytest.raises(kb.KbError, match="1-D weight as long as the input's last axis"):
        p.layer_norm(x, w)
    with pytest.raises(kb.KbError, match="bias only after a weight"):
        p.layer_norm(x, None, p.input("b", (8,)))
    with pytest.raises(kb.KbError, match="kind must be sum, max, min or mean"):
        p.reduce(x, "prod")
    with pytest.raises(kb.KbError, match="needs keepdim"):
        p.reduce(w, "sum")
    with pytest.raises(kb.KbError, match="axis must be in"):
        p.reduce(x, "sum", axis=2)
    with pytest.raises(kb.KbError, match="all or axis, not both"):
        p.reduce(x, "sum", axis=0, all=True)


ERRORS = [
    (lambda x: torch.sum(x, dim=(0, 1)), [(2, 8, 16)], ["sum over dim=(0, 1)"]),
    (lambda x: x.mean(-1, dtype=torch.float64), [X], ["dtype="]),
    (lambda x: F.layer_norm(torch.relu(x), (8, 16)), [X], ["layer_norm over the last 2 dims"]),
    (lambda x: x.sum(0), [(16,)], ["0-d"]),
    (lambda x: F.log_softmax(x, 0), [X], ["log_softmax over dim=0"]),
    (nn.LogSoftmax(), [X], ["log_softmax without dim="]),
]


@pytest.mark.parametrize("fn, shapes, parts", ERRORS)
def test_errors(fn, shapes, parts):
    with pytest.raises(kb.KbImportError) as e:
        imp(fn, *shapes)
    for part in parts:
        assert part in str(e.value), str(e.value)
