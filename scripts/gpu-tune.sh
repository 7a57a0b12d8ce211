#!/usr/bin/env bash
# Runs on the GPU machine (no MLIR there): measures kb-tune's precompiled
# exhaustive batches (build/tune/batches.tar.gz, from
# scripts/build-tune-batches.sh), one kb-run process per program, plus kb's
# default config of each. Random and guided search are replayed afterwards
# on the build machine from these measurements (scripts/tune-results.sh):
# they only choose which measured candidates to look at.
# Writes under $OUT/tune: NAME.json (kb-run's reports), times.json (GPU
# seconds per program), calibration.json (with the mma.sync ceiling kb's own
# kernel measured, where build/tune/units has it), gpu.txt, log.txt.
# Carry: build/bin (kb-run) and build/tune/batches.tar.gz (and
# build/tune/units, the unit bundles of the calibration).
# The order: KB_TUNE_ORDER (program names, space-separated), else the
# tarball's plans/ORDER (build-tune-batches.sh's), else elementwise, softmax,
# then matmuls; only the programs present in the tarball are measured.
# KB_TUNE_ONLY: a regex of program names; KB_TUNE_RUN_ARGS: kb-run's timing
# options (default --warmup 2 --min-runs 10 --min-ms 20); KB_TUNE_BUDGET_S:
# the seconds for all programs (default 330): a program is skipped when its
# bundles at KB_TUNE_S_PER_BUNDLE (default 0.65 s: the long-K and skinny
# batches of the second H200 run took 0.63-0.69, the first run's 0.3-0.6)
# would not finish within it, and each kb-run is stopped at what is left
# (at most KB_TUNE_PROGRAM_TIMEOUT_S, default 200).
set -u
OUT=${OUT:-/tmp/kb-tune-out}
out="$OUT/tune"
mkdir -p "$out"
KB_RUN=${KB_RUN:-build/bin/kb-run}
pycublas=$(python3 -c "import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + '/lib')" 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${pycublas}:${LD_LIBRARY_PATH:-}"
"$KB_RUN" --check-device || exit 2
work=${TMPDIR:-/tmp}/kb-tune-batches
rm -rf "$work" && mkdir -p "$work"
tar -C "$work" -xzf build/tune/batches.tar.gz || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
date -u >> "$out/gpu.txt"
log="$out/log.txt"
: > "$log"
# The model's ceilings, measured here (kb-tune --calibration reads this),
# with kb's own kernel of each unit no library route runs (mma.sync on the
# H200): every bundle under KB_TUNE_UNITS (default build/tune/units, from
# scripts/build-unit-bundles.sh), its folder named after the unit. Should
# that fail, the calibration is made without them.
export XDG_CACHE_HOME="$work/cache"
unitargs=()
for u in "${KB_TUNE_UNITS:-build/tune/units}"/*/; do
  [ -f "$u/manifest.json" ] && unitargs+=(--unit-bundle "$(basename "$u")=$u")
done
t_cal=$(date +%s.%N)
if ! "$KB_RUN" --calibrate --quiet "${unitargs[@]}" >> "$log" 2>&1; then
  echo "calibration with ${unitargs[*]} failed; without them" | tee -a "$log"
  "$KB_RUN" --calibrate --quiet >> "$log" 2>&1
fi
cp "$XDG_CACHE_HOME/kb/calibration.json" "$out/calibration.json"
echo "calibration: $(python3 -c "import time; print(round(time.time() - $t_cal, 2))") s" | tee -a "$log"
read -r -a runargs <<< "${KB_TUNE_RUN_ARGS:---warmup 2 --min-runs 10 --min-ms 20}"
echo "{" > "$out/times.json"
sep=""
t_start=$(date +%s)
budget=${KB_TUNE_BUDGET_S:-330}
plans=()
if [ -n "${KB_TUNE_ORDER:-}" ]; then
  for n in $KB_TUNE_ORDER; do plans+=("$work/plans/$n/"); done
elif [ -f "$work/plans/ORDER" ]; then
  while read -r n; do plans+=("$work/plans/$n/"); done < "$work/plans/ORDER"
else
  # The cheap families first, so that a run cut short by KB_TUNE_BUDGET_S
  # still has every family.
  plans=("$work"/plans/ew_*/ "$work"/plans/softmax_*/ "$work"/plans/mm_*/)
fi
for plan in "${plans[@]}"; do
  [ -d "$plan" ] || continue
  name=$(basename "$plan")
  if [ -n "${KB_TUNE_ONLY:-}" ] && ! echo "$name" | grep -Eq "$KB_TUNE_ONLY"; then continue; fi
  bundles=("$plan"default/ "$plan"c*/)
  left=$(( budget - ($(date +%s) - t_start) ))
  need=$(python3 -c "import math; print(math.ceil(${#bundles[@]} * ${KB_TUNE_S_PER_BUNDLE:-0.65}))")
  if [ "$need" -gt "$left" ]; then
    echo "$name: skipped, ${#bundles[@]} bundles need about $need s, $left s left of KB_TUNE_BUDGET_S" | tee -a "$log"; continue
  fi
  limit=$(( left < ${KB_TUNE_PROGRAM_TIMEOUT_S:-200} ? left : ${KB_TUNE_PROGRAM_TIMEOUT_S:-200} ))
  start=$(date +%s.%N)
  timeout "$limit" "$KB_RUN" --json --no-baselines --quiet "${runargs[@]}" "${bundles[@]}" > "$out/$name.json" 2>> "$log"
  rc=$?
  [ "$rc" -eq 124 ] && echo "$name: kb-run stopped after $limit s (KB_TUNE_BUDGET_S)" | tee -a "$log"
  # A kb-run that measures one bundle per process: one call each.
  if [ "$rc" -ne 124 ] && ! python3 -c 'import json,sys; sys.exit(0 if "reports" in json.load(open(sys.argv[1])) else 1)' "$out/$name.json" 2>/dev/null; then
    echo "$name: kb-run gave no multi-bundle report (rc $rc); one process per bundle" | tee -a "$log"
    one="$work/one/$name"
    mkdir -p "$one"
    i=0
    for b in "${bundles[@]}"; do
      timeout 30 "$KB_RUN" --quiet "${runargs[@]}" --json-out "$one/$(printf %04d $i).json" "$b" > /dev/null 2>> "$log"
      i=$((i + 1))
    done
    python3 -c '
import glob, json, sys
reps = []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    try: reps.append(json.load(open(f)))
    except ValueError: pass
json.dump({"schema": 1, "status": "ok", "reports": reps}, open(sys.argv[2], "w"))' "$one" "$out/$name.json"
  fi
  secs=$(python3 -c "import time; print(round(time.time() - $start, 2))")
  echo "$name: ${#bundles[@]} bundles, rc $rc, $secs s" | tee -a "$log"
  echo "$sep \"$name\": {\"seconds\": $secs, \"bundles\": ${#bundles[@]}, \"rc\": $rc}" >> "$out/times.json"
  sep=","
done
echo "}" >> "$out/times.json"
