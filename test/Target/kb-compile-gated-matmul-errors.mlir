// kb.gated_matmul has no kernel yet: kb-compile refuses it at the op, in one
// located line, after the passes in front of the lowering let it through.
// RUN: not kb-opt %s --kb-compile="output=%t chip=sm_90a" -o /dev/null 2>&1 | FileCheck %s
// CHECK: kb-compile-gated-matmul-errors.mlir:[[@LINE+3]]:8: error: 'kb.gated_matmul' op has no kernel yet (the two-B wgmma kernel of docs/design.md "Gated matmul" is not built): compile the program without kb-fuse-gated-matmul
// CHECK-NOT: error
func.func @swiglu(%h: tensor<1000x1504xbf16>, %w1: tensor<700x1504xbf16>, %w3: tensor<700x1504xbf16>) -> tensor<1000x700xbf16> {
  %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<1000x1504xbf16>, tensor<700x1504xbf16>, tensor<700x1504xbf16> -> tensor<1000x700xbf16>
  return %y : tensor<1000x700xbf16>
}
