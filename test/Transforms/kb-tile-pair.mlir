// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's pair rule (TileWgmma.cpp, pairRule; measured in
// bench/results/2026-12-03-pair): kb's default one wave of 128 x 128 B^T
// tiles, K 3072-8192 in whole 128-byte rows, whole pairs of rows of tiles
// and no edge, in clusters of two blocks sharing B's tile.

// Taken: 512 x 4096 x 4096 (128 blocks), plain and in a kb.fusion;
// 768 x 2816 x 3072 (132 blocks: every SM).
// CHECK-LABEL: func.func @pair
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">}
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">
func.func @pair(%a: tensor<512x4096xf32>, %b: tensor<4096x4096xf32>, %c: tensor<768x3072xf32>, %d: tensor<2816x3072xf32>) -> tensor<768x2816xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %1 = kb.fusion ins(%a, %b : tensor<512x4096xf32>, tensor<4096x4096xf32>) {
  ^bb0(%x: tensor<512x4096xf32>, %w: tensor<4096x4096xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
    %r = kb.relu %m : tensor<512x4096xf32>
    kb.yield %r : tensor<512x4096xf32>
  } -> tensor<512x4096xf32>
  %2 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<768x3072xf32>, tensor<2816x3072xf32> -> tensor<768x2816xf32>
  return %2 : tensor<768x2816xf32>
}

// Not taken: 3 rows of tiles (384 x 5120 x 4096: the cluster would pad the
// grid to 160 blocks, two waves; measured 1.83x slower); K = 2048 (below
// the measured 3072); an edge in N (512 x 4000 x 4096); a row-major B; a
// hand-set block; 16384 x 16384 x 4096 (many waves).
// CHECK-LABEL: func.func @pair_bounds
// CHECK-NOT: cluster
// CHECK: return
func.func @pair_bounds(%a: tensor<384x4096xf32>, %b: tensor<5120x4096xf32>, %c: tensor<1024x2048xf32>, %d: tensor<2048x2048xf32>, %e: tensor<512x4096xf32>, %f: tensor<4000x4096xf32>, %g: tensor<4096x4096xf32>, %h: tensor<16384x4096xf32>) -> tensor<16384x16384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<384x4096xf32>, tensor<5120x4096xf32> -> tensor<384x5120xf32>
  %1 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<1024x2048xf32>, tensor<2048x2048xf32> -> tensor<1024x2048xf32>
  %2 = kb.matmul %e, %f precision(tf32) transpose_b : tensor<512x4096xf32>, tensor<4000x4096xf32> -> tensor<512x4000xf32>
  %3 = kb.matmul %e, %g precision(tf32) : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %4 = kb.matmul %e, %g precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32]>} : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %5 = kb.matmul %h, %h precision(tf32) transpose_b : tensor<16384x4096xf32>, tensor<16384x4096xf32> -> tensor<16384x16384xf32>
  return %5 : tensor<16384x16384xf32>
}
