// RUN: kb-opt %s --kb-tile=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile alone on 16-bit mma.sync matmuls (sm_90): the tf32 mma.sync
// tile (128 x 256 x 32, 64 x 64 warps where the grid covers the SMs; 64 x
// 64 x 32 where it does not; 16 x 128 x 64 for at most 16 rows, so that
// its 16-byte chunks split among the 128 threads), split-K by the model on
// K / 2 (not for a rank-3 batch of 1), and a warp tile narrower than two
// n8 fragments, tiles whose chunks do not split and a split batch refused.

// CHECK-LABEL: func.func @square
// CHECK: #kb.config<block = [128, 256, 32], warp = [64, 64], mma = "mma_sync_bf16">
func.func @square(%a: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = kb.matmul %a, %a {config = #kb.config<mma = "mma_sync_bf16">} : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}

// -----

// Four output tiles over K = 16384: split.
// CHECK-LABEL: func.func @long_k
// CHECK: #kb.config<block = [64, 64, 32], warp = [32, 32], mma = "mma_sync_f16", split = {{[0-9]+}}>
func.func @long_k(%a: tensor<128x16384xf16>, %b: tensor<128x16384xf16>) -> tensor<128x128xf32> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<mma = "mma_sync_f16">} : tensor<128x16384xf16>, tensor<128x16384xf16> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

func.func @narrow_warp(%a: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  // expected-error @+1 {{16-bit mma.sync tiles need WN and BK multiples of 16 (two n8 fragments an ldmatrix.x4, k16 steps); got block = [64, 64, 32], warp = [32, 8]}}
  %0 = kb.matmul %a, %a {config = #kb.config<block = [64, 64, 32], warp = [32, 8], mma = "mma_sync_bf16">} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

// At most 16 rows (not a gemv here): 16 x 128 tiles with BK = 64 (the A
// tile's 128 chunks, one a thread).
// CHECK-LABEL: func.func @few_rows
// CHECK: #kb.config<block = [16, 128, 64], warp = [16, 32], mma = "mma_sync_f16"
func.func @few_rows(%a: tensor<11x11072xf16>, %b: tensor<255x11072xf16>) -> tensor<11x255xf16> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<mma = "mma_sync_f16">} : tensor<11x11072xf16>, tensor<255x11072xf16> -> tensor<11x255xf16>
  return %0 : tensor<11x255xf16>
}

// -----

// A batch of 1 (rank 3) over a long K: not split.
// CHECK-LABEL: func.func @batch_of_one
// CHECK: #kb.config<block = [64, 64, 32], warp = [32, 32], mma = "mma_sync_f16">
func.func @batch_of_one(%a: tensor<1x55x16448xf16>, %b: tensor<1x7x16448xf16>) -> tensor<1x55x7xf32> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<mma = "mma_sync_f16">} : tensor<1x55x16448xf16>, tensor<1x7x16448xf16> -> tensor<1x55x7xf32>
  return %0 : tensor<1x55x7xf32>
}

// -----

func.func @uneven_chunks(%a: tensor<16x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<16x512xbf16> {
  // expected-error @+1 {{16-bit mma.sync tiles copy 16-byte chunks of 8 elements: the A tile (16x32) and B tile (32x128) must have a multiple of 128 chunks}}
  %0 = kb.matmul %a, %b {config = #kb.config<block = [16, 128, 32], warp = [16, 32], mma = "mma_sync_bf16">} : tensor<16x512xbf16>, tensor<512x512xbf16> -> tensor<16x512xbf16>
  return %0 : tensor<16x512xbf16>
}

// -----

func.func @split_batch_of_one(%a: tensor<1x64x4096xbf16>, %b: tensor<1x64x4096xbf16>) -> tensor<1x64x64xbf16> {
  // expected-error @+1 {{#kb.config split = 2: a batched matmul is not split (its batch fills the grid; a batch of 1 as a rank-2 matmul can be)}}
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<mma = "mma_sync_bf16", split = 2>} : tensor<1x64x4096xbf16>, tensor<1x64x4096xbf16> -> tensor<1x64x64xbf16>
  return %0 : tensor<1x64x64xbf16>
}
