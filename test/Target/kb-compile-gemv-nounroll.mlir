// A gemv k loop of at most 4 k tiles is marked not to be unrolled
// (`.pragma "nounroll"`): ptxas unrolled such a loop whole and then
// scheduled each weight load beside the FMAs that use it (docs/shapes.md,
// run 14); a longer loop is left to LLVM's partial unrolling (run 15).
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t chip=sm_90a ptxas=none" -o /dev/null 2>/dev/null
// RUN: FileCheck %s --check-prefix=SHORT < %t/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=LONG < %t/k1_matmul.ptx
// SHORT: .pragma "nounroll";
// LONG-NOT: nounroll

func.func @two(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>, %y: tensor<1x14336xf32>, %v: tensor<4096x14336xf32>) -> (tensor<1x4096xf32>, tensor<1x4096xf32>) {
  // K = 4096 in k tiles of 1024: a loop of 4.
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  // K = 14336: 14 k tiles.
  %1 = kb.matmul %y, %v precision(tf32) transpose_b : tensor<1x14336xf32>, tensor<4096x14336xf32> -> tensor<1x4096xf32>
  return %0, %1 : tensor<1x4096xf32>, tensor<1x4096xf32>
}
