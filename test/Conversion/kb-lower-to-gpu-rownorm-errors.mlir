// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics

// The row kernels refuse configs they cannot build, at the op.

func.func @vector_not_dividing(%x: tensor<4x1022xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{vector width 4 does not divide the row length 1022}}
  %0 = kb.reduce %x sum {config = #kb.config<threads = 64, vector = 4>} : tensor<4x1022xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @wider_than_registers(%x: tensor<4x65536xf32>) -> tensor<4x65536xf32> {
  // expected-error @+1 {{would hold 512 values of each row per thread (row length 65536, 128 threads); at most 64 fit in registers: use strategy "online" (the row read in loops)}}
  %0 = kb.rms_norm %x eps(1.0e-05) {config = #kb.config<threads = 128, vector = 4>} : tensor<4x65536xf32> -> tensor<4x65536xf32>
  return %0 : tensor<4x65536xf32>
}
