// The gemv kernel (B transposed, M = 3) with a fused bias and GELU, N = 70
// past its 4-row blocks and K = 1000 past its 512-float k tiles: kb-run
// checks it on the GPU (scripts/differential.sh takes every
// test/Target/gpu-*.mlir). Here: it compiles through ptxas, on gemv.
// GPU-CHIPS: sm_90 sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/a ptxas=%ptxas" -o /dev/null
// RUN: kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t/a/manifest.json
// RUN: FileCheck %s < %t/b/manifest.json
// CHECK: "config": "#kb.config<block = [3, 4, 512], warp = [3, 1], threads = 128, stages = 2, mma = \"gemv\">"
// CHECK: "spill_load_bytes": 0

func.func @linear(%x: tensor<3x1000xf32>, %w: tensor<70x1000xf32>, %bias: tensor<70xf32>) -> tensor<3x70xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<3x1000xf32>, tensor<70x1000xf32> -> tensor<3x70xf32>
  %1 = kb.bias_add %0, %bias : tensor<3x70xf32>, tensor<70xf32> -> tensor<3x70xf32>
  %2 = kb.gelu %1 approx(tanh) : tensor<3x70xf32>
  return %2 : tensor<3x70xf32>
}
