// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s
// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90},kb-select-config{chip=sm_90},kb-tile{chip=sm_90}))" | FileCheck %s --check-prefix=MMASYNC

// kb-tile's cluster rule (TileWgmma.cpp, defaultWgmmaTile): with B^T and rows
// split over two 128-byte lines (K % 32 != 0, K % 4 == 0), clusters of 4
// blocks share B's tile (docs/shapes.md, "Clusters on the medium shapes").
// mma.sync has no clusters: none of these gets one on sm_90.
// MMASYNC-NOT: cluster = {{[248]}}

// The medium rule's 128 x 128 in two chunks of 30 k tiles, 8 x 7 tiles:
// 112 blocks in clusters of 4, at most 120 at once.
// CHECK-LABEL: func.func @medium_clusters
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma", split = 2>
func.func @medium_clusters(%a: tensor<900x1900xf32>, %b: tensor<800x1900xf32>) -> tensor<900x800xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<900x1900xf32>, tensor<800x1900xf32> -> tensor<900x800xf32>
  return %0 : tensor<900x800xf32>
}

// 72 tiles of 128 x 128: one wave, but not in two chunks (and 35 k tiles
// are too few for them): 64 x 128 in clusters of 4, 20 x 8 blocks (the
// rows rounded up to whole clusters), two waves of clusters.
// CHECK-LABEL: func.func @one_wave_clusters
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma">
func.func @one_wave_clusters(%a: tensor<1100x1100xf32>, %b: tensor<1000x1100xf32>) -> tensor<1100x1000xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1100x1100xf32>, tensor<1000x1100xf32> -> tensor<1100x1000xf32>
  return %0 : tensor<1100x1000xf32>
}

// Not: chunks of 47 k tiles (1500 x 500 x 3000; clusters measured 6.5%
// slower there).
// CHECK-LABEL: func.func @long_chunks
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
func.func @long_chunks(%a: tensor<1500x3000xf32>, %b: tensor<500x3000xf32>) -> tensor<1500x500xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1500x3000xf32>, tensor<500x3000xf32> -> tensor<1500x500xf32>
  return %0 : tensor<1500x500xf32>
}

// Not: 11 row tiles rounded up to 12 take 2 x 12 x 6 = 144 blocks, more
// than 120 run at once in clusters of 4 (1300 x 700 x 1700: 31% slower).
// CHECK-LABEL: func.func @second_wave
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
func.func @second_wave(%a: tensor<1300x1700xf32>, %b: tensor<700x1700xf32>) -> tensor<1300x700xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1300x1700xf32>, tensor<700x1700xf32> -> tensor<1300x700xf32>
  return %0 : tensor<1300x700xf32>
}

// Not: whole-line rows (768 x 768 x 2048: the medium rule's 128 x 128 in
// two chunks of 32 k tiles, 6 x 6 tiles, which would pass every other
// condition).
// CHECK-LABEL: func.func @whole_lines
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
func.func @whole_lines(%a: tensor<768x2048xf32>, %b: tensor<768x2048xf32>) -> tensor<768x768xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<768x2048xf32>, tensor<768x2048xf32> -> tensor<768x768xf32>
  return %0 : tensor<768x768xf32>
}

// Not: fewer than 22 k tiles (K = 660, 21 k tiles: 1100 x 1000 otherwise as
// @one_wave_clusters).
// CHECK-LABEL: func.func @short_k
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 64, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
func.func @short_k(%a: tensor<1100x660xf32>, %b: tensor<1000x660xf32>) -> tensor<1100x1000xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1100x660xf32>, tensor<1000x660xf32> -> tensor<1100x1000xf32>
  return %0 : tensor<1100x1000xf32>
}

// Not: fewer row tiles than a cluster (129 rows: 3 of 64, one block of
// four in the rounded grid empty).
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: cluster = 
// CHECK: return
func.func @few_rows(%a: tensor<129x1100xf32>, %b: tensor<5000x1100xf32>) -> tensor<129x5000xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<129x1100xf32>, tensor<5000x1100xf32> -> tensor<129x5000xf32>
  return %0 : tensor<129x5000xf32>
}

// Not: the padded B^T of a row-major B with N % 4 != 0 (kb-select-mma's
// padded_b: its rows are whole lines).
// CHECK-LABEL: func.func @padded_b
// CHECK-NOT: cluster = 
// CHECK: return
func.func @padded_b(%a: tensor<900x1900xf32>, %b: tensor<1900x802xf32>) -> tensor<900x802xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<900x1900xf32>, tensor<1900x802xf32> -> tensor<900x802xf32>
  return %0 : tensor<900x802xf32>
}

// Not: a row-major B.
// CHECK-LABEL: func.func @row_major_b
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
func.func @row_major_b(%a: tensor<900x1900xf32>, %b: tensor<1900x800xf32>) -> tensor<900x800xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<900x1900xf32>, tensor<1900x800xf32> -> tensor<900x800xf32>
  return %0 : tensor<900x800xf32>
}

// Not: a hand-set cluster = 1 (none) keeps the tile the rule would change.
// CHECK-LABEL: func.func @hand_set
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 64, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", cluster = 1, copy = "tma">
func.func @hand_set(%a: tensor<1100x1100xf32>, %b: tensor<1000x1100xf32>) -> tensor<1100x1000xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<cluster = 1>} : tensor<1100x1100xf32>, tensor<1000x1100xf32> -> tensor<1100x1000xf32>
  return %0 : tensor<1100x1000xf32>
}

// Not: a batch.
// CHECK-LABEL: func.func @batched
// CHECK-NOT: cluster = 
// CHECK: return
func.func @batched(%a: tensor<2x900x1900xf32>, %b: tensor<2x800x1900xf32>) -> tensor<2x900x800xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<2x900x1900xf32>, tensor<2x800x1900xf32> -> tensor<2x900x800xf32>
  return %0 : tensor<2x900x800xf32>
}
