// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// Uneven split-K on the cp.async kernels (configs written out as kb-tile,
// kb-promote-shared-memory and kb-split-k give them, chip sm_90): K = 1024
// in chunks of ceil(k tiles / 5) run past K in the last chunk, so the copies
// guard their K index (cmpi ult against 1024); in 4 chunks they divide K and
// no copy is guarded.

// FFMA, BK = 8: 128 k tiles in chunks of 26 (208 of K), the last of 24.
// CHECK-LABEL: func.func @ffma_uneven
// CHECK: gpu.func @k0_matmul
// CHECK: arith.cmpi ult, %{{.*}}, %c1024 : index
func.func @ffma_uneven(%a: tensor<128x1024xf32>, %b: tensor<1024x128xf32>) -> tensor<5x128x128xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [64, 64, 8], thread = [4, 4], threads = 256, stages = 4, pad = [4, 0], mma = "ffma", copy = "cp_async", split = 5>, split_chunk = 208 : i64} : tensor<128x1024xf32>, tensor<1024x128xf32> -> tensor<5x128x128xf32>
  return %0 : tensor<5x128x128xf32>
}

// -----

// CHECK-LABEL: func.func @ffma_even
// CHECK: gpu.func @k0_matmul
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c1024 : index
func.func @ffma_even(%a: tensor<128x1024xf32>, %b: tensor<1024x128xf32>) -> tensor<4x128x128xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [64, 64, 8], thread = [4, 4], threads = 256, stages = 4, pad = [4, 0], mma = "ffma", copy = "cp_async", split = 4>, split_chunk = 256 : i64} : tensor<128x1024xf32>, tensor<1024x128xf32> -> tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

// -----

// mma.sync, BK = 32: 32 k tiles in chunks of 7 (224 of K), the last of 4:
// the copies of B's rows guard K.
// CHECK-LABEL: func.func @mma_sync_uneven
// CHECK: gpu.func @k0_matmul
// CHECK: arith.cmpi ult, %{{.*}}, %c1024 : index
func.func @mma_sync_uneven(%a: tensor<128x1024xf32>, %b: tensor<1024x128xf32>) -> tensor<5x128x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async", split = 5>, split_chunk = 224 : i64} : tensor<128x1024xf32>, tensor<1024x128xf32> -> tensor<5x128x128xf32>
  return %0 : tensor<5x128x128xf32>
}

// -----

// CHECK-LABEL: func.func @mma_sync_even
// CHECK: gpu.func @k0_matmul
// CHECK-NOT: arith.cmpi ult, %{{.*}}, %c1024 : index
func.func @mma_sync_even(%a: tensor<128x1024xf32>, %b: tensor<1024x128xf32>) -> tensor<4x128x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async", split = 4>, split_chunk = 256 : i64} : tensor<128x1024xf32>, tensor<1024x128xf32> -> tensor<4x128x128xf32>
  return %0 : tensor<4x128x128xf32>
}

// -----

// gemv guards only the tile that holds the end of K: it refuses a split
// whose chunks do not divide the k tiles.
func.func @gemv_uneven(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<3x1x4096xf32> {
  // expected-error @+1 {{gemv: split = 3 must divide the 8 k tiles}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], threads = 128, mma = "gemv", split = 3>, split_chunk = 1536 : i64} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<3x1x4096xf32>
  return %0 : tensor<3x1x4096xf32>
}
