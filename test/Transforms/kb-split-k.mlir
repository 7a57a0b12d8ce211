// RUN: kb-opt %s --kb-split-k -split-input-file -verify-diagnostics | FileCheck %s

// kb-split-k materialises `split = S`: the partial products (a kb.matmul
// with split_chunk, S x M x N) and their ordered sum, which takes the
// matmul's epilogue; the sum gets the elementwise kernel's config, with
// fewer threads (down to 64), then a narrower vector, then 32 threads while
// its grid has fewer than 256 blocks.

// CHECK-LABEL: func.func @plain
// CHECK: %[[P:.*]] = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 64, 32]{{.*}}split = 8>, split_chunk = 32768 : i64} : tensor<256x262144xf32>, tensor<262144x256xf32> -> tensor<8x256x256xf32>
// 65536 elements: 64 threads of vector 4 make 256 blocks.
// CHECK: %[[S:.*]] = kb.split_sum %[[P]] {config = #kb.config<block = [256], threads = 64, vector = 4>} : tensor<8x256x256xf32> -> tensor<256x256xf32>
// CHECK: return %[[S]]
func.func @plain(%a: tensor<256x262144xf32>, %b: tensor<262144x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], threads = 128, stages = 4, mma = "wgmma_tf32", copy = "tma", split = 8>} : tensor<256x262144xf32>, tensor<262144x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A fused epilogue moves after the sum; the fusion keeps only the inputs
// the epilogue reads (the bias), after the partials.
// CHECK-LABEL: func.func @epilogue
// CHECK: %[[P:.*]] = kb.matmul %arg0, %arg1 precision(ieee) {{.*}}split_chunk = 1024 : i64{{.*}} -> tensor<4x256x512xf32>
// CHECK: kb.fusion ins(%[[P]], %arg2 : tensor<4x256x512xf32>, tensor<512xf32>) attributes {config = #kb.config<block = [512], threads = 128, vector = 4>}
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4x256x512xf32>, %[[B:.*]]: tensor<512xf32>):
// CHECK-NEXT: %[[S:.*]] = kb.split_sum %[[X]]
// CHECK-NEXT: kb.bias_add %[[S]], %[[B]]
// CHECK-NEXT: kb.gelu
func.func @epilogue(%a: tensor<256x4096xf32>, %b: tensor<4096x512xf32>, %bias: tensor<512xf32>) -> tensor<256x512xf32> {
  %0 = kb.fusion ins(%a, %b, %bias : tensor<256x4096xf32>, tensor<4096x512xf32>, tensor<512xf32>) attributes {config = #kb.config<block = [64, 64, 8], thread = [4, 4], threads = 256, stages = 1, mma = "ffma", split = 4>} {
  ^bb0(%x: tensor<256x4096xf32>, %y: tensor<4096x512xf32>, %v: tensor<512xf32>):
    %1 = kb.matmul %x, %y precision(ieee) : tensor<256x4096xf32>, tensor<4096x512xf32> -> tensor<256x512xf32>
    %2 = kb.bias_add %1, %v : tensor<256x512xf32>, tensor<512xf32> -> tensor<256x512xf32>
    %3 = kb.gelu %2 approx(tanh) : tensor<256x512xf32>
    kb.yield %3 : tensor<256x512xf32>
  } -> tensor<256x512xf32>
  return %0 : tensor<256x512xf32>
}

// -----

// A large output keeps the defaults (4096 blocks of 256 threads, vector 4).
// CHECK-LABEL: func.func @large_output
// CHECK: kb.split_sum %{{.*}} {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<2x2048x2048xf32>
func.func @large_output(%a: tensor<2048x8192xf32>, %b: tensor<8192x2048xf32>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 128, 32], threads = 384, stages = 4, mma = "wgmma_tf32", copy = "tma", split = 2>} : tensor<2048x8192xf32>, tensor<8192x2048xf32> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

// -----

// A matrix-vector product's 4096 outputs over 64 partials: 32 threads of
// one float, 128 blocks (the defaults made 4 blocks).
// CHECK-LABEL: func.func @small_output
// CHECK: kb.split_sum %{{.*}} {config = #kb.config<block = [32], threads = 32, vector = 1>} : tensor<64x1x4096xf32> -> tensor<1x4096xf32>
func.func @small_output(%a: tensor<1x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], threads = 128, mma = "gemv", split = 64>} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

// No split field (or split = 1): nothing changes.
// CHECK-LABEL: func.func @unsplit
// CHECK-NOT: split_sum
func.func @unsplit(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], mma = "wgmma_tf32", split = 1>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @no_tile(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config split = 4 needs the block tile: run kb-tile first}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", split = 4>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A split that does not divide the k tiles: chunks of ceil(128 / 5) = 26
// k tiles (832 of K), the last of 24.
// CHECK-LABEL: func.func @uneven
// CHECK: split_chunk = 832 : i64{{.*}} -> tensor<5x256x256xf32>
func.func @uneven(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], mma = "wgmma_tf32", split = 5>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @empty_chunk(%a: tensor<256x320xf32>, %b: tensor<320x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config split = 6 leaves a chunk of the 10 k tiles (K = 320, BK = 32) empty}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [64, 64, 32], mma = "wgmma_tf32", split = 6>} : tensor<256x320xf32>, tensor<320x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// reduce = "cluster": the wgmma kernel sums the two chunks itself; the
// matmul stays whole (no split_chunk, no kb.split_sum).
// CHECK-LABEL: func.func @reduce_in_cluster
// CHECK: %[[C:.*]] = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<{{.*}}split = 2, reduce = "cluster">} : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
// CHECK-NOT: split_sum
// CHECK: return %[[C]]
func.func @reduce_in_cluster(%a: tensor<1024x1504xf32>, %b: tensor<1504x704xf32>) -> tensor<1024x704xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [128, 128, 32], threads = 384, stages = 5, mma = "wgmma_tf32", copy = "tma", split = 2, reduce = "cluster">} : tensor<1024x1504xf32>, tensor<1504x704xf32> -> tensor<1024x704xf32>
  return %0 : tensor<1024x704xf32>
}

// -----

// A 16-bit matmul's partials are f32 (it accumulates in f32); kb.split_sum
// rounds once, at its bf16 store, after the epilogue moved behind it.
// CHECK-LABEL: func.func @bf16
// CHECK: %[[P:.*]] = kb.matmul %arg0, %arg1 {config = #kb.config<block = [128, 128, 64]{{.*}}split = 2>, split_chunk = 4096 : i64} : tensor<1024x8192xbf16>, tensor<8192x1024xbf16> -> tensor<2x1024x1024xf32>
// CHECK: kb.fusion ins(%[[P]], %arg2 : tensor<2x1024x1024xf32>, tensor<1024xbf16>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x1024x1024xf32>, %[[B:.*]]: tensor<1024xbf16>):
// CHECK-NEXT: %[[S:.*]] = kb.split_sum %[[X]] : tensor<2x1024x1024xf32> -> tensor<1024x1024xbf16>
// CHECK-NEXT: kb.bias_add %[[S]], %[[B]]
func.func @bf16(%a: tensor<1024x8192xbf16>, %b: tensor<8192x1024xbf16>, %bias: tensor<1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kb.fusion ins(%a, %b, %bias : tensor<1024x8192xbf16>, tensor<8192x1024xbf16>, tensor<1024xbf16>) attributes {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 4, mma = "wgmma_bf16", copy = "tma", split = 2>} {
  ^bb0(%x: tensor<1024x8192xbf16>, %w: tensor<8192x1024xbf16>, %c: tensor<1024xbf16>):
    %1 = kb.matmul %x, %w : tensor<1024x8192xbf16>, tensor<8192x1024xbf16> -> tensor<1024x1024xbf16>
    %2 = kb.bias_add %1, %c : tensor<1024x1024xbf16>, tensor<1024xbf16> -> tensor<1024x1024xbf16>
    kb.yield %2 : tensor<1024x1024xbf16>
  } -> tensor<1024x1024xbf16>
  return %0 : tensor<1024x1024xbf16>
}
