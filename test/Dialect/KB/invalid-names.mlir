// RUN: kb-opt %s -split-input-file -verify-diagnostics
// `kb.name` names one buffer of the bundle: two arguments or results with the
// same name are refused (repro invalid/name_dup_args.mlir: kb-run refused
// the bundle kb-opt wrote). Generated names that clash with a given one are
// made unique by kb-lower-to-gpu (test/Target/kb-compile-names.mlir).

// invalid/name_dup_args.mlir
// expected-error @+1 {{argument #1 has kb.name "x", which argument #0 has already: each buffer needs its own name}}
func.func @f(%x: tensor<4x8xf32> {kb.name = "x"}, %y: tensor<4x8xf32> {kb.name = "x"}) -> tensor<4x8xf32> {
  %0 = kb.add %x, %y : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #0 has kb.name "x", which argument #0 has already: each buffer needs its own name}}
func.func @result_like_arg(%x: tensor<4x8xf32> {kb.name = "x"}) -> (tensor<4x8xf32> {kb.name = "x"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #1 has kb.name "y", which result #0 has already: each buffer needs its own name}}
func.func @two_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {kb.name = "y"}, tensor<4x8xf32> {kb.name = "y"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  %1 = kb.tanh %x : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// expected-error @+1 {{argument #0: 'kb.name' must be a non-empty string}}
func.func @empty(%x: tensor<4x8xf32> {kb.name = ""}) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #0: 'kb.name' must be a non-empty string}}
func.func @not_a_string(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {kb.name = 3 : i64}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
