#!/usr/bin/env python3
"""The shape suite's table and plot from one gpu-check.sh run.

Usage: bench/shapes_report.py RESULTS_DIR [RESULTS_DIR ...] [--md OUT.md] [--png OUT.png]
                              [--palette 64|tab16] [--dpi N]

With several folders, a shape measured in a later one replaces the earlier
row (except where the folder's superseded.txt names it: a default kb has
since changed back) (each row's ratio is still from one call: kb and its peers timed
together); the table's last column says which run each row is from.

RESULTS_DIR holds kb_results.json (kb-run's reports, each with the cuBLAS
routes it timed in the same process; kb_results*.json, and kb_log*.txt,
kb-run's text output, for bundles whose JSON did not come back) and
torch_peer.json (PyTorch's time
for the same program, same call). For each shape-* bundle: kb's time, the
strongest peer (the fastest cuBLAS/cuBLASLt route in the program's
precision, torch.matmul / F.linear), kb's speed-up over it, and for the
memory-bound classes the fraction of the copy bandwidth kb reaches over the
program's minimal bytes. The plot (matplotlib) shows the speed-up per shape,
grouped by class, in a 64-colour PNG (--palette tab16: kb.plot's fixed
16-colour one, 4-bit); it needs Debian's
python3-matplotlib (/usr/bin/python3) and its Pillow."""
import glob
import json
import math
import re
import os
import sys

CLASSES = ["longk", "skinny", "matvec", "smallk", "batched", "odd", "medium", "square"]
MEMORY_BOUND = {"skinny", "matvec", "smallk"}


def ablation(row):
    """The same program compiled another way by hand (split = 1, mma.sync,
    the transpose written out): compared against its shape, not counted."""
    return (any(t in row["name"] for t in ("nosplit", "mmasync", "tfront"))
            or re.search(r"-v\d+x\d+s\d+", row["name"]) is not None)


def reports_from_log(path):
    """kb-run's text output (gpu-check.sh's kb_log.txt) as minimal reports,
    for a call whose JSON did not come back: time, check, copy fraction,
    kernels and the fastest cuBLAS TF32 route, all from the same process."""
    reps, cur = {}, None
    for line in open(path):
        m = re.match(r"=== (\S+)", line)
        if m:
            cur = reps.setdefault(m.group(1), {"ok": True, "kernels": []})
            continue
        if cur is None:
            continue
        if "WRONG" in line:
            cur["ok"] = False
        m = re.match(r"  kernel (\S+)", line)
        if m:
            cur["kernels"].append({"name": m.group(1), "config": ""})
        m = re.match(r"  time: median ([\d.]+) ms", line)
        if m:
            cur["time"] = {"median_ms": float(m.group(1))}
        m = re.search(r"= (\d+)% of copy", line)
        if m and "fraction_of_copy" not in cur:
            cur["fraction_of_copy"] = int(m.group(1)) / 100
        m = re.search(r"vs cuBLAS TF32 \(best of \d+ routes: ([^)]*)\): median ([\d.]+) ms", line)
        if m:
            cur["cublas_routes"] = {"tf32": [{"route": m.group(1),
                                              "time": {"median_ms": float(m.group(2))}}]}
    return {k: v for k, v in reps.items() if "time" in v or not v["ok"]}


def rows_of(d):
    kb = {}
    for f in sorted(glob.glob(os.path.join(d, "kb_log*.txt"))):
        kb.update(reports_from_log(f))
    for f in sorted(glob.glob(os.path.join(d, "kb_results*.json"))):
        kb.update(json.load(open(f)))
    peer = {}
    if os.path.exists(os.path.join(d, "torch_peer.json")):
        peer = json.load(open(os.path.join(d, "torch_peer.json")))
    rows = []
    for name, rep in sorted(kb.items()):
        if not name.startswith("shape-"):
            continue
        cls = name.split("-")[1]
        t = rep.get("time", {}).get("median_ms")
        row = {"name": name, "class": cls, "ok": bool(rep.get("ok")),
               "kb_ms": t, "fraction_of_copy": rep.get("fraction_of_copy"),
               "tflops": rep.get("achieved_tflops")}
        units = sorted({k.get("config", "").split('mma = "')[1].split('"')[0]
                        for k in rep.get("kernels", []) if 'mma = "' in k.get("config", "")})
        row["unit"] = ",".join(units)
        row["split"] = any("split = " in k.get("config", "") for k in rep.get("kernels", []))
        row["kernels"] = len(rep.get("kernels", []))
        routes = rep.get("cublas_routes", {}).get("tf32", [])
        if routes:
            best = min(routes, key=lambda r: r["time"]["median_ms"])
            row["cublas_ms"], row["cublas_route"] = best["time"]["median_ms"], best["route"]
        pr = peer.get(name, {})
        if "best_ms" in pr:
            row["torch_ms"], row["torch_route"] = pr["best_ms"], pr["best"]
        peers = [v for v in (row.get("cublas_ms"), row.get("torch_ms")) if v]
        if t and peers:
            row["strongest_ms"] = min(peers)
            row["speedup"] = min(peers) / t
            if row["fraction_of_copy"]:
                # The peer over the same minimal bytes.
                row["peer_fraction_of_copy"] = row["fraction_of_copy"] / row["speedup"]
        same = rep.get("copy_same_size", {})
        if "fraction_of_copy" in same:
            # A device-to-device copy of the same bytes, timed in the call.
            row["same_size_copy"] = same["fraction_of_copy"]
        rows.append(row)
    return rows


def table(rows):
    out = ["| shape | class | kb ms | strongest peer ms (which) | kb speed-up | % of copy: kb / peer / same-size copy | kb kernels | run |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        which = "cuBLAS" if r.get("strongest_ms") == r.get("cublas_ms") else "torch"
        copy = ""
        if r.get("fraction_of_copy") and r["class"] in MEMORY_BOUND:
            pc = r.get("peer_fraction_of_copy")
            sc = r.get("same_size_copy")
            copy = (f"{100 * r['fraction_of_copy']:.0f}% / " +
                    (f"{100 * pc:.0f}%" if pc else "-") + " / " +
                    (f"{100 * sc:.0f}%" if sc else "-"))
        kb = f"{r['kb_ms']:.4f}" if r.get("kb_ms") else ("WRONG" if not r["ok"] else "-")
        sp = f"{r['speedup']:.2f}x" if r.get("speedup") else "-"
        st = f"{r['strongest_ms']:.4f} ({which})" if r.get("strongest_ms") else "-"
        kern = f"{r['kernels']} ({r['unit']}{', split-K' if r['split'] else ''})"
        out.append(f"| {r['name'][6:-6]} | {r['class']} | {kb} | {st} | {sp} | {copy} | {kern} | {r.get('run', '')} |")
    sps = [r["speedup"] for r in rows if r.get("speedup") and not ablation(r)]
    if sps:
        geo = math.exp(sum(math.log(s) for s in sps) / len(sps))
        out.append("")
        out.append(f"{len(sps)} shapes: geometric mean {geo:.3f}x, min {min(sps):.2f}x, "
                   f"{sum(s >= 0.9 for s in sps)} at 0.9x or better, {sum(s >= 1.0 for s in sps)} at 1.0x or better.")
    return "\n".join(out)


def plot(rows, path, palette="64", dpi=100):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = [r for r in rows if r.get("speedup") and not ablation(r)]
    rows.sort(key=lambda r: (CLASSES.index(r["class"]) if r["class"] in CLASSES else 99, r["name"]))
    fig, ax = plt.subplots(figsize=(max(8, 0.32 * len(rows)), 4.5))
    colors = plt.get_cmap("tab10")
    xs = range(len(rows))
    ax.bar(xs, [r["speedup"] for r in rows],
           color=[colors(CLASSES.index(r["class"]) % 10) for r in rows])
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(0.9, color="gray", lw=0.8, ls="--")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["name"][6:-6] for r in rows], rotation=90, fontsize=6)
    ax.set_ylabel("kb speed-up over the strongest peer")
    ax.set_title("kb matmul (tf32, H200) against the best cuBLAS route and PyTorch, same call")
    for i, c in enumerate(CLASSES):
        ax.bar([0], [0], color=colors(i % 10), label=c)
    ax.legend(fontsize=7, ncol=len(CLASSES))
    fig.tight_layout()
    # kb.plot's PNG writer, at 100 dpi as kb.plot's figures (130 before
    # 2026-12-07; --dpi N): a 64-colour palette (no dithering), or the fixed 4-bit
    # tab16 (the classes are C0-C7) with --palette tab16.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
    from kb.plot import save
    from pathlib import Path
    save(fig, Path(path), dpi, palette)
    plt.close(fig)


def main():
    args = [a for a in sys.argv[1:]]
    dirs = []
    while args and not args[0].startswith("--"):
        dirs.append(args.pop(0))
    if not dirs:
        print(__doc__)
        return 1
    by_name = {}
    for d in dirs:
        # superseded.txt: shapes whose rows in this folder measured a
        # default kb no longer has (one name a line, '#' comments).
        skip = set()
        sup = os.path.join(d, "superseded.txt")
        if os.path.exists(sup):
            skip = {l.split("#")[0].strip() for l in open(sup)} - {""}
        for r in rows_of(d):
            if r["name"] in skip or r["name"] + "-sm90a" in skip:
                continue
            r["run"] = os.path.basename(os.path.normpath(d))
            by_name[r["name"]] = r
    rows = [by_name[k] for k in sorted(by_name)]
    md = table(rows)
    print(md)
    if "--md" in sys.argv:
        open(sys.argv[sys.argv.index("--md") + 1], "w").write(md + "\n")
    if "--png" in sys.argv:
        palette = sys.argv[sys.argv.index("--palette") + 1] if "--palette" in sys.argv else "64"
        dpi = int(sys.argv[sys.argv.index("--dpi") + 1]) if "--dpi" in sys.argv else 100
        plot(rows, sys.argv[sys.argv.index("--png") + 1], palette, dpi)
    return 0


if __name__ == "__main__":
    sys.exit(main())
