// RUN: kb-opt %s -split-input-file | kb-opt -split-input-file | FileCheck %s
// RUN: kb-opt %s -split-input-file -mlir-print-op-generic | kb-opt -split-input-file | FileCheck %s

// kb.attention: rank 3 and 4, f32 (precision tf32 by default, always
// printed; ieee) and 16-bit (no precision keyword), causal, an additive mask
// of [Sq, Sk] or the full shape, the optional log-sum-exp result, Sq != Sk,
// Dv != D and a config.

// CHECK-LABEL: func.func @f32_default_tf32
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) precision(tf32) : tensor<32x128x64xf32>, tensor<32x128x64xf32>, tensor<32x128x64xf32> -> tensor<32x128x64xf32>
func.func @f32_default_tf32(%q: tensor<32x128x64xf32>, %k: tensor<32x128x64xf32>, %v: tensor<32x128x64xf32>) -> tensor<32x128x64xf32> {
  %o = kb.attention %q, %k, %v scale(0.125) : tensor<32x128x64xf32>, tensor<32x128x64xf32>, tensor<32x128x64xf32> -> tensor<32x128x64xf32>
  return %o : tensor<32x128x64xf32>
}

// -----

// CHECK-LABEL: func.func @causal_ieee_rank4
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) causal precision(ieee) : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x32xf32> -> tensor<2x4x100x32xf32>
func.func @causal_ieee_rank4(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x32xf32>) -> tensor<2x4x100x32xf32> {
  %o = kb.attention %q, %k, %v scale(0.125) causal precision(ieee) : tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x32xf32> -> tensor<2x4x100x32xf32>
  return %o : tensor<2x4x100x32xf32>
}

// -----

// CHECK-LABEL: func.func @masks_bf16
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) scale(1.250000e-01) : tensor<8x100x64xbf16>, tensor<8x300x64xbf16>, tensor<8x300x64xbf16>, tensor<100x300xbf16> -> tensor<8x100x64xbf16>
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) scale(5.000000e-01) : tensor<8x100x64xbf16>, tensor<8x300x64xbf16>, tensor<8x300x64xbf16>, tensor<8x100x300xbf16> -> tensor<8x100x64xbf16>
func.func @masks_bf16(%q: tensor<8x100x64xbf16>, %k: tensor<8x300x64xbf16>, %v: tensor<8x300x64xbf16>, %m: tensor<100x300xbf16>, %mf: tensor<8x100x300xbf16>) -> (tensor<8x100x64xbf16>, tensor<8x100x64xbf16>) {
  %0 = kb.attention %q, %k, %v mask(%m) scale(0.125) : tensor<8x100x64xbf16>, tensor<8x300x64xbf16>, tensor<8x300x64xbf16>, tensor<100x300xbf16> -> tensor<8x100x64xbf16>
  %1 = kb.attention %q, %k, %v mask(%mf) scale(0.5) : tensor<8x100x64xbf16>, tensor<8x300x64xbf16>, tensor<8x300x64xbf16>, tensor<8x100x300xbf16> -> tensor<8x100x64xbf16>
  return %0, %1 : tensor<8x100x64xbf16>, tensor<8x100x64xbf16>
}

// -----

// CHECK-LABEL: func.func @lse_f16
// CHECK: %{{.*}}, %{{.*}} = kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(0.0883789062) causal lse : tensor<2x16x1000x128xf16>, tensor<2x16x1000x128xf16>, tensor<2x16x1000x128xf16> -> tensor<2x16x1000x128xf16>, tensor<2x16x1000xf32>
func.func @lse_f16(%q: tensor<2x16x1000x128xf16>, %k: tensor<2x16x1000x128xf16>, %v: tensor<2x16x1000x128xf16>) -> (tensor<2x16x1000x128xf16>, tensor<2x16x1000xf32>) {
  %o, %lse = kb.attention %q, %k, %v scale(0.08837890625) causal lse : tensor<2x16x1000x128xf16>, tensor<2x16x1000x128xf16>, tensor<2x16x1000x128xf16> -> tensor<2x16x1000x128xf16>, tensor<2x16x1000xf32>
  return %o, %lse : tensor<2x16x1000x128xf16>, tensor<2x16x1000xf32>
}

// -----

// CHECK-LABEL: func.func @config
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) {config = #kb.config<block = [128, 64], threads = 256, stages = 2, mma = "wgmma_bf16">} : tensor<4x256x64xbf16>, tensor<4x256x64xbf16>, tensor<4x256x64xbf16> -> tensor<4x256x64xbf16>
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) {config = #kb.config<block = [128, 64], threads = 256, stages = 2, mma = "wgmma_bf16", schedule = "pingpong">} : tensor<4x256x64xbf16>, tensor<4x256x64xbf16>, tensor<4x256x64xbf16> -> tensor<4x256x64xbf16>
func.func @config(%q: tensor<4x256x64xbf16>, %k: tensor<4x256x64xbf16>, %v: tensor<4x256x64xbf16>) -> tensor<4x256x64xbf16> {
  %o = kb.attention %q, %k, %v scale(0.125) {config = #kb.config<block = [128, 64], threads = 256, stages = 2, mma = "wgmma_bf16">} : tensor<4x256x64xbf16>, tensor<4x256x64xbf16>, tensor<4x256x64xbf16> -> tensor<4x256x64xbf16>
  %p = kb.attention %q, %k, %o scale(0.125) {config = #kb.config<block = [128, 64], threads = 256, stages = 2, mma = "wgmma_bf16", schedule = "pingpong">} : tensor<4x256x64xbf16>, tensor<4x256x64xbf16>, tensor<4x256x64xbf16> -> tensor<4x256x64xbf16>
  return %p : tensor<4x256x64xbf16>
}

// -----

// CHECK-LABEL: func.func @causal_mask
// CHECK: kb.causal_mask %{{.*}} : tensor<4x100x300xf32>
// CHECK: kb.causal_mask %{{.*}} : tensor<16x16xbf16>
func.func @causal_mask(%s: tensor<4x100x300xf32>, %t: tensor<16x16xbf16>) -> (tensor<4x100x300xf32>, tensor<16x16xbf16>) {
  %0 = kb.causal_mask %s : tensor<4x100x300xf32>
  %1 = kb.causal_mask %t : tensor<16x16xbf16>
  return %0, %1 : tensor<4x100x300xf32>, tensor<16x16xbf16>
}

// -----

// bthd (issue #47): q, k, v and the result [B, S, H, D]; the mask and lse
// keep [B, H, Sq, ...].
// CHECK-LABEL: func.func @bthd
// CHECK: kb.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}}) scale(1.250000e-01) causal bthd lse : tensor<2x100x4x64xbf16>, tensor<2x300x4x64xbf16>, tensor<2x300x4x32xbf16>, tensor<2x4x100x300xbf16> -> tensor<2x100x4x32xbf16>, tensor<2x4x100xf32>
func.func @bthd(%q: tensor<2x100x4x64xbf16>, %k: tensor<2x300x4x64xbf16>, %v: tensor<2x300x4x32xbf16>, %m: tensor<2x4x100x300xbf16>) -> (tensor<2x100x4x32xbf16>, tensor<2x4x100xf32>) {
  %o, %l = kb.attention %q, %k, %v mask(%m) scale(0.125) causal bthd lse : tensor<2x100x4x64xbf16>, tensor<2x300x4x64xbf16>, tensor<2x300x4x32xbf16>, tensor<2x4x100x300xbf16> -> tensor<2x100x4x32xbf16>, tensor<2x4x100xf32>
  return %o, %l : tensor<2x100x4x32xbf16>, tensor<2x4x100xf32>
}
