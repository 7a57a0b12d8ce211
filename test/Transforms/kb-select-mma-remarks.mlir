// RUN: kb-opt %s --kb-select-mma=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s --check-prefix=SM90A

// Where a tf32 matmul on sm_90a does not get wgmma, kb-select-mma says why
// in a remark (a silent fallback once cost a user 4x).

// A matmul bound by its bytes (32 rows times a matrix; a small one) whose
// row-major B wgmma cannot read as it is (N % 4 != 0) keeps mma.sync on
// sm_90a: the transpose wgmma needs would move B twice more. With N % 4 ==
// 0 wgmma reads B as it is (no transpose, no remark).
// SM90A-LABEL: func.func @bytes_bound
// SM90A-NOT: kb.transpose
// SM90A: config = #kb.config<mma = "mma_sync_tf32">
// SM90A: config = #kb.config<mma = "mma_sync_tf32">
// SM90A: config = #kb.config<mma = "wgmma_tf32">
func.func @bytes_bound(%x: tensor<32x4096xf32>, %w: tensor<4096x4094xf32>, %a: tensor<128x64xf32>, %b: tensor<64x126xf32>, %w4: tensor<4096x4096xf32>) -> (tensor<32x4094xf32>, tensor<128x126xf32>, tensor<32x4096xf32>) {
  // expected-remark @+1 {{mma.sync, not wgmma: this matmul is bound by its bytes, and the transpose a row-major B needs for wgmma would move B twice more}}
  %0 = kb.matmul %x, %w precision(tf32) : tensor<32x4096xf32>, tensor<4096x4094xf32> -> tensor<32x4094xf32>
  // expected-remark @+1 {{bound by its bytes}}
  %1 = kb.matmul %a, %b precision(tf32) : tensor<128x64xf32>, tensor<64x126xf32> -> tensor<128x126xf32>
  %2 = kb.matmul %x, %w4 precision(tf32) : tensor<32x4096xf32>, tensor<4096x4096xf32> -> tensor<32x4096xf32>
  return %0, %1, %2 : tensor<32x4094xf32>, tensor<128x126xf32>, tensor<32x4096xf32>
}

// -----
// K not a multiple of 4 on a small matmul: the pad of A and the transpose
// of B that wgmma would need cost more than it saves, mma.sync.
// SM90A-LABEL: func.func @odd_k
// SM90A-NOT: kb.pad
// SM90A: config = #kb.config<mma = "mma_sync_tf32">
func.func @odd_k(%a: tensor<128x30xf32>, %b: tensor<30x128xf32>) -> tensor<128x128xf32> {
  // expected-remark @+1 {{mma.sync, not wgmma: this matmul is bound by its bytes, and the pad of A's rows (K = 30 is not a multiple of 4) and the transpose of B that wgmma needs would move more than it saves (kb-select-mma's model)}}
  %0 = kb.matmul %a, %b precision(tf32) : tensor<128x30xf32>, tensor<30x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}


// -----

// Negative: nn.Linear's layout (B transposed, K-major) needs no transpose:
// wgmma, and no remark, however few the rows (above 16: at most 16 rows
// get gemv, kb-select-mma-gemv.mlir).
// SM90A-LABEL: func.func @linear_decode
// SM90A-NOT: kb.transpose
// SM90A: config = #kb.config<mma = "wgmma_tf32">
func.func @linear_decode(%x: tensor<32x4096xf32>, %w: tensor<11008x4096xf32>) -> tensor<32x11008xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b : tensor<32x4096xf32>, tensor<11008x4096xf32> -> tensor<32x11008xf32>
  return %0 : tensor<32x11008xf32>
}
