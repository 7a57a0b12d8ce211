// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// A persistent grid larger than the output tiles (grid = 132 for 8 x 4 = 32
// tiles of 128 x 128) launches one block a tile, and the launch's config says
// grid = 32: kb-run refuses a persistent grid that disagrees with the launch
// (lib/Runtime/ManifestConfig.cpp), which a hand-set grid = 132 on 2048^3 in
// bf16 (128 tiles) hit on 2026-12-07.
// CHECK-LABEL: func.func @grid_past_tiles
// CHECK: gpu.launch_func  @k0_matmul_module::@k0_matmul blocks in (%c32, %c1, %c1{{.*}}) threads in
// CHECK-SAME: kb.config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 32, copy = "tma">
func.func @grid_past_tiles(%arg0: tensor<1024x256xf32>, %arg1: tensor<512x256xf32>) -> tensor<1024x512xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 132, copy = "tma">} : tensor<1024x256xf32>, tensor<512x256xf32> -> tensor<1024x512xf32>
  return %0 : tensor<1024x512xf32>
}

// -----

// Negative: a grid below the tiles stays as it is (20 blocks walk 32 tiles).
// CHECK-LABEL: func.func @grid_below_tiles
// CHECK: kb.config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 20, copy = "tma">
func.func @grid_below_tiles(%arg0: tensor<1024x256xf32>, %arg1: tensor<512x256xf32>) -> tensor<1024x512xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", grid = 20, copy = "tma">} : tensor<1024x256xf32>, tensor<512x256xf32> -> tensor<1024x512xf32>
  return %0 : tensor<1024x512xf32>
}
