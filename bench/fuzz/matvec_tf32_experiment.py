#!/usr/bin/env python3
"""Issue #19's question on the CPU: is a tf32 matrix-vector product's error at
K ~ 10^6 (kb-run reported 2.5e-3 relative) the kernel's or the tolerance's?

Simulates C = A x (M rows, N = 1) as kb's mma kernels compute it without
split-K: operands rounded to tf32 (round to nearest, as kb's half-ulp add),
products summed exactly per k8 instruction, each step added into an fp32
accumulator in k order, rounding to nearest (RN) or truncating (RZ, as the
tensor cores do); and the same with fp32 operands. Prints the relative
Frobenius error against float64 and max |err| / sum |a||x|.
docs/tolerances.md has the table for K = 2^17, 2^18, 2^20.

Usage: matvec_tf32_experiment.py M K [MEAN]   (python3 + numpy; 32 x 2^20
takes about half a minute)
"""
import numpy as np, sys
def tf32_rna(x):
    b = x.view(np.uint32).astype(np.uint64)
    b = (b + 0x1000) & 0xFFFFE000
    return b.astype(np.uint32).view(np.float32)
def rz32(x64):
    f = x64.astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x64)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f
def run(M, K, mean=0.0, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K), dtype=np.float32) + np.float32(mean)
    x = rng.standard_normal(K, dtype=np.float32) + np.float32(mean)
    exact = A.astype(np.float64) @ x.astype(np.float64)
    absum = np.abs(A.astype(np.float64)) @ np.abs(x.astype(np.float64))
    res = {}
    for opname, rnd in (("fp32", lambda v: v), ("tf32", tf32_rna)):
        Ar, xr = rnd(A), rnd(x)
        P = (Ar.astype(np.float64) * xr.astype(np.float64))  # exact products
        S8 = P.reshape(M, K // 8, 8).sum(axis=2)  # k8 step (exact-ish)
        for accname in ("RN", "RZ"):
            acc = np.zeros(M, np.float32)
            for t in range(K // 8):
                s = acc.astype(np.float64) + S8[:, t]
                acc = s.astype(np.float32) if accname == "RN" else rz32(s)
            err = acc.astype(np.float64) - exact
            res[(opname, accname)] = (np.linalg.norm(err) / np.linalg.norm(exact), np.max(np.abs(err) / absum))
    return res
M = int(sys.argv[1]); K = int(sys.argv[2]); mean = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
for k, (fr, w) in run(M, K, mean).items():
    print(f"M={M} K={K} mean={mean} operands={k[0]} accumulate={k[1]}: relFrob={fr:.3e} max|err|/sum|ab|={w:.3e}")
