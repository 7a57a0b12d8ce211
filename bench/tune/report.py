#!/usr/bin/env python3
"""docs/kb-tune.md's results table and plot from kb-tune replays.

Usage: bench/tune/report.py REPLAY_DIR PROGRAMS_JSON TIMES_JSON OUT.svg
REPLAY_DIR holds one `kb-tune replay` JSON per program (NAME.json);
PROGRAMS_JSON is bench/tune/programs.py's listing (the shape classes);
TIMES_JSON is scripts/gpu-tune.sh's GPU seconds per program. Prints the
markdown table and a summary against the issue's targets; draws the best
time found (over the exhaustive best, mean over programs) against candidates
timed, one line per mode, without a plotting library."""
import json
import os
import statistics
import sys

replay_dir, programs_json, times_json, svg_out = sys.argv[1:5]
classes = {p["name"]: p["class"] for p in json.load(open(programs_json))}
try:
    times = json.load(open(times_json))
except (OSError, ValueError):
    times = {}

rows, curves = [], {"exhaustive": [], "guided": [], "random": []}
for name in sorted(os.listdir(replay_dir)):
    if not name.endswith(".json"):
        continue
    r = json.load(open(os.path.join(replay_dir, name)))
    name = name[:-5]
    ex, g, rands = r["exhaustive"], r["guided"], r["random"]
    if "best_ms" not in ex:
        print(f"<!-- {name}: nothing measured ok -->")
        continue
    n = ex["candidates_timed"]
    rgaps = [x.get("gap_to_exhaustive", float("inf")) for x in rands]
    ggap = g.get("gap_to_exhaustive", float("inf"))
    secs = times.get(name, {}).get("seconds")
    default_ms = r.get("default_ms", 0)
    rows.append({
        "name": name, "class": classes.get(name, "?"), "compiled": ex["candidates_compiled"],
        "survived": ex["candidates_survived"], "best_ms": ex["best_ms"], "best": ex["best_config"],
        "g_timed": g["candidates_timed"], "g_gap": ggap, "r_mean": statistics.mean(rgaps),
        "r_worse": sum(1 for x in rgaps if x > ggap + 1e-12) / len(rgaps),
        "r_better": sum(1 for x in rgaps if x < ggap - 1e-12) / len(rgaps),
        "gpu_s": secs, "default_ms": default_ms,
    })
    best = ex.get("exhaustive_fastest_ms", ex["best_ms"])
    curves["exhaustive"].append([(p[0], p[1] / best) for p in ex["curve"]])
    curves["guided"].append([(p[0], p[1] / best) for p in g["curve"]])
    # Random: the mean over seeds at each count.
    per = {}
    for x in rands:
        for c, v in x["curve"]:
            per.setdefault(c, []).append(v / best)
    curves["random"].append([(c, statistics.mean(v)) for c, v in sorted(per.items())])

print("| program | class | compiled / survived | exhaustive best | kb default | guided timed | guided gap | random gap (mean) | random worse / better than guided | GPU s (all / guided share) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for x in rows:
    frac = x["g_timed"] / max(x["survived"], 1)
    gpu = "-" if x["gpu_s"] is None else f"{x['gpu_s']:.1f} / {x['gpu_s'] * frac:.1f}"
    dflt = "-" if not x["default_ms"] else f"{x['default_ms']:.4f} ms ({x['default_ms'] / x['best_ms']:.2f}x)"
    print(f"| {x['name']} | {x['class']} | {x['compiled']} / {x['survived']} | {x['best_ms']:.4f} ms `{x['best']}` | {dflt} | "
          f"{x['g_timed']} ({100 * frac:.0f}%) | {100 * x['g_gap']:+.1f}% | {100 * x['r_mean']:+.1f}% | "
          f"{100 * x['r_worse']:.0f}% / {100 * x['r_better']:.0f}% | {gpu} |")
ok3 = sum(1 for x in rows if x["g_gap"] <= 0.03)
ok10 = sum(1 for x in rows if x["g_timed"] <= 0.1 * x["survived"] + 1e-9)
beats = sum(1 for x in rows if x["g_gap"] < x["r_mean"])
print()
print(f"Programs: {len(rows)}. Guided within 3% of the exhaustive best: {ok3}; "
      f"timing at most 10% of the survivors: {ok10}; better than random's mean gap: {beats}.")
if rows:
    print(f"Mean gap: guided {100 * statistics.mean(x['g_gap'] for x in rows):+.2f}%, "
          f"random {100 * statistics.mean(x['r_mean'] for x in rows):+.2f}%.")

# The plot: mean over programs of best-so-far / exhaustive best; a finished
# search keeps its best.
W, H, L, B, T, R = 640, 380, 60, 40, 30, 130
xmax = 40
def at(curve, c):
    v = None
    for n, y in curve:
        if n <= c:
            v = y
    return v
series = {}
for mode, cs in curves.items():
    pts = []
    # Up to where this mode's longest search ends (a finished search keeps
    # its best until then).
    xend = max([cv[-1][0] for cv in cs if cv] + [0])
    for c in range(1, min(xmax, xend) + 1):
        vals = [at(cv, c) if at(cv, c) is not None else None for cv in cs]
        vals = [v if v is not None else (cv[-1][1] if cv and c > cv[-1][0] else None) for v, cv in zip(vals, cs)]
        vals = [v for v in vals if v is not None]
        if len(vals) == len(cs) and vals:
            pts.append((c, statistics.mean(vals)))
    series[mode] = pts
ymax = max([y for pts in series.values() for _, y in pts] + [1.1])
ymax = min(ymax, 3.0)
def X(c): return L + (W - L - R) * (c - 1) / (xmax - 1)
def Y(y): return T + (H - T - B) * (1 - (min(y, ymax) - 1) / (ymax - 1))
colors = {"exhaustive": "#888888", "random": "#d62728", "guided": "#1f77b4"}
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{L}" y="18">kb-tune: best time found / exhaustive best (mean over {len(rows)} programs)</text>']
for i in range(5):
    y = 1 + (ymax - 1) * i / 4
    out.append(f'<line x1="{L}" x2="{W - R}" y1="{Y(y):.1f}" y2="{Y(y):.1f}" stroke="#eee"/>')
    out.append(f'<text x="{L - 6}" y="{Y(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
for c in (1, 10, 20, 30, 40):
    out.append(f'<text x="{X(c):.1f}" y="{H - B + 16}" text-anchor="middle">{c}</text>')
out.append(f'<text x="{(L + W - R) / 2}" y="{H - 6}" text-anchor="middle">candidates timed</text>')
for k, (mode, pts) in enumerate(series.items()):
    if not pts:
        continue
    d = " ".join(f"{X(c):.1f},{Y(y):.1f}" for c, y in pts)
    out.append(f'<polyline fill="none" stroke="{colors[mode]}" stroke-width="2" points="{d}"/>')
    out.append(f'<text x="{W - R + 10}" y="{T + 20 + 18 * k}" fill="{colors[mode]}">{mode}</text>')
out.append("</svg>")
with open(svg_out, "w") as f:
    f.write("\n".join(out) + "\n")
print(f"\n(plot: {svg_out})")
