#!/usr/bin/env bash
# Builds kb's libFuzzer targets in build-asan/ (scripts/setup-sanitize.sh:
# KB_FUZZ=ON, ASan, UBSan and coverage on kb's code; the build the sanitizer
# suite uses) and runs each for SECONDS (default 60), one at a time:
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# TARGET: kb-compile, manifest, npy (default all three). Each run first
# replays fuzz/regressions/TARGET/, then fuzzes from build-asan/fuzz-work/corpus/TARGET
# (kept between runs, started from seeds written by fuzz/make-seeds.py) in
# fork mode, going on after a crash; every crash, timeout or out-of-memory
# input is saved under build-asan/fuzz-work/crashes/TARGET/. Exit status 1 when a
# regression input fails or a new crash was saved. docs/fuzzing.md has more.
# Environment: KB_FUZZ_TIMEOUT (s per input, default 30), KB_FUZZ_RSS_MB
# (default 2048), KB_FUZZ_SEED (libFuzzer's -seed, for a repeatable run; CI
# sets it), KB_FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kb-compile manifest npy)

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
# them in one place and start clean.
export TMPDIR=$fz/tmp
rm -rf "$TMPDIR"; mkdir -p "$TMPDIR"
status=0
for t in "${targets[@]}"; do
  case $t in
    kb-compile) max_len=8192; asan=detect_leaks=0:allow_user_poisoning=0; extra=(-dict=fuzz/kb-compile.dict) ;;
    manifest) max_len=16384; asan=detect_leaks=1; extra=(-dict=fuzz/manifest.dict) ;;
    npy) max_len=4096; asan=detect_leaks=1; extra=() ;;
    *) echo "fuzz.sh: unknown target '$t' (kb-compile, manifest or npy)"; exit 2 ;;
  esac
  bin=${KB_FUZZ_BIN:-build-asan/bin}/$t-fuzzer
  export ASAN_OPTIONS=$asan:allocator_may_return_null=0
  limits=(-timeout="${KB_FUZZ_TIMEOUT:-30}" -rss_limit_mb="${KB_FUZZ_RSS_MB:-2048}"
          -malloc_limit_mb="${KB_FUZZ_RSS_MB:-2048}" -max_len=$max_len)
  mkdir -p "$fz/corpus/$t" "$fz/crashes/$t"

  regressions=()
  for r in fuzz/regressions/$t/*; do
    [ -f "$r" ] && [ "${r##*.}" != md ] && regressions+=("$r")
  done
  if [ ${#regressions[@]} -gt 0 ]; then
    echo "== $t: replaying ${#regressions[@]} regression inputs"
    for r in "${regressions[@]}"; do
      rlog=$fz/crashes/$t/replay-$(basename "$r").log
      if ! "$bin" "${limits[@]}" "$r" >"$rlog" 2>&1; then
        echo "FAIL $r ($rlog)"; status=1
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
    status=1
  else
    echo "$t: no crash in $seconds s"
  fi
  rm -rf "${TMPDIR:?}"/*
done
exit $status
