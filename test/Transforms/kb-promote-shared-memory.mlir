// RUN: kb-opt %s --kb-promote-shared-memory=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb-promote-shared-memory alone: the unit (kb-select-mma) and the tiles
// (kb-tile) are written out. It decides copy, stages, pad and, for a
// matmul, threads.

// FFMA stages A transposed with 4 words of row padding, four cp.async stages
// or three where four do not fit half an SM (BK = 32: 100 KB for three); a
// transposed B: two buffers through registers; mma.sync uses three
// cp.async stages (two where three do not fit half an SM) and pads A rows by
// 4 and B rows by 8 words so fragment loads hit 32 distinct banks.
// CHECK-LABEL: func.func @staging
// CHECK: #kb.config<block = [128, 128, 32], warp = [32, 64], thread = [8, 8], threads = 256, stages = 3, pad = [4, 0], mma = "ffma", copy = "cp_async">
// CHECK: #kb.config<block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 2, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async">
// A 2048^3 problem with 128x128 tiles: three stages (107 KB).
// CHECK: #kb.config<block = [128, 128, 32], warp = [64, 32], threads = 256, stages = 3, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async">
func.func @staging(%a: tensor<4096x4096xf32>, %s: tensor<2048x2048xf32>) -> (tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<2048x2048xf32>) {
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<block = [128, 128, 32], warp = [32, 64], thread = [8, 8], mma = "ffma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %a, %a precision(tf32) {config = #kb.config<block = [128, 256, 32], warp = [64, 64], mma = "mma_sync_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %2 = kb.matmul %s, %s precision(tf32) {config = #kb.config<block = [128, 128, 32], warp = [64, 32], mma = "mma_sync_tf32">} : tensor<2048x2048xf32>, tensor<2048x2048xf32> -> tensor<2048x2048xf32>
  return %0, %1, %2 : tensor<4096x4096xf32>, tensor<4096x4096xf32>, tensor<2048x2048xf32>
}

// -----

// CHECK-LABEL: func.func @ffma_transposed_b
// CHECK: #kb.config<block = [128, 128, 16], thread = [8, 8], threads = 256, stages = 2, pad = [4, 0], mma = "ffma", copy = "registers">
func.func @ffma_transposed_b(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %a precision(ieee) transpose_b {config = #kb.config<block = [128, 128, 16], thread = [8, 8], mma = "ffma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// mma.sync with N not a multiple of 4: no 16-byte cp.async of B rows, so
// the tiles go through registers in one stage (the kernel's own choice until
// 2026-12-01, now written here).
// CHECK-LABEL: func.func @mma_sync_registers
// CHECK: #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 1, pad = [4, 8], mma = "mma_sync_tf32", copy = "registers">
func.func @mma_sync_registers(%a: tensor<1000x1500xf32>, %b: tensor<1500x701xf32>) -> tensor<1000x701xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], mma = "mma_sync_tf32">} : tensor<1000x1500xf32>, tensor<1500x701xf32> -> tensor<1000x701xf32>
  return %0 : tensor<1000x701xf32>
}

// -----

// The lab notes' failure: a tile that needs more shared memory than the
// device has never launches. kb says so at compile time.
func.func @too_much_shared_memory(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{config needs 274432 bytes of shared memory per block (block = [256, 256, 64], stages = 2); sm_90 allows at most 232448}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<block = [256, 256, 64], warp = [64, 128], stages = 2, mma = "mma_sync_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

func.func @threads_disagree(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{config asks for 128 threads, but its tiles take 256}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<block = [128, 128, 8], thread = [8, 8], threads = 128, mma = "ffma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A hand-written config the FFMA kernel cannot run: cp.async needs three
// stages or more.
func.func @ffma_cp_async_two_stages(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{copy = "cp_async" pipelines the FFMA tiles at least 3 stages deep; got stages = 2 (use copy = "registers")}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<block = [128, 128, 16], thread = [8, 8], stages = 2, mma = "ffma", copy = "cp_async">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

func.func @ffma_registers_three_stages(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{copy = "registers" double-buffers the FFMA tiles: stages must be 1 or 2, got 3 (use copy = "cp_async")}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<block = [128, 128, 16], thread = [8, 8], stages = 3, mma = "ffma", copy = "registers">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// Before 2026-12-01 the mma.sync kernel silently ran such a config in one
// stage through registers; now it is refused, naming the field.
func.func @mma_sync_cp_async_unaligned(%a: tensor<1000x1500xf32>, %b: tensor<1500x701xf32>) -> tensor<1000x701xf32> {
  // expected-error @+1 {{copy = "cp_async" needs K (and N unless B is transposed) a multiple of 4, BK a multiple of 4 and the tiles' 16-byte chunks split evenly among the 128 threads}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], mma = "mma_sync_tf32", copy = "cp_async">} : tensor<1000x1500xf32>, tensor<1500x701xf32> -> tensor<1000x701xf32>
  return %0 : tensor<1000x701xf32>
}

// -----

func.func @mma_sync_stages_unaligned(%a: tensor<1000x1500xf32>, %b: tensor<1500x701xf32>) -> tensor<1000x701xf32> {
  // expected-error @+1 {{copy = "registers" stages the mma.sync tiles in one buffer: stages must be 1, got 3}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], stages = 3, mma = "mma_sync_tf32">} : tensor<1000x1500xf32>, tensor<1500x701xf32> -> tensor<1000x701xf32>
  return %0 : tensor<1000x701xf32>
}

// -----

func.func @needs_tiles(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{kb-promote-shared-memory needs block tiles: run kb-tile first}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<mma = "ffma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
