// RUN: rm -rf %t && kb-opt %s -split-input-file -verify-diagnostics --kb-compile="output=%t ptxas=none" -o /dev/null
// Programs kb-compile cannot compile completely are refused with a located
// error and no bundle, never lowered in part (repros invalid/multi_block_*.mlir,
// crash/multi_block_br_two_values.mlir, invalid/arg_*_unused.mlir,
// invalid/matmul_grid_over_2p31.mlir; the README's kb ops inside scf.if).

// invalid/multi_block_drop.mlir: only the first block was lowered (relu
// without the tanh).
// expected-error @+1 {{'func.func' op has 2 blocks; kb-lower-to-gpu lowers a function of one block (no branches), so its kb ops would be lowered in part}}
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  cf.br ^bb1(%0 : tensor<4x8xf32>)
^bb1(%1: tensor<4x8xf32>):
  %2 = kb.tanh %1 : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// invalid/multi_block_output_unwritten.mlir
module {
  // expected-error @+1 {{'func.func' op has 2 blocks}}
  func.func @softmax(%arg0: tensor<8192x32768xf32> {kb.name = "x"}) -> (tensor<8192x32768xf32> {kb.name = "y"}) {
    %0 = kb.softmax %arg0 : tensor<8192x32768xf32>
  cf.br ^bb7
^bb7:
    return %0 : tensor<8192x32768xf32>
  }
}

// -----

// crash/multi_block_br_two_values.mlir: the entry block's cf.br was taken for
// the return (SIGSEGV).
// expected-error @+1 {{'func.func' op has 2 blocks}}
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  %1 = kb.tanh %x : tensor<4x8xf32>
  cf.br ^bb1(%0, %1 : tensor<4x8xf32>, tensor<4x8xf32>)
^bb1(%2: tensor<4x8xf32>, %3: tensor<4x8xf32>):
  return %3 : tensor<4x8xf32>
}

// -----

// kb ops only in a later block.
// expected-error @+1 {{'func.func' op has 2 blocks}}
func.func @later_block(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  cf.br ^bb1
^bb1:
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// kb ops inside scf.if ("expects exactly one function ... found 0" at
// FILE:0:0 before).
func.func @in_if(%x: tensor<4x8xf32>, %c: i1) -> tensor<4x8xf32> {
  %0 = scf.if %c -> tensor<4x8xf32> {
    // expected-error @+1 {{'kb.relu' op is inside 'scf.if'; kb lowers kb ops at the top level of a function's body only}}
    %1 = kb.relu %x : tensor<4x8xf32>
    scf.yield %1 : tensor<4x8xf32>
  } else {
    scf.yield %x : tensor<4x8xf32>
  }
  return %0 : tensor<4x8xf32>
}

// -----

// invalid/arg_dynamic_unused.mlir: recorded as shape [-9223372036854775808].
// expected-error @+1 {{'func.func' op argument #1 of type 'tensor<?xf32>' must have a static shape; kb buffers are static-shaped f32, f16 or bf16 tensors}}
func.func @f(%x: tensor<4x8xf32>, %y: tensor<?xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// invalid/arg_i32_unused.mlir: recorded as f32.
// expected-error @+1 {{'func.func' op argument #1 of type 'tensor<4x8xi32>' has element type i32; kb's tensors are f32, f16 or bf16; kb buffers are static-shaped f32, f16 or bf16 tensors}}
func.func @f(%x: tensor<4x8xf32>, %y: tensor<4x8xi32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// invalid/arg_rank0_unused.mlir: recorded as shape [].
// expected-error @+1 {{'func.func' op argument #1 of type 'tensor<f32>' must have rank >= 1; kb buffers are static-shaped f32, f16 or bf16 tensors}}
func.func @f(%x: tensor<4x8xf32>, %y: tensor<f32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// invalid/arg_zero_unused.mlir: recorded as shape [0].
// expected-error @+1 {{'func.func' op argument #1 of type 'tensor<0xf32>' must not be empty (a zero dimension); kb buffers are static-shaped f32, f16 or bf16 tensors}}
func.func @f(%x: tensor<4x8xf32>, %y: tensor<0xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #1 of type 'memref<4xf32>' is not a ranked tensor; kb buffers are static-shaped f32, f16 or bf16 tensors}}
func.func @memref_arg(%x: tensor<4x8xf32>, %y: memref<4xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Grids beyond CUDA's limits (x < 2^31, y and z < 2^16) were written into the
// manifest (invalid/matmul_grid_over_2p31.mlir, reduced to a size the
// verifier admits): 4 x 4 tiles over 2^35 columns need 2^33 blocks in x.
func.func @matmul_grid_x(%a: tensor<1x1xf32>, %b: tensor<1x34359738368xf32>) -> tensor<1x34359738368xf32> {
  // expected-error @+1 {{'kb.matmul' op needs a grid of 8589934592 x 1 x 1 blocks; CUDA launches at most 2147483647 x 65535 x 65535}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [4, 4, 4], thread = [4, 4], mma = "ffma">} : tensor<1x1xf32>, tensor<1x34359738368xf32> -> tensor<1x34359738368xf32>
  return %0 : tensor<1x34359738368xf32>
}

// -----

// invalid/transpose_grid_over_2p31.mlir, reduced: 65537 tiles of rows in y.
func.func @transpose_grid_y(%x: tensor<4194368x64xf32>) -> tensor<64x4194368xf32> {
  // expected-error @+1 {{'kb.transpose' op needs a grid of 65537 x 1 in y and z; at most 65535 each}}
  %0 = kb.transpose %x : tensor<4194368x64xf32> -> tensor<64x4194368xf32>
  return %0 : tensor<64x4194368xf32>
}

// -----

// A row per block, 2^36 rows: 2^36 blocks in x.
func.func @softmax_grid_x(%x: tensor<68719476736x1xf32>) -> tensor<68719476736x1xf32> {
  // expected-error @+1 {{'kb.softmax' op has 68719476736 rows, more than a grid holds}}
  %0 = kb.softmax %x : tensor<68719476736x1xf32>
  return %0 : tensor<68719476736x1xf32>
}
