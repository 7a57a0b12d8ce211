"""The torch.fx importer: each supported op, the glue around them, and the
errors for what kb does not do (naming the op and the user's line)."""
import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kb
from conftest import parse_with_kb_opt

X = (8, 16)


def imp(fn, *shapes, **kw):
    inputs = [torch.randn(*s) for s in (shapes or [X])]
    return kb.import_torch(fn, inputs, **kw)


CASES = [
    # (name, fn or module, input shapes, expected kb ops in order)
    ("relu", lambda x: torch.relu(x), [X], ["kb.relu"]),
    ("F.relu", lambda x: F.relu(x), [X], ["kb.relu"]),
    ("nn.ReLU", nn.ReLU(), [X], ["kb.relu"]),
    ("sigmoid", lambda x: torch.sigmoid(x), [X], ["kb.sigmoid"]),
    ("tanh", lambda x: x.tanh(), [X], ["kb.tanh"]),
    ("exp", lambda x: torch.exp(x), [X], ["kb.exp"]),
    ("silu", lambda x: F.silu(x), [X], ["kb.silu"]),
    ("nn.SiLU", nn.SiLU(), [X], ["kb.silu"]),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), [X], ["kb.leaky_relu %x slope(0.2"]),
    ("nn.LeakyReLU", nn.LeakyReLU(0.05), [X], ["kb.leaky_relu %input slope(0.0500000"]),
    ("gelu exact", lambda x: F.gelu(x), [X], ["approx(erf)"]),
    ("gelu tanh", nn.GELU(approximate="tanh"), [X], ["approx(tanh)"]),
    ("softmax", lambda x: F.softmax(x, dim=-1), [X], ["kb.softmax"]),
    ("softmax method", lambda x: x.softmax(1), [X], ["kb.softmax"]),
    ("nn.Softmax", nn.Softmax(dim=-1), [X], ["kb.softmax"]),
    ("add", lambda x, y: x + y, [X, X], ["kb.add %x, %y"]),
    ("sub", lambda x, y: torch.sub(x, y), [X, X], ["kb.sub"]),
    ("mul", lambda x, y: x * y, [X, X], ["kb.mul"]),
    ("div", lambda x, y: x / y, [X, X], ["kb.div"]),
    ("add scalar", lambda x: x + 2.0, [X], ["kb.add_scalar %x value(2.0)"]),
    ("radd scalar", lambda x: 1.0 + x, [X], ["value(1.0)"]),
    ("sub scalar", lambda x: x - 3, [X], ["value(-3.0)"]),
    ("rsub scalar", lambda x: 1 - x, [X], ["by -1.0", "value(1.0)"]),
    ("mul scalar", lambda x: 0.5 * x, [X], ["kb.scale %x by 0.5"]),
    ("div scalar", lambda x: x / 4, [X], ["by 0.25"]),
    ("rdiv scalar", lambda x: 2 / x, [X], ["exponent(-1.0)", "by 2.0"]),
    ("pow", lambda x: torch.pow(x, 3.0), [X], ["kb.pow %x exponent(3.0)"]),
    ("** ", lambda x: x ** 2, [X], ["exponent(2.0)"]),
    ("sqrt", lambda x: torch.sqrt(x), [X], ["kb.sqrt %x"]),
    ("neg", lambda x: -x, [X], ["kb.neg %x"]),
    ("bias vector", lambda x, b: x + b, [X, (16,)], ["kb.bias_add %x, %b"]),
    ("bias vector minus", lambda x, b: x - b, [X, (16,)], ["kb.scale %b by -1.0", "kb.bias_add"]),
    ("matmul", lambda a, b: a @ b, [(8, 16), (16, 4)], ["kb.matmul %a, %b precision(ieee) :"]),
    ("mm", lambda a, b: torch.mm(a, b), [(8, 16), (16, 4)], ["kb.matmul"]),
    ("matmul transposed", lambda a, b: a @ b.t(), [(8, 16), (4, 16)], ["transpose_b"]),
    ("bmm", lambda a, b: torch.bmm(a, b), [(2, 8, 16), (2, 16, 4)], ["tensor<2x8x16xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>"]),
    ("bmm transposed", lambda a, b: torch.bmm(a, b.transpose(1, 2)), [(2, 8, 16), (2, 4, 16)], ["transpose_b"]),
    ("3-D by 2-D", lambda a, b: torch.matmul(a, b), [(2, 8, 16), (16, 4)], ["tensor<16x16xf32>, tensor<16x4xf32>"]),
    ("transpose alone", lambda a: torch.relu(a.transpose(0, 1)), [(8, 16)], ["kb.transpose", "kb.relu"]),
    ("F.linear", lambda x, w, b: F.linear(x, w, b), [X, (4, 16), (4,)], ["transpose_b", "kb.bias_add"]),
    ("nn.Linear", nn.Linear(16, 4), [X], ["kb.matmul %input, %weight precision(ieee) transpose_b", "kb.bias_add"]),
    ("nn.Linear no bias", nn.Linear(16, 4, bias=False), [X], ["transpose_b"]),
    ("linear 3-D", nn.Linear(16, 4), [(2, 8, 16)], ["tensor<16x16xf32>"]),
    ("dropout eval", nn.Dropout(0.5).eval(), [X], None),
    ("dropout train", nn.Sequential(nn.ReLU(), nn.Dropout(0.25)), [X], ["kb.dropout", "p(0.25) seed(0)"]),
    ("F.dropout", lambda x: F.dropout(torch.relu(x), 0.1, training=True), [X], ["p(0.1"]),
    ("glue: shapes", lambda x: torch.relu(x.view(x.size(0), -1)) * (1.0 / math.sqrt(x.shape[-1])), [X], ["kb.relu", "by 0.25"]),
    ("glue: contiguous", lambda x: torch.exp(x.contiguous()).float(), [X], ["kb.exp"]),
    ("output reshape", lambda x: torch.relu(x).reshape(4, 32), [X], ["kb.relu"]),
    ("input flatten", lambda x: torch.relu(torch.flatten(x, 1)), [(2, 4, 4)], ["tensor<2x16xf32>"]),
    ("mingpt gelu", lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0)))),
     [X], ["kb.pow", "kb.tanh", "kb.add_scalar", "kb.mul"]),
    ("swish", lambda x: x * torch.sigmoid(x), [X], ["kb.sigmoid %x", "kb.mul %x"]),
]


@pytest.mark.parametrize("name, fn, shapes, expect", CASES, ids=[c[0] for c in CASES])
def test_import(name, fn, shapes, expect):
    if expect is None:  # nothing to compute: the importer says so
        with pytest.raises(kb.KbImportError, match="input"):
            imp(fn, *shapes)
        return
    text = imp(fn, *shapes).program.mlir()
    pos = 0
    for e in expect:
        i = text.find(e, pos)
        assert i >= 0, f"{e!r} not found (in order) in\n{text}"
        pos = i


def test_imports_parse_with_kb_opt(kb_opt):
    for name, fn, shapes, expect in CASES:
        if expect is None:
            continue
        parse_with_kb_opt(kb_opt, imp(fn, *shapes).program.mlir())


def test_signature_records_params_and_views():
    m = nn.Linear(16, 4)
    r = imp(m, (2, 8, 16))
    sig = r.signature
    assert sig["args"] == [{"name": "x", "shape": [2, 8, 16]}] or sig["args"][0]["shape"] == [2, 8, 16]
    srcs = [tuple(s["source"]) for s in sig["inputs"]]
    assert ("param", "weight") in srcs and ("param", "bias") in srcs
    assert sig["inputs"][0]["shape"] == [16, 16]  # (2, 8, 16) read as 16 rows
    assert sig["outputs"][0]["shape"] == [2, 8, 4] and sig["outputs"][0]["kb_shape"] == [16, 4]


def test_precision_follows_torch_and_can_be_given():
    assert "precision(tf32)" in imp(lambda a, b: a @ b, (4, 8), (8, 4), precision="tf32").program.mlir()
    old = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("high")
        assert "precision(tf32)" in imp(lambda a, b: a @ b, (4, 8), (8, 4)).program.mlir()
    finally:
        torch.set_float32_matmul_precision(old)


def test_dropout_seeds_count_up():
    r = imp(lambda x: F.dropout(F.dropout(torch.relu(x), 0.1), 0.2), X, seed=5)
    assert [d["seed"] for d in r.signature["dropouts"]] == [5, 6]


# -- errors -------------------------------------------------------------------

class Cumsum(nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        return torch.cumsum(y, 1)  # the line the error must name


cumsum_model = Cumsum()
CUMSUM_LINE = Cumsum.forward.__code__.co_firstlineno + 2


ERRORS = [
    (cumsum_model, [X], ["torch.cumsum", "test_fx.py", "torch.cumsum(y, 1)"]),
    (lambda x: F.softmax(x, dim=0), [X], ["softmax over dim=0"]),
    (lambda x, y: x * torch.relu(y), [X, (8, 1)], ["mul of shapes (8, 16) and (8, 1)"]),
    (lambda x, y: x + torch.relu(y), [X, (8, 1)], ["broadcasts only a vector"]),
    (lambda x: torch.softmax(torch.relu(x).reshape(16, 8), -1), [X], ["reshape"]),
    (lambda x: x ** x, [X], ["tensor power"]),
    (lambda x: 2.0 ** x, [X], ["constant raised"]),
    (lambda x: x, [X], ["input"]),
    (lambda x: torch.relu(x.permute(1, 0, 2)), [(2, 3, 4)], ["permute"]),
    (lambda a, b: a @ b, [(2, 3, 4), (1, 4, 5)], ["batch sizes differ"]),
    (lambda x: F.celu(x), [X], ["celu"]),
    (lambda x: F.layer_norm(torch.relu(x), (8, 16)), [X], ["layer_norm over the last 2 dims"]),  # kb normalizes over the last dim
    (lambda x: torch.relu(x) + torch.ones(8, 16), [X], ["a tensor made inside the program"]),
]


@pytest.mark.parametrize("fn, shapes, words", ERRORS)
def test_import_errors(fn, shapes, words):
    with pytest.raises(kb.KbImportError) as e:
        imp(fn, *shapes)
    msg = str(e.value)
    for w in words:
        assert w in msg, f"{w!r} not in: {msg}"


def test_error_is_one_message_with_the_users_line():
    with pytest.raises(kb.KbImportError) as e:
        imp(cumsum_model, X)
    msg = str(e.value)
    assert msg.startswith("kb cannot import")
    assert f"test_fx.py:{CUMSUM_LINE} (in forward): return torch.cumsum(y, 1)" in msg


def test_non_float_inputs_are_refused():
    with pytest.raises(kb.KbError, match="float32"):
        kb.import_torch(lambda x: x + 1, [torch.ones(4, dtype=torch.int32)])


def test_reference_applies_kbs_dropout_mask():
    from kb.fx import philox_keep_mask, reference
    r = imp(lambda x: F.dropout(x * 1.0, 0.5), (64, 64), seed=3)
    x = torch.randn(64, 64)
    ref = reference(r, None, [x])
    keep = torch.from_numpy(philox_keep_mask(64 * 64, 0.5, 3)).reshape(64, 64)
    assert torch.equal(ref == 0, ~keep | (x == 0))
    assert torch.allclose(ref[keep], x.double()[keep] * 2)


def test_philox_known_answers():
    from kb.fx import philox4x32_10
    # Random123's kat_vectors (and unittests/PhiloxTest.cpp).
    assert [int(v) for v in philox4x32_10((0, 0, 0, 0), (0, 0))] == \
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    assert [int(v) for v in philox4x32_10((0xffffffff,) * 4, (0xffffffff, 0xffffffff))] == \
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]


# -- 16-bit modules and conversions (issue #44) --------------------------------

class LinearGelu(nn.Module):
    def __init__(self, k=64, n=32):
        super().__init__()
        self.fc = nn.Linear(k, n)

    def forward(self, x):
        return F.gelu(self.fc(x), approximate="tanh")


def test_bf16_linear_bias_gelu_imports_as_bf16():
    torch.manual_seed(0)
    m = LinearGelu().to(torch.bfloat16)
    r = kb.import_torch(m, (torch.randn(2, 8, 64, dtype=torch.bfloat16),), precision="tf32")
    text = r.program.mlir()
    assert ('func.func @LinearGelu(%x: tensor<16x64xbf16> {kb.name = "x"}, '
            '%fc_weight: tensor<32x64xbf16> {kb.name = "fc_weight"}, '
            '%fc_bias: tensor<32xbf16> {kb.name = "fc_bias"}) -> (tensor<16x32xbf16> {kb.name = "out"})') in text
    # The f32 precision does not apply: a 16-bit matmul is "native".
    assert ("kb.matmul %x, %fc_weight transpose_b : tensor<16x64xbf16>, tensor<32x64xbf16> "
            "-> tensor<16x32xbf16>") in text
    assert "kb.bias_add %v1, %fc_bias : tensor<16x32xbf16>, tensor<32xbf16> -> tensor<16x32xbf16>" in text
    assert "kb.gelu %v2 approx(tanh) : tensor<16x32xbf16>" in text
    assert "f32" not in text and "precision" not in text
    assert r.signature["outputs"][0]["shape"] == [2, 8, 32]


def test_f16_function_imports_as_f16():
    r = imp(lambda a, b: torch.softmax(a @ b.t(), -1) * 0.5, (8, 16), (4, 16))
    assert "f16" not in r.program.mlir()
    r = kb.import_torch(lambda a, b: torch.softmax(a @ b.t(), -1) * 0.5,
                        (torch.randn(8, 16).half(), torch.randn(4, 16).half()))
    text = r.program.mlir()
    assert "kb.matmul %a, %b transpose_b : tensor<8x16xf16>, tensor<4x16xf16> -> tensor<8x4xf16>" in text
    assert "kb.softmax %v1 : tensor<8x4xf16>" in text and "kb.scale %v2 by 0.5 : tensor<8x4xf16>" in text


CONVERSIONS = [
    ("to(bf16)", lambda x: torch.relu(x.to(torch.bfloat16)), "f32", ["kb.convert %x : tensor<8x16xf32> -> tensor<8x16xbf16>", "kb.relu %v1 : tensor<8x16xbf16>"]),
    (".bfloat16()", lambda x: torch.exp(x.bfloat16()), "f32", ["-> tensor<8x16xbf16>", "kb.exp %v1 : tensor<8x16xbf16>"]),
    (".half()", lambda x: torch.exp(x.half()), "f32", ["kb.convert %x : tensor<8x16xf32> -> tensor<8x16xf16>"]),
    (".float()", lambda x: torch.exp(x.float()), "bf16", ["kb.convert %x : tensor<8x16xbf16> -> tensor<8x16xf32>", "kb.exp %v1 : tensor<8x16xf32>"]),
    ("to(dtype=)", lambda x: torch.exp(x.to(dtype=torch.float16)), "bf16", ["kb.convert %x : tensor<8x16xbf16> -> tensor<8x16xf16>"]),
    ("to(device, dtype)", lambda x: torch.exp(x.to("cpu", torch.float32)), "f16", ["tensor<8x16xf16> -> tensor<8x16xf32>"]),
    ("to(other)", lambda x, y: x.to(y) + y, "f32", ["kb.convert %x : tensor<8x16xf32> -> tensor<8x16xbf16>", "kb.add %v1, %y : tensor<8x16xbf16>"]),
    ("softmax(dtype=)", lambda x: F.softmax(x, -1, dtype=torch.float32), "bf16", ["kb.convert %x", "kb.softmax %v1 : tensor<8x16xf32>"]),
    ("promotion", lambda x, y: x * y.float(), "bf16", ["kb.convert %y : tensor<8x16xbf16> -> tensor<8x16xf32>", "kb.convert %x", "kb.mul"]),
]


@pytest.mark.parametrize("name, fn, dt, expect", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_conversions_become_kb_convert(name, fn, dt, expect):
    torch_dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dt]
    nargs = fn.__code__.co_argcount
    ins = [torch.randn(*X, dtype=torch_dt)] + [torch.randn(*X, dtype=torch.bfloat16)] * (nargs - 1)
    text = kb.import_torch(fn, ins).program.mlir()
    pos = 0
    for e in expect:
        i = text.find(e, pos)
        assert i >= 0, f"{e!r} not found (in order) in\n{text}"
        pos = i


def test_conversion_to_the_same_type_is_nothing():
    text = imp(lambda x: torch.relu(x.float().to(torch.float32))).program.mlir()
    assert "kb.convert" not in text and "kb.relu %x" in text


def test_reference_rounds_at_conversions():
    from kb.fx import reference
    x = torch.randn(*X) * 3
    r = imp(lambda x: x.to(torch.bfloat16).float() * 1.0)
    assert r.converts == {"to": "bf16", "float_1": "f32"}
    ref = reference(r, None, [x])
    assert ref.dtype == torch.float64
    assert torch.equal(ref, x.to(torch.bfloat16).double())


class F64Param(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(16, dtype=torch.float64))

    def forward(self, x):
        return x * self.scale


@pytest.mark.parametrize("fn, ins, words", [
    (lambda x: torch.relu(x.double()), [torch.randn(*X)], ["torch.float64", "call_method double", "test_fx.py"]),
    (lambda x: x.to(torch.int32) + 1, [torch.randn(*X)], ["torch.int32", "call_method to"]),
    (lambda x: x + 1, [torch.randn(*X, dtype=torch.float64)], ["example input 0 (x) is torch.float64"]),
    (lambda x: x + 1, [torch.ones(*X, dtype=torch.int64)], ["example input 0 (x) is torch.int64"]),
    (lambda a, b: a @ b, [torch.randn(8, 16, dtype=torch.bfloat16), torch.randn(16, 4, dtype=torch.float16)],
     ["matmul of bf16 by f16", "operator.matmul"]),
    (F64Param(), [torch.randn(*X)], ["parameter scale of dtype torch.float64", "get_attr scale"]),
])
def test_unsupported_dtypes_are_refused(fn, ins, words):
    with pytest.raises(kb.KbError) as e:
        kb.import_torch(fn, ins)
    for w in words:
        assert w in str(e.value), f"{w!r} not in: {e.value}"


def test_16_bit_imports_parse_with_kb_opt(kb_opt_16):
    m = LinearGelu().to(torch.bfloat16)
    parse_with_kb_opt(kb_opt_16, kb.import_torch(m, (torch.randn(8, 64, dtype=torch.bfloat16),)).program.mlir())
    for name, fn, dt, expect in CONVERSIONS:
        torch_dt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[dt]
        nargs = fn.__code__.co_argcount
        ins = [torch.randn(*X, dtype=torch_dt)] + [torch.randn(*X, dtype=torch.bfloat16)] * (nargs - 1)
        parse_with_kb_opt(kb_opt_16, kb.import_torch(fn, ins).program.mlir())


def test_16_bit_views_of_inputs_keep_their_type():
    r = kb.import_torch(lambda x, w: torch.relu(torch.flatten(x, 1) @ w.t()),
                        [torch.randn(2, 4, 4).bfloat16(), torch.randn(3, 16).bfloat16()])
    text = r.program.mlir()
    assert "%x: tensor<2x16xbf16>" in text and "-> tensor<2x3xbf16>" in text
