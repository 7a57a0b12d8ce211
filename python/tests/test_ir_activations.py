"""The builder's activation methods (issue #45): the text of each op, with
its constants as f32, kb-opt parsing it, and the builder refusing the
constants the op verifiers refuse, at the Python line."""
import pytest

import kb
from conftest import parse_with_kb_opt


def program():
    p = kb.Program("acts")
    x = p.input("x", (64, 128))
    w = p.input("w", (64, 128))
    v = p.softplus(x, beta=2.0, threshold=15.0)
    v = p.elu(v, alpha=0.5)
    v = p.selu(v)
    v = p.hardtanh(v, -2.0, 2.0)
    v = p.hardsigmoid(v)
    v = p.hardswish(v)
    v = p.mish(v)
    v = p.softsign(v)
    v = p.neg(p.abs(v))
    v = p.maximum(p.minimum(v, w), x)
    v = p.clamp(v, min=0.0625)
    v = p.log(p.rsqrt(p.sqrt(v)))
    v = p.clamp(v, -4.0, 4.0)
    p.output(v, "y")
    return p


def test_every_activation_prints():
    text = program().mlir()
    for e in ["kb.softplus %x beta(2.0) threshold(15.0) : tensor<64x128xf32>",
              "alpha(0.5)", "kb.selu", "min_val(-2.0) max_val(2.0)", "kb.hardsigmoid",
              "kb.hardswish", "kb.mish", "kb.softsign", "kb.abs", "kb.neg",
              "kb.minimum", "kb.maximum", "min(0.0625) :", "kb.sqrt", "kb.rsqrt", "kb.log",
              "min(-4.0) max(4.0)"]:
        assert e in text, f"{e!r} not in\n{text}"


def test_every_activation_parses_with_kb_opt(kb_opt):
    out = parse_with_kb_opt(kb_opt, program().mlir())
    assert out.count("kb.clamp") == 2


def test_constants_are_rounded_to_f32():
    p = kb.Program("f")
    x = p.input("x", (4, 8))
    p.output(p.elu(x, 0.1), "y")
    assert "alpha(0.10000000149011612)" in p.mlir()


@pytest.mark.parametrize("make, message", [
    (lambda p, x: p.softplus(x, beta=0.0), "softplus beta must be positive"),
    (lambda p, x: p.softplus(x, threshold=float("inf")), "softplus threshold must be finite"),
    (lambda p, x: p.elu(x, float("nan")), "elu alpha must be finite"),
    (lambda p, x: p.hardtanh(x, 1.0, -1.0), "hardtanh needs min_val <= max_val"),
    (lambda p, x: p.clamp(x), "clamp needs a min or a max"),
    (lambda p, x: p.clamp(x, 3.0, 1.0), "clamp needs min <= max"),
    (lambda p, x: p.minimum(x, p.input("y", (8, 4))), "kb.minimum takes two tensors of one shape"),
    (lambda p, x: p.maximum(x, p.input("h", (4, 8), dtype="bf16")), "kb.maximum"),
])
def test_builder_refuses(make, message):
    p = kb.Program("f")
    x = p.input("x", (4, 8))
    with pytest.raises(kb.KbError, match=message):
        make(p, x)


def test_bf16_activations_keep_their_type(kb_opt):
    p = kb.Program("h")
    x = p.input("x", (4, 8), dtype="bf16")
    p.output(p.clamp(p.mish(x), max=1.0), "y")
    text = p.mlir()
    assert "kb.mish %x : tensor<4x8xbf16>" in text
    parse_with_kb_opt(kb_opt, text)
