// RUN: kb-opt %s -split-input-file | kb-opt -split-input-file | FileCheck %s
// RUN: kb-opt %s -split-input-file -mlir-print-op-generic | kb-opt -split-input-file | FileCheck %s

// 16-bit tensors: a matmul without a precision keyword (precision native),
// its result in f32 or the operands' type; elementwise ops and softmax in
// one 16-bit type; kb.convert between the three float types.

// CHECK-LABEL: func.func @matmul_bf16
// CHECK: kb.matmul %{{.*}}, %{{.*}} transpose_b : tensor<128x64xbf16>, tensor<32x64xbf16> -> tensor<128x32xf32>
// CHECK: kb.matmul %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x32xbf16> -> tensor<128x32xbf16>
func.func @matmul_bf16(%a: tensor<128x64xbf16>, %bt: tensor<32x64xbf16>, %b: tensor<64x32xbf16>) -> (tensor<128x32xf32>, tensor<128x32xbf16>) {
  %0 = kb.matmul %a, %bt transpose_b : tensor<128x64xbf16>, tensor<32x64xbf16> -> tensor<128x32xf32>
  %1 = kb.matmul %a, %b : tensor<128x64xbf16>, tensor<64x32xbf16> -> tensor<128x32xbf16>
  return %0, %1 : tensor<128x32xf32>, tensor<128x32xbf16>
}

// -----

// CHECK-LABEL: func.func @f16_chain
// CHECK: kb.matmul %{{.*}}, %{{.*}} : tensor<16x8xf16>, tensor<8x4xf16> -> tensor<16x4xf16>
// CHECK: kb.bias_add %{{.*}}, %{{.*}} : tensor<16x4xf16>, tensor<4xf16> -> tensor<16x4xf16>
// CHECK: kb.gelu %{{.*}} approx(tanh) : tensor<16x4xf16>
// CHECK: kb.softmax %{{.*}} : tensor<16x4xf16>
// CHECK: kb.convert %{{.*}} : tensor<16x4xf16> -> tensor<16x4xf32>
func.func @f16_chain(%a: tensor<16x8xf16>, %b: tensor<8x4xf16>, %bias: tensor<4xf16>) -> tensor<16x4xf32> {
  %0 = kb.matmul %a, %b : tensor<16x8xf16>, tensor<8x4xf16> -> tensor<16x4xf16>
  %1 = kb.bias_add %0, %bias : tensor<16x4xf16>, tensor<4xf16> -> tensor<16x4xf16>
  %2 = kb.gelu %1 approx(tanh) : tensor<16x4xf16>
  %3 = kb.softmax %2 : tensor<16x4xf16>
  %4 = kb.convert %3 : tensor<16x4xf16> -> tensor<16x4xf32>
  return %4 : tensor<16x4xf32>
}

// -----

// An f32 matmul keeps its precision keyword.
// CHECK-LABEL: func.func @f32_keeps_precision
// CHECK: kb.matmul %{{.*}}, %{{.*}} precision(tf32) : tensor<4x4xf32>
func.func @f32_keeps_precision(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = kb.matmul %a, %a precision(tf32) : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
