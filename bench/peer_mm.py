#!/usr/bin/env python3
"""Launches PyTorch's TF32 matmul of one shape, for a profiler to catch
cuBLAS's kernel (ncu -k regex:gemm --launch-skip 10 --launch-count 1).

Usage: bench/peer_mm.py MxNxK[t] [LAUNCHES]   (t: B given as [N, K], F.linear)"""
import re
import sys

import torch


def main(argv):
    m = re.fullmatch(r"([0-9]+)x([0-9]+)x([0-9]+)(t?)", argv[1] if len(argv) > 1 else "")
    if not m:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    rows, cols, k = (int(g) for g in m.groups()[:3])
    launches = int(argv[2]) if len(argv) > 2 else 30
    torch.backends.cuda.matmul.allow_tf32 = True
    a = torch.randn(rows, k, device="cuda")
    if m.group(4):
        w = torch.randn(cols, k, device="cuda")
        run = lambda: torch.nn.functional.linear(a, w)
    else:
        b = torch.randn(k, cols, device="cuda")
        run = lambda: torch.matmul(a, b)
    for _ in range(launches):
        run()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
