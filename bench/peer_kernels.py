#!/usr/bin/env python3
"""Which kernels PyTorch's matmul runs for a shape, and their launch shapes.

For each SHAPE (MxNxK, with a `t` suffix for a transposed B: F.linear), runs
torch.matmul / F.linear with TF32 allowed under torch.profiler and prints, as
JSON, every CUDA kernel of the timed runs: its name (cuBLAS's names carry the
tile, cluster and split of the kernel it picked), grid, block, registers,
shared memory and median duration. What a peer does on a shape kb loses is
the first thing to know before changing kb's model or kernel.

Usage: python3 bench/peer_kernels.py OUT.json SHAPE...
e.g.   python3 bench/peer_kernels.py $OUT/peer.json 1000x700x1500 1000x700x1500t
Needs torch with CUDA; exits with one line otherwise."""
import json
import os
import re
import statistics
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-3], file=sys.stderr)
        return 2
    try:
        import torch
        import torch.nn.functional as F
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("peer_kernels.py: PyTorch is not installed here; nothing run")
        return 2
    if not torch.cuda.is_available():
        print("peer_kernels.py: no CUDA device; nothing run")
        return 2
    torch.backends.cuda.matmul.allow_tf32 = True
    out = {}
    for spec in sys.argv[2:]:
        m = re.fullmatch(r"(\d+)x(\d+)x(\d+)(t?)", spec)
        if not m:
            print(f"peer_kernels.py: shape '{spec}' is not MxNxK or MxNxKt",
                  file=sys.stderr)
            return 2
        M, N, K, t = int(m[1]), int(m[2]), int(m[3]), m[4] == "t"
        a = torch.randn(M, K, device="cuda")
        b = torch.randn(N, K, device="cuda") if t else torch.randn(K, N, device="cuda")
        run = (lambda: F.linear(a, b)) if t else (lambda: torch.matmul(a, b))
        for _ in range(20):
            run()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(50):
                run()
            torch.cuda.synchronize()
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            path = f.name
        prof.export_chrome_trace(path)
        events = json.load(open(path)).get("traceEvents", [])
        os.unlink(path)
        kernels = {}
        for e in events:
            if e.get("cat") != "kernel":
                continue
            args = e.get("args", {})
            k = kernels.setdefault(e["name"], {
                "grid": args.get("grid"), "block": args.get("block"),
                "registers": args.get("registers per thread"),
                "shared_bytes": args.get("shared memory"), "us": []})
            k["us"].append(e.get("dur", 0))
        out[spec] = [dict(name=n, count=len(k["us"]),
                          median_us=statistics.median(k["us"]),
                          **{x: k[x] for x in ("grid", "block", "registers",
                                               "shared_bytes")})
                     for n, k in kernels.items()]
        for k in out[spec]:
            print(f"{spec}: {k['median_us']:.1f} us grid {k['grid']} "
                  f"block {k['block']} {k['name'][:150]}")
    json.dump(out, open(sys.argv[1], "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
