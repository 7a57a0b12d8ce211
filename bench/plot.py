#!/usr/bin/env python3
"""Draws docs/perf-summary.svg from one gpu-check run (no plotting library
needed): memory-bound kernels as a fraction of the copy bandwidth measured in
the same run, matmuls as TFLOP/s, kb next to its baselines.

Usage: bench/plot.py RUN OUT.svg [SOFTMAX_RUN [MATMUL_RUN]]
The softmax bars may come from another run (SOFTMAX_RUN), and the matmul
bars from a third (MATMUL_RUN); each bar is still a ratio within one run: kb
and the PyTorch/Triton baselines of a family come from the same call (the
matmul baselines are cuBLAS, timed by kb-run itself)."""
import json
import os
import sys

run, out = sys.argv[1], sys.argv[2]
softmax_run = sys.argv[3] if len(sys.argv) > 3 else run
matmul_run = sys.argv[4] if len(sys.argv) > 4 else run

def load(r):
    return (json.load(open(os.path.join(r, "kb_results.json"))),
            json.load(open(os.path.join(r, "torch_baselines.json"))))

def copy_of(t):
    return 2 * (1 << 30) / t["copy 1GiB d2d"]["ms"] / 1e6

def frac_in(t, name, bytes_):
    return bytes_ / (t[name]["ms"] * 1e-3) / 1e9 / copy_of(t)

kb, torch = load(run)
copy_gbs = copy_of(torch)

memory = []  # (label, [(series, fraction of copy)])
skb, storch = load(softmax_run)
for shape, rows, cols in [("8192x32768", 8192, 32768), ("4096x4096", 4096, 4096),
                          ("32768x1024", 32768, 1024), ("1024x400000", 1024, 400000)]:
    r = skb[f"softmax-{shape}"]
    b = 8.0 * rows * cols
    series = [("kb", r["fraction_of_copy"])]
    tri = f"softmax triton-1pass {shape}" if f"softmax triton-1pass {shape}" in storch else f"softmax triton-online {shape}"
    series += [("Triton", frac_in(storch, tri, b)),
               ("torch.compile", frac_in(storch, f"softmax compile {shape}", b)),
               ("eager", frac_in(storch, f"softmax eager {shape}", b))]
    memory.append((f"softmax {shape} ({os.path.basename(softmax_run)[-5:]})", series))
r = kb["bgd-16384x8192"]
b = 8.0 * 16384 * 8192
memory.append((f"bias+GELU+dropout 16384x8192 ({os.path.basename(run)[-5:]})",
               [("kb", r["fraction_of_copy"]), ("Triton", frac_in(torch, "bgd triton 16384x8192", b)),
                ("torch.compile", frac_in(torch, "bgd compile 16384x8192", b)),
                ("eager", frac_in(torch, "bgd eager 16384x8192", b))]))

compute = []
mkb = json.load(open(os.path.join(matmul_run, "kb_results.json")))
for name, label in [("matmul-tf32-4096-sm90a", "TF32 wgmma 4096^3"),
                    ("matmul-tf32-8192-sm90a", "TF32 wgmma 8192^3"),
                    ("matmul-tf32-4096", "TF32 mma.sync 4096^3"),
                    ("matmul-ieee-4096", "fp32 4096^3"), ("matmul-ieee-8192", "fp32 8192^3")]:
    if name not in mkb and name not in kb:
        continue
    src = mkb if name in mkb else kb
    r = src[name]
    label += f" ({os.path.basename(matmul_run if name in mkb else run)[-5:]})"
    series = [("kb", r["achieved_tflops"])]
    for bl in r["baselines"]:
        series.append((bl["name"], r["flops"] / (bl["time"]["median_ms"] * 1e-3) / 1e12))
    compute.append((label, series))

colors = {"kb": "#1f77b4", "Triton": "#ff7f0e", "torch.compile": "#2ca02c", "eager": "#9467bd",
          "cuBLAS fp32": "#8c564b", "cuBLAS TF32": "#d62728"}
W, bar, gap, left = 940, 14, 14, 290
svg = []
y = 40

def text(x, y, s, size=12, anchor="start", weight="normal"):
    svg.append(f'<text x="{x}" y="{y}" font-family="sans-serif" font-size="{size}" '
               f'text-anchor="{anchor}" font-weight="{weight}">{s}</text>')

def section(title, groups, scale, unit, fmt):
    global y
    text(10, y, title, 14, weight="bold")
    y += 20
    for label, series in groups:
        text(10, y + bar, label, 12)
        for s, v in series:
            w = max(1, v / scale * (W - left - 170))
            svg.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar - 2}" fill="{colors.get(s, "#777")}"/>')
            text(left + w + 4, y + bar - 3, f"{s}: {fmt(v)}{unit}", 10)
            y += bar
        y += gap

section("Memory-bound: fraction of the copy bandwidth measured in the same run", memory, 1.0, "",
        lambda v: f"{100 * v:.0f}%")
y += 10
section("Matmul: TFLOP/s (same run)", compute, max(v for _, s in compute for _, v in s), " TFLOP/s",
        lambda v: f"{v:.0f}")
head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{y + 20}" viewBox="0 0 {W} {y + 20}">'
text(10, 20, "kb on the H200 - bench/results/" + ", ".join(sorted({os.path.basename(x) for x in (run, softmax_run, matmul_run)})) + " (bench/plot.py)", 12)
open(out, "w").write(head + '<rect width="100%" height="100%" fill="white"/>' + "".join(svg) + "</svg>\n")
print("wrote", out)
