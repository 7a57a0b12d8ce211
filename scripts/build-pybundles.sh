#!/usr/bin/env bash
# Compiles, on the machine with kb-opt, everything scripts/gpu-python-check.sh
# runs on the GPU machine (which has no MLIR): the KernelBench-style problems
# of python/examples/kernelbench at tf32 and ieee, and the bundles of
# python/tests/gpu/test_gpu_load.py and the torch.compile backend's cache of
# python/tests/gpu/test_backend_gpu.py, under build/pybundles/ (a few MiB),
# and the cache of the backend's suites (python3 -m kb.bench --suite models,
# backend-overhead; docs/bench.md) in build/pybundles/models-cache (4.2 MiB;
# the models took 36-89 s on the 2-core build host, 2026-12-07). KB_MODELS / KB_DTYPES:
# the models suite's --models / --dtypes (KB_MODELS=none: not precompiled).
# The serving suites' cache (issue #47's serving loop) in
# build/pybundles/serving-cache: serving-tiny and serving's KB_SERVING_MODELS
# (its --models; default mlp-1024, 4.3 MiB with serving-tiny's 0.9; "all"
# adds the GPT-2 block, 5 MiB more; "none": serving-tiny alone) in
# KB_SERVING_DTYPES (its --dtypes; default f32, "all": bf16 too).
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
# The backend's suites: one cache (models-tiny too: a quick GPU check).
"$KB_PYTHON" -m kb.bench --suite backend-overhead --build-only "$out/models-cache" 2>&1 | grep -v "^W.*triton"
"$KB_PYTHON" -m kb.bench --suite models-tiny --build-only "$out/models-cache" 2>&1 | grep -v "^W.*triton"
if [ "${KB_MODELS:-}" != none ]; then
  "$KB_PYTHON" -m kb.bench --suite models --build-only "$out/models-cache" \
    ${KB_MODELS:+--models "$KB_MODELS"} ${KB_DTYPES:+--dtypes "$KB_DTYPES"} 2>&1 | grep -v "^W.*triton"
fi
"$KB_PYTHON" -m kb.bench --suite serving-tiny --build-only "$out/serving-cache" 2>&1 | grep -v "^W.*triton"
serving=${KB_SERVING_MODELS:-mlp-1024}
serving_dt=${KB_SERVING_DTYPES:-f32}
if [ "$serving" != none ]; then
  [ "$serving" = all ] && serving=
  [ "$serving_dt" = all ] && serving_dt=
  "$KB_PYTHON" -m kb.bench --suite serving --build-only "$out/serving-cache" \
    ${serving:+--models "$serving"} ${serving_dt:+--dtypes "$serving_dt"} 2>&1 | grep -v "^W.*triton"
fi
git rev-parse HEAD > "$out/COMMIT" 2>/dev/null || true
du -sh "$out"
