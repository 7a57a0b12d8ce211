// RUN: kb-opt %s --kb-tile -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile alone, on matmuls whose unit is written out: the order in which a
// wgmma grid walks its tiles (`raster`). nn.Linear 2048x28672x8192 (16 x 112
// tiles of 128x256): row by row a wave of 132 blocks reads 112 B tiles of
// 8 MB; in groups of 16 block rows it reads 9 (and 16 A tiles of 4 MB):
// raster = 16. 4096x5120x13824 (32 x 20 tiles): 30% fewer bytes a wave in
// groups of 16. A 4096^3 square saves 17% (kb-tile asks for 15%): raster
// = 16 (+3.5% measured). A 2048^3 square saves less than 15%: row order.

// CHECK-LABEL: func.func @linear_wide
// CHECK: block = [128, 256, 32], mma = "wgmma_tf32", grid = 132, copy = "tma", raster = 16
func.func @linear_wide(%x: tensor<2048x8192xf32>, %w: tensor<28672x8192xf32>) -> tensor<2048x28672xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "tma">} : tensor<2048x8192xf32>, tensor<28672x8192xf32> -> tensor<2048x28672xf32>
  return %0 : tensor<2048x28672xf32>
}

// -----

// (640 tiles: a persistent grid too, kb-tile-persistent.mlir.)
// CHECK-LABEL: func.func @linear_down
// CHECK: mma = "wgmma_tf32", grid = 132, copy = "tma", raster = 16
func.func @linear_down(%x: tensor<4096x13824xf32>, %w: tensor<5120x13824xf32>) -> tensor<4096x5120xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "tma">} : tensor<4096x13824xf32>, tensor<5120x13824xf32> -> tensor<4096x5120xf32>
  return %0 : tensor<4096x5120xf32>
}

// -----

// CHECK-LABEL: func.func @square
// CHECK: copy = "tma", raster = 16>
func.func @square(%a: tensor<4096x4096xf32>, %bt: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %bt precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "tma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// CHECK-LABEL: func.func @small_square
// CHECK: copy = "tma">
// CHECK-NOT: raster
func.func @small_square(%a: tensor<2048x2048xf32>, %bt: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %bt precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "tma">} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

// -----

// A hand-set raster is kept; other units get none by default.
// CHECK-LABEL: func.func @hand_set
// CHECK: mma = "wgmma_tf32", grid = 132, copy = "tma", raster = 4
// CHECK: mma = "ffma">
func.func @hand_set(%x: tensor<2048x8192xf32>, %w: tensor<28672x8192xf32>) -> (tensor<2048x28672xf32>, tensor<2048x28672xf32>) {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "tma", raster = 4>} : tensor<2048x8192xf32>, tensor<28672x8192xf32> -> tensor<2048x28672xf32>
  %1 = kb.matmul %x, %w precision(ieee) transpose_b {config = #kb.config<mma = "ffma">} : tensor<2048x8192xf32>, tensor<28672x8192xf32> -> tensor<2048x28672xf32>
  return %0, %1 : tensor<2048x28672xf32>, tensor<2048x28672xf32>
}

// -----

func.func @negative(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config 'raster' must be in [1, 65535] (block rows per group of the tile order), got -2}}
  %0 = kb.matmul %x, %x precision(tf32) {config = #kb.config<mma = "wgmma_tf32", raster = -2>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
