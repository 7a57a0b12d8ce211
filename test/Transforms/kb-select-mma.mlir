// RUN: kb-opt %s --kb-select-mma=chip=sm_90 -split-input-file -verify-diagnostics | FileCheck %s

// Strict fp32 keeps the tensor cores idle; tf32 and tf32x3 use mma.sync.
// CHECK-LABEL: func.func @units
// CHECK: precision(ieee) {config = #kb.config<mma = "ffma">}
// CHECK: precision(tf32) {config = #kb.config<mma = "mma_sync_tf32">}
// CHECK: precision(tf32x3) {config = #kb.config<mma = "mma_sync_tf32x3">}
// A hand-set unit that keeps the precision is kept.
// CHECK: precision(tf32) {config = #kb.config<mma = "ffma">}
// Non-matmul ops get no unit.
// CHECK: kb.relu %{{.*}} : tensor<64x64xf32>
func.func @units(%a: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %0 = kb.matmul %a, %a precision(ieee) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %1 = kb.matmul %a, %a precision(tf32) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %2 = kb.matmul %a, %a precision(tf32x3) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %3 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "ffma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %4 = kb.relu %a : tensor<64x64xf32>
  return %0, %1, %2, %3, %4 : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

func.func @ieee_on_tensor_cores(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for mma "mma_sync_tf32", but precision(ieee) needs fp32 arithmetic ("ffma" or "gemv"): tensor-core tf32 would lose precision}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// wgmma exists on sm_90a only (the default chip here is sm_90).
func.func @wgmma_without_sm90a(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for mma "wgmma_tf32", which needs chip sm_90a; the target is sm_90}}
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A unit less precise than the precision: plain tf32 for a tf32x3 program.
func.func @tf32x3_on_plain_tf32(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{config asks for mma "mma_sync_tf32", but precision(tf32x3) needs the three-pass split ("mma_sync_tf32x3") or fp32 ("ffma"): "mma_sync_tf32" computes plain tf32}}
  %0 = kb.matmul %a, %a precision(tf32x3) {config = #kb.config<mma = "mma_sync_tf32">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// copy = "tma" without the wgmma kernel (fuzz/regressions/kb-compile): refused
// here, not built into a #kb.config its verifier refuses.
func.func @tma_on_ffma(%a: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  // expected-error @+1 {{config asks for copy = "tma", which only the wgmma kernel has (mma = "wgmma_tf32", chip sm_90a, precision(tf32)); this matmul gets mma = "ffma"}}
  %0 = kb.matmul %a, %a precision(ieee) {config = #kb.config<copy = "tma">} : tensor<1024x1024xf32>, tensor<1024x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
