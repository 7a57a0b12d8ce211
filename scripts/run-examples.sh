#!/usr/bin/env bash
# The main job on the examples: set-up and build, compile every program in
# examples/ to a bundle under build/bundles/ (PTX, cubin, manifest), and, where
# a GPU is present, run each bundle with kb-run (validate, then time).
# --run-only: skip set-up and compiling, run the bundles already under
# build/bundles (on a GPU machine that received build/bin and build/bundles).
set -euo pipefail
cd "$(dirname "$0")/.."
run_only=false
[ "${1:-}" = "--run-only" ] && run_only=true
if ! $run_only; then
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
# The TF32 matmul once more for Hopper's wgmma (chip=sm_90a): a transpose of B,
# then the wgmma kernel. It runs only on an sm_90 device.
build/bin/kb-opt examples/matmul.mlir --kb-compile="output=build/bundles/matmul-sm90a chip=sm_90a" -o /dev/null
echo "compiled examples/matmul.mlir for sm_90a -> build/bundles/matmul-sm90a ($(ls build/bundles/matmul-sm90a/*.ptx | wc -l) kernel(s))"
fi
if [ ! -x build/bin/kb-run ]; then
  echo "kb-run was not built (no CUDA toolkit): bundles compiled, nothing run"
  exit 0
fi
if ! build/bin/kb-run --check-device >/dev/null 2>&1; then
  echo "no GPU here: $(build/bin/kb-run --check-device 2>&1 | head -n 1)"
  echo "bundles compiled; copy build/bin/kb-run and build/bundles to a GPU machine to run them"
  exit 0
fi
device=$(build/bin/kb-run --check-device)
echo "GPU: $device"
for d in build/bundles/*/; do
  case "$d" in
    *-sm90a/) case "$device" in *"(sm_90,"*) ;; *) echo "skip $d: built for sm_90a, the GPU is not sm_90"; continue ;; esac ;;
  esac
  build/bin/kb-run "$d"
done
