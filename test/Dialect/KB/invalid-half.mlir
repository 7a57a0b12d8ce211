// RUN: kb-opt %s -split-input-file -verify-diagnostics

// The element-type rules of 16-bit tensors, each refusal located.

func.func @mixed_operands(%a: tensor<64x32xbf16>, %b: tensor<32x8xf16>) -> tensor<64x8xf32> {
  // expected-error @+1 {{expects lhs and rhs of one element type, got 'bf16' and 'f16' (kb.convert one of them)}}
  %0 = kb.matmul %a, %b : tensor<64x32xbf16>, tensor<32x8xf16> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @half_with_precision(%a: tensor<64x32xbf16>, %b: tensor<32x8xbf16>) -> tensor<64x8xf32> {
  // expected-error @+1 {{a 'bf16' matmul has no precision choice (tensor cores in 'bf16' with f32 accumulation): leave out precision(tf32)}}
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x32xbf16>, tensor<32x8xbf16> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @f32_without_precision(%a: tensor<64x32xf32>, %b: tensor<32x8xf32>) -> tensor<64x8xf32> {
  // expected-error @+1 {{an f32 matmul needs precision(ieee), precision(tf32) or precision(tf32x3)}}
  %0 = kb.matmul %a, %b : tensor<64x32xf32>, tensor<32x8xf32> -> tensor<64x8xf32>
  return %0 : tensor<64x8xf32>
}

// -----

func.func @half_result_of_other_type(%a: tensor<64x32xbf16>, %b: tensor<32x8xbf16>) -> tensor<64x8xf16> {
  // expected-error @+1 {{expects a result of element type f32 or 'bf16', got 'f16'}}
  %0 = kb.matmul %a, %b : tensor<64x32xbf16>, tensor<32x8xbf16> -> tensor<64x8xf16>
  return %0 : tensor<64x8xf16>
}

// -----

func.func @f32_result_16bit(%a: tensor<64x32xf32>, %b: tensor<32x8xf32>) -> tensor<64x8xbf16> {
  // expected-error @+1 {{expects a result of element type f32, got 'bf16'}}
  %0 = kb.matmul %a, %b precision(tf32) : tensor<64x32xf32>, tensor<32x8xf32> -> tensor<64x8xbf16>
  return %0 : tensor<64x8xbf16>
}

// -----

func.func @mixed_add(%a: tensor<4x8xbf16>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "kb.add"(%a, %b) : (tensor<4x8xbf16>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @bias_type(%x: tensor<4x8xbf16>, %b: tensor<8xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{expects a bias of the input's element type 'bf16', got 'f32'}}
  %0 = kb.bias_add %x, %b : tensor<4x8xbf16>, tensor<8xf32> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @convert_nothing(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{converts nothing: input and result are both 'bf16'}}
  %0 = kb.convert %x : tensor<4x8xbf16> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}

// -----

func.func @convert_shape(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{expects a result of the input's shape 4x8, got 8x4}}
  %0 = kb.convert %x : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// -----

func.func @transpose_converts(%x: tensor<4x8xf32>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{expects a result of the input's element type 'f32', got 'bf16' (kb.convert changes element types)}}
  %0 = kb.transpose %x : tensor<4x8xf32> -> tensor<8x4xbf16>
  return %0 : tensor<8x4xbf16>
}

// -----

func.func @f64(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xf64>'}}
  %0 = kb.relu %x : tensor<4x8xf64>
  return %0 : tensor<4x8xf64>
}

// -----

func.func @split_sum_half(%p: tensor<2x4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{expects f32 partials (a split matmul accumulates in f32), got 'bf16'}}
  %0 = kb.split_sum %p : tensor<2x4x8xbf16> -> tensor<4x8xbf16>
  return %0 : tensor<4x8xbf16>
}
