// RUN: kb-opt %s -split-input-file -verify-diagnostics

func.func @axis_out_of_range(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{expects axis in [0, 2), got 2}}
  %0 = kb.reduce %x sum axis(2) : tensor<16x64xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @axis_negative(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{expects axis in [0, 2), got -1}}
  %0 = kb.reduce %x sum axis(-1) : tensor<16x64xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @axis_wrong_shape(%x: tensor<16x64xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{expects result shape 64 (axis 0 dropped), got 16}}
  %0 = kb.reduce %x sum axis(0) : tensor<16x64xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

func.func @axis_keepdim_shape(%x: tensor<2x16x64xf32>) -> tensor<2x16x1xf32> {
  // expected-error @+1 {{expects result shape 2x1x64 (axis 1 kept, 1 long), got 2x16x1}}
  %0 = kb.reduce %x sum axis(1) keepdim : tensor<2x16x64xf32> -> tensor<2x16x1xf32>
  return %0 : tensor<2x16x1xf32>
}

// -----

func.func @all_and_axis(%x: tensor<16x64xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{takes 'all' or 'axis', not both}}
  %0 = kb.reduce %x sum axis(0) all : tensor<16x64xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @all_shape(%x: tensor<16x64xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{expects result shape 1x1 (every axis reduced, kept 1 long), got 1}}
  %0 = kb.reduce %x sum all keepdim : tensor<16x64xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
