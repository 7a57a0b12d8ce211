// RUN: kb-opt %s --kb-select-mma --kb-select-config --kb-tile -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile's narrow rule for a 16-bit B^T (narrowHalfBtRule, Tile.cpp): a
// default 64 x 64 tile over two waves becomes the 64 x BN (BN a multiple of
// 16) of the least waves x (BM + BN), in 8 stages (measured on 768 x 768 x
// 2048 bf16 B^T: 0.0138 -> 0.0113 ms).

// 144 blocks of 64 x 64 on 132 SMs (two waves); 64 x 80 is 120 (one).
// CHECK-LABEL: func.func @bt_two_waves
// CHECK: kb.config<block = [64, 80, 64], stages = 8, mma = "wgmma_bf16"
func.func @bt_two_waves(%a: tensor<768x2048xbf16>, %b: tensor<768x2048xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<768x2048xbf16>, tensor<768x2048xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// The same shape with a row-major B keeps 64 x 64 (its 64 x 80, in TMA
// boxes of 16 columns, measured 35% slower).
// CHECK-LABEL: func.func @rowb_kept
// CHECK: kb.config<block = [64, 64, 64], mma = "wgmma_bf16"
// CHECK-NOT: stages
func.func @rowb_kept(%a: tensor<768x2048xbf16>, %b: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %a, %b : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// One wave of 64 x 64 already (64 blocks): kept.
// CHECK-LABEL: func.func @bt_one_wave
// CHECK-NOT: block = [64, 80
// CHECK: return
func.func @bt_one_wave(%a: tensor<512x2048xbf16>, %b: tensor<512x2048xbf16>) -> tensor<512x512xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<512x2048xbf16>, tensor<512x2048xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

// Hand-set stages keep kb-tile's 64 x 64 (the rule's 8 stages are part of
// what was measured).
// CHECK-LABEL: func.func @bt_handset_stages
// CHECK: kb.config<block = [64, 64, 64], stages = 4, mma = "wgmma_bf16"
func.func @bt_handset_stages(%a: tensor<768x2048xbf16>, %b: tensor<768x2048xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<stages = 4>} : tensor<768x2048xbf16>, tensor<768x2048xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// A short K (512: 8 k tiles) was not measured: kept.
// CHECK-LABEL: func.func @bt_short_k
// CHECK-NOT: block = [64, 80
// CHECK: return
func.func @bt_short_k(%a: tensor<768x512xbf16>, %b: tensor<768x512xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<768x512xbf16>, tensor<768x512xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// f32 (tf32) is not 16-bit: the rule does not apply.
// CHECK-LABEL: func.func @tf32_kept
// CHECK-NOT: block = [64, 80
// CHECK: return
func.func @tf32_kept(%a: tensor<768x2048xf32>, %b: tensor<768x2048xf32>) -> tensor<768x768xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : tensor<768x2048xf32>, tensor<768x2048xf32> -> tensor<768x768xf32>
  return %0 : tensor<768x768xf32>
}

// -----

// A hand-set BN past wgmma's 256 is refused in one line.
func.func @bt_too_wide(%a: tensor<768x2048xbf16>, %b: tensor<768x2048xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{wgmma tiles need BM a multiple of 64 (one warpgroup per 64 rows), BN a multiple of 8 up to 256 and BK = 64; got block = [64, 272, 64]}}
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<block = [64, 272, 64]>} : tensor<768x2048xbf16>, tensor<768x2048xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}
