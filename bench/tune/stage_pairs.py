#!/usr/bin/env python3
"""Four against five wgmma stages in kb-tune's exhaustive measurements.

For every pair of measured wgmma candidates of a program that differ only in
`stages` (4 and 5), prints the ratio time(5) / time(4), grouped by tile and
by whether the fifth stage costs a block an SM that the grid would use:
min(blocks an SM by shared memory, ceil(blocks / SMs)) lower at five than
at four (kb-run's static `blocks_per_sm` of each candidate, its `blocks`).
This is the evidence of wgmmaDefaultStages (lib/Transforms/TargetModel.cpp).

Usage: bench/tune/stage_pairs.py RUN_DIR... (folders with tune/reports.tar.xz
and, in one of them, each program's tune/plans.tar.gz; e.g.
bench/results/2026-12-02-tune5 -tune6 -tune7, whose archives are in git
history since 2026-12-07: bench/results/README.md names the commit).
"""
import io
import json
import math
import os
import sys
import tarfile
from collections import defaultdict

SMS = 132


def members(path, suffix):
    with tarfile.open(path) as t:
        for m in t.getmembers():
            if m.isfile() and m.name.endswith(suffix):
                yield m.name, json.load(io.TextIOWrapper(t.extractfile(m)))


def plans_of(runs):
    """Every program's plan, from each run that keeps plans.tar.gz (a run
    that measured another's batches keeps none: bench/results/2026-12-02-
    tune7 uses tune6's)."""
    plans = {}
    for run in runs:
        path = f"{run}/tune/plans.tar.gz"
        if os.path.exists(path):
            plans.update({[x for x in name.split("/") if x][-2]: p
                          for name, p in members(path, "plan.json")})
    return plans


def pairs(run, plans):
    for name, rep in members(f"{run}/tune/reports.tar.xz", ".json"):
        prog = name.split("/")[-1][:-5]
        plan = plans.get(prog)
        if not plan:
            continue
        cands = {c["id"]: c for c in plan["candidates"]}
        groups = defaultdict(dict)
        for r in rep.get("reports", []):
            cid = r.get("bundle", "").rstrip("/").split("/")[-1]
            t = r.get("time", {}).get("median_ms")
            c = cands.get(cid)
            if not t or not c:
                continue
            f = dict(c["fields"])
            if "wgmma" not in f.get("mma", ""):
                continue
            key = tuple((a, b) for a, b in c["fields"] if a != "stages")
            groups[key][f.get("stages")] = (t, c["static"])
        for key, by in groups.items():
            if "4" in by and "5" in by:
                f = dict(key)
                (t4, s4), (t5, s5) = by["4"], by["5"]
                used = max(1, math.ceil(s4["blocks"] / SMS))
                costs = min(s5["blocks_per_sm"], used) < min(s4["blocks_per_sm"], used)
                yield prog, f["block"], costs, t5 / t4


def main(runs):
    if not runs:
        print(__doc__)
        return 1
    for run in runs:
        if not os.path.exists(f"{run}/tune/reports.tar.xz"):
            print(f"tune_stage_pairs: {run}/tune/reports.tar.xz not found (a folder of "
                  "scripts/gpu-tune.sh's results as bench/results keeps them)", file=sys.stderr)
            return 1
    # A program measured in several runs counts once, from the last run.
    by_prog = {}
    plans = plans_of(runs)
    for run in runs:
        found = defaultdict(list)
        for prog, block, costs, ratio in pairs(run, plans):
            found[prog].append((block, costs, ratio))
        by_prog.update(found)
    agg = defaultdict(list)
    for rows in by_prog.values():
        for block, costs, ratio in rows:
            agg[(block, costs)].append(ratio)
    print(f"{len(by_prog)} programs")
    print("| tile | the fifth stage costs a block the grid uses | groups | five faster | geometric mean (5 / 4) | worst |")
    print("|---|---|---|---|---|---|")
    for (block, costs), rs in sorted(agg.items()):
        g = math.exp(sum(map(math.log, rs)) / len(rs))
        print(f"| {block} | {'yes' if costs else 'no'} | {len(rs)} | {sum(r < 1 for r in rs)} | {g:.3f} | {max(rs):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
