#!/usr/bin/env bash
# Compiles kb's own kernels for the matmul units no library route runs on
# the H200, for `kb-run --calibrate --unit-bundle UNIT=DIR` (tools/kb-run/
# Calibrate.cpp) to time as those units' ceilings: mma.sync TF32, the
# 8192^3 matmul of cuBLAS's calibration, with the tiles kb-tune measured
# fastest for mma.sync (128 x 256 blocks of 64 x 64 warps, 4 stages:
# docs/kb-tune.md). The kernel comes out of kb's passes (kb-opt
# --kb-compile); nothing here is kernel text.
# Writes build/tune/units/NAME.mlir and the bundle build/tune/units/NAME/.
# Usage: scripts/build-unit-bundles.sh   (needs build/bin/kb-opt)
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/tune/units
rm -rf "$out" && mkdir -p "$out"
t="tensor<8192x8192xf32>"
cat > "$out/mma_sync_tf32.mlir" <<MLIR
// kb's mma.sync TF32 kernel at 8192^3, timed by kb-run --calibrate as the
// mma_sync_tf32 ceiling (scripts/build-unit-bundles.sh).
func.func @mma_sync_tf32_8192(%a: $t {kb.name = "a"}, %b: $t {kb.name = "b"})
    -> ($t {kb.name = "c"}) {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "mma_sync_tf32", block = [128, 256, 32], warp = [64, 64], stages = 4>} : $t, $t -> $t
  return %0 : $t
}
MLIR
nice -n 10 build/bin/kb-opt --kb-compile="chip=sm_90a output=$out/mma_sync_tf32" \
  "$out/mma_sync_tf32.mlir" > /dev/null
build/bin/kb-run --check "$out/mma_sync_tf32"
echo "unit bundles in $out: $(du -sh "$out" | cut -f1)"
