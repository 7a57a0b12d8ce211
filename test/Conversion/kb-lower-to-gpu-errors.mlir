// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics

func.func @no_config(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{has no #kb.config: run kb-select-config, kb-select-mma, kb-tile and kb-promote-shared-memory first}}
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @returns_argument(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  // expected-error @+1 {{returns value #0 that is a function argument or returned twice; kb needs each result computed by its own kernel}}
  return %x : tensor<4x8xf32>
}

// -----

func.func @foreign_op(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{cannot be lowered by kb-lower-to-gpu: a kb function holds only kb ops}}
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = kb.relu %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
