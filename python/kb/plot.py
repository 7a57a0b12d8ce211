"""Plots of kb's results: python3 -m kb.plot REPORT.json -o FIG.png

REPORT.json is any of:
  - a kb.bench suite report (`python3 -m kb.bench --suite NAME`): kb's
    speed-up over the strongest peer per program, and the geometric mean;
    for a models suite, each compiler's speed-up over eager per model;
  - a kb.bench report (`python3 -m kb.bench ... --json`): a roofline of each
    kernel (arithmetic intensity against its achieved FLOP/s, placed under
    the ceilings of the unit it uses: the copy bandwidth and the FFMA or
    TF32 tensor-core peak, measured on the same GPU with --ceilings) and
    speed-up bars of kb over PyTorch eager and torch.compile;
  - one kb-run --json report, or a JSON object of them keyed by name (as
    bench/results/*/kb_results.json): a roofline of each program (flops /
    minimal bytes against flops / median time, under the copy bandwidth
    and the compute ceiling kb-run measured) and bars of kb's speed-up over
    each baseline kb-run timed (cuBLAS, an unfused bundle).
REPORT.json may also be a member of an archive, ARCHIVE.tar.xz:MEMBER
(bench/results/2026-12-01-run4/raw.tar.xz:kb_results.json). A .png is
written with a palette of 64 colours (a plot has few: its flat colours and
their anti-aliased edges; a quarter of the bytes of full colour) at 100 dpi;
--palette tab16 (C0-C7 and grays, a 4-bit PNG) and --dpi N make the docs'
figures smaller. Nothing is drawn from names or numbers written into
this file: every point, roof and bar comes from the report.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

from .ir import KbError

UNIT_ROOF = {"ffma": "ffma_tflops", "mma_sync_tf32": "tf32_tflops", "wgmma_tf32": "tf32_tflops",
             "mma_sync_tf32x3": "tf32_tflops", "gemv": "ffma_tflops"}
UNIT_LABEL = {"ffma": "FFMA (CUDA cores)", "mma_sync_tf32": "TF32 tensor cores",
              "wgmma_tf32": "TF32 tensor cores", "mma_sync_tf32x3": "TF32 tensor cores (x3)",
              "gemv": "FFMA gemv (CUDA cores)"}


def _kind(report) -> str:
    if isinstance(report, dict) and report.get("tool") == "kb.bench":
        return "bench"
    if isinstance(report, dict) and "kernels" in report and "bundle" in report:
        return "kb-run"
    if isinstance(report, dict) and report and all(isinstance(v, dict) and "bundle" in v for v in report.values()):
        return "kb-run-set"
    raise KbError("not a kb.bench report, a kb-run --json report, or an object of kb-run reports")


def points_from_bench(report) -> Tuple[List[dict], Dict[str, float], List[Tuple[str, Dict[str, float]]]]:
    """Roofline points (one per kernel), ceilings, and speed-up bars."""
    pts, bars = [], []
    ceilings = dict(report.get("ceilings", {}))
    for r in report.get("problems", []):
        if "error" in r or not r.get("ok"):
            continue
        for w in r.get("work", []):
            t = w.get("time", {}).get("median_ms")
            if not t or w["bytes"] <= 0:
                continue
            # A kernel that only moves data (a transpose) counts no flops:
            # place it by one flop per element moved, as its bandwidth shows.
            flops = w["flops"] if w["flops"] > 1 else w["bytes"] / 4
            pts.append({"label": f"{r['problem']}:{w['name']}", "intensity": flops / w["bytes"],
                        "tflops": flops / (t * 1e-3) / 1e12, "unit": w["unit"]})
        sp = {}
        if "speedup_vs_eager" in r:
            sp["vs eager"] = r["speedup_vs_eager"]
        if "speedup_vs_torch_compile" in r:
            sp["vs torch.compile"] = r["speedup_vs_torch_compile"]
        if sp:
            bars.append((r["problem"], sp))
    return pts, ceilings, bars


def points_from_kbrun(reports: Dict[str, dict]):
    pts, bars = [], []
    ceilings: Dict[str, float] = {}
    copies, computes = [], {}
    for name, r in reports.items():
        if r.get("status") not in (None, "ok") or "time" not in r:
            continue
        t = r["time"]["median_ms"]
        if r.get("copy_bandwidth_gbs"):
            copies.append(r["copy_bandwidth_gbs"])
        tc = any(k.get("tensor_cores") for k in r.get("kernels", []))
        unit = "mma_sync_tf32" if tc else "ffma"
        flops = r.get("flops") or 0.0
        if r.get("compute_ceiling_tflops"):
            computes.setdefault(UNIT_ROOF[unit], []).append(r["compute_ceiling_tflops"])
        mb = r.get("minimal_bytes") or 0.0
        if mb > 0:
            # A program without matmuls counts no flops in kb-run: place it by
            # one flop per element moved (its bandwidth is what the plot shows).
            f = flops if flops > 0 else mb / 4
            pts.append({"label": name, "intensity": f / mb, "tflops": f / (t * 1e-3) / 1e12,
                        "unit": unit, "flops_counted": flops > 0})
        sp = {}
        for b in r.get("baselines", []):
            if b.get("kb_speedup"):
                label = b["name"].split(" (")[0].replace("baseline ", "")
                label = "unfused" if "unfused" in label else label[-28:]
                sp[label] = b["kb_speedup"]
        for key, label in (("vs_cublas_fp32", "cuBLAS fp32"), ("vs_cublas_tf32", "cuBLAS TF32")):
            if isinstance(r.get(key), dict) and r[key].get("kb_speedup"):
                sp[label] = r[key]["kb_speedup"]
        if sp:
            bars.append((name, sp))
    if copies:
        ceilings["copy_gbs"] = max(copies)
    for k, v in computes.items():
        ceilings[k] = max(v)
    return pts, ceilings, bars


def draw(report, out: Path, title: str = "", palette: str = "64", dpi: int = 100) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kind = _kind(report)
    if kind == "bench":
        pts, ceil, bars = points_from_bench(report)
    elif kind == "kb-run":
        pts, ceil, bars = points_from_kbrun({Path(report["bundle"].rstrip("/")).name: report})
    else:
        pts, ceil, bars = points_from_kbrun(report)
    if not pts and not bars:
        raise KbError("the report holds no timed kernel (nothing to plot)")
    fig, axes = plt.subplots(1, 2, figsize=(14, 5.5))
    ax = axes[0]
    markers = {"ffma": "o", "mma_sync_tf32": "s", "wgmma_tf32": "D", "mma_sync_tf32x3": "^",
               "gemv": "v"}
    xs = [p["intensity"] for p in pts] or [1.0]
    lo, hi = min(xs) / 4, max(xs) * 4
    lo, hi = min(lo, 0.05), max(hi, 1000)
    grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    bw = ceil.get("copy_gbs")
    roofs_drawn = []
    for key, color in (("ffma_tflops", "tab:blue"), ("tf32_tflops", "tab:red")):
        peak = ceil.get(key)
        if not peak:
            continue
        label = "FFMA" if key == "ffma_tflops" else "TF32 tensor cores"
        if bw:
            ys = [min(peak, x * bw / 1e3) for x in grid]
            ax.plot(grid, ys, color=color, lw=1.5, label=f"{label}: {peak:.0f} TFLOP/s, copy {bw:.0f} GB/s")
        else:
            ax.axhline(peak, color=color, lw=1.5, label=f"{label}: {peak:.0f} TFLOP/s")
        roofs_drawn.append(key)
    if bw and "ffma_tflops" not in roofs_drawn:
        ax.plot(grid, [x * bw / 1e3 for x in grid], color="gray", lw=1, ls="--",
                label=f"copy bandwidth {bw:.0f} GB/s (no FFMA ceiling in the report)")
    # Labels of points close together are staggered so that they stay legible.
    order = sorted(range(len(pts)), key=lambda i: (pts[i]["tflops"], pts[i]["intensity"]))
    stagger = {i: (k % 4) for k, i in enumerate(order)}
    for idx, p in enumerate(pts):
        roof_key = UNIT_ROOF.get(p["unit"], "ffma_tflops")
        color = "tab:red" if roof_key == "tf32_tflops" else "tab:blue"
        ax.scatter([p["intensity"]], [p["tflops"]], marker=markers.get(p["unit"], "o"), color=color,
                   edgecolor="black", zorder=3)
        ax.annotate(p["label"], (p["intensity"], p["tflops"]), fontsize=7,
                    xytext=(5, 3 - 10 * stagger[idx]), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (flop / minimal byte)")
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title("roofline: each kernel under the ceilings of its unit")
    if roofs_drawn or bw:
        ax.legend(fontsize=7, loc="lower right")
    else:
        ax.text(0.02, 0.95, "no measured ceilings in the report (kb.bench --ceilings)",
                transform=ax.transAxes, fontsize=8, va="top")
    ax.grid(True, which="both", alpha=0.3)

    ax = axes[1]
    if bars:
        series = []
        for _, sp in bars:
            for k in sp:
                if k not in series:
                    series.append(k)
        width = 0.8 / max(len(series), 1)
        for j, s in enumerate(series):
            xs = [i + j * width for i in range(len(bars))]
            ys = [sp.get(s, 0.0) for _, sp in bars]
            rects = ax.bar(xs, ys, width, label=s)
            for x, y in zip(xs, ys):
                if y:
                    ax.text(x, y, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
        ax.set_xticks([i + width * (len(series) - 1) / 2 for i in range(len(bars))])
        ax.set_xticklabels([n for n, _ in bars], rotation=30, ha="right", fontsize=8)
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_ylabel("kb speed-up (baseline time / kb time)")
        ax.set_title("kb against its baselines (same call)")
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no baselines in the report", ha="center")
        ax.set_axis_off()
    if kind == "bench":
        dev = report.get("device", "")
    else:
        one = report if kind == "kb-run" else next(iter(report.values()))
        dev = (one.get("device") or {}).get("name", "")
    fig.suptitle(title or f"kb {('on ' + dev) if dev else ''}".strip(), fontsize=11)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(fig, out, dpi, palette)
    plt.close(fig)
    return out


def _finish_suite_figure(fig, plt, report, out: Path, title: str, palette: str = "64", dpi: int = 100) -> Path:
    """A kb.bench suite figure's title (the suite and device), layout and
    palette PNG at `out`."""
    dev = report.get("device", "")
    fig.suptitle(title or f"kb.bench --suite {report.get('suite', '')}{(' on ' + dev) if dev else ''}",
                 fontsize=11)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save(fig, out, dpi, palette)
    plt.close(fig)
    return out


def draw_suite(report, out: Path, title: str = "", palette: str = "64", dpi: int = 100) -> Path:
    """A kb.bench suite report: kb's speed-up over the strongest peer per
    program (and over kb's unfused bundle where there is one), a line at
    1x and the geometric mean."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report.get("rows", []) if r.get("speedup")]
    if not rows:
        raise KbError("the report holds no program timed against a peer (nothing to plot)")
    fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(rows) + 2), 5))
    xs = range(len(rows))
    ax.bar(xs, [r["speedup"] for r in rows], 0.6, label="vs the strongest peer", color="tab:blue")
    unf = [(i, r["vs_unfused"]) for i, r in enumerate(rows) if r.get("vs_unfused")]
    if unf:
        ax.scatter([i for i, _ in unf], [v for _, v in unf], marker="_", s=200, color="tab:orange",
                   label="vs kb unfused", zorder=3)
    ax.axhline(1.0, color="black", lw=0.8)
    g = report.get("summary", {}).get("geomean_speedup")
    if g:
        ax.axhline(g, color="tab:green", lw=1, ls="--", label=f"geometric mean {g:.3f}x")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([r["name"] for r in rows], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("kb speed-up (peer time / kb time)")
    ax.legend(fontsize=8)
    return _finish_suite_figure(fig, plt, report, out, title, palette, dpi)


def read_report(spec: str) -> Any:
    """The JSON of a report file, or of ARCHIVE.tar.xz:MEMBER (a file
    inside a recorded run's archive)."""
    arc, sep, member = spec.partition(".tar.xz:")
    if not sep or Path(spec).exists():
        return json.loads(Path(spec).read_text())
    import tarfile
    arc += ".tar.xz"
    try:
        with tarfile.open(arc) as t:
            try:
                f = t.extractfile(member)
            except KeyError:
                f = None
            if f is None:
                raise KbError(f"{spec}: no file {member} in {arc}")
            return json.load(f)
    except tarfile.TarError as e:
        raise KbError(f"{spec}: {e}")


# Colours of a PNG's palette: 64 keeps every flat colour of these plots
# (256 before 2026-12-07: docs/tutorial-h200-run4.png 41374 -> 34 KB).
PALETTE = 64
# --palette tab16: a fixed palette instead of a median cut, for the docs'
# figures: matplotlib's first eight tab10 colours (C0-C7, which these plots
# and bench/shapes_report.py draw with) and eight grays (text and its
# anti-aliasing on white). 16 entries make a 4-bit PNG (2026-12-07, 100 dpi:
# docs/tutorial-h200-run4.png 34 -> 22 KB). Any other colour is mapped to
# its nearest entry, so use it only for a figure drawn in C0-C7.
PALETTES = ("64", "tab16")


def _tab16():
    """A 16-entry palette image: C0-C7 and eight grays, black to white."""
    from PIL import Image
    from matplotlib.colors import to_rgb
    cols = [tuple(round(255 * c) for c in to_rgb(f"C{i}")) for i in range(8)]
    cols += [(round(255 * i / 7),) * 3 for i in range(8)]
    pal = Image.new("P", (1, 1))
    pal.putpalette([v for c in cols for v in c])
    return pal


def save(fig, out: Path, dpi: int, palette: str = "64") -> None:
    """fig to out; a .png with a palette (no dithering: the plot's flat
    colours stay flat), through Pillow, which matplotlib needs anyway:
    PALETTE colours by median cut ("64"), or the fixed tab16 ("tab16")."""
    if palette not in PALETTES:
        raise KbError(f"unknown palette '{palette}' (expected one of {', '.join(PALETTES)})")
    if out.suffix.lower() != ".png":
        fig.savefig(out, dpi=dpi)
        return
    import io
    from PIL import Image
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi, format="png")
    buf.seek(0)
    img = Image.open(buf).convert("RGB")
    if palette == "tab16":
        img.quantize(palette=_tab16(), dither=Image.Dither.NONE).save(out, "PNG", optimize=True, bits=4)
        return
    img.quantize(PALETTE, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        out, "PNG", optimize=True)


def draw_models(report, out: Path, title: str = "", palette: str = "64", dpi: int = 100) -> Path:
    """A kb.bench models-suite report: per model x dtype, each timed
    compiler's speed-up over eager (Inductor's modes, kb), with lines at the
    issue's targets (1.5x eager; kb's bar against max-autotune's)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in report.get("rows", []) if r.get("speedup", {}).get("eager")]
    if not rows:
        raise KbError("the report holds no model timed against eager (nothing to plot)")
    bars = [("inductor", "Inductor default", "tab:gray"),
            ("inductor_max_autotune", "Inductor max-autotune-no-cudagraphs", "tab:orange"),
            ("kb", "kb backend", "tab:blue")]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(rows) + 2), 5))
    w = 0.8 / len(bars)
    for j, (key, label, color) in enumerate(bars):
        xs, ys = [], []
        for i, r in enumerate(rows):
            t = (r.get(key) or {}).get("median_ms")
            if t:
                xs.append(i - 0.4 + w * (j + 0.5))
                ys.append(r["eager"]["median_ms"] / t)
        ax.bar(xs, ys, w, label=label, color=color)
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(1.5, color="tab:green", lw=1, ls="--", label="target: 1.5x eager")
    ax.set_xticks(list(range(len(rows))))
    ax.set_xticklabels([r["name"] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("speed-up over eager (eager time / time)")
    ax.legend(fontsize=8)
    return _finish_suite_figure(fig, plt, report, out, title, palette, dpi)


def draw_serving(report, out: Path, title: str = "", palette: str = "64", dpi: int = 100) -> Path:
    """A kb.bench serving-suite report: per entry, the time of each sampled
    M served from its bucket and compiled for that exact M, against M (both
    log scales), the buckets' tops as dotted lines, the worst ratio noted."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    for r in report.get("rows", []):
        if "ratio" in r and r["name"] not in names:
            names.append(r["name"])
    if not names:
        raise KbError("the report holds no sample timed against its exact shape (nothing to plot)")
    fig, axes = plt.subplots(1, len(names), figsize=(6.0 * len(names), 4.5), squeeze=False)
    for ax, name in zip(axes[0], names):
        rows = sorted((r for r in report["rows"] if r["name"] == name and "ratio" in r), key=lambda r: r["M"])
        ms = [r["M"] for r in rows]
        ax.plot(ms, [r["exact"]["median_ms"] for r in rows], "o-", color="tab:gray", label="compiled for the exact M")
        ax.plot(ms, [r["bucketed"]["median_ms"] for r in rows], "s-", color="tab:blue", label="served from its bucket")
        for b in sorted({r["bucket"] for r in rows}):
            ax.axvline(b, color="black", lw=0.5, ls=":")
        worst = max(rows, key=lambda r: r["ratio"])
        ax.annotate(f"{worst['ratio']:.2f}x", (worst["M"], worst["bucketed"]["median_ms"]), fontsize=8,
                    textcoords="offset points", xytext=(4, 4))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("M (leading dim)")
        ax.set_ylabel("median ms (log)")
        ax.set_title(name, fontsize=9)
        ax.legend(fontsize=8)
    return _finish_suite_figure(fig, plt, report, out, title, palette, dpi)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kb.plot", description="roofline and speed-up plots from a kb report")
    ap.add_argument("report", help="a kb.bench --json report, a kb-run --json report, or kb_results.json "
                                   "(a file, or ARCHIVE.tar.xz:MEMBER)")
    ap.add_argument("-o", "--output", required=True, help="the figure (.png, .svg, .pdf)")
    ap.add_argument("--title", default="")
    ap.add_argument("--palette", choices=PALETTES, default="64",
                    help="a PNG's palette: 64 colours by median cut, or tab16 (C0-C7 and grays, 4-bit)")
    ap.add_argument("--dpi", type=int, default=100, help="a PNG's pixels per inch (default 100)")
    args = ap.parse_args(argv)
    if not 20 <= args.dpi <= 600:
        print(f"kb.plot: --dpi {args.dpi}: expected 20 to 600", file=sys.stderr)
        return 1
    try:
        report = read_report(args.report)
        if isinstance(report, dict) and report.get("tool") == "kb.bench.suite":
            out = draw_suite(report, Path(args.output), args.title, args.palette, args.dpi)
        elif isinstance(report, dict) and report.get("tool") == "kb.bench.models":
            out = draw_models(report, Path(args.output), args.title, args.palette, args.dpi)
        else:
            out = draw(report, Path(args.output), args.title, args.palette, args.dpi)
    except (KbError, OSError, json.JSONDecodeError) as e:
        print(f"kb.plot: {e}", file=sys.stderr)
        return 1
    print(f"kb.plot: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
