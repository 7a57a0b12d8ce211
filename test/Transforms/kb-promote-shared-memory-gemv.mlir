// RUN: kb-opt %s --kb-promote-shared-memory=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// The gemv kernel stages nothing: kb-promote-shared-memory writes only its
// threads (a warp per warp tile, or a thread per thread tile), no copy,
// stages or pad.
// CHECK-LABEL: func.func @threads
// CHECK: #kb.config<block = [1, 4, 512], warp = [1, 1], threads = 128, mma = "gemv">
// CHECK: #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, mma = "gemv", split = 64>
func.func @threads(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> (tensor<1x4096xf32>, tensor<1x4096xf32>) {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %1 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], mma = "gemv", split = 64>} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0, %1 : tensor<1x4096xf32>, tensor<1x4096xf32>
}

// -----

func.func @gemv_stages(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{mma = "gemv" reads its operands from global memory, not through shared memory: copy, stages and pad do not apply}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], stages = 2, mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

func.func @gemv_threads(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{config asks for 256 threads, but its tiles take 128}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], threads = 256, mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}
