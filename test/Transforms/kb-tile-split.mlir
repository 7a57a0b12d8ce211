// RUN: kb-opt %s --kb-tile=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile writes `split` (split-K) when the output tiles leave more than
// half of the 132 SMs idle and K is long: the divisor of the k tiles (each
// chunk at least 8 of them) that the model (Tile.cpp) finds fastest.

// Few output tiles (wgmma): the tile and the split chosen together
// (chooseFewTiles). 256 x 256 outputs over K = 262144 (8192 k tiles): two
// 256 x 128 tiles in 64 chunks, one block an SM (run 5: 0.146 ms, against
// 0.207 for 64 x 64 tiles in 16 chunks).
// CHECK-LABEL: func.func @long_k
// CHECK: block = [256, 128, 32]{{.*}}split = 64
func.func @long_k(%a: tensor<256x262144xf32>, %b: tensor<262144x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x262144xf32>, tensor<262144x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A hand-set tile keeps chooseSplitK's split for it: 64 x 64 tiles are 16
// blocks, 16 chunks make 256, two 64-row wgmma blocks per SM.
// CHECK-LABEL: func.func @long_k_hand_set_tile
// CHECK: block = [64, 64, 32]{{.*}}split = 16
func.func @long_k_hand_set_tile(%a: tensor<256x262144xf32>, %b: tensor<262144x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", block = [64, 64, 32]>} : tensor<256x262144xf32>, tensor<262144x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A few rows against a wide weight (B^T): 64 x 64 tiles would cover the
// SMs (128 blocks) but read the weight twice, 64 rows at a time; 128 x 128
// tiles in 4 chunks read it once (run 5: 0.0343 ms against 0.0497).
// CHECK-LABEL: func.func @skinny
// CHECK: block = [128, 128, 32]{{.*}}split = 4
func.func @skinny(%a: tensor<128x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<128x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<128x4096xf32>, tensor<4096x4096xf32> -> tensor<128x4096xf32>
  return %0 : tensor<128x4096xf32>
}

// -----

// Rows of 192 x 160 outputs fit one tile exactly (three warpgroups, wgmma
// N = 160); K = 300000 is 9375 k tiles, 125 chunks (run 5: 0.1295 ms,
// against 0.2116 for 64 x 64 tiles in 375 chunks).
// CHECK-LABEL: func.func @exact_fit
// CHECK: block = [192, 160, 32]{{.*}}split = 125
func.func @exact_fit(%a: tensor<192x300000xf32>, %b: tensor<160x300000xf32>) -> tensor<192x160xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<192x300000xf32>, tensor<160x300000xf32> -> tensor<192x160xf32>
  return %0 : tensor<192x160xf32>
}

// -----

// The same with a hand-set cp.async copy: its tiles must split evenly among
// the threads, which 192 x 160 does not; the old rule (64 x 64 tiles,
// chooseSplitK's split).
// CHECK-LABEL: func.func @exact_fit_cp_async
// CHECK: block = [64, 64, 32]{{.*}}split = 375
func.func @exact_fit_cp_async(%a: tensor<192x300000xf32>, %b: tensor<160x300000xf32>) -> tensor<192x160xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "cp_async">} : tensor<192x300000xf32>, tensor<160x300000xf32> -> tensor<192x160xf32>
  return %0 : tensor<192x160xf32>
}

// -----

// A matrix-vector product: the narrowest wgmma (N = 8), and split-K.
// CHECK-LABEL: func.func @matvec
// CHECK: block = [64, 8, 32]{{.*}}split = 4
func.func @matvec(%a: tensor<4096x4096xf32>, %b: tensor<1x4096xf32>) -> tensor<4096x1xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<1x4096xf32> -> tensor<4096x1xf32>
  return %0 : tensor<4096x1xf32>
}

// -----

// Enough tiles (1024 blocks), or a short K: no split.
// CHECK-LABEL: func.func @no_split
// CHECK-NOT: split =
func.func @no_split(%a: tensor<4096x4096xf32>, %s: tensor<256x64xf32>, %t: tensor<64x256xf32>) -> (tensor<4096x4096xf32>, tensor<256x256xf32>) {
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %s, %t precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
  return %0, %1 : tensor<4096x4096xf32>, tensor<256x256xf32>
}

// -----

// A hand-set split is kept, and checked.
// CHECK-LABEL: func.func @hand_set
// CHECK: split = 4
func.func @hand_set(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<mma = "ffma", split = 4>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @not_a_divisor(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config split = 3 must divide the 128 k tiles (K = 4096, BK = 32)}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", split = 3>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @batched(%a: tensor<2x256x4096xf32>, %b: tensor<2x4096x256xf32>) -> tensor<2x256x256xf32> {
  // expected-error @+1 {{#kb.config split = 2: a batched matmul is not split}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", split = 2>} : tensor<2x256x4096xf32>, tensor<2x4096x256xf32> -> tensor<2x256x256xf32>
  return %0 : tensor<2x256x256xf32>
}
