// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" -split-input-file -verify-diagnostics | FileCheck %s

// operands = "ba" (the 16-bit wgmma kernel with its operands swapped, C^T =
// B^T A^T: one consumer warpgroup per 64 columns and a producer warpgroup,
// MatmulWgmma.cpp): a hand-set 80 x 64 (the narrow side in M, A's rows)
// keeps its tile and stages and gets 128 + 128 threads; with no block the
// 16-bit default tile (BN a multiple of 64 with a row-major B) fits it.
// CHECK-LABEL: func.func @swap80
// CHECK: #kb.config<block = [80, 64, 64], threads = 256, stages = 8, pad = [0, 0], mma = "wgmma_bf16", copy = "tma", operands = "ba">
func.func @swap80(%a: tensor<768x2048xbf16>, %b: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [80, 64, 64], stages = 8, operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// CHECK-LABEL: func.func @swap_default
// CHECK: #kb.config<block = [64, 64, 64], threads = 256, stages = 5, pad = [0, 0], mma = "wgmma_bf16", copy = "tma", operands = "ba">
func.func @swap_default(%a: tensor<768x2048xbf16>, %b: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %a, %b {config = #kb.config<operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// Where kb-tile gives the plain kernel a persistent grid (and with it the
// TMA store), the swapped one keeps one block a tile and direct stores.
// CHECK-LABEL: func.func @swap_no_grid
// CHECK: #kb.config<block = [128, 128, 64], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_bf16", grid = 132, copy = "tma", raster = 8, store = "tma">
// CHECK: #kb.config<block = [128, 128, 64], threads = 384, stages = 5, pad = [0, 0], mma = "wgmma_bf16", copy = "tma", raster = 8, operands = "ba">
func.func @swap_no_grid(%a: tensor<4096x128xbf16>, %b: tensor<128x4096xbf16>) -> (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [128, 128, 64]>} : tensor<4096x128xbf16>, tensor<128x4096xbf16> -> tensor<4096x4096xbf16>
  %1 = kb.matmul %a, %b {config = #kb.config<block = [128, 128, 64], operands = "ba">} : tensor<4096x128xbf16>, tensor<128x4096xbf16> -> tensor<4096x4096xbf16>
  return %0, %1 : tensor<4096x4096xbf16>, tensor<4096x4096xbf16>
}

// -----

// BN is the warpgroups' side: a multiple of 64.
func.func @swap_bn96(%a: tensor<768x2048xbf16>, %b: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{wgmma tiles with a row-major B need BN a multiple of 64 (one warpgroup per 64 columns), BM a multiple of 8 up to 256 and BK = 64; got block = [64, 96, 64]}}
  %0 = kb.matmul %a, %b {config = #kb.config<block = [64, 96, 64], operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// B^T is read K-major as it is: nothing to swap.
func.func @swap_bt(%a: tensor<768x2048xbf16>, %b: tensor<768x2048xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{config asks for operands = "ba", which reads a row-major B as it is: B is transposed (transpose_b)}}
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<operands = "ba">} : tensor<768x2048xbf16>, tensor<768x2048xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// N = 100: B would be transposed in front (its rows are not 16-byte
// pitched), so there is no row-major B to read.
func.func @swap_n100(%a: tensor<768x2048xbf16>, %b: tensor<2048x100xbf16>) -> tensor<768x100xbf16> {
  // expected-error @+1 {{config asks for operands = "ba", which reads a row-major B as it is: N = 100 and K = 2048 must be multiples of 8}}
  %0 = kb.matmul %a, %b {config = #kb.config<operands = "ba">} : tensor<768x2048xbf16>, tensor<2048x100xbf16> -> tensor<768x100xbf16>
  return %0 : tensor<768x100xbf16>
}

// -----

func.func @swap_f32(%a: tensor<768x2048xf32>, %b: tensor<2048x768xf32>) -> tensor<768x768xf32> {
  // expected-error @+1 {{config asks for operands = "ba" (the swapped 16-bit wgmma), which only a 16-bit matmul has; this one is 'f32'}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<operands = "ba">} : tensor<768x2048xf32>, tensor<2048x768xf32> -> tensor<768x768xf32>
  return %0 : tensor<768x768xf32>
}

// -----

// At most 16 rows or columns where gemv is the default (here one row):
// the gemv kernel, which has no swap.
func.func @swap_gemv(%a: tensor<1x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  // expected-error @+1 {{config asks for operands = "ba", which only the wgmma kernel has (mma = "wgmma_bf16"); this matmul gets mma = "gemv"}}
  %0 = kb.matmul %a, %b {config = #kb.config<operands = "ba">} : tensor<1x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1x4096xbf16>
  return %0 : tensor<1x4096xbf16>
}
