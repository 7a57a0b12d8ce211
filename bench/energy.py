#!/usr/bin/env python3
"""Energy a launch of kb's kernels against PyTorch's (cuBLAS) on the same
tensors, read from the board's energy counter (NVML), to test whether kb's
TF32 kernels lose to cuBLAS at the power cap by spending more energy on the
same work (docs/perf-notes.md, "Matmul TF32 on the large squares").

The entries in turn, ROUNDS times, each launched back to back for SECONDS
(the "cap" phase: the board at its power limit): time a launch (CUDA
events), the board's mean power and SM clock (sampled every 10 ms), energy
a launch (energy counter delta / launches). (A "duty" phase of single
launches with 1 ms idle between them, below the limit, was tried in
bench/results/2026-12-04-cublas-form call 2 and did not separate the
kernels: removed; git history has it.)
The bundles are F.linear programs (inputs x [M, K], w [N, K]); PyTorch's
peer is F.linear with TF32 allowed on the same x and w. Every kb bundle is
checked against it (max relative error 5e-3) before it is measured.

Usage: python3 bench/energy.py OUT.json BUNDLE_DIR...
   env KB_ENERGY_ROUNDS (3), KB_ENERGY_SECONDS (1.5)."""
import ctypes
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))


class Nvml:
    NVML_CLOCK_SM = 1

    def __init__(self):
        self.lib = ctypes.CDLL("libnvidia-ml.so.1")
        self._ok(self.lib.nvmlInit_v2(), "nvmlInit")
        self.h = ctypes.c_void_p()
        self._ok(self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.h)), "handle")

    def _ok(self, r, what):
        if r != 0:
            raise RuntimeError(f"NVML {what} failed ({r})")

    def energy_mj(self):
        e = ctypes.c_ulonglong()
        self._ok(self.lib.nvmlDeviceGetTotalEnergyConsumption(self.h, ctypes.byref(e)), "energy")
        return e.value

    def sm_mhz(self):
        c = ctypes.c_uint()
        self._ok(self.lib.nvmlDeviceGetClockInfo(self.h, self.NVML_CLOCK_SM, ctypes.byref(c)), "clock")
        return c.value

    def power_w(self):
        p = ctypes.c_uint()
        self._ok(self.lib.nvmlDeviceGetPowerUsage(self.h, ctypes.byref(p)), "power")
        return p.value / 1000.0


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn.functional as F
        import kb
    except ImportError as e:
        print(f"energy.py: {e}: it needs PyTorch with CUDA (the GPU machine)", file=sys.stderr)
        return 2

    out, dirs = sys.argv[1], sys.argv[2:]
    rounds = int(os.environ.get("KB_ENERGY_ROUNDS", "3"))
    seconds = float(os.environ.get("KB_ENERGY_SECONDS", "1.5"))
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        nv = Nvml()
    except (OSError, RuntimeError) as e:
        print(f"energy.py: no NVML energy counter on this machine ({e}); nothing measured", file=sys.stderr)
        return 2
    entries = []
    tensors = {}
    for d in dirs:
        fast = kb.load(d)
        ins = fast.bundle.buffers("input")
        if len(ins) != 2 or len(ins[0]["shape"]) != 2 or len(ins[1]["shape"]) != 2 \
                or ins[0]["shape"][1] != ins[1]["shape"][1]:
            print(f"energy.py: {d} is not a plain F.linear program (inputs x [M, K], w [N, K]); "
                  "its bundles come from bench/linear_check.sh energy", file=sys.stderr)
            return 2
        x_spec, w_spec = ins
        m, k = x_spec["shape"]
        n = w_spec["shape"][0]
        key = (m, n, k)
        if key not in tensors:
            g = torch.Generator(device="cuda").manual_seed(0)
            x = torch.randn(m, k, device="cuda", generator=g)
            w = torch.randn(n, k, device="cuda", generator=g)
            tensors[key] = (x, w, torch.empty(m, n, device="cuda"))
            entries.append((f"torch-F.linear-{m}x{n}x{k}", key, lambda x=x, w=w, y=tensors[key][2]: torch.matmul(x, w.t(), out=y)))
        x, w, y = tensors[key]
        ref = F.linear(x, w)
        got = fast(x, w)
        err = ((got - ref).abs().max() / ref.abs().max()).item()
        if not err < 5e-3:
            print(f"{d}: wrong against F.linear (max relative error {err:.2e}); not measured")
            return 3
        entries.append((Path(d).name, key, lambda fast=fast, x=x, w=w, y=y: fast(x, w, out=y)))

    def cap(fn):
        samples = []
        stop = threading.Event()

        def sampler():
            while not stop.is_set():
                samples.append((nv.sm_mhz(), nv.power_w()))
                time.sleep(0.01)

        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        th = threading.Thread(target=sampler)
        e0, t0 = nv.energy_mj(), time.time()
        th.start()
        s.record()
        n = 0
        while time.time() - t0 < seconds:
            for _ in range(10):
                fn()
            n += 10
            e.record()
            e.synchronize()
        stop.set()
        th.join()
        e1, t1 = nv.energy_mj(), time.time()
        ms = s.elapsed_time(e) / n
        late = samples[len(samples) // 3:]  # after the clock has settled
        return {"launches": n, "ms": ms, "mj_per_launch": (e1 - e0) / n,
                "mean_w": (e1 - e0) / 1000.0 / (t1 - t0),
                "sm_mhz": statistics.median(c for c, _ in late) if late else None,
                "power_w": statistics.median(p for _, p in late) if late else None}

    results = {"gpu": torch.cuda.get_device_name(), "rounds": []}
    time.sleep(1.0)
    e0, t0 = nv.energy_mj(), time.time()
    time.sleep(1.0)
    results["idle_w"] = (nv.energy_mj() - e0) / 1000.0 / (time.time() - t0)
    for r in range(rounds):
        for name, key, fn in entries:
            c = cap(fn)
            results["rounds"].append({"round": r, "name": name, "shape": key, "cap": c})
            print(f"{r} {name:58s} cap {c['ms']:.4f} ms {c['mj_per_launch']:7.1f} mJ {c['mean_w']:5.0f} W "
                  f"{c['sm_mhz']} MHz", flush=True)
    Path(out).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
