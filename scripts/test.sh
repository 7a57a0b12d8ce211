#!/usr/bin/env bash
# The whole test suite: set-up and build (scripts/setup.sh), then the lit
# suite (every pass, the dialect, PTX through ptxas where present), the
# GoogleTest unit tests of the runtime, the Python package's pytest suite
# (python/tests), and the installed package (scripts/test-install.sh: cmake
# --install, then a find_package(KB) project built against it). Needs no GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/setup.sh
log=$(mktemp)
echo "== lit suite"
/usr/lib/llvm-22/bin/lit -sv build/test | tee "$log"
lit_passed=$(grep -Eo 'Passed *: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
lit_unsupported=$(grep -Eo 'Unsupported *: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
echo "== unit tests"
unit_passed=0
if [ -x build/unittests/kb-unittests ]; then
  build/unittests/kb-unittests --gtest_brief=1 | tee "$log"
  unit_passed=$(grep -Eo '\[  PASSED  \] [0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
else
  echo "no unit tests built (kb-run and its tests need the CUDA toolkit)"
fi
echo "== python tests (python/tests: builder, torch.fx importer, bench, plots)"
py_passed=0
. scripts/python-env.sh
if "$KB_PYTHON" -c "import torch, pytest, matplotlib" 2>/dev/null; then
  "$KB_PYTHON" -m pytest -q -p no:cacheprovider python/tests | tee "$log"
  py_passed=$(grep -Eo '[0-9]+ passed' "$log" | tail -1 | grep -Eo '^[0-9]+' || echo 0)
else
  echo "python tests need python3-torch, python3-pytest and python3-matplotlib ($KB_PYTHON lacks one)"
  exit 1
fi
rm -f "$log"
echo "== install (cmake --install, find_package(KB) consumer)"
bash scripts/test-install.sh
echo "== lit: $lit_passed passed ($lit_unsupported unsupported); unit: $unit_passed passed; python: $py_passed passed; install: passed; $(( $(date +%s) - start )) s"
echo "$(( lit_passed + unit_passed + py_passed + 1 )) passed, 0 failed"
