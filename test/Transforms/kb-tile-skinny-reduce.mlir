// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-fuse-elementwise,kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's skinny-reduce rule (TileWgmma.cpp, skinnyReduceRule): where
// the few-tiles model splits a B^T tile of two consumer warpgroups (BM =
// 128) over one row of output tiles in two K chunks, the chunks are summed
// in a cluster (reduce = "cluster"), not by kb.split_sum's second kernel
// (bench/results/2026-12-04-memory-bound: 1.6-4.5% faster on five shapes).

// 96 x 12288 x 4096 (the suite's) and 128 x 14336 x 4096: taken.
// CHECK-LABEL: func.func @skinny
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 192, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">
func.func @skinny(%a: tensor<96x4096xf32>, %b: tensor<12288x4096xf32>, %c: tensor<128x4096xf32>, %d: tensor<14336x4096xf32>) -> (tensor<96x12288xf32>, tensor<128x14336xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<96x4096xf32>, tensor<12288x4096xf32> -> tensor<96x12288xf32>
  %1 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<128x4096xf32>, tensor<14336x4096xf32> -> tensor<128x14336xf32>
  return %0, %1 : tensor<96x12288xf32>, tensor<128x14336xf32>
}

// One warpgroup (64 x 128 tiles, M <= 64: block 0 would finish the whole
// tile alone, 4.4% slower than kb.split_sum at 16 x 11008 in two chunks),
// more than two chunks, and K outside the measured 4096-5120 (3072, 8192):
// kb.split_sum stays.
// CHECK-LABEL: func.func @sum_kernel
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 3>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 192, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 192, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
func.func @sum_kernel(%a: tensor<32x4096xf32>, %b: tensor<14336x4096xf32>, %c: tensor<72x4096xf32>, %d: tensor<11008x4096xf32>, %e: tensor<96x3072xf32>, %f: tensor<12288x3072xf32>, %g: tensor<96x8192xf32>, %h: tensor<12288x8192xf32>) -> (tensor<32x14336xf32>, tensor<72x11008xf32>, tensor<96x12288xf32>, tensor<96x12288xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<32x4096xf32>, tensor<14336x4096xf32> -> tensor<32x14336xf32>
  %1 = kb.matmul %c, %d precision(tf32) transpose_b : tensor<72x4096xf32>, tensor<11008x4096xf32> -> tensor<72x11008xf32>
  %2 = kb.matmul %e, %f precision(tf32) transpose_b : tensor<96x3072xf32>, tensor<12288x3072xf32> -> tensor<96x12288xf32>
  %3 = kb.matmul %g, %h precision(tf32) transpose_b : tensor<96x8192xf32>, tensor<12288x8192xf32> -> tensor<96x12288xf32>
  return %0, %1, %2, %3 : tensor<32x14336xf32>, tensor<72x11008xf32>, tensor<96x12288xf32>, tensor<96x12288xf32>
}

// In a kb.fusion (F.linear + ReLU at 96 x 12288 x 4096): kb.split_sum,
// whose elementwise kernel runs the epilogue.
// CHECK-LABEL: func.func @fused
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 192, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 2>
func.func @fused(%a: tensor<96x4096xf32>, %b: tensor<12288x4096xf32>) -> tensor<96x12288xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<96x4096xf32>, tensor<12288x4096xf32> -> tensor<96x12288xf32>
  %1 = kb.relu %0 : tensor<96x12288xf32>
  return %1 : tensor<96x12288xf32>
}
