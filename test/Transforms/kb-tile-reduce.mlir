// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's reduce rule (TileWgmma.cpp, reduceRule): where the medium rule takes
// 128 x 128 tiles in two chunks and the cluster rule gives them no cluster,
// the chunks are summed in the matmul kernel (reduce = "cluster") instead of
// by kb.split_sum (docs/shapes.md, "Split-K summed in a cluster").

// A row-major B, 1024 x 704 x 1504: 48 tiles in two chunks of 24 k tiles.
// CHECK-LABEL: func.func @row_b
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
func.func @row_b(%a: tensor<1024x1504xf32>, %b: tensor<1504x704xf32>) -> tensor<1024x704xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
  return %0 : tensor<1024x704xf32>
}

// B^T with split rows (K % 32 != 0): the cluster rule's clusters of 4 go
// first (they measured 6-25% faster than the sum in a cluster of two).
// CHECK-LABEL: func.func @clusters_first
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma", split = 2>
func.func @clusters_first(%a: tensor<1000x1500xf32>, %b: tensor<700x1500xf32>) -> tensor<1000x700xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1000x1500xf32>, tensor<700x1500xf32> -> tensor<1000x700xf32>
  return %0 : tensor<1000x700xf32>
}

// B^T: with whole-line rows and chunks of 32 k tiles, taken (768 x 768 x
// 2048); with longer chunks (1500 x 500 x 3000: 47), and in a kb.fusion,
// kb.split_sum stays.
// CHECK-LABEL: func.func @bt_chunks
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>}
func.func @bt_chunks(%a: tensor<768x2048xf32>, %b: tensor<768x2048xf32>, %c: tensor<1500x3000xf32>, %d: tensor<500x3000xf32>) -> tensor<768x768xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<768x2048xf32>, tensor<768x2048xf32> -> tensor<768x768xf32>
  %1 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<1500x3000xf32>, tensor<500x3000xf32> -> tensor<1500x500xf32>
  %2 = kb.fusion ins(%a, %b : tensor<768x2048xf32>, tensor<768x2048xf32>) {
  ^bb0(%x: tensor<768x2048xf32>, %w: tensor<768x2048xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<768x2048xf32>, tensor<768x2048xf32> -> tensor<768x768xf32>
    %g = kb.relu %m : tensor<768x768xf32>
    kb.yield %g : tensor<768x768xf32>
  } -> tensor<768x768xf32>
  return %2 : tensor<768x768xf32>
}

// The bounds: 960 x 640 x 2560 B^T (chunks of 40 k tiles: the sum kernel);
// split rows with B^T and no cluster (1300 x 700 x 1700: 24 a chunk, the
// cluster rule declines a second wave of clusters): the sum kernel; a
// row-major B whose 132 blocks fill every SM (1300 x 700 x 1700): the sum
// kernel; a row-major B under a fused epilogue (mm + bias + ReLU, 1024 x
// 704 x 1504): taken.
// CHECK-LABEL: func.func @bounds
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">}
func.func @bounds(%a: tensor<960x2560xf32>, %b: tensor<640x2560xf32>, %c: tensor<1300x1700xf32>, %d: tensor<700x1700xf32>, %e: tensor<1700x700xf32>, %f: tensor<1024x1504xf32>, %g: tensor<1504x704xf32>) -> tensor<1024x704xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<960x2560xf32>, tensor<640x2560xf32> -> tensor<960x640xf32>
  %1 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<1300x1700xf32>, tensor<700x1700xf32> -> tensor<1300x700xf32>
  %2 = kb.matmul %c, %e precision(tf32) : tensor<1300x1700xf32>, tensor<1700x700xf32> -> tensor<1300x700xf32>
  %3 = kb.fusion ins(%f, %g : tensor<1024x1504xf32>, tensor<1504x704xf32>) {
  ^bb0(%x: tensor<1024x1504xf32>, %w: tensor<1504x704xf32>):
    %m = kb.matmul %x, %w precision(tf32) : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
    %r = kb.relu %m : tensor<1024x704xf32>
    kb.yield %r : tensor<1024x704xf32>
  } -> tensor<1024x704xf32>
  return %3 : tensor<1024x704xf32>
}

// Hand-set: reduce = "kernel" stays (kb.split_sum); a hand-set split is not
// the medium rule's and keeps the sum kernel; so does a hand-set cluster = 1
// (how the A/B scripts rebuild the defaults from before the rule).
// CHECK-LABEL: func.func @hand_set
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "kernel">
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 1, copy = "tma", split = 2>
func.func @hand_set(%a: tensor<1024x1504xf32>, %b: tensor<1504x704xf32>) -> tensor<1024x704xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<reduce = "kernel">} : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
  %1 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 128, 32], split = 2>} : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
  %2 = kb.matmul %a, %b precision(tf32) {config = #kb.config<cluster = 1>} : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
  return %2 : tensor<1024x704xf32>
}

// No medium rule (a few tiles cover the SMs unsplit): no reduce.
// CHECK-LABEL: func.func @square
// CHECK-NOT: reduce
// CHECK: return
func.func @square(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}
