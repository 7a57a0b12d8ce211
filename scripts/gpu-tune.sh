#!/usr/bin/env bash
# Runs on the GPU machine (no MLIR there): measures kb-tune's precompiled
# exhaustive batches (build/tune/batches.tar.gz, from
# scripts/build-tune-batches.sh), one kb-run process per program, plus kb's
# default config of each. Random and guided search are replayed afterwards
# on the build machine from these measurements (scripts/tune-results.sh):
# they only choose which measured candidates to look at.
# Each batch is measured in its batch.txt's order (kb's default first, then
# the model's most promising), so a program cut by the budget keeps those.
# Writes under $OUT/tune: NAME.json (kb-run's reports, a batch object with
# "not_reported": the bundles without one and why), NAME.jsonl (each report
# as kb-run wrote it, with its wall_s), times.json (GPU seconds per
# program), calibration.json (with the mma.sync ceiling kb's own kernel
# measured, where build/tune/units has it; KB_TUNE_CALIBRATE=0 skips it),
# gpu.txt, log.txt. Each program's batch goes through scripts/tune_batch.py:
# kb-run writes every report as its bundle finishes (--jsonl-out), so a
# program stopped by the budget keeps what it measured, and a bundle with no
# report after KB_TUNE_STALL_S (default 15 s; a hung kernel) is skipped.
# Carry: build/bin (kb-run) and build/tune/batches.tar.gz (and
# build/tune/units, the unit bundles of the calibration).
# The order: KB_TUNE_ORDER (program names, space-separated), else the
# tarball's plans/ORDER (build-tune-batches.sh's), else elementwise, softmax,
# then matmuls; only the programs present in the tarball are measured. With
# several GPUs the programs are dealt out by their bundles (largest first)
# and each GPU's queue keeps this order.
# KB_TUNE_ONLY: a regex of program names; KB_TUNE_RUN_ARGS: kb-run's timing
# options (default --warmup 2 --min-runs 10 --min-ms 20); KB_TUNE_BUDGET_S:
# the seconds for all programs (default 330): a program is skipped when its
# bundles at the seconds a bundle this run's programs took so far (before
# the first, KB_TUNE_S_PER_BUNDLE, default 0.65 s: the long-K and skinny
# batches of the second H200 run took 0.63-0.69, the first run's 0.3-0.6)
# would not finish within it, and each kb-run is stopped at what is left
# (at most KB_TUNE_PROGRAM_TIMEOUT_S, default 200), keeping what it measured.
set -u
OUT=${OUT:-/tmp/kb-tune-out}
out="$OUT/tune"
mkdir -p "$out"
KB_RUN=${KB_RUN:-build/bin/kb-run}
. "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
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
if [ "${KB_TUNE_CALIBRATE:-1}" = 0 ]; then
  echo "calibration: skipped (KB_TUNE_CALIBRATE=0)" | tee -a "$log"
else
  if ! "$KB_RUN" --calibrate --quiet "${unitargs[@]}" >> "$log" 2>&1; then
    echo "calibration with ${unitargs[*]} failed; without them" | tee -a "$log"
    "$KB_RUN" --calibrate --quiet >> "$log" 2>&1
  fi
  cp "$XDG_CACHE_HOME/kb/calibration.json" "$out/calibration.json"
  echo "calibration: $(python3 -c "import time; print(round(time.time() - $t_cal, 2))") s" | tee -a "$log"
fi
read -r -a runargs <<< "${KB_TUNE_RUN_ARGS:---warmup 2 --min-runs 10 --min-ms 20}"
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
# The GPUs (KB_TUNE_GPUS, default every GPU nvidia-smi lists): each program's
# batch runs whole on one GPU (its candidates are compared with each other
# only), the programs dealt out so that each GPU gets about the same number
# of bundles (the largest first, each to the GPU with the fewest so far), and
# the GPUs measure at once. One GPU: the order above.
# KB_TUNE_GPUS is a count of GPUs 0..N-1 (not more than nvidia-smi lists).
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
ngpu=${KB_TUNE_GPUS:-$have}
[ "$ngpu" -ge 1 ] 2>/dev/null || ngpu=1
if [ "$have" -ge 1 ] 2>/dev/null && [ "$ngpu" -gt "$have" ]; then
  echo "KB_TUNE_GPUS=$ngpu, but nvidia-smi lists $have GPU(s)" | tee -a "$log"; exit 2
fi
echo "GPUs measuring at once: $ngpu" | tee -a "$log"
rm -rf "$out/times.d"
mkdir -p "$work/queues" "$out/times.d"
rm -f "$work"/queues/*
for plan in "${plans[@]}"; do
  [ -d "$plan" ] || continue
  name=$(basename "$plan")
  if [ -n "${KB_TUNE_ONLY:-}" ] && ! echo "$name" | grep -Eq -- "$KB_TUNE_ONLY"; then continue; fi
  n=$(find "$plan" -maxdepth 1 -name 'c*' -type d | wc -l)
  echo "$n $plan"
done > "$work/queues/all"
if [ "$ngpu" -gt 1 ]; then
  python3 - "$ngpu" "$work/queues" <<'PY'
import sys
n, d = int(sys.argv[1]), sys.argv[2]
rows = [l.split(" ", 1) for l in open(d + "/all").read().splitlines() if l]
# Dealt largest first (balance), each GPU's queue then in the given order.
load, gpu = [0] * n, {}
for i, (c, plan) in sorted(enumerate(rows), key=lambda r: -int(r[1][0])):
    g = load.index(min(load))
    load[g] += int(c) + 1
    gpu[i] = g
for g in range(n):
    open("%s/q%d" % (d, g), "w").write(
        "".join(rows[i][1] + "\n" for i in range(len(rows)) if gpu[i] == g))
PY
else
  cut -d' ' -f2- "$work/queues/all" > "$work/queues/q0"
fi

# Measures the programs of queue file $2 on GPU $1, one after the other.
measure_queue() {
  local gpu=$1 queue=$2 done_s=0 done_n=0 plan name bundles left rate need limit start rc secs line b
  while read -r plan <&3; do
    name=$(basename "$plan")
    # batch.txt's order (kb's default, then the model's most promising
    # first: what a cut-short batch keeps), else the folders' order.
    bundles=()
    if [ -f "$plan"batch.txt ]; then
      while read -r line; do
        b="$plan$(basename "$line")/"
        [ -d "$b" ] && bundles+=("$b")
      done < "$plan"batch.txt
    fi
    [ ${#bundles[@]} -gt 0 ] || bundles=("$plan"default/ "$plan"c*/)
    left=$(( budget - ($(date +%s) - t_start) ))
    # Seconds a bundle: what this GPU's programs took so far, else the guess.
    rate=$(python3 -c "print($done_s / $done_n if $done_n else ${KB_TUNE_S_PER_BUNDLE:-0.65})")
    need=$(python3 -c "import math; print(math.ceil(${#bundles[@]} * $rate))")
    if [ "$need" -gt "$left" ]; then
      echo "$name: skipped, ${#bundles[@]} bundles need about $need s ($rate s a bundle), $left s left of KB_TUNE_BUDGET_S" | tee -a "$log"; continue
    fi
    limit=$(( left < ${KB_TUNE_PROGRAM_TIMEOUT_S:-200} ? left : ${KB_TUNE_PROGRAM_TIMEOUT_S:-200} ))
    start=$(date +%s.%N)
    # One kb-run for the batch, its reports written as each bundle finishes
    # (--jsonl-out); a bundle without one after KB_TUNE_STALL_S is skipped
    # (kb-run killed, a fresh one goes on after it); what ran by the limit
    # is kept (scripts/tune_batch.py).
    CUDA_VISIBLE_DEVICES=$gpu python3 scripts/tune_batch.py --kb-run "$KB_RUN" --out "$out/$name.json" \
      --limit "$limit" --stall "${KB_TUNE_STALL_S:-15}" --run-args "${runargs[*]}" \
      "${bundles[@]}" < /dev/null 2>> "$log" | sed "s/^/$name (GPU $gpu): /" | tee -a "$log"
    rc=${PIPESTATUS[0]}
    secs=$(python3 -c "import time; print(round(time.time() - $start, 2))")
    done_s=$(python3 -c "print($done_s + $secs)")
    done_n=$(( done_n + ${#bundles[@]} ))
    echo "$name: ${#bundles[@]} bundles on GPU $gpu, rc $rc, $secs s" | tee -a "$log"
    echo "\"$name\": {\"seconds\": $secs, \"bundles\": ${#bundles[@]}, \"rc\": $rc, \"gpu\": $gpu}" > "$out/times.d/$name"
  done 3< "$queue"
}
# Stopped (Ctrl-C, a kill): stop the GPUs' queues too.
trap 'kill $(jobs -p) 2> /dev/null; exit 130' INT TERM
for ((g = 0; g < ngpu; g++)); do
  [ -s "$work/queues/q$g" ] && measure_queue "$g" "$work/queues/q$g" &
done
wait
python3 - "$out/times.d" "$out/times.json" <<'PY'
import json, os, sys
d = sys.argv[1]
times = {}
for f in sorted(os.listdir(d)):
    times.update(json.loads("{" + open(os.path.join(d, f)).read() + "}"))
json.dump(times, open(sys.argv[2], "w"), indent=1)
PY
rm -rf "$out/times.d"
echo "all programs: $(( $(date +%s) - t_start )) s wall on $ngpu GPU(s)" | tee -a "$log"
