// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's medium rule (TileWgmma.cpp, defaultWgmmaTile): where the tile that
// covers the SMs is smaller than 128 x 128, 128 x 128 tiles in two chunks
// still fit one wave, and each chunk holds at least 24 k tiles, the matmul
// takes 128 x 128 in two chunks (half to two thirds of the operand bytes
// into the SMs; docs/shapes.md, "Medium shapes").

// 768 x 768 x 2048 with B^T: 64 x 64 covers (144 blocks); 36 tiles of
// 128 x 128 in two chunks of 32 k tiles.
// CHECK-LABEL: func.func @medium_bt
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
func.func @medium_bt(%a: tensor<768x2048xf32>, %b: tensor<768x2048xf32>) -> tensor<768x768xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<768x2048xf32>, tensor<768x2048xf32> -> tensor<768x768xf32>
  return %0 : tensor<768x768xf32>
}

// 1300 x 700 x 1700, B row-major: 128 x 64 covers; 66 tiles of 128 x 128,
// 132 blocks in two chunks of 27 and 26 k tiles: exactly one wave.
// CHECK-LABEL: func.func @medium_row_b
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
func.func @medium_row_b(%a: tensor<1300x1700xf32>, %b: tensor<1700x700xf32>) -> tensor<1300x700xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<1300x1700xf32>, tensor<1700x700xf32> -> tensor<1300x700xf32>
  return %0 : tensor<1300x700xf32>
}

// Not: 35 k tiles (1100 x 1000 x 1100: two chunks of 18 and 17; measured
// 1-15% slower in two): the covering 128 x 64.
// CHECK-LABEL: func.func @short_k
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 64, 32], threads = 256, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
func.func @short_k(%a: tensor<1100x1100xf32>, %b: tensor<1100x1000xf32>) -> tensor<1100x1000xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<1100x1100xf32>, tensor<1100x1000xf32> -> tensor<1100x1000xf32>
  return %0 : tensor<1100x1000xf32>
}

// Not: two chunks of 77 tiles of 128 x 128 (1300 x 800) would take two
// waves: the covering 128 x 64.
// CHECK-LABEL: func.func @two_waves
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 64, 32], threads = 256, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
func.func @two_waves(%a: tensor<1300x1700xf32>, %b: tensor<1700x800xf32>) -> tensor<1300x800xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<1300x1700xf32>, tensor<1700x800xf32> -> tensor<1300x800xf32>
  return %0 : tensor<1300x800xf32>
}

// Not: a hand-set split = 1 (never split) keeps the covering tile.
// CHECK-LABEL: func.func @no_split
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 32], threads = 160, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 1>
func.func @no_split(%a: tensor<768x2048xf32>, %b: tensor<768x2048xf32>) -> tensor<768x768xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<split = 1>} : tensor<768x2048xf32>, tensor<768x2048xf32> -> tensor<768x768xf32>
  return %0 : tensor<768x768xf32>
}

// Not: a batch (never split): 2 x 768 x 768 x 2048 keeps the covering
// 128 x 64 (72 tiles a matrix, 144 blocks), unsplit.
// CHECK-LABEL: func.func @batched
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 64, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
func.func @batched(%a: tensor<2x768x2048xf32>, %b: tensor<2x768x2048xf32>) -> tensor<2x768x768xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<2x768x2048xf32>, tensor<2x768x2048xf32> -> tensor<2x768x768xf32>
  return %0 : tensor<2x768x768xf32>
}

// Not: B^T with whole-line rows (K % 32 == 0) needs 32 k tiles a chunk:
// 1024 x 704 x 1504 (47 k tiles) keeps its covering 64 x 64 (measured
// 1-4% ahead of 128 x 128 in two there).
// CHECK-LABEL: func.func @aligned_bt
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 32], threads = 160, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
func.func @aligned_bt(%a: tensor<1024x1504xf32>, %b: tensor<704x1504xf32>) -> tensor<1024x704xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1024x1504xf32>, tensor<704x1504xf32> -> tensor<1024x704xf32>
  return %0 : tensor<1024x704xf32>
}
