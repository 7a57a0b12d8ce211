#!/usr/bin/env bash
# Builds kb's libFuzzer targets into build-fuzz/ (KB_FUZZ=ON: ASan, UBSan and
# coverage on kb's code) and runs each for SECONDS (default 60), one at a time:
#   scripts/fuzz.sh [SECONDS] [TARGET...]
# TARGET: kb-compile, manifest, npy (default all three). Each run first
# replays fuzz/regressions/TARGET/, then fuzzes from build-fuzz/corpus/TARGET
# (kept between runs, started from seeds written by fuzz/make-seeds.py) in
# fork mode, going on after a crash; every crash, timeout or out-of-memory
# input is saved under build-fuzz/crashes/TARGET/. Exit status 1 when a
# regression input fails or a new crash was saved. docs/fuzzing.md has more.
# Environment: KB_FUZZ_TIMEOUT (s per input, default 30), KB_FUZZ_RSS_MB
# (default 2048), KB_FUZZ_ARGS (more libFuzzer flags).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(kb-compile manifest npy)

bash scripts/setup-sanitize.sh
# kb-opt (the plain build) writes the manifest seeds.
KB_NINJA_TARGETS=kb-opt bash scripts/setup.sh >/dev/null
if [ ! -f build-fuzz/build.ninja ]; then
  cmake -G Ninja -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" \
    -DKB_FUZZ=ON -DKB_ENABLE_TESTS=OFF -DKB_ENABLE_CUDA=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache >/dev/null
fi
ninja -C build-fuzz kb-fuzzers
if [ ! -d build-fuzz/seeds ]; then
  python3 fuzz/make-seeds.py . build-fuzz/seeds build/bin/kb-opt
fi

# kb-compile: leak checking and ASan's manual poisoning are off (MLIR's
# registries live as long as the process; LLVM's inline BumpPtrAllocator
# poisons slabs libMLIR.so then uses): docs/fuzzing.md.
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Every fuzzer process makes a scratch folder (bundle, manifest, .npy): keep
# them in one place and start clean.
export TMPDIR=$PWD/build-fuzz/tmp
rm -rf "$TMPDIR"; mkdir -p "$TMPDIR"
status=0
for t in "${targets[@]}"; do
  case $t in
    kb-compile) max_len=8192; asan=detect_leaks=0:allow_user_poisoning=0; extra=(-dict=fuzz/kb-compile.dict) ;;
    manifest) max_len=16384; asan=detect_leaks=1; extra=(-dict=fuzz/manifest.dict) ;;
    npy) max_len=4096; asan=detect_leaks=1; extra=() ;;
    *) echo "fuzz.sh: unknown target '$t' (kb-compile, manifest or npy)"; exit 2 ;;
  esac
  bin=build-fuzz/bin/$t-fuzzer
  export ASAN_OPTIONS=$asan:allocator_may_return_null=0
  limits=(-timeout="${KB_FUZZ_TIMEOUT:-30}" -rss_limit_mb="${KB_FUZZ_RSS_MB:-2048}"
          -malloc_limit_mb="${KB_FUZZ_RSS_MB:-2048}" -max_len=$max_len)
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/crashes/$t"

  regressions=()
  for r in fuzz/regressions/$t/*; do
    [ -f "$r" ] && [ "${r##*.}" != md ] && regressions+=("$r")
  done
  if [ ${#regressions[@]} -gt 0 ]; then
    echo "== $t: replaying ${#regressions[@]} regression inputs"
    for r in "${regressions[@]}"; do
      rlog=build-fuzz/crashes/$t/replay-$(basename "$r").log
      if ! "$bin" "${limits[@]}" "$r" >"$rlog" 2>&1; then
        echo "FAIL $r ($rlog)"; status=1
      fi
    done
  fi

  before=$(ls "build-fuzz/crashes/$t" | grep -cv '\.log$' || true)
  echo "== $t: fuzzing for $seconds s"
  log=build-fuzz/crashes/$t/fuzz.log
  "$bin" "${limits[@]}" "${extra[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crashes/$t/" ${KB_FUZZ_ARGS:-} \
    "build-fuzz/corpus/$t" "build-fuzz/seeds/$t" >"$log" 2>&1 || true
  after=$(ls "build-fuzz/crashes/$t" | grep -cv '\.log$' || true)
  grep -E '^#[0-9]+: cov' "$log" | tail -1 || true
  if [ "$after" -gt "$before" ]; then
    echo "$t: $((after - before)) new crash/timeout/oom inputs in build-fuzz/crashes/$t/ (log: $log)"
    status=1
  else
    echo "$t: no crash in $seconds s"
  fi
  rm -rf "${TMPDIR:?}"/*
done
exit $status
