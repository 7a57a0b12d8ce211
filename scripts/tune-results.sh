#!/usr/bin/env bash
# Turns scripts/gpu-tune.sh's measurements into docs/kb-tune.md's results:
# replays random and guided search over each program's exhaustive
# measurements (kb-tune replay: each mode sees only the candidates it picks),
# then prints the markdown table (also build/tune/results.md) and draws
# docs/kb-tune-search.svg. Needs the plans of scripts/build-tune-batches.sh
# (build/tune/plans) and build/bin/kb-tune.
# Usage: scripts/tune-results.sh OUT_DIR   (the folder gpu-tune.sh wrote tune/ into)
# SEEDS: random replays per program (default 20). KB_TUNE_PLANS: the plans
# folder (default build/tune/plans), e.g. the plans of an earlier run
# unpacked from its plans.tar.gz (bench/results/2026-12-01-shapes2/tune, in
# git history since 2026-12-07 with the other tune runs' plans and reports:
# bench/results/README.md names the commit);
# KB_TUNE_SVG: where the plot goes (default docs/kb-tune-search.svg).
# KB_TUNE_CALIBRATION: the calibration the model replays with (default
# OUT_DIR/tune/calibration.json where there is one), e.g. a later run's with
# a measured mma.sync ceiling.
set -euo pipefail
cd "$(dirname "$0")/.."
res=${1:?usage: scripts/tune-results.sh OUT_DIR}
rm -rf build/tune/replay && mkdir -p build/tune/replay
[ -f build/tune/programs/programs.json ] || python3 bench/tune/programs.py build/tune/programs > /dev/null
plans=${KB_TUNE_PLANS:-build/tune/plans}
# kb-run's reports: NAME.json in OUT_DIR/tune, or packed there as
# reports.tar.xz (how bench/results keeps them), unpacked to build/tune.
reports="$res/tune"
if [ -f "$res/tune/reports.tar.xz" ]; then
  reports=build/tune/reports && rm -rf "$reports" && mkdir -p "$reports"
  tar -C "$reports" -xJf "$res/tune/reports.tar.xz"
fi
for plan in "$plans"/*/; do
  name=$(basename "$plan")
  [ -f "$reports/$name.json" ] || { echo "no measurements for $name" >&2; continue; }
  cal=(); [ -f "$res/tune/calibration.json" ] && cal=(--calibration "$res/tune/calibration.json")
  [ -n "${KB_TUNE_CALIBRATION:-}" ] && cal=(--calibration "$KB_TUNE_CALIBRATION")
  build/bin/kb-tune replay "$plan" "$reports/$name.json" --seeds "${SEEDS:-20}" "${cal[@]}" \
    > "build/tune/replay/$name.json"
done
python3 bench/tune/report.py build/tune/replay build/tune/programs/programs.json \
  "$res/tune/times.json" "${KB_TUNE_SVG:-docs/kb-tune-search.svg}" | tee build/tune/results.md
