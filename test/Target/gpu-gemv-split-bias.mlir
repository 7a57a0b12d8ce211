// The gemv kernel split along K (101 rows of B^T hold too few bytes in
// flight: kb-tile cuts the 98 k tiles into chunks), K = 50000 ending inside
// the last k tile, N = 101 past the 4-row blocks, and the bias after the
// ordered kb.split_sum.
// GPU-CHIPS: sm_90 sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/a chip=sm_90a ptxas=%ptxas" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t/a/manifest.json
// CHECK: "config": "#kb.config<block = [2, 4, 512], warp = [2, 1], threads = 128, stages = 2, mma = \"gemv\", split = 14>"
// CHECK: "op": "kb.split_sum"

func.func @split(%x: tensor<2x50000xf32>, %w: tensor<101x50000xf32>, %bias: tensor<101xf32>) -> tensor<2x101xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<2x50000xf32>, tensor<101x50000xf32> -> tensor<2x101xf32>
  %1 = kb.bias_add %0, %bias : tensor<2x101xf32>, tensor<101xf32> -> tensor<2x101xf32>
  return %1 : tensor<2x101xf32>
}
