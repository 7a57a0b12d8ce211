// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics

func.func @no_config(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has no #kb.config: run kb-select-config, kb-select-mma, kb-tile and kb-promote-shared-memory first}}
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// A config without a thread count (kb-select-config ran before kb-select-mma
// inserted the transpose): an error, not a division by zero.
func.func @no_threads(%x: tensor<60x72xf32>) -> tensor<72x64xf32> {
  // expected-error @+1 {{'kb.transpose' op has no thread count in its #kb.config (#kb.config<>): run kb-select-config after kb-select-mma (which may insert ops)}}
  %0 = kb.transpose %x pad(32) {config = #kb.config<>} : tensor<60x72xf32> -> tensor<72x64xf32>
  return %0 : tensor<72x64xf32>
}

// -----

func.func @returns_argument(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  // expected-error @+1 {{returns value #0 that is a function argument or returned twice; kb needs each result computed by its own kernel}}
  return %x : tensor<4x8xf32>
}

// -----

func.func @foreign_op(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{cannot be lowered by kb-lower-to-gpu: a kb function holds only kb ops}}
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = kb.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// wgmma reads a row-major B only through TMA (boxes of 32 columns; the
// kernel computes C^T with B^T's fragments in registers): a hand-configured
// kernel with cp.async copies and no transpose_b (which kb-select-mma would
// have arranged) is refused, not miscompiled; so is a row-major B whose rows
// TMA cannot copy (N % 4 != 0), and a tile whose columns do not split into
// warpgroups of 64.
func.func @wgmma_row_major_b(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  // expected-error @+1 {{wgmma_tf32 with a row-major B needs copy = "tma"}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 128, 32], threads = 256, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "cp_async">} : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

func.func @wgmma_row_major_b_odd_n(%a: tensor<128x64xf32>, %b: tensor<64x130xf32>) -> tensor<128x130xf32> {
  // expected-error @+1 {{wgmma_tf32 with a row-major B copies its rows by TMA: N = 130 must be a multiple of 4}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<128x64xf32>, tensor<64x130xf32> -> tensor<128x130xf32>
  return %0 : tensor<128x130xf32>
}

// -----

func.func @wgmma_row_major_b_tile(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x128xf32> {
  // expected-error @+1 {{wgmma_tf32 with a row-major B needs block = [M, 64k, 32] with M a multiple of 8 up to 256; got [128, 96, 32]}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 96, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

func.func @persistent_rows(%x: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  // expected-error @+1 {{a persistent split_global grid takes one row per group of blocks (block = [1]), not 2}}
  %0 = kb.softmax %x {config = #kb.config<block = [2], threads = 512, vector = 4, strategy = "split_global", cluster = 8, grid = 396>} : tensor<1024x131072xf32>
  return %0 : tensor<1024x131072xf32>
}

// -----

// A persistent grid smaller than one row's blocks would hang: they wait
// for each other (a hand-written grid = 8 with 16 blocks per row compiled,
// and would have hung on the GPU, until 2026-11-30).
func.func @persistent_grid_too_small(%x: tensor<4x400000xf32>) -> tensor<4x400000xf32> {
  // expected-error @+1 {{a persistent split_global grid of 8 blocks cannot hold the 16 blocks of one row, which wait for each other}}
  %0 = kb.softmax %x {config = #kb.config<block = [1], threads = 512, vector = 4, stages = 2, strategy = "split_global", cluster = 16, grid = 8>} : tensor<4x400000xf32>
  return %0 : tensor<4x400000xf32>
}

// -----

func.func @global_stages(%x: tensor<1024x131072xf32>) -> tensor<1024x131072xf32> {
  // expected-error @+1 {{split_global takes stages = 1 or 2 (2: a persistent block copies its next part while it stores this one), not 3}}
  %0 = kb.softmax %x {config = #kb.config<block = [1], threads = 512, vector = 4, stages = 3, strategy = "split_global", cluster = 8, grid = 396>} : tensor<1024x131072xf32>
  return %0 : tensor<1024x131072xf32>
}

// -----

// The lowering reads copy and stages (kb-promote-shared-memory's) and runs
// them as written, or refuses: the FFMA kernel pipelines cp.async copies at
// least 3 stages deep (it used to fall back to 2 stages through registers).
func.func @ffma_cp_async_two_stages(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{FFMA kernel cannot run copy = "cp_async" with stages = 2: run kb-promote-shared-memory}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<block = [128, 128, 16], thread = [8, 8], threads = 256, stages = 2, pad = [4, 0], mma = "ffma", copy = "cp_async">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// mma.sync through registers takes one stage (it used to drop a second
// stage by itself).
func.func @mma_sync_registers_two_stages(%a: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{mma.sync kernel cannot run copy = "registers" with stages = 2: run kb-promote-shared-memory}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 2, pad = [4, 8], mma = "mma_sync_tf32", copy = "registers">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A hand-written fusion whose softmax epilogue reads a prologue value: the
// lowering keeps no prologue value for the epilogue (it crashed before).
func.func @epilogue_reads_prologue(%x: tensor<4x33xf32>) -> tensor<4x33xf32> {
  %0 = kb.fusion ins(%x : tensor<4x33xf32>) attributes {config = #kb.config<block = [1], threads = 32, vector = 1, strategy = "registers">} {
  ^bb0(%a: tensor<4x33xf32>):
    %r = kb.relu %a : tensor<4x33xf32>
    %s = kb.softmax %r : tensor<4x33xf32>
    // expected-error @+1 {{reads a value of the softmax's prologue ('kb.relu'), which a fused softmax does not keep for its epilogue: compute it outside the fusion}}
    %t = kb.tanh %r : tensor<4x33xf32>
    %y = kb.div %s, %t : tensor<4x33xf32>
    kb.yield %y : tensor<4x33xf32>
  } -> tensor<4x33xf32>
  return %0 : tensor<4x33xf32>
}

// -----

// A pad stores 16-byte chunks with whole warps: a hand-written thread count
// that is not one is refused.
func.func @pad_threads(%x: tensor<60x70xf32>) -> tensor<60x96xf32> {
  // expected-error @+1 {{pad kernel needs whole warps, got 48 threads}}
  %0 = kb.pad %x multiple(32) {config = #kb.config<threads = 48>} : tensor<60x70xf32> -> tensor<60x96xf32>
  return %0 : tensor<60x96xf32>
}

// -----

// A threads count that is not the row-major layout's (a producer warp only)
// is refused.
func.func @row_major_b_threads(%arg0: tensor<512x200xf32>, %arg1: tensor<200x256xf32>) -> tensor<512x256xf32> {
  // expected-error @+1 {{wgmma_tf32 runs one warpgroup per 64 columns and a producer warpgroup: 384 threads, got 288}}
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [256, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<512x200xf32>, tensor<200x256xf32> -> tensor<512x256xf32>
  return %0 : tensor<512x256xf32>
}
