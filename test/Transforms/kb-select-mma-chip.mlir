// RUN: kb-opt %s --kb-select-mma=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SM90A
// RUN: kb-opt %s --kb-select-mma=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SM90

// kb-select-mma alone: the unit follows the precision and the chip. On
// sm_90a a tf32 matmul goes to wgmma, which reads its row-major B as it is
// (N % 4 == 0; with N % 4 != 0 a kb.transpose goes in front); on sm_90 to
// mma.sync, B as it is.
// SM90A-LABEL: func.func @tf32
// SM90A-NOT: kb.transpose
// SM90A: kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<mma = "wgmma_tf32">}
// SM90-LABEL: func.func @tf32
// SM90-NOT: kb.transpose
// SM90: kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">}
func.func @tf32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

// -----

func.func @wgmma_ieee(%a: tensor<128x64xf32>) -> tensor<128x128xf32> {
  // expected-error @+1 {{config asks for mma "wgmma_tf32", but precision(ieee) needs fp32 arithmetic ("ffma" or "gemv"): tensor-core tf32 would lose precision}}
  %0 = kb.matmul %a, %a precision(ieee) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<128x64xf32>, tensor<128x64xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}
