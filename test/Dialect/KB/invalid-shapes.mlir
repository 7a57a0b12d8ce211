// RUN: kb-opt %s -split-input-file -verify-diagnostics
// Tensors whose element count overflows int64 or exceeds what kb supports
// (2^36 elements, more than any GPU holds) are refused by the verifier,
// before any pass computes with them (repros invalid/elements_wrap_to_4.mlir,
// crash/hang_oom_softmax_row_2p62.mlir, crash/hang_fuzz_softmax_8192x_int64max.mlir,
// crash/oom_fuzz_softmax_4x_int64max_split_shared.mlir,
// invalid/matmul_grid_over_2p31.mlir, invalid/transpose_grid_over_2p31.mlir).

// invalid/elements_wrap_to_4.mlir: 4611686018427387905 x 4 wrapped to 4.
func.func @f(%x: tensor<4611686018427387905x4xf32>) -> tensor<4611686018427387905x4xf32> {
  // expected-error @+1 {{'kb.relu' op operand #0 has more elements than int64 counts, got 'tensor<4611686018427387905x4xf32>'}}
  %0 = kb.relu %x : tensor<4611686018427387905x4xf32>
  return %0 : tensor<4611686018427387905x4xf32>
}

// -----

// crash/hang_oom_softmax_row_2p62.mlir: kb-select-config's arithmetic
// overflowed and the lowering grew without bound.
func.func @f(%x: tensor<1x4611686018427387904xf32>) -> tensor<1x4611686018427387904xf32> {
  // expected-error @+1 {{'kb.softmax' op operand #0 has 4611686018427387904 elements; kb supports at most 68719476736 (2^36), got 'tensor<1x4611686018427387904xf32>'}}
  %0 = kb.softmax %x : tensor<1x4611686018427387904xf32>
  return %0 : tensor<1x4611686018427387904xf32>
}

// -----

// crash/hang_fuzz_softmax_8192x_int64max.mlir
func.func @softmax(%x: tensor<8192x9223372036854775807xf32> {kb.name = "x"})
    -> (tensor<8192x9223372036854775807xf32> {kb.name = "y"}) {
  // expected-error @+1 {{'kb.softmax' op operand #0 has more elements than int64 counts}}
  %0 = kb.softmax %x : tensor<8192x9223372036854775807xf32>
  return %0 : tensor<8192x9223372036854775807xf32>
}

// -----

// crash/oom_fuzz_softmax_4x_int64max_split_shared.mlir
func.func @rows_per_cluster_must_divide(%a: tensor<4x9223372036854775807xf32>) -> tensor<4x9223372036854775807xf32> {
  // expected-error @+1 {{'kb.softmax' op operand #0 has more elements than int64 counts}}
  %0 = kb.softmax %a {config = #kb.config<strategy = "split_shared", block = [3]>} : tensor<4x9223372036854775807xf32>
  return %0 : tensor<4x9223372036854775807xf32>
}

// -----

// invalid/matmul_grid_over_2p31.mlir (its grid is refused too, by
// kb-lower-to-gpu: test/Target/kb-compile-errors.mlir).
func.func @awkward(%arg0: tensor<1000x1500xf32> {kb.name = "a"}, %arg1: tensor<1500x1099511627776xf32> {kb.name = "b"}) -> (tensor<1000x1099511627776xf32> {kb.name = "y"}) {
  // expected-error @+1 {{'kb.matmul' op operand #1 has 1649267441664000 elements; kb supports at most 68719476736 (2^36)}}
  %0 = kb.matmul %arg0, %arg1 precision(ieee) : tensor<1000x1500xf32>, tensor<1500x1099511627776xf32> -> tensor<1000x1099511627776xf32>
  %1 = kb.softmax %0 : tensor<1000x1099511627776xf32>
  return %1 : tensor<1000x1099511627776xf32>
}

// -----

// invalid/transpose_grid_over_2p31.mlir
func.func @padded_transpose(%arg0: tensor<100x1099511627776xf32>) -> tensor<1099511627776x128xf32> {
  // expected-error @+1 {{'kb.transpose' op operand #0 has 109951162777600 elements; kb supports at most 68719476736 (2^36)}}
  %0 = kb.transpose %arg0 pad(32) {config = #kb.config<block = [64, 64], threads = 256>} : tensor<100x1099511627776xf32> -> tensor<1099511627776x128xf32>
  return %0 : tensor<1099511627776x128xf32>
}

// -----

func.func @fusion_result_too_big(%x: tensor<1x4611686018427387904xf32>) -> tensor<1x4611686018427387904xf32> {
  // expected-error @+1 {{'kb.fusion' op result has 4611686018427387904 elements; kb supports at most 68719476736 (2^36)}}
  %0 = "kb.fusion"(%x) ({
  ^bb0(%a: tensor<1x4611686018427387904xf32>):
    %1 = "kb.relu"(%a) : (tensor<1x4611686018427387904xf32>) -> tensor<1x4611686018427387904xf32>
    "kb.yield"(%1) : (tensor<1x4611686018427387904xf32>) -> ()
  }) : (tensor<1x4611686018427387904xf32>) -> tensor<1x4611686018427387904xf32>
  return %0 : tensor<1x4611686018427387904xf32>
}
