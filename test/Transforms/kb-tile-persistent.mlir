// RUN: kb-opt %s --kb-tile=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile writes a persistent grid (`grid` = the 132 SMs of sm_90a) for a
// wgmma matmul with TMA copies whose tiles are more than the SMs and of
// which an SM holds one block (B^T: 128 rows; a row-major B: 128 x 128 or
// more): one block an SM walks the tiles, its producer copying the next
// tile's first k tiles during the epilogue (run 8: 4096^3 0.3968 -> 0.3676
// ms, 16384^2 x 32 0.3636 -> 0.3100).

// CHECK-LABEL: func.func @square
// CHECK: block = [256, 128, 32], mma = "wgmma_tf32", grid = 132
func.func @square(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// A batch counts: 8 x (8 x 16) tiles.
// CHECK-LABEL: func.func @batched
// CHECK: grid = 132
func.func @batched(%a: tensor<8x2048x2048xf32>, %b: tensor<8x2048x2048xf32>) -> tensor<8x2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<8x2048x2048xf32>, tensor<8x2048x2048xf32> -> tensor<8x2048x2048xf32>
  return %0 : tensor<8x2048x2048xf32>
}

// -----

// 128 tiles of 128 x 256 for 132 SMs: one wave, one block a tile.
// CHECK-LABEL: func.func @one_wave
// CHECK-NOT: grid
func.func @one_wave(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

// -----

// Not with cp.async copies (the persistent kernel's producer is TMA's),
// nor for 64-row tiles (two blocks an SM), nor where a grid is set.
// CHECK-LABEL: func.func @not_persistent
// CHECK-NOT: grid = 132
// CHECK: copy = "cp_async"
// CHECK-NOT: grid = 132
// CHECK: block = [64, 64, 32]
// CHECK-NOT: grid = 132
// CHECK: grid = 66
func.func @not_persistent(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> (tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "cp_async">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %2 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", grid = 66>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0, %1, %2 : tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<4096x4096xf32>
}

// -----

func.func @grid_on_ffma(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{#kb.config 'grid' (a persistent grid) is only for a split_global softmax or a wgmma_tf32 matmul, not mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<mma = "ffma", grid = 132>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
