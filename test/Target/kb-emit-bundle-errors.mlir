// RUN: rm -rf %t && kb-opt %s -split-input-file -verify-diagnostics --kb-emit-bundle=output=%t -o /dev/null
// kb-emit-bundle without a lowered function says where the kb ops are, at
// their location ("expects exactly one function ... found 0" at FILE:0:0
// before).

func.func @in_if(%x: tensor<4x8xf32>, %c: i1) -> tensor<4x8xf32> {
  %0 = scf.if %c -> tensor<4x8xf32> {
    // expected-error @+1 {{kb-emit-bundle: this kb op was not lowered by kb-lower-to-gpu (it is inside 'scf.if'; kb compiles kb ops at the top level of a function)}}
    %1 = kb.relu %x : tensor<4x8xf32>
    scf.yield %1 : tensor<4x8xf32>
  } else {
    scf.yield %x : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

func.func @later_block(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  cf.br ^bb1
^bb1:
  // expected-error @+1 {{kb-emit-bundle: this kb op was not lowered by kb-lower-to-gpu (it is in a later block of its function; kb compiles functions of one block)}}
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{kb-emit-bundle: no function holds a kb op, so there is nothing to put in a bundle (a bundle holds one kb function with at least one kb op)}}
func.func @no_kb(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %x : tensor<4x8xf32>
}
