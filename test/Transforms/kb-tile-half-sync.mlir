// RUN: kb-opt %s --kb-tile=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile alone on 16-bit mma.sync matmuls (sm_90): the tf32 mma.sync
// tile (128 x 256 x 32, 64 x 64 warps where the grid covers the SMs; 64 x
// 64 x 32 where it does not), split-K by the model on K / 2, and a warp
// tile narrower than two n8 fragments refused.

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
