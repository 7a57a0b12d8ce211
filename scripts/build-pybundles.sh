#!/usr/bin/env bash
# Compiles, on the machine with kb-opt, everything scripts/gpu-python-check.sh
# runs on the GPU machine (which has no MLIR): the KernelBench-style problems
# of python/examples/kernelbench at tf32 and ieee, and the bundles of
# python/tests/gpu/test_gpu_load.py and the torch.compile backend's cache of
# python/tests/gpu/test_backend_gpu.py, under build/pybundles/ (a few MiB).
# Then carry build/pybundles to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/python-env.sh
[ -x build/bin/kb-opt ] || bash scripts/setup.sh
out=build/pybundles
rm -rf "$out"
mkdir -p "$out"
for prec in tf32 ieee; do
  "$KB_PYTHON" -m kb.bench --compile-only --precision "$prec" --bundles "$out/$prec" \
    python/examples/kernelbench/*.py
done
"$KB_PYTHON" python/tests/gpu/test_gpu_load.py --prepare "$out/tests"
# The torch.compile backend's bundle cache for python/tests/gpu/test_backend_gpu.py.
"$KB_PYTHON" python/tests/gpu/test_backend_gpu.py --prepare "$out/backend-cache" > "$out/backend-cache.log" 2>&1 \
  || { tail -n 20 "$out/backend-cache.log"; exit 1; }
grep -E ' bundles$|refused' "$out/backend-cache.log" | cut -c1-160 || true
git rev-parse HEAD > "$out/COMMIT" 2>/dev/null || true
du -sh "$out"
