// Found by the differential generator (bench/fuzz/gen_programs.py --half
// 0.5, seed 1: p0015, p0146, p0191, p0199, p0205, p0238), reduced: a
// kb.convert in front of a softmax is fused into the softmax's prologue by
// kb-fuse-elementwise, and the softmax lowering then refuses the fusion's
// f16 input ("'kb.fusion' op fused softmax input of type
// 'tensor<4x8xf16>' neither matches 'tensor<4x8xf32>' nor broadcasts along
// its last axis"). The lowering now takes a prologue input of another
// element type (loaded as its type, widened to f32): one kernel whose
// input is f16.

// RUN: rm -rf %t && kb-opt %s -o /dev/null --kb-compile="output=%t chip=sm_90a ptxas=none"
// RUN: FileCheck %s < %t/manifest.json

// CHECK: "dtype": "f16"
// CHECK: "name": "k0_fused_convert_softmax"
// CHECK-NOT: "name": "k1

func.func @f(%x: tensor<4x8xf16>) -> tensor<4x8xf32> {
  %0 = kb.convert %x : tensor<4x8xf16> -> tensor<4x8xf32>
  %1 = kb.softmax %0 : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
