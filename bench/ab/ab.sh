#!/usr/bin/env bash
# Runs on the GPU machine: an A/B of kb bundles with interleaved
# repetitions. Each bundle is timed in its own kb-run process (checked
# first, --no-baselines, --min-ms KB_AB_MS, default 100), all of them in turn,
# KB_AB_REPS times (default 5), so that a drift of the card's clock at its
# power cap falls on every bundle alike. On this H200 one bundle's times in
# one call differed by up to 11% between repetitions
# (bench/results/2026-12-02-cluster/call4), more than the 1-3% a tile or grid
# change is worth: a single A/B pair says little. bench/ab/ab_report.py turns
# the results into ratios against each variant's base.
# KB_AB_ARGS: more kb-run options (for example --warm-l2).
# Usage: bash bench/ab/ab.sh BUNDLE_DIR...   (writes $OUT/ab/NAME@REP.json)
set -u
OUT=${OUT:-/tmp/kb-ab-out}
mkdir -p "$OUT/ab"
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/gpu-env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$OUT/ab/gpu.txt" 2>&1
for rep in $(seq 1 "${KB_AB_REPS:-5}"); do
  for dir in "$@"; do
    name=$(basename "$dir")
    # A bundle may carry kb-run.env (KEY=VALUE lines, e.g.
    # KB_TMA_L2_PROMOTION=256): its kb-run runs with them, so that a copy of
    # a bundle with one is an A/B variant of a runtime setting.
    envs=()
    [ -f "$dir/kb-run.env" ] && mapfile -t envs < <(grep -E '^[A-Z_][A-Z0-9_]*=' "$dir/kb-run.env")
    timeout 60 env "${envs[@]}" build/bin/kb-run --json --no-baselines -q --min-ms "${KB_AB_MS:-100}" ${KB_AB_ARGS:-} "$dir" \
      > "$OUT/ab/$name@$rep.json" 2>> "$OUT/ab/err.txt"
    echo "$name $rep exit $?" >> "$OUT/ab/log.txt"
  done
done
python3 bench/ab/ab_report.py "$OUT/ab" --save-times "$OUT/ab/times.json"
