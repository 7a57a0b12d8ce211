// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// The operands a wgmma matmul reads once (MatmulWgmmaRules.cpp,
// readOnceOperands): B where the output has one row of tiles, A where it has
// one column, each only where it is at least three quarters of the bytes
// moved (A + B + C) and at most 256 MiB. Their TMA copies carry an L2
// evict-first policy (createpolicy, made once); the other operand's copies
// none.

// Skinny, B^T: 16 rows in one row of 64-row tiles; B is 8 MB of 8.4.
// CHECK-LABEL: func.func @skinny_b
// CHECK-LABEL: gpu.func @k0_matmul
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK-NOT: createpolicy
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK-NEXT: arith.addi
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] l2_cache_hint = %{{.*}} :
func.func @skinny_b(%a: tensor<16x512xf32>, %b: tensor<4096x512xf32>) -> tensor<16x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<16x512xf32>, tensor<4096x512xf32> -> tensor<16x4096xf32>
  return %0 : tensor<16x4096xf32>
}

// -----

// A row-major B of 8 columns: one column of tiles, A (8 MB) read once.
// CHECK-LABEL: func.func @one_column_a
// CHECK-LABEL: gpu.func @k0_matmul
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK-NOT: createpolicy
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}] l2_cache_hint = %{{.*}} :
// CHECK-NOT: l2_cache_hint
func.func @one_column_a(%a: tensor<4096x512xf32>, %b: tensor<512x8xf32>) -> tensor<4096x8xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], threads = 256, stages = 5, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<4096x512xf32>, tensor<512x8xf32> -> tensor<4096x8xf32>
  return %0 : tensor<4096x8xf32>
}

// -----

// Two rows of tiles: each B tile is read by two blocks; no policy.
// CHECK-LABEL: func.func @two_rows
// CHECK-LABEL: gpu.func @k0_matmul
// CHECK-NOT: createpolicy
// CHECK-NOT: l2_cache_hint
func.func @two_rows(%a: tensor<128x512xf32>, %b: tensor<4096x512xf32>) -> tensor<128x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<128x512xf32>, tensor<4096x512xf32> -> tensor<128x4096xf32>
  return %0 : tensor<128x4096xf32>
}

// -----

// One tile, A and B the same size: neither is three quarters of the bytes
// (measured 0.7-1.0% slower with the policy on such long-K shapes).
// CHECK-LABEL: func.func @half_the_bytes
// CHECK-LABEL: gpu.func @k0_matmul
// CHECK-NOT: createpolicy
// CHECK-NOT: l2_cache_hint
func.func @half_the_bytes(%a: tensor<128x16384xf32>, %b: tensor<128x16384xf32>) -> tensor<128x128xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<128x16384xf32>, tensor<128x16384xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// A weight just over 256 MiB (16384 x 4100 floats, 256.25 MiB): plain copies.
// CHECK-LABEL: func.func @over_the_cap
// CHECK-LABEL: gpu.func @k0_matmul
// CHECK-NOT: createpolicy
// CHECK-NOT: l2_cache_hint
func.func @over_the_cap(%a: tensor<16x4100xf32>, %b: tensor<16384x4100xf32>) -> tensor<16x16384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma">} : tensor<16x4100xf32>, tensor<16384x4100xf32> -> tensor<16x16384xf32>
  return %0 : tensor<16x16384xf32>
}

// -----

// Split-K writes its partial products: 16 chunks of 16 x 4096 (4 MB)
// against B's 8 MB, so B is 2/3 of the bytes moved: no policy (as one
// output it would be 97%).
// CHECK-LABEL: func.func @split_partials
// CHECK-LABEL: gpu.func @k0_matmul
// CHECK-NOT: createpolicy
// CHECK-NOT: l2_cache_hint
func.func @split_partials(%a: tensor<16x512xf32>, %b: tensor<4096x512xf32>) -> tensor<16x16x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 128, 32], threads = 160, stages = 4, pad = [0, 0], mma = "wgmma_tf32", copy = "tma", split = 16>, split_chunk = 32 : i64} : tensor<16x512xf32>, tensor<4096x512xf32> -> tensor<16x16x4096xf32>
  return %0 : tensor<16x16x4096xf32>
}
