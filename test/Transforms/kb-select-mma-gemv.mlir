// RUN: kb-opt %s --kb-select-mma=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// A matmul with at most 4 rows, or one column (batch 1), gets mma = "gemv"
// at every precision by default: fp32 FMAs streaming the weight, bound by
// its bytes (docs/shapes.md, "Precision where it buys nothing"). On sm_90a
// a tf32 one says so in a remark (it is not wgmma), and no kb.transpose is
// inserted. 5 to 16 rows, or 2 to 16 columns, take gemv only by hand: the
// H200 measured wgmma faster there (SelectMma.cpp, gemvByDefault).
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT: kb.transpose
// CHECK: precision(tf32) transpose_b {config = #kb.config<mma = "gemv">}
// CHECK: precision(tf32) {config = #kb.config<mma = "gemv">}
// CHECK: precision(ieee) {config = #kb.config<mma = "gemv">}
// CHECK: precision(tf32x3) {config = #kb.config<mma = "gemv">}
// CHECK: precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">}
// CHECK: precision(tf32) {config = #kb.config<mma = "wgmma_tf32">}
func.func @few_rows(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>, %a: tensor<8192x8192xf32>, %v: tensor<8192x1xf32>, %b: tensor<4x64xf32>, %c: tensor<64x300xf32>, %x8: tensor<8x4096xf32>, %v8: tensor<8192x8xf32>) -> (tensor<1x4096xf32>, tensor<8192x1xf32>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<8x4096xf32>, tensor<8192x8xf32>) {
  // expected-remark @+1 {{gemv, not wgmma: 1 x 4096 outputs are bound by the weight's bytes; fp32 FMAs stream it}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  // expected-remark @+1 {{gemv, not wgmma: 8192 x 1 outputs}}
  %1 = kb.matmul %a, %v precision(tf32) : tensor<8192x8192xf32>, tensor<8192x1xf32> -> tensor<8192x1xf32>
  %2 = kb.matmul %b, %c precision(ieee) : tensor<4x64xf32>, tensor<64x300xf32> -> tensor<4x300xf32>
  %3 = kb.matmul %b, %c precision(tf32x3) : tensor<4x64xf32>, tensor<64x300xf32> -> tensor<4x300xf32>
  %4 = kb.matmul %x8, %w precision(tf32) transpose_b : tensor<8x4096xf32>, tensor<4096x4096xf32> -> tensor<8x4096xf32>
  %5 = kb.matmul %a, %v8 precision(tf32) : tensor<8192x8192xf32>, tensor<8192x8xf32> -> tensor<8192x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x4096xf32>, tensor<8192x1xf32>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<8x4096xf32>, tensor<8192x8xf32>
}

// -----

// 17 rows and columns, or a batch: the tiled kernels.
// CHECK-LABEL: func.func @not_few
// CHECK-NOT: "gemv"
// CHECK: return
func.func @not_few(%a: tensor<17x64xf32>, %b: tensor<64x17xf32>, %x: tensor<8x1x64xf32>, %w: tensor<8x64x64xf32>) -> (tensor<17x17xf32>, tensor<8x1x64xf32>) {
  %0 = kb.matmul %a, %b precision(ieee) : tensor<17x64xf32>, tensor<64x17xf32> -> tensor<17x17xf32>
  %1 = kb.matmul %x, %w precision(ieee) : tensor<8x1x64xf32>, tensor<8x64x64xf32> -> tensor<8x1x64xf32>
  return %0, %1 : tensor<17x17xf32>, tensor<8x1x64xf32>
}

// -----

// A hand-set gemv is kept where it fits (here against the unit the
// precision would give elsewhere)...
// CHECK-LABEL: func.func @hand_set
// CHECK: {config = #kb.config<mma = "gemv", split = 2>}
func.func @hand_set(%x: tensor<4x512xf32>, %w: tensor<512x512xf32>) -> tensor<4x512xf32> {
  %0 = kb.matmul %x, %w precision(tf32) {config = #kb.config<mma = "gemv", split = 2>} : tensor<4x512xf32>, tensor<512x512xf32> -> tensor<4x512xf32>
  return %0 : tensor<4x512xf32>
}

// -----

// ...and refused on a shape it cannot take.
func.func @gemv_too_many_rows(%a: tensor<32x64xf32>, %b: tensor<64x32xf32>) -> tensor<32x32xf32> {
  // expected-error @+1 {{config asks for mma "gemv", which computes matmuls of batch 1 with at most 16 rows or columns; this one is 32 x 32}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "gemv">} : tensor<32x64xf32>, tensor<64x32xf32> -> tensor<32x32xf32>
  return %0 : tensor<32x32xf32>
}

// -----

func.func @gemv_batched(%x: tensor<8x1x64xf32>, %w: tensor<8x64x64xf32>) -> tensor<8x1x64xf32> {
  // expected-error @+1 {{config asks for mma "gemv", which computes matmuls of batch 1 with at most 16 rows or columns; this one is batched}}
  %0 = kb.matmul %x, %w precision(ieee) {config = #kb.config<mma = "gemv">} : tensor<8x1x64xf32>, tensor<8x64x64xf32> -> tensor<8x1x64xf32>
  return %0 : tensor<8x1x64xf32>
}
