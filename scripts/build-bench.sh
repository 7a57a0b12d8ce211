#!/usr/bin/env bash
# Compiles every benchmark program (bench/programs.py) and every example into
# bundles under build/gpu/ (fusion programs also unfused, as <name>-unfused),
# ready to carry to the GPU machine with build/bin/kb-run. KB_BENCH_ONLY: a
# regex of the program names to compile (default: every one).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/gpu && mkdir -p build/gpu/programs build/gpu/bundles
python3 bench/programs.py build/gpu/programs
# The matmul shape suite (issue #19): shape-<class>-<dims>-sm90a.
python3 bench/shapes.py build/gpu/programs
# The same 57 shapes in bf16 (shape-bf16-<class>-<dims>-sm90a; issue #44).
python3 bench/shapes.py --dtype bf16 build/gpu/programs
cp examples/*.mlir build/gpu/programs/
# The GPU reproducers of issue #17 (bench/repros): run and memchecked by gpu-check.sh.
cp bench/repros/*.mlir build/gpu/programs/
# kb.pad in front of wgmma (K % 4 != 0) with split-K, an epilogue and a given
# B^T behind it: checked, and memchecked, by gpu-check.sh.
cp test/Target/gpu-pad-wgmma.mlir build/gpu/programs/gpu-pad-wgmma-sm90a.mlir
# A 16-bit row-major B in boxes of 32 or 16 columns (64 x 80 in 11 stages,
# 64 x 96 with edges, 64 x 48, a persistent f16 128 x 160 with an epilogue):
# checked against float64, and memchecked with KB_MEMCHECK_EXTRA, by
# gpu-check.sh.
cp test/Target/gpu-matmul-half-narrow-b.mlir build/gpu/programs/gpu-matmul-half-narrow-b-sm90a.mlir
# operands = "ba" (C^T = B^T A^T for a 16-bit row-major B: 80 x 64 in 11
# stages, 88 x 64 with edges, f16 48 x 128 + bias + GELU, batched, split 2):
# the same checks.
cp test/Target/gpu-matmul-half-swap.mlir build/gpu/programs/gpu-matmul-half-swap-sm90a.mlir
refused=0
for f in build/gpu/programs/*.mlir; do
  name=$(basename "$f" .mlir)
  # KB_BENCH_ONLY: a regex of the programs to compile (default: all).
  if [ -n "${KB_BENCH_ONLY:-}" ] && ! echo "$name" | grep -Eq -- "$KB_BENCH_ONLY"; then continue; fi
  chip=sm_90
  case "$name" in *-sm90a) chip=sm_90a ;; esac
  if ! build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$name chip=$chip" -o /dev/null 2> build/gpu/$name.err; then
    echo "SKIP $name: $(head -n 1 build/gpu/$name.err)"; rm -rf "build/gpu/bundles/$name"; continue
  fi
  # kb-run reads every bundle back here, without a GPU: a bundle it would
  # refuse on the device (a config field its parser lacked, 2026-12-07)
  # fails the build instead of costing device time.
  if [ -x build/bin/kb-run ] && ! build/bin/kb-run --check "build/gpu/bundles/$name" > /dev/null 2> build/gpu/$name.check; then
    echo "kb-run --check refuses $name: $(head -n 1 build/gpu/$name.check)"; refused=$((refused + 1))
  fi
  if grep -q "kb.dropout\|kb.gelu\|kb.bias_add\|kb.scale\|kb.mish" "$f"; then
    # A chain with an op that has no kernel of its own (kb.causal_mask
    # lowers only inside kb.attention) has no unfused twin: said, not fatal.
    if ! build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$name-unfused fuse=false chip=$chip" -o /dev/null 2> build/gpu/$name-unfused.err; then
      echo "SKIP $name-unfused: $(grep -m1 error: build/gpu/$name-unfused.err)"; rm -rf "build/gpu/bundles/$name-unfused"
    fi
  fi
done
ls build/gpu/bundles | wc -l
du -sh build/gpu/bundles
[ "$refused" -eq 0 ] || { echo "$refused bundle(s) refused by kb-run --check"; exit 1; }
