// RUN: kb-opt %s -split-input-file -verify-diagnostics
// The constants of the activations of issue #45: finite, beta positive, the
// bounds of hardtanh and clamp in order, and clamp given at least one.

func.func @softplus_beta_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softplus' op expects a positive beta, got 0}}
  %0 = kb.softplus %x beta(0.0) threshold(20.0) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softplus_beta_negative(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softplus' op expects a positive beta, got -1}}
  %0 = kb.softplus %x beta(-1.0) threshold(20.0) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softplus_threshold_inf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softplus' op expects a finite threshold, got INF}}
  %0 = kb.softplus %x beta(1.0) threshold(0x7F800000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @softplus_beta_nan(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softplus' op expects a finite beta, got nan}}
  %0 = kb.softplus %x beta(0x7FC00000) threshold(20.0) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @elu_alpha_inf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.elu' op expects a finite alpha, got -INF}}
  %0 = kb.elu %x alpha(0xFF800000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @hardtanh_reversed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.hardtanh' op expects min_val <= max_val, got min_val = 1.000000e+00 and max_val = -1.000000e+00}}
  %0 = kb.hardtanh %x min_val(1.0) max_val(-1.0) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @hardtanh_inf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.hardtanh' op expects a finite max_val, got INF}}
  %0 = kb.hardtanh %x min_val(-1.0) max_val(0x7F800000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @clamp_neither(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.clamp' op expects a min or a max bound (or both), got neither}}
  %0 = kb.clamp %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @clamp_reversed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.clamp' op expects min <= max, got min = 6.000000e+00 and max = 0.000000e+00}}
  %0 = kb.clamp %x min(6.0) max(0.0) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @clamp_min_nan(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.clamp' op expects a finite min, got nan}}
  %0 = kb.clamp %x min(0x7FC00000) : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @minimum_shapes(%x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.minimum' op requires the same type for all operands and results}}
  %0 = "kb.minimum"(%x, %y) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @sqrt_f64(%x: tensor<4x8xf64>) -> tensor<4x8xf64> {
  // expected-error @+1 {{'kb.sqrt' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values, but got 'tensor<4x8xf64>'}}
  %0 = kb.sqrt %x : tensor<4x8xf64>
  return %0 : tensor<4x8xf64>
}

// -----

func.func @mish_dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'kb.mish' op operand #0}}
  %0 = kb.mish %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @maximum_config(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.maximum' op #kb.config field 'mma' does not apply to an elementwise kernel (kb would ignore it)}}
  %0 = kb.maximum %x, %x {config = #kb.config<mma = "ffma">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
