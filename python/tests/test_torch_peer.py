"""bench/peers/torch_peer.py's peers in 16-bit (issue #44), built from hand-written
manifests and run on the CPU (the timing itself needs a GPU): --dtype, the
buffers' own dtypes, kb.convert, and an f32 program left as it was."""
import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("torch_peer", ROOT / "bench" / "peers" / "torch_peer.py")
torch_peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_peer)


def linear_gelu_manifest(dtype="f32", precision="tf32", out_dtype=None):
    attrs = {"transpose_b": True} if dtype != "f32" else {"precision": precision, "transpose_b": True}
    if dtype != "f32":
        attrs["precision"] = "native"
    return {
        "buffers": [
            {"name": "x", "shape": [16, 64], "dtype": dtype, "role": "input"},
            {"name": "w", "shape": [32, 64], "dtype": dtype, "role": "input"},
            {"name": "b", "shape": [32], "dtype": dtype, "role": "input"},
            {"name": "out", "shape": [16, 32], "dtype": out_dtype or dtype, "role": "output"},
        ],
        "program": [
            {"op": "kb.matmul", "inputs": ["x", "w"], "output": "k0.v0", "attrs": attrs},
            {"op": "kb.bias_add", "inputs": ["k0.v0", "b"], "output": "k0.v1"},
            {"op": "kb.gelu", "inputs": ["k0.v1"], "output": "k0.v2" if out_dtype else "out",
             "attrs": {"approx": "tanh"}},
        ] + ([{"op": "kb.convert", "inputs": ["k0.v2"], "output": "out"}] if out_dtype else []),
    }


def run(manifest, peer_dtype=None):
    torch.manual_seed(0)
    fn, inputs, precision, dtype = torch_peer.build(manifest, peer_dtype, device="cpu")
    with torch.no_grad():
        (y,) = fn(**inputs)
    want = F.gelu(F.linear(inputs["x"].double(), inputs["w"].double(), inputs["b"].double()), approximate="tanh")
    return y, inputs, precision, dtype, want


def test_f32_program_is_as_before():
    y, inputs, precision, dtype, want = run(linear_gelu_manifest("f32", "tf32"))
    assert dtype is None and precision == "tf32"  # no "dtype" in its JSON row
    assert all(t.dtype == torch.float32 for t in inputs.values()) and y.dtype == torch.float32
    torch.manual_seed(0)
    assert torch.equal(inputs["x"], torch.randn(16, 64))  # the same draws as before
    assert (y.double() - want).abs().max() < 1e-4


def test_bf16_program_runs_in_bf16():
    y, inputs, precision, dtype, want = run(linear_gelu_manifest("bf16"))
    assert dtype == "bf16" and precision == "native"
    assert all(t.dtype == torch.bfloat16 for t in inputs.values()) and y.dtype == torch.bfloat16
    assert (y.double() - want).abs().max() / want.abs().max() < 2 ** -6


def test_dtype_option_runs_an_f32_program_in_16_bit():
    y, inputs, precision, dtype, _ = run(linear_gelu_manifest("f32", "tf32"), "bf16")
    assert dtype == "bf16" and precision == "native" and y.dtype == torch.bfloat16
    assert all(t.dtype == torch.bfloat16 for t in inputs.values())


def test_convert_and_output_types():
    # bf16 in, a kb.convert to the f32 output: the peer converts too.
    y, inputs, precision, dtype, want = run(linear_gelu_manifest("bf16", out_dtype="f32"))
    assert inputs["x"].dtype == torch.bfloat16 and y.dtype == torch.float32 and dtype == "bf16"
    # --dtype: the whole program in one type, kb.convert a no-op.
    y, *_ = run(linear_gelu_manifest("bf16", out_dtype="f32"), "bf16")
    assert y.dtype == torch.bfloat16


def test_parse_args():
    assert torch_peer.parse_args(["o.json", "a", "b"]) == (None, "o.json", ["a", "b"])
    assert torch_peer.parse_args(["--dtype", "bf16", "o.json", "a"]) == ("bf16", "o.json", ["a"])
    assert torch_peer.parse_args(["o.json", "--dtype=f16", "a"]) == ("f16", "o.json", ["a"])
    with pytest.raises(ValueError, match="f32, bf16 or f16"):
        torch_peer.parse_args(["--dtype", "f64", "o.json", "a"])
    with pytest.raises(ValueError, match="usage"):
        torch_peer.parse_args(["--dtype", "bf16", "o.json"])


def test_matmul_into_an_f32_buffer():
    # bf16 operands, the result stored as f32 (no kb.convert): the peer's
    # result is f32 too (torch.mm(out_dtype=) where torch has it, else .to()).
    m = {"buffers": [{"name": "a", "shape": [16, 64], "dtype": "bf16", "role": "input"},
                     {"name": "b", "shape": [32, 64], "dtype": "bf16", "role": "input"},
                     {"name": "c", "shape": [16, 32], "dtype": "f32", "role": "output"}],
         "program": [{"op": "kb.matmul", "inputs": ["a", "b"], "output": "c",
                      "attrs": {"precision": "native", "transpose_b": True}}]}
    fn, inputs, precision, dtype = torch_peer.build(m, None, device="cpu")
    (c,) = fn(**inputs)
    assert c.dtype == torch.float32 and precision == "native" and dtype == "bf16"
    want = inputs["a"].double() @ inputs["b"].double().t()
    assert (c.double() - want).abs().max() / want.abs().max() < 2 ** -7
    # A program without a matmul keeps precision "ieee" (nothing to say).
    sm = {"buffers": [{"name": "x", "shape": [4, 8], "dtype": "bf16", "role": "input"},
                      {"name": "y", "shape": [4, 8], "dtype": "bf16", "role": "output"}],
          "program": [{"op": "kb.softmax", "inputs": ["x"], "output": "y"}]}
    assert torch_peer.build(sm, None, device="cpu")[2:] == ("ieee", "bf16")


def test_activation_chain_peer_is_torchs():
    # The ops of issue #45 (the activations bench program's chain).
    ops = [("kb.softplus", {"beta": 2.0, "threshold": 20.0}), ("kb.elu", {"alpha": 1.5}),
           ("kb.selu", {}), ("kb.hardtanh", {"min_val": -2.0, "max_val": 2.0}),
           ("kb.hardsigmoid", {}), ("kb.hardswish", {}), ("kb.mish", {}), ("kb.softsign", {}),
           ("kb.abs", {}), ("kb.neg", {}), ("kb.minimum", {}), ("kb.maximum", {}),
           ("kb.clamp", {"min": 0.0625}), ("kb.sqrt", {}), ("kb.rsqrt", {}), ("kb.log", {}),
           ("kb.clamp", {"min": -4.0, "max": 4.0})]
    prog, prev = [], "x"
    for i, (name, attrs) in enumerate(ops):
        out = "y" if i == len(ops) - 1 else f"k0.v{i}"
        ins = [prev, "w" if name == "kb.minimum" else "x"] if name in ("kb.minimum", "kb.maximum") else [prev]
        prog.append({"op": name, "inputs": ins, "output": out, "attrs": attrs})
        prev = out
    manifest = {"buffers": [{"name": "x", "shape": [8, 16], "dtype": "f32", "role": "input"},
                            {"name": "w", "shape": [8, 16], "dtype": "f32", "role": "input"},
                            {"name": "y", "shape": [8, 16], "dtype": "f32", "role": "output"}],
                "program": prog}
    torch.manual_seed(0)
    fn, inputs, _, _ = torch_peer.build(manifest, None, device="cpu")
    (y,) = fn(**inputs)
    x, w = inputs["x"], inputs["w"]
    v = F.softsign(F.mish(F.hardswish(F.hardsigmoid(F.hardtanh(F.selu(F.elu(F.softplus(x, 2.0, 20.0), 1.5)), -2.0, 2.0)))))
    v = torch.maximum(torch.minimum(-v.abs(), w), x).clamp(min=0.0625)
    want = torch.log(torch.rsqrt(torch.sqrt(v))).clamp(-4.0, 4.0)
    assert torch.equal(y, want)


def test_norms_and_reduce():
    # The bundle of examples/layernorm.mlir, smaller: the residual add, then
    # layer_norm with weight and bias; an rms_norm and a reduce beside it.
    m = {
        "buffers": [
            {"name": "x", "shape": [8, 32], "dtype": "f32", "role": "input"},
            {"name": "r", "shape": [8, 32], "dtype": "f32", "role": "input"},
            {"name": "w", "shape": [32], "dtype": "f32", "role": "input"},
            {"name": "b", "shape": [32], "dtype": "f32", "role": "input"},
            {"name": "y", "shape": [8, 32], "dtype": "f32", "role": "output"},
            {"name": "z", "shape": [8, 32], "dtype": "f32", "role": "output"},
            {"name": "s", "shape": [8, 1], "dtype": "f32", "role": "output"},
        ],
        "program": [
            {"op": "kb.add", "inputs": ["x", "r"], "output": "k0.v0"},
            {"op": "kb.layer_norm", "inputs": ["k0.v0", "w", "b"], "output": "y", "attrs": {"eps": 1e-5}},
            {"op": "kb.rms_norm", "inputs": ["x", "w"], "output": "z", "attrs": {"eps": 1e-6}},
            {"op": "kb.reduce", "inputs": ["x"], "output": "s", "attrs": {"kind": "max", "keepdim": True}},
        ],
    }
    torch.manual_seed(0)
    fn, inputs, _, _ = torch_peer.build(m, None, device="cpu")
    with torch.no_grad():
        y, z, s = fn(**inputs)
    x, r, w, b = (inputs[k] for k in "xrwb")
    assert torch.allclose(y, F.layer_norm(x + r, (32,), w, b, 1e-5))
    ms = x.pow(2).mean(-1, keepdim=True)
    assert torch.allclose(z, x * torch.rsqrt(ms + 1e-6) * w, atol=1e-6)
    assert torch.equal(s, x.amax(-1, keepdim=True))


def test_log_softmax():
    m = {
        "buffers": [
            {"name": "x", "shape": [8, 32], "dtype": "f32", "role": "input"},
            {"name": "y", "shape": [8, 32], "dtype": "f32", "role": "output"},
        ],
        "program": [{"op": "kb.log_softmax", "inputs": ["x"], "output": "y"}],
    }
    torch.manual_seed(0)
    fn, inputs, _, _ = torch_peer.build(m, None, device="cpu")
    with torch.no_grad():
        (y,) = fn(**inputs)
    assert torch.equal(y, torch.log_softmax(inputs["x"], dim=-1))


def test_reduce_axis_and_all():
    m = {
        "buffers": [
            {"name": "x", "shape": [4, 8, 16], "dtype": "f32", "role": "input"},
            {"name": "c", "shape": [4, 16], "dtype": "f32", "role": "output"},
            {"name": "t", "shape": [1], "dtype": "f32", "role": "output"},
            {"name": "k", "shape": [1, 1, 1], "dtype": "f32", "role": "output"},
        ],
        "program": [
            {"op": "kb.reduce", "inputs": ["x"], "output": "c", "attrs": {"kind": "sum", "axis": 1}},
            {"op": "kb.reduce", "inputs": ["x"], "output": "t", "attrs": {"kind": "max", "all": True}},
            {"op": "kb.reduce", "inputs": ["x"], "output": "k",
             "attrs": {"kind": "mean", "all": True, "keepdim": True}},
        ],
    }
    torch.manual_seed(0)
    fn, inputs, _, _ = torch_peer.build(m, None, device="cpu")
    with torch.no_grad():
        c, t, k = fn(**inputs)
    x = inputs["x"]
    assert torch.equal(c, x.sum(1))
    assert t.shape == (1,) and torch.equal(t[0], x.amax())
    assert k.shape == (1, 1, 1) and torch.allclose(k.flatten()[0], x.mean())
