// RUN: kb-opt %s --kb-promote-shared-memory=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// The gemv kernel stages nothing in shared memory: kb-promote-shared-memory
// writes its threads (a warp per warp tile, or a thread per thread tile) and
// the depth of its register pipeline (stages: 2 by default, 1 kept where
// set), no copy or pad.
// CHECK-LABEL: func.func @threads
// CHECK: #kb.config<block = [1, 4, 512], warp = [1, 1], threads = 128, stages = 2, mma = "gemv">
// CHECK: #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, stages = 2, mma = "gemv", split = 64>
// CHECK: #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, stages = 1, mma = "gemv", split = 64>
// Four rows or more: one stage (two lost 11% at 4 x 28672 x 8192, run 14).
// CHECK: #kb.config<block = [4, 4, 512], warp = [4, 1], threads = 128, stages = 1, mma = "gemv">
// k groups over a row-major B: threads = BN / TN x BK / R (8 x 64).
// CHECK: #kb.config<block = [1, 32, 512], thread = [1, 4, 8], threads = 512, stages = 2, mma = "gemv">
func.func @threads(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>, %x4: tensor<4x4096xf32>) -> (tensor<1x4096xf32>, tensor<1x4096xf32>, tensor<1x4096xf32>, tensor<4x4096xf32>, tensor<1x4096xf32>) {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %1 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], mma = "gemv", split = 64>} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %2 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], stages = 1, mma = "gemv", split = 64>} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %3 = kb.matmul %x4, %w precision(tf32) transpose_b {config = #kb.config<block = [4, 4, 512], warp = [4, 1], mma = "gemv">} : tensor<4x4096xf32>, tensor<4096x4096xf32> -> tensor<4x4096xf32>
  %4 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 32, 512], thread = [1, 4, 8], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0, %1, %2, %3, %4 : tensor<1x4096xf32>, tensor<1x4096xf32>, tensor<1x4096xf32>, tensor<4x4096xf32>, tensor<1x4096xf32>
}

// -----

// N <= 16 (A's rows the weight): the few are B's columns, so the default
// stages follow N, not M: two for 2 columns, one for 4.
// CHECK-LABEL: func.func @weight_a_stages
// CHECK: #kb.config<block = [4, 2, 512], warp = [1, 2], threads = 128, stages = 2, mma = "gemv">
// CHECK: #kb.config<block = [4, 4, 512], warp = [1, 4], threads = 128, stages = 1, mma = "gemv">
func.func @weight_a_stages(%a: tensor<4096x4096xf32>, %b2: tensor<4096x2xf32>, %b4: tensor<4096x4xf32>) -> (tensor<4096x2xf32>, tensor<4096x4xf32>) {
  %0 = kb.matmul %a, %b2 precision(tf32) {config = #kb.config<block = [4, 2, 512], warp = [1, 2], mma = "gemv">} : tensor<4096x4096xf32>, tensor<4096x2xf32> -> tensor<4096x2xf32>
  %1 = kb.matmul %a, %b4 precision(tf32) {config = #kb.config<block = [4, 4, 512], warp = [1, 4], mma = "gemv">} : tensor<4096x4096xf32>, tensor<4096x4xf32> -> tensor<4096x4xf32>
  return %0, %1 : tensor<4096x2xf32>, tensor<4096x4xf32>
}

// -----

func.func @gemv_stages(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{mma = "gemv" keeps 1 or 2 k tiles of weight loads in flight in registers: stages = 3 does not apply}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], stages = 3, mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

func.func @gemv_pad(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{mma = "gemv" reads its operands from global memory, not through shared memory: copy and pad do not apply}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], pad = [4, 4], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

func.func @gemv_threads(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{config asks for 256 threads, but its tiles take 128}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 512], warp = [1, 1], threads = 256, mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}
