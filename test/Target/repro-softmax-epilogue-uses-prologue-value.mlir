// Found by the differential generator (bench/fuzz/gen_programs.py, seed 1,
// program p0148), reduced: kb-opt --kb-compile crashed (SIGSEGV in
// emitChainScalar, building math.tanh on a null value, from
// SoftmaxContext::store < buildRegisters) when the chain after a softmax
// used a value of the fused chain before it (%r: relu, fused into the
// softmax's prologue and never materialized). Now kb-fuse-elementwise keeps
// such a value out of the prologue: %r is its own kernel, the softmax reads
// it, and the epilogue (tanh, div) reads it as a kernel input.
// RUN: rm -rf %t && kb-opt %s -o /dev/null --kb-compile="output=%t ptxas=none"
// RUN: FileCheck %s < %t/manifest.json
// RUN: kb-opt %s --kb-fuse-elementwise | FileCheck %s --check-prefix=FUSED

// CHECK: "name": "k0_relu"
// CHECK: "name": "k1_fused_softmax_tanh_div"

// FUSED: %[[R:.+]] = kb.relu %arg0
// FUSED: kb.fusion ins(%[[R]]
// FUSED-NOT: kb.relu
// FUSED: kb.softmax
// FUSED: kb.tanh
// FUSED: kb.div

func.func @f(%x: tensor<4x33xf32>) -> tensor<4x33xf32> {
  %r = kb.relu %x : tensor<4x33xf32>
  %s = kb.softmax %r : tensor<4x33xf32>
  %t = kb.tanh %r : tensor<4x33xf32>
  %y = kb.div %s, %t : tensor<4x33xf32>
  return %y : tensor<4x33xf32>
}
