#!/usr/bin/env bash
# Builds one GPU call for the wgmma operand read once (issue #19's
# memory-bound skinny shapes): where the output has one row of tiles, each
# of B's tiles is read by one block only (one column: A's), so its TMA loads
# can carry an L2 evict-first policy, as kb's gemv weight does since
# 2026-12-02 run 21 (the lines read once replace each other, not the dirty
# lines a previous kernel, or kb-run's flush, left in L2). The suite's
# programs whose kernels the flag changes (bench/shapes.py), each default
# against the same program compiled with kb-opt --kb-wgmma-stream
# (-v0x0s0st): gpu-check (checks, cuBLAS's routes, PyTorch's peers) over
# both, then bench/ab.sh, 3 interleaved turns, L2 flushed.
# Usage: bash bench/stream_check.sh first
# Then on the GPU machine (carry build/bin and build/gpu): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "first"
names='skinny-(128x4096x4096|16x11008x4096|16x4096x4096|32x4096x11008|64x16384x4096|8x4096x4096|96x12288x4096)-bt|longk-(192x160x300000-bt|256x256x262144)|matvec-4096x8x4096|batched-256x256x256x256-bt'
python3 bench/shapes.py build/gpu/all > /dev/null
for f in build/gpu/all/*.mlir; do
  n=$(basename "$f" .mlir)
  [[ "$n" =~ ^shape-($names)-sm90a$ ]] && cp "$f" build/gpu/programs/
done
rm -rf build/gpu/all
gpu_call_compile
printf '#!/bin/sh\nexec %s --kb-wgmma-stream "$@"\n' "$PWD/build/bin/kb-opt" > build/gpu/kb-opt-st
chmod +x build/gpu/kb-opt-st
for f in build/gpu/programs/*.mlir; do
  n=$(basename "$f" -sm90a.mlir)
  build/gpu/kb-opt-st "$f" --kb-compile="output=build/gpu/bundles/$n-v0x0s0st-sm90a chip=sm_90a" -o /dev/null
done
gpu_call_show
{
  gpu_call_header
  cat <<'SH'
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
  KB_SKIP_SANITIZER=1 KB_TORCH_PEER='^shape-' \
  OUT=$OUT/check timeout 330 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
grep -E "WRONG|error" $OUT/check_log.txt | head -20
mkdir -p /tmp/peers && tar xzf $OUT/check/results.tgz -C /tmp/peers && python3 bench/peer_ratio.py /tmp/peers
KB_AB_REPS=3 KB_AB_MS=60 timeout $(( 540 - $(date +%s) + start )) bash bench/ab.sh $(ls -d build/gpu/bundles/shape-*/) > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 14 $OUT/ab_log.txt
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
echo "built ($mode): $(ls build/gpu/bundles | wc -l) bundles"
