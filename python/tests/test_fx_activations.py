"""The importer's activations (issue #45, kb/fx_activations.py): each
function, Tensor method and nn.Module form becomes its kb op with
PyTorch's constants, kb-opt parses what comes out, and what kb cannot do
(a tensor bound of clamp, a broadcast minimum) is refused by name."""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kb
from conftest import parse_with_kb_opt

X = (8, 16)


def imp(fn, *shapes, dtype=torch.float32):
    return kb.import_torch(fn, [torch.randn(*s, dtype=dtype) for s in (shapes or [X])])


CASES = [
    ("F.softplus", lambda x: F.softplus(x), [X], ["kb.softplus %x beta(1.0) threshold(20.0)"]),
    ("F.softplus args", lambda x: F.softplus(x, 2, 10), [X], ["beta(2.0) threshold(10.0)"]),
    ("F.softplus kw", lambda x: F.softplus(x, beta=0.5, threshold=5.0), [X], ["beta(0.5) threshold(5.0)"]),
    ("nn.Softplus", nn.Softplus(beta=3.0, threshold=4.0), [X], ["kb.softplus %input beta(3.0) threshold(4.0)"]),
    ("F.elu", lambda x: F.elu(x), [X], ["kb.elu %x alpha(1.0)"]),
    ("F.elu alpha", lambda x: F.elu(x, 0.25), [X], ["alpha(0.25)"]),
    ("nn.ELU", nn.ELU(alpha=0.5), [X], ["kb.elu %input alpha(0.5)"]),
    ("F.selu", lambda x: F.selu(x), [X], ["kb.selu %x"]),
    ("torch.selu", lambda x: torch.selu(x), [X], ["kb.selu %x"]),
    ("nn.SELU", nn.SELU(), [X], ["kb.selu %input"]),
    ("F.hardtanh", lambda x: F.hardtanh(x), [X], ["kb.hardtanh %x min_val(-1.0) max_val(1.0)"]),
    ("F.hardtanh kw", lambda x: F.hardtanh(x, min_val=-2.0, max_val=3.0), [X], ["min_val(-2.0) max_val(3.0)"]),
    ("nn.Hardtanh", nn.Hardtanh(-0.5, 0.5), [X], ["min_val(-0.5) max_val(0.5)"]),
    ("F.relu6", lambda x: F.relu6(x), [X], ["kb.hardtanh %x min_val(0.0) max_val(6.0)"]),
    ("nn.ReLU6", nn.ReLU6(), [X], ["kb.hardtanh %input min_val(0.0) max_val(6.0)"]),
    ("F.hardsigmoid", lambda x: F.hardsigmoid(x), [X], ["kb.hardsigmoid %x"]),
    ("nn.Hardsigmoid", nn.Hardsigmoid(), [X], ["kb.hardsigmoid %input"]),
    ("F.hardswish", lambda x: F.hardswish(x), [X], ["kb.hardswish %x"]),
    ("nn.Hardswish", nn.Hardswish(), [X], ["kb.hardswish %input"]),
    ("F.mish", lambda x: F.mish(x), [X], ["kb.mish %x"]),
    ("nn.Mish", nn.Mish(), [X], ["kb.mish %input"]),
    ("F.softsign", lambda x: F.softsign(x), [X], ["kb.softsign %x"]),
    ("nn.Softsign", nn.Softsign(), [X], ["kb.softsign %input"]),
    ("torch.abs", lambda x: torch.abs(x), [X], ["kb.abs %x"]),
    (".abs", lambda x: x.abs(), [X], ["kb.abs %x"]),
    ("torch.neg", lambda x: torch.neg(x), [X], ["kb.neg %x"]),
    ("-x", lambda x: -x, [X], ["kb.neg %x"]),
    (".neg", lambda x: x.neg(), [X], ["kb.neg %x"]),
    ("torch.sqrt", lambda x: torch.sqrt(x), [X], ["kb.sqrt %x"]),
    (".sqrt", lambda x: x.sqrt(), [X], ["kb.sqrt %x"]),
    ("torch.rsqrt", lambda x: torch.rsqrt(x), [X], ["kb.rsqrt %x"]),
    (".rsqrt", lambda x: x.rsqrt(), [X], ["kb.rsqrt %x"]),
    ("torch.log", lambda x: torch.log(x), [X], ["kb.log %x"]),
    (".log", lambda x: x.log(), [X], ["kb.log %x"]),
    ("torch.clamp", lambda x: torch.clamp(x, -1.5, 2), [X], ["kb.clamp %x min(-1.5) max(2.0)"]),
    ("torch.clamp min", lambda x: torch.clamp(x, min=0.5), [X], ["kb.clamp %x min(0.5) :"]),
    ("torch.clamp max", lambda x: torch.clamp(x, max=0.5), [X], ["kb.clamp %x max(0.5) :"]),
    ("torch.clip", lambda x: torch.clip(x, 0, 6), [X], ["kb.clamp %x min(0.0) max(6.0)"]),
    (".clamp", lambda x: x.clamp(min=-1), [X], ["kb.clamp %x min(-1.0) :"]),
    (".clip", lambda x: x.clip(None, 3), [X], ["kb.clamp %x max(3.0) :"]),
    (".clamp_min", lambda x: x.clamp_min(0.25), [X], ["kb.clamp %x min(0.25) :"]),
    (".clamp_max", lambda x: x.clamp_max(0.25), [X], ["kb.clamp %x max(0.25) :"]),
    ("torch.minimum", lambda x, y: torch.minimum(x, y), [X, X], ["kb.minimum %x, %y"]),
    ("torch.maximum", lambda x, y: torch.maximum(x, y), [X, X], ["kb.maximum %x, %y"]),
    (".minimum", lambda x, y: x.minimum(y), [X, X], ["kb.minimum %x, %y"]),
    (".maximum", lambda x, y: x.maximum(y), [X, X], ["kb.maximum %x, %y"]),
    ("chain", lambda x, y: torch.log(torch.clamp(F.mish(F.softplus(x)), min=1e-3)).maximum(y).abs(),
     [X, X], ["kb.softplus", "kb.mish", "kb.clamp", "kb.log", "kb.maximum", "kb.abs"]),
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


def test_bf16_keeps_its_type():
    text = imp(lambda x, y: torch.maximum(F.hardswish(x), y), X, X, dtype=torch.bfloat16).program.mlir()
    assert "kb.hardswish %x : tensor<8x16xbf16>" in text
    assert "kb.maximum" in text and "tensor<8x16xbf16>" in text


def test_reference_is_torchs():
    from kb.fx import reference
    fn = lambda x: torch.clamp(F.elu(F.softplus(x, 2.0), 0.5), -0.25, 3.0)  # noqa: E731
    r = imp(fn)
    x = torch.randn(*X)
    assert torch.allclose(reference(r, None, [x]), fn(x.double()))


ERRORS = [
    (lambda x, y: torch.clamp(x, min=y), [X, X], ["clamp with a tensor min", "torch.minimum"]),
    (lambda x, y: torch.minimum(x, y.abs()), [X, (8, 1)], ["minimum of shapes (8, 16) and (8, 1)"]),
    (lambda x: torch.minimum(x, torch.tensor(0.0)), [X], ["a tensor made inside the program"]),
    (lambda x: F.celu(x), [X], ["celu"]),
]


@pytest.mark.parametrize("fn, shapes, words", ERRORS)
def test_import_errors(fn, shapes, words):
    with pytest.raises(kb.KbImportError) as e:
        imp(fn, *shapes)
    msg = str(e.value)
    for w in words:
        assert w in msg, f"{w!r} not in: {msg}"
