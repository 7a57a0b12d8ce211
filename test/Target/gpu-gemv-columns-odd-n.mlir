// The gemv kernel over a row-major B with N = 1002 (not a multiple of 4: a
// column a thread, one float a load) and a fused bias, precision ieee.
// GPU-CHIPS: sm_90 sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/a/manifest.json
// CHECK: "config": "#kb.config<block = [2, 128, 16], thread = [2, 1], threads = 128, stages = 2, mma = \"gemv\">"
// CHECK: "spill_load_bytes": 0

func.func @columns(%x: tensor<2x300xf32>, %w: tensor<300x1002xf32>, %bias: tensor<1002xf32>) -> tensor<2x1002xf32> {
  %0 = kb.matmul %x, %w precision(ieee) : tensor<2x300xf32>, tensor<300x1002xf32> -> tensor<2x1002xf32>
  %1 = kb.bias_add %0, %bias : tensor<2x1002xf32>, tensor<1002xf32> -> tensor<2x1002xf32>
  return %1 : tensor<2x1002xf32>
}
