// RUN: kb-opt %s -split-input-file | kb-opt -split-input-file | FileCheck %s
// RUN: kb-opt %s -split-input-file -mlir-print-op-generic | kb-opt -split-input-file | FileCheck %s

// kb.reduce over any one axis (axis(a)), with and without keepdim, and over
// the whole tensor (all), in f32 and 16 bits.

// CHECK-LABEL: func.func @axes
// CHECK: kb.reduce %{{.*}} sum axis(0) : tensor<16x64xf32> -> tensor<64xf32>
// CHECK: kb.reduce %{{.*}} max axis(1) keepdim : tensor<2x16x64xf32> -> tensor<2x1x64xf32>
// CHECK: kb.reduce %{{.*}} mean axis(2) : tensor<2x16x64xf32> -> tensor<2x16xf32>
// CHECK: kb.reduce %{{.*}} min axis(0) keepdim : tensor<64xbf16> -> tensor<1xbf16>
func.func @axes(%x: tensor<16x64xf32>, %y: tensor<2x16x64xf32>, %h: tensor<64xbf16>) -> (tensor<64xf32>, tensor<2x1x64xf32>, tensor<2x16xf32>, tensor<1xbf16>) {
  %0 = kb.reduce %x sum axis(0) : tensor<16x64xf32> -> tensor<64xf32>
  %1 = kb.reduce %y max axis(1) keepdim : tensor<2x16x64xf32> -> tensor<2x1x64xf32>
  %2 = kb.reduce %y mean axis(2) : tensor<2x16x64xf32> -> tensor<2x16xf32>
  %3 = kb.reduce %h min axis(0) keepdim : tensor<64xbf16> -> tensor<1xbf16>
  return %0, %1, %2, %3 : tensor<64xf32>, tensor<2x1x64xf32>, tensor<2x16xf32>, tensor<1xbf16>
}

// -----

// CHECK-LABEL: func.func @whole
// CHECK: kb.reduce %{{.*}} sum all : tensor<16x64xf32> -> tensor<1xf32>
// CHECK: kb.reduce %{{.*}} max all keepdim : tensor<2x16x64xf32> -> tensor<1x1x1xf32>
// CHECK: kb.reduce %{{.*}} mean all : tensor<64xf16> -> tensor<1xf16>
func.func @whole(%x: tensor<16x64xf32>, %y: tensor<2x16x64xf32>, %h: tensor<64xf16>) -> (tensor<1xf32>, tensor<1x1x1xf32>, tensor<1xf16>) {
  %0 = kb.reduce %x sum all : tensor<16x64xf32> -> tensor<1xf32>
  %1 = kb.reduce %y max all keepdim : tensor<2x16x64xf32> -> tensor<1x1x1xf32>
  %2 = kb.reduce %h mean all : tensor<64xf16> -> tensor<1xf16>
  return %0, %1, %2 : tensor<1xf32>, tensor<1x1x1xf32>, tensor<1xf16>
}
