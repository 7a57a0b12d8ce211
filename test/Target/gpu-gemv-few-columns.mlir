// The gemv kernel with A's rows as the weight (N = 3 <= 16) and a
// row-major B, whose three columns are read one float at a time, N apart;
// M = 1001 past the 4-row blocks. Set by hand (by default 3 columns take
// the tensor cores).
// GPU-CHIPS: sm_90 sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/a chip=sm_90a ptxas=%ptxas" -o /dev/null 2>/dev/null
// RUN: FileCheck %s < %t/a/manifest.json
// CHECK: "config": "#kb.config<block = [4, 3, 512], warp = [1, 3], threads = 128, stages = 2, mma = \"gemv\">"
// CHECK: "spill_load_bytes": 0

func.func @few_columns(%a: tensor<1001x1000xf32>, %b: tensor<1000x3xf32>) -> tensor<1001x3xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "gemv">} : tensor<1001x1000xf32>, tensor<1000x3xf32> -> tensor<1001x3xf32>
  return %0 : tensor<1001x3xf32>
}
