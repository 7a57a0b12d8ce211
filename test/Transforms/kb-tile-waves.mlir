// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's waves rule for B^T's big tile and its wide-reduce rule
// (TileWgmma.cpp; measured in bench/results/2026-12-03-linear).

// Waves: 512 x 11008 has 172 tiles of 128 x 256 (two waves on 132 SMs, the
// second 30% full) and 232 of 128 x 192 (two waves, nearly full): 128 x 192.
// 1024 x 11008 (344 against 464 tiles: three waves against four) keeps
// 128 x 256.
// 1999 x 3072 (an edge in M) takes 128 x 192 unfused, but not in a
// kb.fusion (ptxas spilled more there; the measured fused programs had no
// edge in M).
// Both are over one wave: a persistent grid (kb-tile-persistent.mlir).
// CHECK-LABEL: func.func @waves
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 192, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 132, copy = "tma", raster = 4>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 132, copy = "tma", raster = 8>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 192, 32],
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 256, 32],
func.func @waves(%a: tensor<512x4096xf32>, %b: tensor<11008x4096xf32>, %c: tensor<1024x4096xf32>, %d: tensor<1999x4096xf32>, %e: tensor<3072x4096xf32>) -> tensor<1999x3072xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<512x4096xf32>, tensor<11008x4096xf32> -> tensor<512x11008xf32>
  %1 = kb.matmul %c, %b precision(tf32) transpose_b : tensor<1024x4096xf32>, tensor<11008x4096xf32> -> tensor<1024x11008xf32>
  %2 = kb.matmul %d, %e precision(tf32) transpose_b : tensor<1999x4096xf32>, tensor<3072x4096xf32> -> tensor<1999x3072xf32>
  %3 = kb.fusion ins(%d, %e : tensor<1999x4096xf32>, tensor<3072x4096xf32>) {
  ^bb0(%x: tensor<1999x4096xf32>, %w: tensor<3072x4096xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<1999x4096xf32>, tensor<3072x4096xf32> -> tensor<1999x3072xf32>
    %r = kb.relu %m : tensor<1999x3072xf32>
    kb.yield %r : tensor<1999x3072xf32>
  } -> tensor<1999x3072xf32>
  return %3 : tensor<1999x3072xf32>
}

// Wide reduce: 512 x 4096 x 8192 B^T, fused or not, took 128 blocks of
// 128 x 128; now 64 tiles of 128 x 256 in two chunks summed in a cluster.
// CHECK-LABEL: func.func @wide_reduce
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">}
func.func @wide_reduce(%a: tensor<512x8192xf32>, %b: tensor<4096x8192xf32>) -> tensor<512x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<512x8192xf32>, tensor<4096x8192xf32> -> tensor<512x4096xf32>
  %1 = kb.fusion ins(%a, %b : tensor<512x8192xf32>, tensor<4096x8192xf32>) {
  ^bb0(%x: tensor<512x8192xf32>, %w: tensor<4096x8192xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<512x8192xf32>, tensor<4096x8192xf32> -> tensor<512x4096xf32>
    %r = kb.relu %m : tensor<512x4096xf32>
    kb.yield %r : tensor<512x4096xf32>
  } -> tensor<512x4096xf32>
  return %1 : tensor<512x4096xf32>
}

// Not taken: K = 4096, unfused and fused (128 k tiles: a gain only with L2
// flushed); an edge in N (512 x 4000 x 8192); N = 2048 with M = 1024
// (outside the measured M <= 512, N >= 4096); a row-major B; a hand-set
// block; hand-set stages (5 stages of 128 x 256 do not fit). Those whose
// default is one wave of 128 x 128 with whole pairs of rows of tiles take
// the pair rule's clusters of two (kb-tile-pair.mlir).
// CHECK-LABEL: func.func @wide_reduce_bounds
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">}
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">
// CHECK-NOT: reduce = "cluster"
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 384,
// CHECK-NOT: reduce = "cluster"
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, copy = "tma">
func.func @wide_reduce_bounds(%a: tensor<512x4096xf32>, %b: tensor<4096x4096xf32>, %c: tensor<512x8192xf32>, %d: tensor<4000x8192xf32>, %e: tensor<8192x4096xf32>, %f: tensor<4096x8192xf32>, %g: tensor<1024x8192xf32>, %h: tensor<2048x8192xf32>) -> tensor<512x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  %1 = kb.fusion ins(%a, %b : tensor<512x4096xf32>, tensor<4096x4096xf32>) {
  ^bb0(%x: tensor<512x4096xf32>, %w: tensor<4096x4096xf32>):
    %m = kb.matmul %x, %w precision(tf32) transpose_b : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
    %r = kb.relu %m : tensor<512x4096xf32>
    kb.yield %r : tensor<512x4096xf32>
  } -> tensor<512x4096xf32>
  %2 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<512x8192xf32>, tensor<4000x8192xf32> -> tensor<512x4000xf32>
  %3 = kb.matmul %g, %h precision(tf32) transpose_b : tensor<1024x8192xf32>, tensor<2048x8192xf32> -> tensor<1024x2048xf32>
  %4 = kb.matmul %c, %e precision(tf32) : tensor<512x8192xf32>, tensor<8192x4096xf32> -> tensor<512x4096xf32>
  %5 = kb.matmul %c, %f precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32]>} : tensor<512x8192xf32>, tensor<4096x8192xf32> -> tensor<512x4096xf32>
  %6 = kb.matmul %c, %f precision(tf32) transpose_b {config = #kb.config<stages = 5>} : tensor<512x8192xf32>, tensor<4096x8192xf32> -> tensor<512x4096xf32>
  return %6 : tensor<512x4096xf32>
}
