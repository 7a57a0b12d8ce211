#!/usr/bin/env python3
"""Merges the differential-summary.json files of several
scripts/differential-gpu.sh calls (shards, or a run phase and a sanitize
phase) into one summary: counts, sanitizer counts, per op class, and the
programs that were not ok. Later files win for a program seen twice (a
sanitize-phase file adds its sanitizer outcomes to the run-phase row).

Usage: summarize.py OUT.json SUMMARY.json [SUMMARY.json ...]
"""

import collections
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = {}
    for path in sys.argv[2:]:
        for r in json.load(open(path))["results"]:
            old = rows.get(r["name"])
            if old and r["outcome"] == "not_run":
                # a sanitize-only pass: keep the run's outcome
                old.update({k: v for k, v in r.items() if k in ("memcheck", "racecheck")})
                continue
            if old:
                r = dict(old, **r)
            rows[r["name"]] = r
    counts, per_class = collections.Counter(), {}
    san = {"memcheck": collections.Counter(), "racecheck": collections.Counter()}
    for r in rows.values():
        counts[r["outcome"]] += 1
        for c in r["classes"]:
            per_class.setdefault(c, collections.Counter())[r["outcome"]] += 1
        for t in san:
            if t in r:
                san[t][r[t]] += 1
    out = {"programs": len(rows), "counts": dict(counts),
           "sanitizer": {t: dict(v) for t, v in san.items()},
           "per_class": {c: dict(v) for c, v in sorted(per_class.items())},
           "not_ok": [r for r in rows.values() if r["outcome"] not in ("ok", "refused")],
           "results": sorted(rows.values(), key=lambda r: r["name"])}
    json.dump(out, open(sys.argv[1], "w"), indent=1)
    print(json.dumps({"programs": out["programs"], "counts": out["counts"],
                      "sanitizer": out["sanitizer"]}))


if __name__ == "__main__":
    main()
