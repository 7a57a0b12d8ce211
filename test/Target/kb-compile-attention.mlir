// kb-compile runs kb-fuse-attention first: written-out attention becomes one
// kb.attention (a remark says so), which kb-lower-to-gpu builds as one
// kernel (the fused attention kernel, lib/Conversion/KBToGPU/Attention.cpp);
// with fuse=false the unfused chain compiles to one kernel an op, and
// nothing is fused.
// RUN: rm -rf %t && kb-opt %s -verify-diagnostics --kb-compile="output=%t/b ptxas=none" -o /dev/null
// RUN: FileCheck %s --check-prefix=FUSED < %t/b/manifest.json
// FUSED: "kernels": [
// FUSED: "name": "k0_attention"
// FUSED-NOT: "name": "k1
// FUSED: "program": [
// FUSED: "op": "kb.attention"
// RUN: kb-opt %s --kb-compile="output=%t/u fuse=false ptxas=none" -o /dev/null
// RUN: FileCheck %s < %t/u/manifest.json
// CHECK: "name": "k0_matmul"
// CHECK: "name": "k1_scale"
// CHECK: "name": "k2_softmax"
// CHECK: "name": "k3_matmul"
func.func @attention(%q: tensor<4x100x64xf32> {kb.name = "q"}, %k: tensor<4x100x64xf32> {kb.name = "k"}, %v: tensor<4x100x64xf32> {kb.name = "v"}) -> (tensor<4x100x64xf32> {kb.name = "o"}) {
  %0 = kb.matmul %q, %k precision(tf32) transpose_b : tensor<4x100x64xf32>, tensor<4x100x64xf32> -> tensor<4x100x100xf32>
  %1 = kb.scale %0 by 0.125 : tensor<4x100x100xf32>
  %2 = kb.softmax %1 : tensor<4x100x100xf32>
  // expected-remark @+1 {{fused into kb.attention: q k^T -> scale 1.250000e-01 -> softmax -> @ v}}
  %3 = kb.matmul %2, %v precision(tf32) : tensor<4x100x100xf32>, tensor<4x100x64xf32> -> tensor<4x100x64xf32>
  return %3 : tensor<4x100x64xf32>
}
