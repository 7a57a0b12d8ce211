#!/usr/bin/env python3
"""One line per bundle of a gpu-check.sh run: kb's median time and TFLOP/s,
each baseline kb-run timed in the same process (the best cuBLAS route per
precision, the unfused bundle), and PyTorch's best time for the same program
from bench/torch_peer.py in the same call, with kb's speed-up over it.

Usage: python3 bench/summarize.py RESULTS_DIR [--json OUT.json]
RESULTS_DIR holds kb_results.json and (optionally) torch_peer.json."""
import json
import os
import sys


def main():
    d = sys.argv[1]
    r = json.load(open(os.path.join(d, "kb_results.json")))
    p = {}
    if os.path.exists(os.path.join(d, "torch_peer.json")):
        p = json.load(open(os.path.join(d, "torch_peer.json")))
    rows = {}
    for name, rep in sorted(r.items()):
        t = rep.get("time", {}).get("median_ms")
        row = {"ok": rep.get("ok")}
        if t is None:
            print(f"{name:48s} no time (ok={rep.get('ok')})")
            rows[name] = row
            continue
        row.update(kb_ms=t, tflops=rep.get("achieved_tflops", 0),
                   fraction_of_copy=rep.get("fraction_of_copy", 0))
        line = f"{name:46s} kb {t:.4f} ms {row['tflops']:6.1f} TF/s"
        best_lib = None
        for b in rep.get("baselines", []):
            nm = b["name"]
            short = nm.split(" (")[0] if nm.startswith("cuBLAS") else "unfused"
            ms = b["time"]["median_ms"]
            row[short] = ms
            line += f" | {short} {ms:.4f}"
            if short.startswith("cuBLAS") and (precision_of(rep) in short.lower()):
                best_lib = ms
        pr = p.get(name, {})
        strongest = [v for v in (best_lib, pr.get("best_ms")) if v]
        if "best_ms" in pr:
            row["torch"] = pr["best_ms"]
            row["torch_route"] = pr["best"]
            line += f" | torch {pr['best']} {pr['best_ms']:.4f}"
        if strongest:
            row["vs_strongest"] = min(strongest) / t
            line += f" | kb vs strongest {row['vs_strongest']:.3f}x"
        rows[name] = row
        print(line)
    if "--json" in sys.argv:
        json.dump(rows, open(sys.argv[sys.argv.index("--json") + 1], "w"), indent=1)


def precision_of(rep):
    """'tf32' or 'fp32': the cuBLAS baseline that matches the program."""
    for k in rep.get("kernels", []):
        cfg = k.get("config", "")
        if "tf32x3" in cfg:
            return "fp32"  # near-fp32 accuracy: its peer is cuBLAS fp32
        if "wgmma" in cfg or "mma_sync" in cfg:
            return "tf32"
    return "fp32"


if __name__ == "__main__":
    main()
