// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-fuse-elementwise,kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" | FileCheck %s

// kb-tile's cluster rule in a kb.fusion: the medium branch (128 x 128 in
// two chunks, the epilogue in the sum kernel) clusters as unfused; the
// 64 x 128 branch does not (its epilogue would run in the clustered kernel,
// which no GPU has checked with one yet).

// CHECK-LABEL: func.func @medium_fused
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 128, 32], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_tf32", cluster = 4, copy = "tma", split = 2>
func.func @medium_fused(%a: tensor<900x1900xf32>, %b: tensor<800x1900xf32>) -> tensor<900x800xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<900x1900xf32>, tensor<800x1900xf32> -> tensor<900x800xf32>
  %1 = kb.relu %0 : tensor<900x800xf32>
  return %1 : tensor<900x800xf32>
}

// Not: the 64 x 128 branch with a bias epilogue keeps the covering 128 x 64.
// CHECK-LABEL: func.func @one_wave_fused
// CHECK: kb.fusion {{.*}}config = #kb.config<block = [128, 64, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">
func.func @one_wave_fused(%a: tensor<1100x1100xf32>, %b: tensor<1000x1100xf32>, %bias: tensor<1000xf32>) -> tensor<1100x1000xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<1100x1100xf32>, tensor<1000x1100xf32> -> tensor<1100x1000xf32>
  %1 = kb.bias_add %0, %bias : tensor<1100x1000xf32>, tensor<1000xf32> -> tensor<1100x1000xf32>
  return %1 : tensor<1100x1000xf32>
}
