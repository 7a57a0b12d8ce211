// RUN: kb-opt %s --pass-pipeline="builtin.module(func.func(kb-select-mma{chip=sm_90},kb-select-config{chip=sm_90},kb-tile{chip=sm_90},kb-promote-shared-memory{chip=sm_90}))" | FileCheck %s

// The default #kb.config of each kernel on sm_90, from the decision passes
// in --kb-compile's order: a changed default shows here as a diff. Matmul:
// ieee, tf32 and 16-bit (mma.sync m16n8k16), square and odd; softmax narrow and wide; elementwise.

// CHECK-LABEL: func.func @matmul_ieee_square
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 128, 16], thread = [8, 8], threads = 256, stages = 4, pad = [4, 0], mma = "ffma", copy = "cp_async">
// CHECK-LABEL: func.func @matmul_ieee_odd
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 8], thread = [4, 4], threads = 256, stages = 4, pad = [4, 0], mma = "ffma", copy = "cp_async">
// CHECK-LABEL: func.func @matmul_tf32_square
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 2, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async">
// CHECK-LABEL: func.func @matmul_tf32_odd
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async">
// CHECK-LABEL: func.func @softmax_narrow
// CHECK: kb.softmax {{.*}}config = #kb.config<block = [1], threads = 64, vector = 4, strategy = "registers">
// CHECK-LABEL: func.func @softmax_wide
// CHECK: kb.softmax {{.*}}config = #kb.config<block = [1], threads = 512, vector = 4, strategy = "split_global", cluster = 16>
// CHECK-LABEL: func.func @elementwise
// CHECK: kb.relu {{.*}}config = #kb.config<block = [1024], threads = 256, vector = 4>
// CHECK-LABEL: func.func @matmul_bf16_square
// CHECK: kb.matmul {{.*}}config = #kb.config<block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 3, pad = [8, 8], mma = "mma_sync_bf16", copy = "cp_async">
// CHECK-LABEL: func.func @matmul_f16_odd
// CHECK: kb.transpose {{.*}} pad(64)
// CHECK: kb.pad {{.*}} multiple(64)
// CHECK: kb.matmul {{.*}} transpose_b {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [8, 8], mma = "mma_sync_f16", copy = "cp_async">}

func.func @matmul_ieee_square(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %a precision(ieee) : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
func.func @matmul_ieee_odd(%a: tensor<1000x1500xf32>, %b: tensor<1500x700xf32>) -> tensor<1000x700xf32> {
  %0 = kb.matmul %a, %b precision(ieee) : tensor<1000x1500xf32>, tensor<1500x700xf32> -> tensor<1000x700xf32>
  return %0 : tensor<1000x700xf32>
}
func.func @matmul_tf32_square(%a: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %0 = kb.matmul %a, %a precision(tf32) : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}
func.func @matmul_tf32_odd(%a: tensor<1000x1500xf32>, %b: tensor<1500x700xf32>) -> tensor<1000x700xf32> {
  %0 = kb.matmul %a, %b precision(tf32) : tensor<1000x1500xf32>, tensor<1500x700xf32> -> tensor<1000x700xf32>
  return %0 : tensor<1000x700xf32>
}
func.func @softmax_narrow(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = kb.softmax %x : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
func.func @softmax_wide(%x: tensor<1024x400000xf32>) -> tensor<1024x400000xf32> {
  %0 = kb.softmax %x : tensor<1024x400000xf32>
  return %0 : tensor<1024x400000xf32>
}
func.func @elementwise(%x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = kb.relu %x : tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}
func.func @matmul_bf16_square(%a: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %0 = kb.matmul %a, %a : tensor<4096x4096xbf16>, tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
  return %0 : tensor<4096x4096xbf16>
}
func.func @matmul_f16_odd(%a: tensor<1000x1500xf16>, %b: tensor<1500x700xf16>) -> tensor<1000x700xf32> {
  %0 = kb.matmul %a, %b : tensor<1000x1500xf16>, tensor<1500x700xf16> -> tensor<1000x700xf32>
  return %0 : tensor<1000x700xf32>
}
