#!/usr/bin/env python3
"""The A/B of bench/ab/ab.sh: for each variant (a bundle named BASE-vTAG-sm90a,
as bench/shapes.py names tile variants, or a norm's BASE-t64, -r4, -cluster,
-online as bench/programs.py names them) against its base (BASE-sm90a, BASE), the
ratio time(variant) / time(base) of each repetition (the two timed in the
same turn), their median, range and how many are below 1, and each bundle's
own spread (max / min of its medians over the repetitions). A median ratio
whose distance from 1 is smaller than the bundles' spread is not an effect
the protocol can show.

Usage: bench/ab/ab_report.py DIR [--save-times FILE]
  DIR: NAME@REP.json files of kb-run --json, or a times.json of
  {name: {rep: {"median_ms": ...}}} as bench/results keeps them;
  --save-times FILE writes that times.json (the checked runs' medians), the
  compact form a results folder keeps instead of every run's report.
"""
import json
import os
import re
import statistics
import sys
from collections import defaultdict

VARIANT = re.compile(r"^(?P<base>.+)-v[0-9]+x[0-9]+s[0-9]+[a-z0-9]*(?P<chip>-sm90a)$")
# The row kernels' config variants (bench/programs.py "norms"): BASE-t64
# (threads), -r4 (rows a block), -g2112 (a persistent grid), -c4 (cluster),
# -cluster, -online.
ROW_VARIANT = re.compile(r"^(?P<base>(?:layernorm|rmsnorm)-.+)-(?:t[0-9]+|r[0-9]+|c[0-9]+|g[0-9]+|cluster|online)(?P<chip>)$")


def load(path):
    """{bundle name: {rep: median ms}} of the checked runs (a run whose
    check failed or that has no time is left out)."""
    times = defaultdict(dict)
    tj = os.path.join(path, "times.json")
    # The runs' own reports when there are any (a times.json beside them is
    # what an earlier report saved, perhaps of other runs); else times.json.
    runs = any(re.match(r"^.+@[0-9]+\.json$", f) for f in os.listdir(path))
    if os.path.exists(tj) and not runs:
        for name, reps in json.load(open(tj)).items():
            for rep, t in reps.items():
                if t.get("ok", True) and t.get("median_ms"):
                    times[name][rep] = t["median_ms"]
        return times
    for f in sorted(os.listdir(path)):
        m = re.match(r"^(?P<name>.+)@(?P<rep>[0-9]+)\.json$", f)
        if not m:
            continue
        try:
            d = json.load(open(os.path.join(path, f)))
        except (OSError, ValueError):
            continue
        t = (d.get("time") or {}).get("median_ms")
        if d.get("ok") and t:
            times[m["name"]][m["rep"]] = t
    return times


def pairs(times):
    """Rows per variant: its base, the per-repetition ratios, and both
    bundles' spreads."""
    rows = []
    for name in sorted(times):
        m = VARIANT.match(name) or ROW_VARIANT.match(name)
        if not m:
            continue
        base = m["base"] + m["chip"]
        if base not in times:
            continue
        reps = sorted(set(times[name]) & set(times[base]), key=int)
        ratios = [times[name][r] / times[base][r] for r in reps]
        if not ratios:
            continue
        spread = max(max(t.values()) / min(t.values()) for t in (times[name], times[base]))
        rows.append({"variant": name, "base": base, "ratios": ratios,
                     "median": statistics.median(ratios), "below_one": sum(r < 1 for r in ratios),
                     "spread": spread})
    return rows


def table(rows):
    out = ["| variant | base | repetitions | time ratio: median (range) | faster in | spread of its runs | shown |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        shown = "yes" if abs(r["median"] - 1) > r["spread"] - 1 else "no (within the spread)"
        out.append(f"| {r['variant']} | {r['base']} | {len(r['ratios'])} | {r['median']:.3f} "
                   f"({min(r['ratios']):.3f}-{max(r['ratios']):.3f}) | {r['below_one']} of {len(r['ratios'])} "
                   f"| {100 * (r['spread'] - 1):.1f}% | {shown} |")
    return "\n".join(out)


def main(argv):
    save = None
    if len(argv) == 4 and argv[2] == "--save-times":
        save = argv[3]
    elif len(argv) != 2:
        print(__doc__)
        return 1
    times = load(argv[1])
    if save:
        json.dump({n: {r: {"median_ms": t} for r, t in sorted(reps.items(), key=lambda x: int(x[0]))}
                   for n, reps in sorted(times.items())}, open(save, "w"), indent=1)
    rows = pairs(times)
    if not rows:
        print(f"ab_report: no variant with its base in {argv[1]}", file=sys.stderr)
        return 1
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
