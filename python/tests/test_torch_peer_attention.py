"""bench/peers/torch_peer.py's peer of kb.attention, built from a hand-written
manifest and run on the CPU (the timing needs a GPU): the written-out form
torch.compile is given (causal, mask) matches a plain computation, and
F.scaled_dot_product_attention where this torch has it."""
import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("torch_peer", ROOT / "bench" / "peers" / "torch_peer.py")
torch_peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_peer)

SHAPE = [2, 3, 10, 8]  # B, H, S, D


def manifest(causal, mask):
    bufs = [{"name": n, "shape": SHAPE, "dtype": "f32", "role": "input"} for n in ("q", "k", "v")]
    if mask:
        bufs.append({"name": "m", "shape": SHAPE[2:3] * 2, "dtype": "f32", "role": "input"})
    bufs.append({"name": "o", "shape": SHAPE, "dtype": "f32", "role": "output"})
    attrs = {"scale": 0.25, "precision": "tf32", "has_mask": mask, "lse": False}
    if causal:
        attrs["causal"] = True
    return {"buffers": bufs, "program": [
        {"op": "kb.attention", "inputs": ["q", "k", "v"] + (["m"] if mask else []), "output": "o",
         "attrs": attrs}]}


def plain(q, k, v, m, causal):
    s = torch.einsum("bhid,bhjd->bhij", q, k) * 0.25
    if m is not None:
        s = s + m
    if causal:
        i = torch.arange(s.shape[-2])[:, None]
        j = torch.arange(s.shape[-1])[None, :]
        s = torch.where(j <= i, s, torch.tensor(float("-inf")))
    return torch.einsum("bhij,bhjd->bhid", torch.softmax(s, -1), v)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask", [False, True])
def test_attention_peer(causal, mask):
    m = manifest(causal, mask)
    torch.manual_seed(0)
    fn, inputs, precision, dtype = torch_peer.build(m, device="cpu", explicit_attention=True)
    assert precision == "tf32" and dtype is None
    want = plain(inputs["q"], inputs["k"], inputs["v"], inputs.get("m"), causal)
    with torch.no_grad():
        got = fn(**inputs)[0]
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    if hasattr(F, "scaled_dot_product_attention"):
        fn2, _, _, _ = torch_peer.build(m, device="cpu")
        with torch.no_grad():
            torch.testing.assert_close(fn2(**inputs)[0], want, rtol=1e-5, atol=1e-6)
