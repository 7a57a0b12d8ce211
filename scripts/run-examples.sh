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
# The default chip is sm_90a (Hopper: the TF32 matmul gets a transpose of B,
# then the wgmma kernel); the matmul once more for sm_90 (mma.sync), which
# also runs on later GPUs.
build/bin/kb-opt examples/matmul.mlir --kb-compile="output=build/bundles/matmul-sm90 chip=sm_90" -o /dev/null
echo "compiled examples/matmul.mlir for sm_90 -> build/bundles/matmul-sm90 ($(ls build/bundles/matmul-sm90/*.ptx | wc -l) kernel(s))"
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
  # sm_90a bundles (the default) run only on an sm_90 GPU (H100, H200).
  if grep -q '"target": "sm_90a"' "$d/manifest.json" 2>/dev/null; then
    case "$device" in *"(sm_90,"*) ;; *) echo "skip $d: built for sm_90a, the GPU is not sm_90"; continue ;; esac
  fi
  build/bin/kb-run "$d"
done
