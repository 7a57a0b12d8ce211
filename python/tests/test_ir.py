"""The builder: every op, kb.fusion and #kb.config, printed and parsed by kb-opt."""
import pytest

import kb
from conftest import parse_with_kb_opt


def every_op_program():
    p = kb.Program("every_op")
    x = p.input("x", (64, 32))
    y = p.input("y", (64, 32))
    b = p.input("bias", (32,))
    w = p.input("w", (32, 16))
    wt = p.input("wt", (16, 32))
    a3 = p.input("a3", (2, 8, 32))
    b3 = p.input("b3", (2, 32, 8))
    b16 = p.input("b16", (16,))
    v = p.add(x, y)
    v = p.sub(v, y)
    v = p.mul(v, y)
    v = p.div(v, y)
    v = p.bias_add(v, b)
    v = p.scale(v, 0.125)
    v = p.add_scalar(v, -1.5)
    v = p.pow(v, 3.0)
    v = p.pow(v, 0.5)
    v = p.gelu(v, "tanh")
    v = p.gelu(v, "erf")
    v = p.relu(v)
    v = p.leaky_relu(v, 0.2)
    v = p.tanh(v)
    v = p.sigmoid(v)
    v = p.silu(v)
    v = p.exp(v)
    v = p.dropout(v, 0.3, seed=7)
    v = p.softmax(v, config=kb.Config(strategy="registers", threads=256))
    m = p.matmul(v, w, "tf32", config=kb.Config(block=[64, 16, 8], warp=[32, 8], mma="mma_sync_tf32"))
    m2 = p.matmul(x, wt, "ieee", transpose_b=True)
    t = p.transpose(wt, pad=32)
    m3 = p.matmul(x, t, "tf32x3", transpose_b=True, padded_b=True)
    mb = p.matmul(a3, b3, "ieee")
    tr = p.transpose(a3)
    with p.fusion([m2, b16]) as f_args:
        fa, fb = f_args
        z = p.bias_add(fa, fb)
        z = p.relu(z)
        p.yield_(z)
    p.output(m, "m")
    p.output(m3, "m3")
    p.output(mb, "mb")
    p.output(tr, "tr")
    return p


def test_every_op_prints_each_op():
    text = every_op_program().mlir()
    for op in ["add", "sub", "mul", "div", "bias_add", "scale", "add_scalar", "pow", "gelu",
               "relu", "leaky_relu", "tanh", "sigmoid", "silu", "exp", "dropout", "softmax",
               "matmul", "transpose", "fusion", "yield"]:
        assert f"kb.{op} " in text, op
    assert 'config = #kb.config<block = [64, 16, 8], warp = [32, 8], mma = "mma_sync_tf32">' in text
    assert "transpose_b padded_b" in text
    assert "pad(32)" in text


def test_every_op_parses_with_kb_opt(kb_opt):
    p = every_op_program()
    # The fusion's result is unused: give it an output so nothing dangles.
    out = parse_with_kb_opt(kb_opt, p.mlir())
    assert "kb.fusion" in out and "kb.leaky_relu" in out and "kb.add_scalar" in out


def test_fusion_result_can_be_returned(kb_opt):
    p = kb.Program("fused")
    x = p.input("x", (4, 8))
    b = p.input("b", (8,))
    f = p.fusion([x, b], config=kb.Config(block=[1024], threads=256, vector=4))
    with f as (fx_, fb):
        p.yield_(p.gelu(p.bias_add(fx_, fb), "tanh"))
    p.output(f.result, "y")
    out = parse_with_kb_opt(kb_opt, p.mlir())
    assert "kb.fusion ins(" in out and 'kb.name = "y"' in out


@pytest.mark.parametrize("make, message", [
    (lambda p, x, y: p.add(x, p.input("z", (4, 4))), "no broadcasting"),
    (lambda p, x, y: p.matmul(x, x), "inner dimensions"),
    (lambda p, x, y: p.matmul(x, y, "fp16"), "precision"),
    (lambda p, x, y: p.bias_add(x, p.input("b", (3,))), "1-D bias"),
    (lambda p, x, y: p.dropout(x, 1.0), "[0, 1)"),
    (lambda p, x, y: p.scale(x, float("nan")), "finite"),
    (lambda p, x, y: p.pow(x, float("inf")), "finite"),
    (lambda p, x, y: p.gelu(x, "fast"), "approx"),
    (lambda p, x, y: p.input("x", (4, 8)), "used twice"),
    (lambda p, x, y: p.input("t0", (4, 8)), "reserved"),
    (lambda p, x, y: p.input("q", (0, 8)), "positive"),
    (lambda p, x, y: p.input("q", (-1, 8)), "positive"),
    # int(4.5) is 4 and int(True) 1: neither is a dimension.
    (lambda p, x, y: p.input("q", (4.5, 8)), "sequence of ints"),
    (lambda p, x, y: p.input("q", (True, 8)), "sequence of ints"),
    (lambda p, x, y: p.input("q", ("4", 8)), "sequence of ints"),
    (lambda p, x, y: p.input("q", (2**63, 8)), "past int64"),
    (lambda p, x, y: p.output(x), "cannot return an input"),
    (lambda p, x, y: p.transpose(p.input("r1", (8,))), "rank 2 or 3"),
])
def test_builder_refuses(make, message):
    p = kb.Program("bad")
    x = p.input("x", (4, 8))
    y = p.input("y", (8, 16))
    with pytest.raises(kb.KbError, match=None) as e:
        make(p, x, y)
    assert message in str(e.value)


def test_builder_takes_int_like_dims():
    import numpy as np
    p = kb.Program("np")
    assert p.input("x", (np.int64(4), 8)).shape == (4, 8)
    assert p.input("y", (2**62, 1)).shape == (2**62, 1)
    with pytest.raises(kb.KbError, match="sequence of ints"):
        p.input("z", (np.True_, 8))


def test_fusion_is_isolated():
    p = kb.Program("iso")
    x = p.input("x", (4, 8))
    y = p.input("y", (4, 8))
    with pytest.raises(kb.KbError, match="isolated"):
        with p.fusion([x]) as (a,):
            p.add(a, y)


def test_kb_opt_refuses_what_the_builder_lets_through(kb_opt):
    # An unknown #kb.config field is printed as given; kb-opt refuses it.
    import subprocess
    p = kb.Program("cfg")
    x = p.input("x", (4, 8))
    p.output(p.relu(x, config=kb.Config(threadz=3)), "y")
    r = subprocess.run([kb_opt, "-"], input=p.mlir(), capture_output=True, text=True)
    assert r.returncode != 0 and "threadz" in r.stderr


# -- 16-bit tensors (issue #44) -----------------------------------------------

def bf16_linear_program():
    p = kb.Program("linear_bf16")
    x = p.input("x", (64, 128), dtype="bf16")
    w = p.input("w", (256, 128), dtype="bf16")
    b = p.input("bias", (256,), dtype="bf16")
    y = p.gelu(p.bias_add(p.matmul(x, w, transpose_b=True), b), "tanh")
    p.output(p.convert(y, "f32"), "y")
    return p


def test_bf16_program_text():
    assert bf16_linear_program().mlir() == (
        'func.func @linear_bf16(%x: tensor<64x128xbf16> {kb.name = "x"}, '
        '%w: tensor<256x128xbf16> {kb.name = "w"}, %bias: tensor<256xbf16> {kb.name = "bias"}) '
        '-> (tensor<64x256xf32> {kb.name = "y"}) {\n'
        '  %v1 = kb.matmul %x, %w transpose_b : tensor<64x128xbf16>, tensor<256x128xbf16> -> tensor<64x256xbf16>\n'
        '  %v2 = kb.bias_add %v1, %bias : tensor<64x256xbf16>, tensor<256xbf16> -> tensor<64x256xbf16>\n'
        '  %v3 = kb.gelu %v2 approx(tanh) : tensor<64x256xbf16>\n'
        '  %v4 = kb.convert %v3 : tensor<64x256xbf16> -> tensor<64x256xf32>\n'
        '  return %v4 : tensor<64x256xf32>\n'
        '}\n')


def test_f16_ops_keep_their_type():
    p = kb.Program("half")
    a = p.input("a", (2, 32, 64), dtype="float16")  # numpy/torch names too
    b = p.input("b", (2, 64, 16), dtype="f16")
    m = p.matmul(a, b, out_dtype="f32")
    s = p.softmax(p.convert(m, "f16"))
    t = p.transpose(s)
    p.output(p.dropout(p.scale(t, 0.5), 0.1, seed=3), "y")
    text = p.mlir()
    assert "kb.matmul %a, %b : tensor<2x32x64xf16>, tensor<2x64x16xf16> -> tensor<2x32x16xf32>" in text
    assert "kb.convert %v1 : tensor<2x32x16xf32> -> tensor<2x32x16xf16>" in text
    assert "kb.softmax %v2 : tensor<2x32x16xf16>" in text
    assert "kb.transpose %v3 : tensor<2x32x16xf16> -> tensor<2x16x32xf16>" in text
    assert "kb.scale %v4 by 0.5 : tensor<2x16x32xf16>" in text
    assert "precision" not in text
    # f32 is unchanged: the default precision is tf32 and is printed.
    q = kb.Program("f32")
    x = q.input("x", (4, 8))
    q.output(q.matmul(x, q.input("w", (8, 4))), "y")
    assert "precision(tf32) : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>" in q.mlir()


def test_fusion_keeps_16_bit_types():
    p = kb.Program("fused_bf16")
    x = p.input("x", (4, 8), dtype="bf16")
    b = p.input("b", (8,), dtype="bf16")
    f = p.fusion([x, b])
    with f as (fx_, fb):
        p.yield_(p.relu(p.bias_add(fx_, fb)))
    p.output(f.result, "y")
    text = p.mlir()
    assert "ins(%x, %b : tensor<4x8xbf16>, tensor<8xbf16>)" in text
    assert "^bb0(%arg1: tensor<4x8xbf16>, %arg2: tensor<8xbf16>):" in text
    assert "} -> tensor<4x8xbf16>" in text


@pytest.mark.parametrize("make, words", [
    (lambda p, h, f: p.add(h, f), ["kb.add", "bf16", "f32"]),
    (lambda p, h, f: p.mul(f, h), ["kb.mul", "f32", "bf16"]),
    (lambda p, h, f: p.bias_add(h, p.input("b", (8,))), ["kb.bias_add", "bf16", "f32"]),
    (lambda p, h, f: p.matmul(h, p.input("w", (8, 4))), ["kb.matmul", "bf16", "f32"]),
    (lambda p, h, f: p.matmul(h, p.input("w", (8, 4), dtype="f16")), ["kb.matmul", "bf16", "f16"]),
])
def test_mixed_types_are_refused(make, words):
    p = kb.Program("mixed")
    h = p.input("h", (4, 8), dtype="bf16")
    f = p.input("f", (4, 8))
    with pytest.raises(ValueError) as e:
        make(p, h, f)
    assert isinstance(e.value, kb.KbTypeError) and isinstance(e.value, kb.KbError)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("make, message", [
    (lambda p, h: p.matmul(h, p.input("w", (8, 4), dtype="bf16"), "tf32"), "precision 'native'"),
    (lambda p, h: p.matmul(h, p.input("w", (8, 4), dtype="bf16"), out_dtype="f16"), "returns f32 or bf16"),
    (lambda p, h: p.matmul(p.input("a", (4, 8)), p.input("w", (8, 4)), "native"), "for f32 operands"),
    (lambda p, h: p.convert(h, "bf16"), "already bf16"),
    (lambda p, h: p.convert(h, "f64"), "f32, f16 or bf16"),
    (lambda p, h: p.input("i", (4,), dtype="i32"), "f32, f16 or bf16"),
])
def test_16_bit_refusals(make, message):
    p = kb.Program("bad16")
    h = p.input("h", (4, 8), dtype="bf16")
    with pytest.raises(kb.KbError) as e:
        make(p, h)
    assert message in str(e.value)


def test_16_bit_programs_parse_with_kb_opt(kb_opt_16):
    out = parse_with_kb_opt(kb_opt_16, bf16_linear_program().mlir())
    assert "xbf16>" in out and "kb.convert" in out
