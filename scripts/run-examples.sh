#!/usr/bin/env bash
# The main job on the examples: set-up and build, compile every program in
# examples/ to a bundle under build/bundles/ (PTX, cubin, manifest), and, where
# a GPU is present, run each bundle with kb-run (validate, then time).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build/bundles
for f in examples/*.mlir; do
  name=$(basename "$f" .mlir)
  start=$(date +%s%N)
  build/bin/kb-opt "$f" --kb-compile="output=build/bundles/$name" -o /dev/null
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  kernels=$(ls build/bundles/$name/*.ptx | wc -l)
  echo "compiled $f -> build/bundles/$name ($kernels kernel(s), ${ms} ms)"
done
if [ ! -x build/bin/kb-run ]; then
  echo "kb-run was not built (no CUDA toolkit): bundles compiled, nothing run"
  exit 0
fi
if ! build/bin/kb-run --check-device >/dev/null 2>&1; then
  echo "no GPU here: $(build/bin/kb-run --check-device 2>&1 | head -n 1)"
  echo "bundles compiled; copy build/bin/kb-run and build/bundles to a GPU machine to run them"
  exit 0
fi
for d in build/bundles/*/; do
  build/bin/kb-run "$d"
done
