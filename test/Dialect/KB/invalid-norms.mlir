// RUN: kb-opt %s -split-input-file -verify-diagnostics

// kb.layer_norm, kb.rms_norm and kb.reduce: each wrong program refused at
// the op, saying what was expected.

func.func @weight_length(%x: tensor<16x64xf32>, %w: tensor<32xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{expects a 1-D weight of length 64 (the input's last dimension), got 'tensor<32xf32>'}}
  %0 = kb.layer_norm %x, %w eps(1.0e-05) : tensor<16x64xf32>, tensor<32xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @bias_rank(%x: tensor<16x64xf32>, %w: tensor<64xf32>, %b: tensor<1x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{expects a 1-D bias of length 64 (the input's last dimension), got 'tensor<1x64xf32>'}}
  %0 = kb.layer_norm %x, %w, %b eps(1.0e-05) : tensor<16x64xf32>, tensor<64xf32>, tensor<1x64xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @weight_type(%x: tensor<16x64xbf16>, %w: tensor<64xf32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{expects a weight of the input's element type 'bf16', got 'f32'}}
  %0 = kb.rms_norm %x, %w eps(1.0e-05) : tensor<16x64xbf16>, tensor<64xf32> -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @too_many_params(%x: tensor<16x64xf32>, %w: tensor<64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{takes at most 1 parameter tensors (weight), got 2}}
  %0 = kb.rms_norm %x, %w, %w eps(1.0e-05) : tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @norm_result_type(%x: tensor<16x64xf32>) -> tensor<16x64xbf16> {
  // expected-error @+1 {{expects a result of the input's type 'tensor<16x64xf32>', got 'tensor<16x64xbf16>'}}
  %0 = kb.layer_norm %x eps(1.0e-05) : tensor<16x64xf32> -> tensor<16x64xbf16>
  return %0 : tensor<16x64xbf16>
}

// -----

func.func @negative_eps(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{expects a finite eps >= 0, got -1}}
  %0 = kb.layer_norm %x eps(-1.0) : tensor<16x64xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @reduce_shape(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{expects result shape 16x1 (the last axis kept, 1 long), got 16}}
  %0 = kb.reduce %x sum keepdim : tensor<16x64xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @reduce_dropped(%x: tensor<16x64xf32>) -> tensor<16x1xf32> {
  // expected-error @+1 {{expects result shape 16 (the last axis dropped), got 16x1}}
  %0 = kb.reduce %x max : tensor<16x64xf32> -> tensor<16x1xf32>
  return %0 : tensor<16x1xf32>
}

// -----

func.func @reduce_to_scalar(%x: tensor<64xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{reduces a rank-1 input to a scalar, which kb has no tensor for: add keepdim (result 1)}}
  %0 = kb.reduce %x sum : tensor<64xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @reduce_kind(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{unknown reduction 'prod' (known: sum, max, min, mean)}}
  %0 = kb.reduce %x prod : tensor<16x64xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @reduce_type(%x: tensor<16x64xf32>) -> tensor<16xbf16> {
  // expected-error @+1 {{expects a result of the input's element type 'f32', got 'bf16' (kb.convert changes element types)}}
  %0 = kb.reduce %x sum : tensor<16x64xf32> -> tensor<16xbf16>
  return %0 : tensor<16xbf16>
}

// -----

func.func @norm_config(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  // expected-error @+1 {{#kb.config field 'mma' does not apply to a row reduction kernel (kb would ignore it)}}
  %0 = kb.layer_norm %x eps(1.0e-05) {config = #kb.config<threads = 32, mma = "ffma">} : tensor<16x64xf32> -> tensor<16x64xf32>
  return %0 : tensor<16x64xf32>
}

// -----

func.func @reduce_in_fusion(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  %0 = kb.fusion ins(%x : tensor<16x64xf32>) {
  ^bb0(%a: tensor<16x64xf32>):
    %1 = kb.relu %a : tensor<16x64xf32>
    // expected-error @+1 {{is not allowed in kb.fusion: its body holds kb elementwise ops and at most one kb.matmul, kb.softmax, kb.layer_norm or kb.rms_norm}}
    %2 = kb.reduce %1 sum : tensor<16x64xf32> -> tensor<16xf32>
    kb.yield %2 : tensor<16xf32>
  } -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
