// RUN: kb-opt %s --kb-tile=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile alone: the unit (kb-select-mma's decision) and, for elementwise
// ops, threads and vector (kb-select-config's) are written out. kb-tile
// writes block, warp and thread; threads of a matmul are
// kb-promote-shared-memory's.

// Big problems get 128x128 block tiles; problems that would leave most of
// the SMs (132 on sm_90) idle get 64x64. FFMA splits a tile among threads,
// mma.sync among warps.
// CHECK-LABEL: func.func @defaults
// A big FFMA tile: BK = 16, warps over whole rows of the 16 x 16 threads
// (BK = 32 with 4 x 8 warps until 2026-12-03, then 0.8-2.7% slower).
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 16], thread = [8, 8], mma = "ffma">}{{.*}}tensor<4096x4096xf32>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 8], thread = [4, 4], mma = "ffma">}{{.*}}tensor<512x512xf32>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], warp = [64, 64], mma = "mma_sync_tf32">}{{.*}}tensor<4096x4096xf32>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 32], warp = [32, 32], mma = "mma_sync_tf32">}{{.*}}tensor<1000x700xf32>
// Elementwise kernels record elements per block.
// CHECK: kb.relu %{{.*}} {config = #kb.config<block = [1024], threads = 256, vector = 4>}
func.func @defaults(%a: tensor<4096x4096xf32>, %s: tensor<512x512xf32>, %p: tensor<1000x1500xf32>, %q: tensor<1500x700xf32>)
    -> (tensor<4096x4096xf32>, tensor<512x512xf32>, tensor<4096x4096xf32>, tensor<1000x700xf32>, tensor<512x512xf32>) {
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<mma = "ffma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %s, %s precision(ieee) {config = #kb.config<mma = "ffma">} : tensor<512x512xf32>, tensor<512x512xf32> -> tensor<512x512xf32>
  %2 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %3 = kb.matmul %p, %q precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<1000x1500xf32>, tensor<1500x700xf32> -> tensor<1000x700xf32>
  %4 = kb.relu %s {config = #kb.config<threads = 256, vector = 4>} : tensor<512x512xf32>
  return %0, %1, %2, %3, %4 : tensor<4096x4096xf32>, tensor<512x512xf32>, tensor<4096x4096xf32>, tensor<1000x700xf32>, tensor<512x512xf32>
}

// -----

// mma.sync: 128 x 128 tiles once their grid covers 90% of the SMs (the
// rule wgmma's tiles follow): batched 8 x 512^3 is 128 blocks on 132 SMs,
// which kb-tune's first H200 run measured 1.09x faster than with 64 x 64
// tiles (docs/kb-tune.md); with half the blocks (4 x 512^3), 64 x 64.
// CHECK-LABEL: func.func @mma_sync_covering
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 32], warp = [64, 32], mma = "mma_sync_tf32">}{{.*}}tensor<8x512x512xf32>
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 32], warp = [32, 32], mma = "mma_sync_tf32">}{{.*}}tensor<4x512x512xf32>
func.func @mma_sync_covering(%a: tensor<8x512x512xf32>, %b: tensor<4x512x512xf32>)
    -> (tensor<8x512x512xf32>, tensor<4x512x512xf32>) {
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<8x512x512xf32>, tensor<8x512x512xf32> -> tensor<8x512x512xf32>
  %1 = kb.matmul %b, %b precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<4x512x512xf32>, tensor<4x512x512xf32> -> tensor<4x512x512xf32>
  return %0, %1 : tensor<8x512x512xf32>, tensor<4x512x512xf32>
}

// -----

// A hand-set tile is kept (its 32 blocks leave most SMs idle: kb-tile
// adds a split of K, kb-tile-split.mlir).
// CHECK-LABEL: func.func @hand_set
// CHECK: #kb.config<block = [128, 256, 16], warp = [64, 64], mma = "mma_sync_tf32", split = {{[0-9]+}}>
func.func @hand_set(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<block = [128, 256, 16], warp = [64, 64], mma = "mma_sync_tf32">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

func.func @warp_tile_does_not_nest(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{mma.sync tiles must nest: BM % WM, BN % WN, WM % 16, WN % 8 and BK % 8 must be 0; got block = [128, 128, 32], warp = [48, 32]}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<block = [128, 128, 32], warp = [48, 32], mma = "mma_sync_tf32">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

func.func @too_many_threads(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{tiles need 4096 threads per block; sm_90 allows at most 1024}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<block = [256, 256, 8], thread = [4, 4], mma = "ffma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

// FFMA tiles with edges (4000 % 128 != 0) or a transposed B: BK = 16 and
// whole-row warps too (32 k per tile would take more than 128 registers).
// CHECK-LABEL: func.func @ffma_edges
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 16], thread = [8, 8], mma = "ffma">}{{.*}}tensor<4000x4000xf32>
// CHECK: kb.matmul {{.*}}transpose_b {config = #kb.config<block = [128, 128, 16], thread = [8, 8], mma = "ffma">}{{.*}}tensor<4096x4096xf32>
func.func @ffma_edges(%a: tensor<4000x4000xf32>, %b: tensor<4096x4096xf32>) -> (tensor<4000x4000xf32>, tensor<4096x4096xf32>) {
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<mma = "ffma">} : tensor<4000x4000xf32>, tensor<4000x4000xf32> -> tensor<4000x4000xf32>
  %1 = kb.matmul %b, %b precision(ieee) transpose_b {config = #kb.config<mma = "ffma">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0, %1 : tensor<4000x4000xf32>, tensor<4096x4096xf32>
}

// -----

func.func @needs_unit(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{kb-tile needs the mma unit: run kb-select-mma first}}
  %0 = kb.matmul %a, %a precision(ieee) : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
