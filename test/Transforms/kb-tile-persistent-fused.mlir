// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-fuse-elementwise,kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a}))" | FileCheck %s

// kb-tile's persistent grid for a batch of matmuls up to K = 1024
// (Tile.cpp) leaves a kb.fusion one block a tile: no batched fusion was
// measured on it. The same batch unfused takes it.

// CHECK-LABEL: func.func @batched_fused
// CHECK: kb.fusion
// CHECK-NOT: grid = 132
// CHECK: return
func.func @batched_fused(%a: tensor<256x256x256xf32>, %b: tensor<256x256x256xf32>) -> tensor<256x256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<256x256x256xf32>, tensor<256x256x256xf32> -> tensor<256x256x256xf32>
  %1 = kb.relu %0 : tensor<256x256x256xf32>
  return %1 : tensor<256x256x256xf32>
}

// CHECK-LABEL: func.func @batched_unfused
// CHECK: kb.matmul {{.*}}grid = 132
func.func @batched_unfused(%a: tensor<256x256x256xf32>, %b: tensor<256x256x256xf32>) -> tensor<256x256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<256x256x256xf32>, tensor<256x256x256xf32> -> tensor<256x256x256xf32>
  return %0 : tensor<256x256x256xf32>
}
