// RUN: kb-opt %s -split-input-file -verify-diagnostics

func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{operand #0 must have a static shape, got 'tensor<?x8xf32>'}}
  %0 = kb.log_softmax %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @integer(%x: tensor<4x8xi32>) -> tensor<4x8xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = kb.log_softmax %x : tensor<4x8xi32>
  return %0 : tensor<4x8xi32>
}

// -----

func.func @mma_on_log_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.log_softmax' op #kb.config field 'mma' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.log_softmax %x {config = #kb.config<mma = "ffma">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
