// A kb.convert in front of a norm is fused into its prologue: one kernel
// that reads the f16 input as f16 (the norm lowering binds the fusion's
// inputs by shape, as the softmax's does: SoftmaxGen.h bindFusedChains).
// Before the shared helper the norm lowering compared whole types and
// refused the fusion ("fused norm input of type 'tensor<64x1024xf16>'
// neither matches ...").
// RUN: rm -rf %t && kb-opt %s -o /dev/null --kb-compile="output=%t ptxas=none"
// RUN: FileCheck %s < %t/manifest.json

// CHECK: "dtype": "f16"
// CHECK: "name": "k0_fused_convert_rms_norm"
// CHECK-NOT: "name": "k1

func.func @f(%x: tensor<64x1024xf16>, %w: tensor<1024xf32>) -> tensor<64x1024xf32> {
  %0 = kb.convert %x : tensor<64x1024xf16> -> tensor<64x1024xf32>
  %1 = kb.rms_norm %0, %w eps(1.0e-06) : tensor<64x1024xf32>, tensor<1024xf32> -> tensor<64x1024xf32>
  return %1 : tensor<64x1024xf32>
}
