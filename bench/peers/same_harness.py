#!/usr/bin/env python3
"""kb's softmax kernels and the Triton one-pass softmax timed by the same harness.

kb-run and torch_baselines.py time with different launchers (the CUDA driver
API from C++, and Triton's Python launcher inside triton.testing.do_bench), so
their fixed costs differ (the same kb softmax of 3x4099, which moves almost
nothing, took 4.7 us in kb-run and 5.4-6.1 us inside do_bench: runs 48 and 56
of 2026-11-30), a few percent of a 36-microsecond kernel. This script launches kb's cubin through
the driver API (ctypes, in PyTorch's context) inside the same do_bench as a
Triton one-pass kernel written like the one in bench/peers/torch_baselines.py, on the same
tensors, and checks kb's output against torch.softmax (float64) first.

Usage (GPU machine, PyTorch and Triton installed):
  python3 bench/peers/same_harness.py OUT.json BUNDLE_DIR [BUNDLE_DIR ...]
Only single-kernel softmax bundles whose buffers are inputs, outputs and
workspaces (no clusters) are supported; anything else is refused with a line.
"""
import ctypes
import json
import os
import sys

try:
    import torch
    import triton
    import triton.language as tl
    from triton.testing import do_bench
except ImportError as e:
    sys.exit(f"same_harness.py needs PyTorch and Triton (the GPU machine has both): {e}")


@triton.jit
def one_pass_softmax(out, inp, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(inp + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


def triton_softmax(x, y):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    warps = 32 if block >= 16384 else (16 if block >= 4096 else 4)
    return lambda: one_pass_softmax[(rows,)](y, x, cols, cols, BLOCK=block, num_warps=warps)


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        torch.cuda.init()
        torch.empty(1, device="cuda")  # PyTorch's primary context is now current

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed with CUDA error {rc}")

    def load(self, cubin_path, name):
        data = open(cubin_path, "rb").read()
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(data)),
                   "cuModuleLoadData")
        func = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(func), module, name.encode()),
                   "cuModuleGetFunction")
        return func

    def launcher(self, func, grid, block, shared, pointers):
        if shared > 48 * 1024:
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
            self.check(self.lib.cuFuncSetAttribute(func, 8, shared), "cuFuncSetAttribute")
        args = [ctypes.c_uint64(p) for p in pointers]
        params = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p)
                                                 for a in args])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

        def launch():
            self.check(self.lib.cuLaunchKernel(func, grid[0], grid[1], grid[2], block[0],
                                               block[1], block[2], shared, stream, params, None),
                       "cuLaunchKernel")
        launch.keep_alive = (args, params)  # params points into args
        return launch


DTYPES = {"f32": torch.float32, "i32": torch.int32}


def run_bundle(driver, bundle):
    manifest = json.load(open(os.path.join(bundle, "manifest.json")))
    kernels = manifest["kernels"]
    if len(kernels) != 1 or manifest["program"][0]["op"] != "kb.softmax":
        raise ValueError("not a single-kernel softmax bundle")
    k = kernels[0]
    cols = manifest["program"][0]["shape"][-1]
    if triton.next_power_of_2(cols) > 65536:
        raise ValueError("rows wider than 65536 do not fit the one-pass Triton kernel")
    if k.get("cluster") and any(c > 1 for c in k["cluster"]):
        raise ValueError("thread-block clusters are not supported here")
    buffers = {b["name"]: b for b in manifest["buffers"]}
    tensors = {}
    for name, b in buffers.items():
        if b["role"] not in ("input", "output", "workspace"):
            raise ValueError(f"buffer role {b['role']} is not supported here")
        shape, dtype = b["shape"], DTYPES[b["dtype"]]
        if b["role"] == "input":
            tensors[name] = torch.randn(shape, device="cuda", dtype=dtype)
        elif b["role"] == "workspace":
            tensors[name] = torch.zeros(shape, device="cuda", dtype=dtype)
        else:
            tensors[name] = torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    func = driver.load(os.path.join(bundle, k["cubin"]), k["name"])
    launch = driver.launcher(func, k["grid"], k["block"], k["dynamic_shared_bytes"],
                             [tensors[a].data_ptr() for a in k["args"]])
    x = tensors[manifest["program"][0]["inputs"][0]]
    y = tensors[manifest["program"][0]["output"]]
    launch()
    torch.cuda.synchronize()
    ref = torch.softmax(x.double(), dim=-1)
    err = ((y.double() - ref).abs().max() / ref.abs().max()).item()
    if not err < 1e-5:
        raise RuntimeError(f"kb's output is wrong: max error {err:.3e} relative to the largest value")
    y_triton = torch.empty_like(x)
    tri = triton_softmax(x, y_triton)
    tri()
    torch.cuda.synchronize()
    err_t = ((y_triton.double() - ref).abs().max() / ref.abs().max()).item()
    copy = lambda: y_triton.copy_(x)
    # Interleaved, twice, so that drift hits both alike.
    times = {"kb": [], "triton": [], "copy": []}
    for _ in range(2):
        for name, fn in (("kb", launch), ("triton", tri), ("copy", copy)):
            times[name].append(do_bench(fn, warmup=50, rep=300, return_mode="median"))
    best = {n: min(v) for n, v in times.items()}
    nbytes = 2 * x.numel() * x.element_size()
    return {
        "bundle": os.path.basename(os.path.normpath(bundle)),
        "shape": list(x.shape),
        "kb_max_rel_err": err,
        "triton_max_rel_err": err_t,
        "ms": times,
        "kb_ms": best["kb"],
        "triton_ms": best["triton"],
        "copy_ms": best["copy"],
        "kb_speedup_over_triton": best["triton"] / best["kb"],
        "kb_fraction_of_same_size_copy": best["copy"] / best["kb"],
        "kb_gbs": nbytes / best["kb"] / 1e6,
    }


def main(argv):
    if len(argv) < 3:
        print("usage: same_harness.py OUT.json BUNDLE_DIR [BUNDLE_DIR ...]", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("same_harness.py: no CUDA GPU visible to PyTorch", file=sys.stderr)
        return 2
    driver = Driver()
    results, failed = [], 0
    for bundle in argv[2:]:
        try:
            r = run_bundle(driver, bundle)
        except (ValueError, RuntimeError, OSError, KeyError) as e:
            print(f"{bundle}: {e}", file=sys.stderr)
            failed += 1
            continue
        results.append(r)
        print(f"{r['bundle']:28s} kb {r['kb_ms']:.4f} ms  triton {r['triton_ms']:.4f} ms  "
              f"copy {r['copy_ms']:.4f} ms  kb/triton speedup {r['kb_speedup_over_triton']:.3f}  "
              f"kb {100 * r['kb_fraction_of_same_size_copy']:.1f}% of the same-size copy", flush=True)
    json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "triton": triton.__version__, "results": results}, open(argv[1], "w"), indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
