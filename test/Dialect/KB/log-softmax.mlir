// RUN: kb-opt %s -split-input-file | kb-opt -split-input-file | FileCheck %s
// RUN: kb-opt %s -split-input-file -mlir-print-op-generic | kb-opt -split-input-file | FileCheck %s

// kb.log_softmax over the last axis, in f32 and the 16-bit types, with and
// without a config.

// CHECK-LABEL: func.func @log_softmaxes
// CHECK: kb.log_softmax %{{.*}} : tensor<16x64xf32>
// CHECK: kb.log_softmax %{{.*}} : tensor<2x8x128xbf16>
// CHECK: kb.log_softmax %{{.*}} {config = #kb.config<threads = 64, vector = 8, strategy = "registers">} : tensor<4x512xf16>
func.func @log_softmaxes(%x: tensor<16x64xf32>, %y: tensor<2x8x128xbf16>, %z: tensor<4x512xf16>) -> (tensor<16x64xf32>, tensor<2x8x128xbf16>, tensor<4x512xf16>) {
  %0 = kb.log_softmax %x : tensor<16x64xf32>
  %1 = kb.log_softmax %y : tensor<2x8x128xbf16>
  %2 = kb.log_softmax %z {config = #kb.config<threads = 64, vector = 8, strategy = "registers">} : tensor<4x512xf16>
  return %0, %1, %2 : tensor<16x64xf32>, tensor<2x8x128xbf16>, tensor<4x512xf16>
}
