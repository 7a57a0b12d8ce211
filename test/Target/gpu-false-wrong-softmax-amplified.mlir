// The reproducer of a false WRONG (../shared/repros/gpu/false_wrong_softmax_amplified.mlir,
// copied): a correct kernel that kb-run's old fixed tolerance (rtol 2e-5)
// called WRONG (3 elements, relative difference ~2.6e-5) because the chain
// before the softmax (x * x of dropout-scaled values) makes its inputs large
// and exp amplifies their fp32 rounding. With the propagated bounds of
// docs/tolerances.md kb-run must call it OK on the GPU: scripts/differential.sh
// compiles every test/Target/gpu-*.mlir into its tarball (as r-NAME-CHIP) and
// scripts/differential-gpu.sh runs them with the random programs. On the CPU,
// unittests/ToleranceTest.cpp emulates it at this size. Here: it compiles into
// one fused kernel whose manifest records the whole chain.
// GPU-CHIPS: sm_90 sm_90a
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t ptxas=none" -o /dev/null
// RUN: FileCheck %s < %t/manifest.json
// CHECK-DAG: "op": "kb.softmax"
// CHECK-DAG: "op": "kb.mul"
// CHECK-DAG: "op": "kb.relu"
// CHECK-DAG: "op": "kb.dropout"

func.func @r158(%x: tensor<196x1186xf32> {kb.name = "x"}, %y: tensor<196x1186xf32> {kb.name = "y2"}) -> (tensor<196x1186xf32> {kb.name = "out"}) {
  %v1 = kb.dropout %x p(0.1) seed(559434678731) : tensor<196x1186xf32>
  %v2 = kb.dropout %v1 p(0.3) seed(268424770553) : tensor<196x1186xf32>
  %v3 = kb.mul %v2, %y : tensor<196x1186xf32>
  %v4 = kb.dropout %v3 p(0.1) seed(132885366288) : tensor<196x1186xf32>
  %v5 = kb.mul %v4, %v4 : tensor<196x1186xf32>
  %sm = kb.softmax %v5 : tensor<196x1186xf32>
  %w1 = kb.dropout %sm p(0.3) seed(764678168837) : tensor<196x1186xf32>
  %w2 = kb.relu %w1 : tensor<196x1186xf32>
  return %w2 : tensor<196x1186xf32>
}
