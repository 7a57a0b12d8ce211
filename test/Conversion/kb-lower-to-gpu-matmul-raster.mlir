// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// The lowering alone, on a complete wgmma config with raster = 2: the block
// id t = by * 8 + bx (a grid of 8 x 4 tiles of 128x256) walks groups of two
// block rows, the row fastest: row = 2 * (t / 16) + (t % 16) % rows,
// column = (t % 16) / rows, rows = min(2, 4 - 2 * (t / 16)).

// CHECK-LABEL: gpu.func @k0_matmul
// CHECK: %[[BX:.+]] = gpu.block_id  x
// CHECK: %[[BY:.+]] = gpu.block_id  y
// CHECK: %[[ROWT:.+]] = arith.muli %[[BY]], %c8 : index
// CHECK: %[[T:.+]] = arith.addi %[[ROWT]], %[[BX]] : index
// CHECK: %[[G:.+]] = arith.divui %[[T]], %c16 : index
// CHECK: %[[IN:.+]] = arith.remui %[[T]], %c16 : index
// CHECK: %[[FIRST:.+]] = arith.muli %[[G]], %c2 : index
// CHECK: %[[LEFT:.+]] = arith.subi %c4, %[[FIRST]] : index
// CHECK: %[[ROWS:.+]] = arith.minui %[[LEFT]], %c2 : index
// CHECK: %[[R:.+]] = arith.remui %[[IN]], %[[ROWS]] : index
// CHECK: %[[ROW:.+]] = arith.addi %[[FIRST]], %[[R]] : index
// CHECK: %[[COL:.+]] = arith.divui %[[IN]], %[[ROWS]] : index
// CHECK: arith.muli %[[ROW]], %c128 : index
// CHECK: arith.muli %[[COL]], %c256 : index
func.func @raster(%x: tensor<512x64xf32>, %w: tensor<2048x64xf32>) -> tensor<512x2048xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 288, stages = 3, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", raster = 2>} : tensor<512x64xf32>, tensor<2048x64xf32> -> tensor<512x2048xf32>
  return %0 : tensor<512x2048xf32>
}

// -----

// Without raster: the block's tile is (by, bx) itself.

// CHECK-LABEL: gpu.func @k0_matmul
// CHECK: %[[BX:.+]] = gpu.block_id  x
// CHECK: %[[BY:.+]] = gpu.block_id  y
// CHECK-NOT: arith.divui %{{.+}}, %c16
// CHECK: arith.muli %[[BY]], %c128 : index
// CHECK: arith.muli %[[BX]], %c256 : index
func.func @plain(%x: tensor<512x64xf32>, %w: tensor<2048x64xf32>) -> tensor<512x2048xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], threads = 288, stages = 3, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<512x64xf32>, tensor<2048x64xf32> -> tensor<512x2048xf32>
  return %0 : tensor<512x2048xf32>
}
