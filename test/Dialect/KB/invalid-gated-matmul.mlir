// RUN: kb-opt %s -split-input-file -verify-diagnostics

// kb.gated_matmul's refusals, each one located line.

func.func @mismatched_b(%h: tensor<64x32xbf16>, %w1: tensor<48x32xbf16>, %w3: tensor<40x32xbf16>) -> tensor<64x48xbf16> {
  // expected-error @+1 {{expects rhs1 and rhs2 of one type, got 'tensor<48x32xbf16>' and 'tensor<40x32xbf16>'}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<64x32xbf16>, tensor<48x32xbf16>, tensor<40x32xbf16> -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}

// -----

func.func @mismatched_b_type(%h: tensor<64x32xbf16>, %w1: tensor<48x32xbf16>, %w3: tensor<48x32xf16>) -> tensor<64x48xbf16> {
  // expected-error @+1 {{expects rhs1 and rhs2 of one type, got 'tensor<48x32xbf16>' and 'tensor<48x32xf16>'}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<64x32xbf16>, tensor<48x32xbf16>, tensor<48x32xf16> -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}

// -----

func.func @row_major(%h: tensor<64x32xbf16>, %w1: tensor<32x48xbf16>, %w3: tensor<32x48xbf16>) -> tensor<64x48xbf16> {
  // expected-error @+1 {{expects transpose_b: rhs1 and rhs2 are NxK (as F.linear's weights)}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) : tensor<64x32xbf16>, tensor<32x48xbf16>, tensor<32x48xbf16> -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}

// -----

func.func @inner(%h: tensor<64x32xbf16>, %w1: tensor<48x16xbf16>, %w3: tensor<48x16xbf16>) -> tensor<64x48xbf16> {
  // expected-error @+1 {{inner dimensions must match: lhs is 64x32 (K = 32), rhs1 and rhs2 are 48x16 (K = 16)}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<64x32xbf16>, tensor<48x16xbf16>, tensor<48x16xbf16> -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}

// -----

func.func @result_shape(%h: tensor<64x32xbf16>, %w1: tensor<48x32xbf16>, %w3: tensor<48x32xbf16>) -> tensor<64x96xbf16> {
  // expected-error @+1 {{expects result shape 64x48, got 64x96}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<64x32xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16> -> tensor<64x96xbf16>
  return %y : tensor<64x96xbf16>
}

// -----

func.func @half_precision(%h: tensor<64x32xbf16>, %w1: tensor<48x32xbf16>, %w3: tensor<48x32xbf16>) -> tensor<64x48xbf16> {
  // expected-error @+1 {{a 'bf16' gated matmul has no precision choice: leave out precision(tf32)}}
  %y = kb.gated_matmul %h, %w1, %w3 precision(tf32) gate(silu) transpose_b : tensor<64x32xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16> -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}

// -----

func.func @f32_no_precision(%h: tensor<64x32xf32>, %w1: tensor<48x32xf32>, %w3: tensor<48x32xf32>) -> tensor<64x48xf32> {
  // expected-error @+1 {{an f32 gated matmul needs precision(ieee), precision(tf32) or precision(tf32x3)}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<64x32xf32>, tensor<48x32xf32>, tensor<48x32xf32> -> tensor<64x48xf32>
  return %y : tensor<64x48xf32>
}

// -----

func.func @batched(%h: tensor<2x64x32xbf16>, %w1: tensor<2x48x32xbf16>, %w3: tensor<2x48x32xbf16>) -> tensor<2x64x48xbf16> {
  // expected-error @+1 {{expects lhs (MxK) and rhs1, rhs2 (NxK) of rank 2, got ranks 3 and 3}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<2x64x32xbf16>, tensor<2x48x32xbf16>, tensor<2x48x32xbf16> -> tensor<2x64x48xbf16>
  return %y : tensor<2x64x48xbf16>
}

// -----

func.func @unknown_gate(%h: tensor<64x32xbf16>, %w1: tensor<48x32xbf16>, %w3: tensor<48x32xbf16>) -> tensor<64x48xbf16> {
  // expected-error @+1 {{unknown gate 'relu' (known: silu, gelu_tanh, gelu_erf)}}
  %y = kb.gated_matmul %h, %w1, %w3 gate(relu) transpose_b : tensor<64x32xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16> -> tensor<64x48xbf16>
  return %y : tensor<64x48xbf16>
}
