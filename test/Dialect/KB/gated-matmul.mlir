// kb.gated_matmul round-trips in its pretty and generic forms.
// RUN: kb-opt %s | kb-opt | FileCheck %s
// RUN: kb-opt %s --mlir-print-op-generic | kb-opt | FileCheck %s

// CHECK-LABEL: func.func @swiglu
// CHECK: kb.gated_matmul %arg0, %arg1, %arg2 gate(silu) transpose_b : tensor<2048x4096xbf16>, tensor<10880x4096xbf16>, tensor<10880x4096xbf16> -> tensor<2048x10880xbf16>
func.func @swiglu(%h: tensor<2048x4096xbf16>, %w1: tensor<10880x4096xbf16>, %w3: tensor<10880x4096xbf16>) -> tensor<2048x10880xbf16> {
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<2048x4096xbf16>, tensor<10880x4096xbf16>, tensor<10880x4096xbf16> -> tensor<2048x10880xbf16>
  return %y : tensor<2048x10880xbf16>
}

// CHECK-LABEL: func.func @geglu_f32
// CHECK: kb.gated_matmul %arg0, %arg1, %arg2 precision(tf32) gate(gelu_erf) transpose_b : tensor<64x32xf32>, tensor<48x32xf32>, tensor<48x32xf32> -> tensor<64x48xf32>
func.func @geglu_f32(%h: tensor<64x32xf32>, %w1: tensor<48x32xf32>, %w3: tensor<48x32xf32>) -> tensor<64x48xf32> {
  %y = kb.gated_matmul %h, %w1, %w3 precision(tf32) gate(gelu_erf) transpose_b : tensor<64x32xf32>, tensor<48x32xf32>, tensor<48x32xf32> -> tensor<64x48xf32>
  return %y : tensor<64x48xf32>
}

// A 16-bit gated matmul with an f32 result.
// CHECK-LABEL: func.func @f32_result
// CHECK: gate(gelu_tanh) transpose_b {{.*}} -> tensor<64x48xf32>
func.func @f32_result(%h: tensor<64x32xf16>, %w1: tensor<48x32xf16>, %w3: tensor<48x32xf16>) -> tensor<64x48xf32> {
  %y = kb.gated_matmul %h, %w1, %w3 gate(gelu_tanh) transpose_b : tensor<64x32xf16>, tensor<48x32xf16>, tensor<48x32xf16> -> tensor<64x48xf32>
  return %y : tensor<64x48xf32>
}
