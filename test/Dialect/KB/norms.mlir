// RUN: kb-opt %s -split-input-file | kb-opt -split-input-file | FileCheck %s
// RUN: kb-opt %s -split-input-file -mlir-print-op-generic | kb-opt -split-input-file | FileCheck %s

// Row reductions and normalizations over the last axis: kb.layer_norm with
// no, one (weight) or two (weight, bias) parameters, kb.rms_norm with or
// without a weight, kb.reduce with and without keepdim, in f32 and 16 bits.

// CHECK-LABEL: func.func @layer_norms
// CHECK: kb.layer_norm %{{.*}}, %{{.*}}, %{{.*}} eps(9.99999974E-6) : tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64xf32>
// CHECK: kb.layer_norm %{{.*}}, %{{.*}} eps(1.000000e-03) : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
// CHECK: kb.layer_norm %{{.*}} eps(0.000000e+00) : tensor<16x64xf32> -> tensor<16x64xf32>
func.func @layer_norms(%x: tensor<16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) {
  %0 = kb.layer_norm %x, %w, %b eps(1.0e-05) : tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %1 = kb.layer_norm %x, %w eps(1.0e-03) : tensor<16x64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  %2 = kb.layer_norm %x eps(0.0) : tensor<16x64xf32> -> tensor<16x64xf32>
  return %0, %1, %2 : tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norms
// CHECK: kb.rms_norm %{{.*}}, %{{.*}} eps(9.99999997E-7) : tensor<2x8x128xbf16>, tensor<128xbf16> -> tensor<2x8x128xbf16>
// CHECK: kb.rms_norm %{{.*}} eps(9.99999997E-7) : tensor<2x8x128xbf16> -> tensor<2x8x128xbf16>
func.func @rms_norms(%x: tensor<2x8x128xbf16>, %w: tensor<128xbf16>) -> (tensor<2x8x128xbf16>, tensor<2x8x128xbf16>) {
  %0 = kb.rms_norm %x, %w eps(1.0e-06) : tensor<2x8x128xbf16>, tensor<128xbf16> -> tensor<2x8x128xbf16>
  %1 = kb.rms_norm %x eps(1.0e-06) : tensor<2x8x128xbf16> -> tensor<2x8x128xbf16>
  return %0, %1 : tensor<2x8x128xbf16>, tensor<2x8x128xbf16>
}

// -----

// CHECK-LABEL: func.func @reductions
// CHECK: kb.reduce %{{.*}} sum keepdim : tensor<16x64xf32> -> tensor<16x1xf32>
// CHECK: kb.reduce %{{.*}} max : tensor<16x64xf32> -> tensor<16xf32>
// CHECK: kb.reduce %{{.*}} min : tensor<16x64xf32> -> tensor<16xf32>
// CHECK: kb.reduce %{{.*}} mean keepdim : tensor<64xf16> -> tensor<1xf16>
func.func @reductions(%x: tensor<16x64xf32>, %h: tensor<64xf16>) -> (tensor<16x1xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1xf16>) {
  %0 = kb.reduce %x sum keepdim : tensor<16x64xf32> -> tensor<16x1xf32>
  %1 = kb.reduce %x max : tensor<16x64xf32> -> tensor<16xf32>
  %2 = kb.reduce %x min : tensor<16x64xf32> -> tensor<16xf32>
  %3 = kb.reduce %h mean keepdim : tensor<64xf16> -> tensor<1xf16>
  return %0, %1, %2, %3 : tensor<16x1xf32>, tensor<16xf32>, tensor<16xf32>, tensor<1xf16>
}

// -----

// A residual add fused in front of a layer_norm, its weight and bias as
// fusion inputs.
// CHECK-LABEL: func.func @fused_prologue
// CHECK: kb.fusion ins
// CHECK: kb.add
// CHECK: kb.layer_norm
func.func @fused_prologue(%x: tensor<16x64xf32>, %r: tensor<16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<16x64xf32> {
  %0 = kb.fusion ins(%x, %r, %w, %b : tensor<16x64xf32>, tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) {
  ^bb0(%a: tensor<16x64xf32>, %c: tensor<16x64xf32>, %ww: tensor<64xf32>, %bb: tensor<64xf32>):
    %1 = kb.add %a, %c : tensor<16x64xf32>
    %2 = kb.layer_norm %1, %ww, %bb eps(1.0e-05) : tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64xf32>
    kb.yield %2 : tensor<16x64xf32>
  } -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}
