// RUN: kb-opt %s -split-input-file -verify-diagnostics
// kb.fusion bodies the lowering cannot compile completely are refused by the
// verifier (repros crash/fusion_matmul_yield_blockarg*.mlir: SIGSEGV;
// crash/hang_fusion_second_result_used.mlir: an endless loop;
// invalid/fusion_two_results_*.mlir: only the first result was written).

// crash/fusion_matmul_yield_blockarg_min.mlir
func.func @f(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.fusion' op yields block argument #0 (an input): kb.yield must return a value computed in the body}}
  %0 = kb.fusion ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %1 = kb.matmul %x, %y precision(ieee) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    kb.yield %x : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// crash/fusion_matmul_yield_blockarg_tf32_min.mlir
module {
  func.func @b_read_twice(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<64x64xf32> {
    // expected-error @+1 {{'kb.fusion' op yields block argument #0 (an input): kb.yield must return a value computed in the body}}
    %0 = kb.fusion ins(%arg0, %arg1 : tensor<64x64xf32>, tensor<64x64xf32>) {
    ^bb0(%arg2: tensor<64x64xf32>, %arg3: tensor<64x64xf32>):
      %1 = kb.matmul %arg2, %arg3 precision(tf32) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
      %2 = kb.add %1, %arg3 : tensor<64x64xf32>
      kb.yield %arg2 : tensor<64x64xf32>
    } -> tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}

// -----

// The matmul's result reaches no kb.yield: the kernel would compute nothing
// of it.
func.func @dead_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.fusion ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    // expected-error @+1 {{'kb.matmul' op result is unused in its kb.fusion: every op of a fusion must feed the value kb.yield returns}}
    %1 = kb.matmul %x, %y precision(ieee) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %2 = kb.relu %x : tensor<64x64xf32>
    kb.yield %2 : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// crash/hang_fusion_second_result_used.mlir
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.fusion' op has 2 results; kb lowers a fusion to one kernel with one output, so it needs exactly one result}}
  %0:2 = "kb.fusion"(%x) ({
  ^bb0(%a: tensor<4x8xf32>):
    %1 = kb.relu %a : tensor<4x8xf32>
    %2 = kb.tanh %a : tensor<4x8xf32>
    kb.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  %3 = kb.add %0#0, %0#1 : tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// invalid/fusion_two_results_returned.mlir
func.func @f(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // expected-error @+1 {{'kb.fusion' op has 2 results; kb lowers a fusion to one kernel with one output, so it needs exactly one result}}
  %0:2 = "kb.fusion"(%x) ({
  ^bb0(%a: tensor<4x8xf32>):
    %1 = kb.relu %a : tensor<4x8xf32>
    %2 = kb.tanh %a : tensor<4x8xf32>
    kb.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// invalid/fusion_two_results_second_unused.mlir
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.fusion' op has 2 results; kb lowers a fusion to one kernel with one output, so it needs exactly one result}}
  %0:2 = "kb.fusion"(%x) ({
  ^bb0(%a: tensor<4x8xf32>):
    %1 = kb.relu %a : tensor<4x8xf32>
    %2 = kb.tanh %a : tensor<4x8xf32>
    kb.yield %1, %2 : tensor<4x8xf32>, tensor<4x8xf32>
  }) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  return %0#1 : tensor<4x8xf32>
}

// -----

// A body in generic form that ends in another op than kb.yield (the
// implicit terminator is built only where there is none): refused, not
// cast (kb-compile's fuzzer found the assert:
// fuzz/regressions/kb-compile/fusion_terminator_not_yield_assert.mlir).
func.func @ends_in_relu(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'kb.fusion' op expects its body to end in kb.yield, got 'kb.relu'}}
  %0 = "kb.fusion"(%x) ({
  ^bb0(%a: tensor<4x4xf32>):
    %1 = "kb.relu"(%a) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = "kb.relu"(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
