#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer:
# builds build-asan/ (scripts/setup-sanitize.sh: KB_SANITIZE and KB_FUZZ on),
# then runs the lit suite and the unit tests with the instrumented kb-opt,
# kb-run and kb-unittests.
# A sanitizer report aborts the process (abort_on_error), so that a `not
# kb-opt` RUN line cannot mistake it for an expected error exit. Needs no GPU.
# docs/fuzzing.md says what is instrumented and which sanitizer options are set.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/setup.sh >/dev/null # packages (and build/, which CI builds anyway)
asan_start=$(date +%s)
bash scripts/setup-sanitize.sh    # build-asan/: kb-opt, kb-run, kb-unittests, the fuzzers
built=$(date +%s)

# lit passes ASAN_OPTIONS and UBSAN_OPTIONS through to the tests. Leak
# checking is on (kb-opt's runs of the suite leak nothing today). Manual
# poisoning is off: kb's instrumented copy of LLVM's inline BumpPtrAllocator
# poisons slabs that the uninstrumented libMLIR.so then hands out, a false
# use-after-poison inside MLIR (docs/fuzzing.md).
export ASAN_OPTIONS=detect_leaks=1:allow_user_poisoning=0:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
log=$(mktemp)
echo "== lit suite (ASan + UBSan)"
status=0
/usr/lib/llvm-22/bin/lit -sv build-asan/test | tee "$log" || status=1
lit_passed=$(grep -Eo 'Passed *: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
echo "== unit tests (ASan + UBSan)"
unit_passed=0
if [ -x build-asan/unittests/kb-unittests ]; then
  build-asan/unittests/kb-unittests --gtest_brief=1 | tee "$log" || status=1
  unit_passed=$(grep -Eo '\[  PASSED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
else
  echo "no unit tests built (kb-run and its tests need the CUDA toolkit)"
fi
rm -f "$log"
echo "== sanitize: lit $lit_passed passed; unit $unit_passed passed; build/ $((asan_start - start)) s, build-asan/ $((built - asan_start)) s, tests $(( $(date +%s) - built )) s"
[ $status -eq 0 ] || echo "sanitize: FAILED (see above)"
exit $status
