#!/usr/bin/env python3
"""kb's time against its strongest peer, per program of one GPU call:
kb-run's median (gpu-check's kb_results.json, L2 flushed) against the
fastest of kb-run's cuBLAS routes (matmul bundles) and torch_peer.py's
eager / F.linear / torch.compile times (torch_peer.json) of the same call.
Usage: bench/peer_ratio.py CHECK_DIR   (the folder with both files)
Prints one line a program: peer time / kb time (above 1: kb is faster)."""
import json
import os
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: bench/peer_ratio.py CHECK_DIR")
    d = sys.argv[1]
    try:
        kb = json.load(open(os.path.join(d, "kb_results.json")))
        peers = json.load(open(os.path.join(d, "torch_peer.json")))
    except (OSError, ValueError) as e:
        sys.exit(f"bench/peer_ratio.py: {d}: needs gpu-check's kb_results.json "
                 f"and torch_peer.json ({e})")
    for name in sorted(peers):
        if name not in kb:
            continue
        t = kb[name]["time"]["median_ms"]
        routes = [b["time"]["median_ms"] for b in kb[name].get("baselines", [])
                  if b["name"].startswith("cuBLAS")]
        torch_ms = peers[name]["best_ms"]
        best = min(routes + [torch_ms])
        cublas = f"{min(routes):.4f}" if routes else "-"
        print(f"{name:40s} kb {t:.4f} ms  cuBLAS {cublas}  torch "
              f"{peers[name]['best']} {torch_ms:.4f}  -> {best / t:.3f}x")


if __name__ == "__main__":
    main()
