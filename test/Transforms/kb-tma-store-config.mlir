// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90a},kb-select-config{chip=sm_90a},kb-tile{chip=sm_90a},kb-promote-shared-memory{chip=sm_90a}))" -split-input-file -verify-diagnostics | FileCheck %s

// store = "tma" (the wgmma TMA-store epilogue) through kb-select-mma,
// kb-select-config, kb-tile and kb-promote-shared-memory: the decisions keep
// the field and count its C buffer (two 64 x 32 boxes of 8 KB per consumer
// warpgroup after the mbarriers, on the next 1024 bytes).

// 4096^3 B^T: kb-tile's 128 x 256 tile; four stages still fit beside the C
// buffer (196,608 + 1,024 + 64 + 960 + 32,768 = 231,424 of 232,448 bytes).
// CHECK-LABEL: func.func @square
// CHECK: #kb.config<block = [128, 256, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", raster = 16, store = "tma">
func.func @square(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<store = "tma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// Few output tiles: kb-tile would split K (128 x 128 tiles in 4 chunks
// without the field), but a TMA store is never split.
// CHECK-LABEL: func.func @few_tiles
// CHECK-NOT: split =
// CHECK: store = "tma"
func.func @few_tiles(%a: tensor<128x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<128x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<store = "tma">} : tensor<128x4096xf32>, tensor<4096x4096xf32> -> tensor<128x4096xf32>
  return %0 : tensor<128x4096xf32>
}

// -----

// A row-major B: refused (the accumulators hold C^T there; not built).
func.func @row_b(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{store = "tma" (the wgmma TMA-store epilogue) needs B transposed (transpose_b)}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<store = "tma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// A batch: taken (C's tensor map is 3-D: column, row, batch).
// CHECK-LABEL: func.func @batched
// CHECK: mma = "wgmma_tf32", copy = "tma"{{.*}}store = "tma">
func.func @batched(%a: tensor<4x256x256xf32>, %b: tensor<4x256x256xf32>) -> tensor<4x256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<store = "tma">} : tensor<4x256x256xf32>, tensor<4x256x256xf32> -> tensor<4x256x256xf32>
  return %0 : tensor<4x256x256xf32>
}

// -----

// N % 4 != 0: C's rows are not 16-byte aligned, which a tensor map needs.
func.func @odd_n(%a: tensor<1024x1024xf32>, %b: tensor<1022x1024xf32>) -> tensor<1024x1022xf32> {
  // expected-error @+1 {{store = "tma" (the wgmma TMA-store epilogue) needs N a multiple of 4 (16-byte rows of C); N = 1022}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<store = "tma">} : tensor<1024x1024xf32>, tensor<1022x1024xf32> -> tensor<1024x1022xf32>
  return %0 : tensor<1024x1022xf32>
}

// -----

// 256 x 256 tiles: three stages (196,608 bytes) and the C buffer of four
// warpgroups (65,536) do not fit in a block's 227 KB.
func.func @too_big(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{config needs 264192 bytes of shared memory per block (block = [256, 256, 32], stages = 3); sm_90a allows at most 232448}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [256, 256, 32], store = "tma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
