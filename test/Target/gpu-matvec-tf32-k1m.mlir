// Issue #19's matrix-vector product, N = 1, K = 2^20, tf32: kb-run called it
// WRONG (relative error 2.5e-3 against a fixed 2e-3). The error is the
// kernel's truncating tensor-core accumulation over 2^17 k8 steps, within
// tf32's K-dependent bound (docs/tolerances.md, the experiment in
// bench/fuzz/matvec_tf32_experiment.py, ToleranceTest.HugeKMatvecTf32IsWithinItsBound):
// kb-run must call it OK on the GPU (scripts/differential.sh puts every
// test/Target/gpu-*.mlir in its tarball). Here: it compiles, for both chips.
// GPU-CHIPS: sm_90 sm_90a
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/a ptxas=none" -o /dev/null
// RUN: kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=none" -o /dev/null
// RUN: FileCheck %s < %t/a/manifest.json
// RUN: FileCheck %s < %t/b/manifest.json
// CHECK: "precision": "tf32"
// CHECK: "op": "kb.matmul"

func.func @matvec(%a: tensor<256x1048576xf32>, %x: tensor<1048576x1xf32>) -> tensor<256x1xf32> {
  %y = kb.matmul %a, %x precision(tf32) : tensor<256x1048576xf32>, tensor<1048576x1xf32> -> tensor<256x1xf32>
  return %y : tensor<256x1xf32>
}
