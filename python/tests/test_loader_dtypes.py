"""kb.load's calling convention in the manifest's dtypes (issue #44), on a
hand-written bundle and without a GPU: kb.loader.Calling is the part of
kb.load that checks the arguments and allocates the outputs (Loaded adds the
kernels); here it runs on CPU tensors. Also the .npy files kb.run writes for
16-bit buffers and the tensor maps' element sizes."""
import json

import numpy as np
import pytest
import torch

import kb
from kb.cuda import TENSOR_MAP_TYPES, tensor_map_arrays
from kb.loader import Calling, torch_dtype
from kb.runner import bf16_bits, npy_array


def write_bundle(path, dtype="bf16", sidecar=None, extra_buffers=()):
    """A manifest for y = f(x, w) with buffers of `dtype` (no kernels: the
    calling convention does not read them)."""
    path.mkdir(parents=True, exist_ok=True)
    manifest = {
        "format": "kb-bundle", "version": 1, "target": "sm_90a", "function": "f",
        "buffers": [
            {"name": "x", "shape": [64, 128], "dtype": dtype, "role": "input"},
            {"name": "w", "shape": [32, 128], "dtype": dtype, "role": "input"},
            {"name": "t1", "shape": [64, 32], "dtype": dtype, "role": "scratch"},
            {"name": "ws0", "shape": [16], "dtype": "i32", "role": "workspace"},
            {"name": "tm0", "shape": [32], "dtype": "i32", "role": "tensor_map",
             "tensor_map": {"of": "w", "dims": [32, 128], "box": [32, 64], "swizzle": "128B"}},
            {"name": "y", "shape": [64, 32], "dtype": dtype, "role": "output"},
        ] + list(extra_buffers),
        "kernels": [], "program": [],
    }
    (path / "manifest.json").write_text(json.dumps(manifest))
    if sidecar is not None:
        (path / "kb_python.json").write_text(json.dumps(sidecar))
    return kb.Bundle.open(path)


T = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_arguments_and_outputs_in_the_manifests_dtype(tmp_path, dtype):
    c = Calling(write_bundle(tmp_path / "b", dtype), "cpu")
    x = torch.randn(64, 128).to(T[dtype])
    w = torch.randn(32, 128).to(T[dtype])
    bufs, outs = c.map_args((x, w))
    assert bufs["x"] is x and bufs["w"] is w
    assert len(outs) == 1 and outs[0].dtype == T[dtype] and tuple(outs[0].shape) == (64, 32)
    assert bufs["y"].data_ptr() == outs[0].data_ptr() and bufs["y"].dtype == T[dtype]
    assert c.dtypes["ws0"] == torch.int32 and c.dtypes["t1"] == T[dtype]


@pytest.mark.parametrize("dtype, given", [("bf16", torch.float32), ("bf16", torch.float16),
                                          ("f16", torch.bfloat16), ("f32", torch.bfloat16),
                                          ("f32", torch.float64)])
def test_a_tensor_of_another_dtype_is_refused(tmp_path, dtype, given):
    c = Calling(write_bundle(tmp_path / "b", dtype), "cpu")
    x = torch.randn(64, 128).to(T[dtype])
    w = torch.randn(32, 128).to(given)
    with pytest.raises(kb.KbError) as e:
        c.map_args((x, w))
    msg = str(e.value)
    for word in ("argument 1 (w)", str(given), "buffer 'w'", f"is {dtype} ({T[dtype]})"):
        assert word in msg, f"{word!r} not in: {msg}"


def test_out_must_have_the_outputs_dtype(tmp_path):
    c = Calling(write_bundle(tmp_path / "b", "f16"), "cpu")
    x, w = torch.randn(64, 128).half(), torch.randn(32, 128).half()
    y = torch.empty(64, 32, dtype=torch.float16)
    bufs, outs = c.map_args((x, w), out=y)
    assert outs[0] is y
    with pytest.raises(kb.KbError) as e:
        c.map_args((x, w), out=torch.empty(64, 32))
    assert "out[0] (buffer 'y') must be a contiguous torch.float16 tensor" in str(e.value)
    assert "got torch.float32 (64, 32)" in str(e.value)


def test_parameters_are_checked_too(tmp_path):
    sig = {"args": [{"name": "x", "shape": [64, 128]}],
           "inputs": [{"buffer": "x", "source": ["arg", 0], "shape": [64, 128]},
                      {"buffer": "w", "source": ["param", "fc.weight"], "shape": [32, 128]}],
           "outputs": [{"buffer": "y", "shape": [64, 32]}], "single_output": True}
    b = write_bundle(tmp_path / "b", "bf16", sidecar=sig)
    x = torch.randn(64, 128).bfloat16()
    ok = Calling(b, "cpu", {"fc.weight": torch.randn(32, 128).bfloat16()})
    assert ok.map_args((x,))[1][0].dtype == torch.bfloat16
    bad = Calling(b, "cpu", {"fc.weight": torch.randn(32, 128)})
    with pytest.raises(kb.KbError, match=r"parameter fc.weight is torch.float32; the bundle's buffer 'w' is bf16"):
        bad.map_args((x,))


def test_unknown_dtype_and_missing_buffer_are_refused(tmp_path):
    with pytest.raises(kb.KbError, match="buffer 'z' has dtype 'f64'"):
        Calling(write_bundle(tmp_path / "a", "bf16",
                             extra_buffers=[{"name": "z", "shape": [4], "dtype": "f64", "role": "scratch"}]), "cpu")
    sig = {"args": [{"name": "x", "shape": [64, 128]}],
           "inputs": [{"buffer": "nope", "arg": 0, "shape": [64, 128]}],
           "outputs": [{"buffer": "y", "shape": [64, 32]}]}
    with pytest.raises(kb.KbError, match="names buffer 'nope'"):
        Calling(write_bundle(tmp_path / "b", "bf16", sidecar=sig), "cpu")


def test_torch_dtype_of_a_buffer():
    assert torch_dtype({"name": "a"}) == torch.float32  # absent: f32, as before
    assert torch_dtype({"name": "a", "dtype": "bf16"}) == torch.bfloat16
    assert torch_dtype({"name": "a", "dtype": "f16"}) == torch.float16


def test_tensor_maps_of_16_bit_buffers_have_2_byte_elements():
    dt32, g32, s32, b32, e32, r = tensor_map_arrays([256, 128], [256, 128], [64, 32], "f32")
    dt16, g16, s16, b16, e16, r16 = tensor_map_arrays([256, 128], [256, 128], [64, 64], "bf16")
    assert (dt32, dt16, TENSOR_MAP_TYPES["f16"][0]) == (7, 9, 6)
    assert r == r16 == 2
    assert list(g16)[:2] == [128, 256] and list(b16)[:2] == [64, 64]
    assert s32[0] == 128 * 4 and s16[0] == 128 * 2  # the row pitch in bytes
    with pytest.raises(kb.KbError, match="i32"):
        tensor_map_arrays([4, 4], [4, 4], [4, 4], "i32")


def test_tensor_maps_take_the_manifests_swizzle():
    """A 16-bit row-major B's narrower boxes name their swizzle (64B or 32B);
    kb.load encodes each map with the manifest's, 128B where it names none."""
    from types import SimpleNamespace
    from kb.cuda import (CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
                         CU_TENSOR_MAP_SWIZZLE_128B, TENSOR_MAP_SWIZZLES, Driver)
    from kb.loader import Loaded
    assert TENSOR_MAP_SWIZZLES == {"128B": CU_TENSOR_MAP_SWIZZLE_128B, "64B": CU_TENSOR_MAP_SWIZZLE_64B,
                                   "32B": CU_TENSOR_MAP_SWIZZLE_32B}
    calls = []
    drv = SimpleNamespace(encode_tensor_map=lambda *a: calls.append(a) or bytes(128))
    w = torch.zeros(64, 96, dtype=torch.bfloat16)
    fake = SimpleNamespace(drv=drv, torch=torch, device="cpu", _map_cache={},
                           buffers={"w": {"name": "w", "shape": [64, 96], "dtype": "bf16"}})
    for name, tm in (("tm0", {"of": "w", "dims": [64, 96], "box": [64, 32], "swizzle": "64B"}),
                     ("tm1", {"of": "w", "dims": [64, 96], "box": [64, 16], "swizzle": "32B"}),
                     ("tm2", {"of": "w", "dims": [64, 96], "box": [64, 64]})):
        Loaded._tensor_map(fake, {"name": name, "tensor_map": tm}, {"w": w})
    assert [(c[3], c[4], c[5]) for c in calls] == [([64, 32], "bf16", "64B"), ([64, 16], "bf16", "32B"),
                                                  ([64, 64], "bf16", "128B")]
    # Any other swizzle is refused before the driver is asked.
    with pytest.raises(kb.KbError, match="swizzled '16B'"):
        Driver.encode_tensor_map(SimpleNamespace(lib=None), 0, [4, 8], [4, 8], [4, 8], "bf16", "16B")


def test_npy_files_for_16_bit_buffers():
    x = torch.randn(1000) * 50
    bits = npy_array(x, "bf16")
    assert bits.dtype == np.dtype("<u2")
    assert np.array_equal(bits, x.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
    # From numpy (no bfloat16 there): the same round to nearest even.
    assert np.array_equal(bf16_bits(x.numpy()), bits)
    assert np.array_equal(npy_array(x.numpy(), "bf16"), bits)
    # Ties go to even: 1 + 2^-8 is halfway between two bf16 values.
    assert bf16_bits(np.float32(1 + 2 ** -8)) == 0x3F80 and bf16_bits(np.float32(1 + 3 * 2 ** -8)) == 0x3F82
    h = npy_array(x, "f16")
    assert h.dtype == np.dtype("<f2") and np.array_equal(h, x.half().numpy())
    f = npy_array(x.bfloat16(), "f32")
    assert f.dtype == np.dtype("<f4") and np.array_equal(f, x.bfloat16().float().numpy())
    with pytest.raises(kb.KbError, match="i32"):
        npy_array(x, "i32")
