#!/usr/bin/env bash
# Builds kb's libFuzzer targets in build-asan/ (scripts/setup-sanitize.sh:
# KB_FUZZ=ON, ASan, UBSan and coverage on kb's code; the build the sanitizer
# suite uses) and runs each for SECONDS (default 60):
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# TARGET: kb-compile, manifest, npy (default all three). Each run first
# replays fuzz/regressions/TARGET/, then fuzzes from build-asan/fuzz-work/corpus/TARGET
# (kept between runs, started from seeds written by fuzz/make-seeds.py) in
# fork mode, going on after a crash; every crash, timeout or out-of-memory
# input is saved under build-asan/fuzz-work/crashes/TARGET/. Exit status 1 when a
# regression input fails or a new crash was saved (in any target).
# Environment: KB_FUZZ_JOBS (how many targets run at once, each its replays
# then its SECONDS of fuzzing on one core; default 1, one at a time with the
# output as it comes; with more, each target's output is printed, in TARGET
# order, once all have finished; CI sets 2 for its 2 cores), KB_FUZZ_TIMEOUT
# (s per input, default 30), KB_FUZZ_RSS_MB (default 2048), KB_FUZZ_SEED
# (libFuzzer's -seed, for a repeatable run; CI sets it), KB_FUZZ_ARGS (more
# libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kb-compile manifest npy)
seen=" "
for t in "${targets[@]}"; do
  case $t in
    kb-compile|manifest|npy) ;;
    *) echo "fuzz.sh: unknown target '$t' (kb-compile, manifest or npy)"; exit 2 ;;
  esac
  [[ $seen != *" $t "* ]] || { echo "fuzz.sh: target '$t' named twice"; exit 2; }
  seen+="$t "
done
jobs=${KB_FUZZ_JOBS:-1}
if ! [[ $jobs =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: KB_FUZZ_JOBS must be a whole number of at least 1, got '$jobs'"; exit 2
fi

# kb-opt (the plain build) writes the manifest seeds. KB_FUZZ_NO_BUILD=1
# uses the binaries as they are (e.g. while another ninja runs in build-asan/);
# KB_FUZZ_BIN and KB_FUZZ_WORK replace build-asan/bin and build-asan/fuzz-work.
if [ "${KB_FUZZ_NO_BUILD:-0}" != 1 ]; then
  KB_NINJA_TARGETS=kb-opt bash scripts/setup.sh >/dev/null
  KB_NINJA_TARGETS=kb-fuzzers bash scripts/setup-sanitize.sh
fi
fz=${KB_FUZZ_WORK:-build-asan/fuzz-work}
mkdir -p "$fz" && fz=$(cd "$fz" && pwd)
if [ ! -d $fz/seeds ]; then
  python3 fuzz/make-seeds.py . $fz/seeds build/bin/kb-opt
fi
seed_args=()
[ -z "${KB_FUZZ_SEED:-}" ] || seed_args=(-seed="$KB_FUZZ_SEED")

# kb-compile: leak checking and ASan's manual poisoning are off (MLIR's
# registries live as long as the process; LLVM's inline BumpPtrAllocator
# poisons slabs libMLIR.so then uses): docs/fuzzing.md.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Every fuzzer process makes a scratch folder (bundle, manifest, .npy): keep
# them in one place, a folder per target (targets may run at once), and
# start clean.
rm -rf "$fz/tmp"; mkdir -p "$fz/tmp"

# One target: its replays, then its fuzzing. Prints what it found and writes
# its verdict (0 passed, 1 failed) to $fz/runs/TARGET.verdict last, so that
# a run that stopped before the end reads as failed.
fuzz_target() {
  local t=$1 max_len asan extra r rlog before after log verdict=0
  case $t in
    kb-compile) max_len=8192; asan=detect_leaks=0:allow_user_poisoning=0; extra=(-dict=fuzz/kb-compile.dict) ;;
    manifest) max_len=16384; asan=detect_leaks=1; extra=(-dict=fuzz/manifest.dict) ;;
    npy) max_len=4096; asan=detect_leaks=1; extra=() ;;
  esac
  local bin=${KB_FUZZ_BIN:-build-asan/bin}/$t-fuzzer
  export ASAN_OPTIONS=$asan:allocator_may_return_null=0
  export TMPDIR=$fz/tmp/$t
  mkdir -p "$TMPDIR"
  local limits=(-timeout="${KB_FUZZ_TIMEOUT:-30}" -rss_limit_mb="${KB_FUZZ_RSS_MB:-2048}"
                -malloc_limit_mb="${KB_FUZZ_RSS_MB:-2048}" -max_len=$max_len)
  mkdir -p "$fz/corpus/$t" "$fz/crashes/$t"

  local regressions=()
  for r in fuzz/regressions/$t/*; do
    [ -f "$r" ] && [ "${r##*.}" != md ] && regressions+=("$r")
  done
  if [ ${#regressions[@]} -gt 0 ]; then
    echo "== $t: replaying ${#regressions[@]} regression inputs"
    for r in "${regressions[@]}"; do
      rlog=$fz/crashes/$t/replay-$(basename "$r").log
      if ! "$bin" "${limits[@]}" "$r" >"$rlog" 2>&1; then
        echo "FAIL $r ($rlog)"; verdict=1
      fi
    done
  fi

  before=$(ls "$fz/crashes/$t" | grep -cv '\.log$' || true)
  echo "== $t: fuzzing for $seconds s"
  log=$fz/crashes/$t/fuzz.log
  "$bin" "${limits[@]}" "${extra[@]}" "${seed_args[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$fz/crashes/$t/" ${KB_FUZZ_ARGS:-} \
    "$fz/corpus/$t" "$fz/seeds/$t" >"$log" 2>&1 || true
  after=$(ls "$fz/crashes/$t" | grep -cv '\.log$' || true)
  grep -E '^#[0-9]+: cov' "$log" | tail -1 || true
  if [ "$after" -gt "$before" ]; then
    echo "$t: $((after - before)) new crash/timeout/oom inputs in $fz/crashes/$t/ (log: $log)"
    verdict=1
  else
    echo "$t: no crash in $seconds s"
  fi
  rm -rf "${TMPDIR:?}"
  echo $verdict > "$fz/runs/$t.verdict"
}

mkdir -p "$fz/runs"
for t in "${targets[@]}"; do rm -f "$fz/runs/$t.verdict" "$fz/runs/$t.out"; done
status=0
if [ "$jobs" -eq 1 ]; then
  for t in "${targets[@]}"; do
    fuzz_target "$t"
  done
else
  # At most $jobs targets at a time, the next starting when one ends; each
  # one's output goes to $fz/runs/TARGET.out until all are done.
  for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    fuzz_target "$t" >"$fz/runs/$t.out" 2>&1 &
  done
  wait
  for t in "${targets[@]}"; do
    cat "$fz/runs/$t.out"
  done
fi
for t in "${targets[@]}"; do
  if [ "$(cat "$fz/runs/$t.verdict" 2>/dev/null)" != 0 ]; then
    [ -f "$fz/runs/$t.verdict" ] || echo "$t: stopped before its verdict (see above)"
    status=1
  fi
done
exit $status
