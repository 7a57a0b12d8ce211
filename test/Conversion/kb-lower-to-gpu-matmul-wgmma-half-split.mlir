// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// A 16-bit split-K matmul (kb-split-k's output, pinned): the bf16 wgmma
// kernel writes its chunk's f32 partial into the S x M x N workspace (block
// z the chunk: its first k tile z x 64, in elements for the TMA copies),
// and the kb.split_sum kernel adds the partials in f32 and rounds once, at
// its bf16 store.
// CHECK-LABEL: func.func @split
// CHECK: %[[P:.*]] = memref.alloc() {kb.name = "t0"} : memref<2x1024x1024xf32>
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c8{{.*}}, %c8{{.*}}, %c2{{.*}}) {{.*}}%[[P]] : memref<2x1024x1024xf32>)
// CHECK: gpu.launch_func @k1_split_sum_module::@k1_split_sum {{.*}}args(%[[P]] : memref<2x1024x1024xf32>, %arg2 : memref<1024x1024xbf16>)
// CHECK: gpu.func @k0_matmul
// CHECK: gpu.block_id  z
// CHECK: arith.muli %{{.*}}, %c64 : index
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: vector.store %{{.*}}, %arg4[{{.*}}] {alignment = 8 : i64} : memref<2x1024x1024xf32>, vector<2xf32>
// CHECK: gpu.func @k1_split_sum
// CHECK: %[[X0:.*]] = vector.load {{.*}} : memref<2097152xf32>, vector<4xf32>
// CHECK: %[[X1:.*]] = vector.load {{.*}} : memref<2097152xf32>, vector<4xf32>
// CHECK: arith.addf %[[X0]], %[[X1]] : vector<4xf32>
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: vector.store %[[R]], %{{.*}} : memref<1048576xbf16>, vector<4xbf16>
func.func @split(%arg0: tensor<1024x8192xbf16>, %arg1: tensor<1024x8192xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_bf16", copy = "tma", split = 2>, split_chunk = 4096 : i64} : tensor<1024x8192xbf16>, tensor<1024x8192xbf16> -> tensor<2x1024x1024xf32>
  %1 = kb.split_sum %0 {config = #kb.config<block = [1024], threads = 256, vector = 4>} : tensor<2x1024x1024xf32> -> tensor<1024x1024xbf16>
  return %1 : tensor<1024x1024xbf16>
}

// -----

// Stream-K of a 16-bit matmul (12 output tiles over 8 blocks: one round,
// the 4 tiles left in 2 chunks each): the chunks' partials in f32 through
// the workspace, chunk 0 adding them before its bf16 store.
// CHECK-LABEL: func.func @stream
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c8, %c1{{.*}}, %c1{{.*}}) {{.*}}: memref<65568xi32>, %arg2 : memref<512x384xbf16>)
// CHECK: gpu.func @k0_matmul
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: llvm.inline_asm has_side_effects "ld.acquire.gpu.global.u32 $0, [$1];"
// CHECK: %[[W:.*]] = memref.load %arg4[%{{.*}}] : memref<65568xi32>
// CHECK-NEXT: %[[P:.*]] = arith.bitcast %[[W]] : i32 to f32
// CHECK: arith.addf %{{.*}}, %[[P]] : f32
// CHECK: vector.store %{{.*}}, %arg5[%{{.*}}] {alignment = 4 : i64} : memref<512x384xbf16>, vector<2xbf16>
// CHECK: } else {
// CHECK: %[[X:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: memref.store %[[X]], %arg4[%{{.*}}] : memref<65568xi32>
func.func @stream(%a: tensor<512x512xbf16>, %b: tensor<384x512xbf16>) -> tensor<512x384xbf16> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 5, pad = [0, 0], mma = "wgmma_bf16", grid = 8, copy = "tma", reduce = "stream">} : tensor<512x512xbf16>, tensor<384x512xbf16> -> tensor<512x384xbf16>
  return %0 : tensor<512x384xbf16>
}

// -----

// The cluster reduce has no 16-bit form yet (block 1's raw partial would
// pass through C, in 16 bits).
func.func @cluster_reduce(%arg0: tensor<256x512xbf16>, %arg1: tensor<128x512xbf16>) -> tensor<256x128xbf16> {
  // expected-error @+1 {{wgmma_bf16 needs no cluster reduce (split = S summed by kb.split_sum, or reduce = "stream", does) so far}}
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [128, 64, 64], threads = 288, stages = 4, pad = [0, 0], mma = "wgmma_bf16", copy = "tma", split = 2, reduce = "cluster">} : tensor<256x512xbf16>, tensor<128x512xbf16> -> tensor<256x128xbf16>
  return %0 : tensor<256x128xbf16>
}
