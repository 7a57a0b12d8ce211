// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's persistent grid (K <= 128, more tiles than SMs, one block an
// SM) and a wgmma cluster: the persistent kernel pairs row tiles two by
// two, so it takes clusters of 2 at most (MatmulWgmma.cpp). kb-tune's
// space offers cluster = 4 on such shapes.

// A hand-set cluster = 4 where K <= 128 would otherwise get a persistent
// grid (which takes clusters of 2 at most): the plain grid.
// CHECK-LABEL: func.func @no_persistent_cluster4
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma">
func.func @no_persistent_cluster4(%a: tensor<2048x64xf32>, %b: tensor<2048x64xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], cluster = 4>} : tensor<2048x64xf32>, tensor<2048x64xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

// Clusters of 2 keep the persistent grid (an even number of row tiles).
// CHECK-LABEL: func.func @persistent_cluster2
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 2, grid = 132, copy = "tma">
func.func @persistent_cluster2(%a: tensor<2048x64xf32>, %b: tensor<2048x64xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], cluster = 2>} : tensor<2048x64xf32>, tensor<2048x64xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}
