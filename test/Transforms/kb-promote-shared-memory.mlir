// RUN: kb-opt %s --kb-select-mma --kb-tile --kb-promote-shared-memory -split-input-file -verify-diagnostics | FileCheck %s

// FFMA stages A transposed with 4 words of row padding, four cp.async stages
// or three where four do not fit half an SM (BK = 32: 100 KB for three); a
// transposed B: two buffers through registers; mma.sync uses three
// cp.async stages and pads A rows by 4 and B rows by 8 words so fragment
// loads hit 32 distinct banks.
// CHECK-LABEL: func.func @staging
// CHECK: #kb.config<block = [128, 128, 32], warp = [32, 64], thread = [8, 8], threads = 256, stages = 3, pad = [4, 0], mma = "ffma">
// CHECK: #kb.config<block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 2, pad = [4, 8], mma = "mma_sync_tf32">
// A 2048^3 problem keeps 128x128 tiles (256 blocks) and three stages (107 KB).
// CHECK: #kb.config<block = [128, 128, 32], warp = [64, 32], threads = 256, stages = 3, pad = [4, 8], mma = "mma_sync_tf32">
func.func @staging(%a: tensor<4096x4096xf32>, %s: tensor<2048x2048xf32>) -> (tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<2048x2048xf32>) {
  %0 = kb.matmul %a, %a precision(ieee) : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %a, %a precision(tf32) : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %2 = kb.matmul %s, %s precision(tf32) : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0, %1, %2 : tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<2048x2048xf32>
}

// -----

// CHECK-LABEL: func.func @ffma_transposed_b
// CHECK: #kb.config<block = [128, 128, 16], thread = [8, 8], threads = 256, stages = 2, pad = [4, 0], mma = "ffma">
func.func @ffma_transposed_b(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %a precision(ieee) transpose_b : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// The lab notes' failure: a tile that needs more shared memory than the
// device has never launches. kb says so at compile time.
func.func @too_much_shared_memory(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{config needs 274432 bytes of shared memory per block (block = [256, 256, 64], stages = 2); sm_90 allows at most 232448}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<block = [256, 256, 64], warp = [64, 128], stages = 2>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
