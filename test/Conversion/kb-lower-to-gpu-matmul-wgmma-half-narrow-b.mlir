// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// A 16-bit row-major B read MN-major with BN not a multiple of 64: B's
// tile in boxes of 64 k rows x the widest of 32 or 16 columns that divides
// BN (wgmmaMnBoxCols), its tensor map swizzled by as many bytes (64 or 32,
// the map's `swizzle`; a 128-byte map names none), the wgmma descriptor's
// leading byte offset one box, its stride byte offset 8 rows of the box,
// its swizzle mode 2 (64B) or 3 (32B) in bits 62-63 (MatmulWgmmaMma.cpp,
// descriptor).

// 64 x 80 (cuBLAS's nvjet tile on 768 x 768 x 2048): five boxes of 16
// columns (2 KB each) after the A tile (8 KB); 18432 bytes a stage. The B
// descriptor: low word | 2048 >> 4 << 16 (8388608), high word 0xC0000010
// (-1073741808: mode 3, 256 bytes >> 4); A's as ever (0x40000040).
// CHECK-LABEL: func.func @narrow80
// CHECK: kb.tensor_map = {box = [64, 64], dims = [768, 2048], of = "arg0"}}
// CHECK: kb.tensor_map = {box = [64, 16], dims = [2048, 768], of = "arg1", swizzle = 32 : i64}}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c10{{.*}}, %c12{{.*}}, %c1{{.*}}) threads in (%c160
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK-COUNT-5: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: %[[A:.*]] = llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %{{.*}}, %c1073741888_i32
// CHECK: %[[LOW:.*]] = arith.ori %{{.*}}, %c8388608_i32 : i32
// CHECK-NEXT: %[[B:.*]] = llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOW]], %c-1073741808_i32
// CHECK-NEXT: nvvm.wgmma.mma_async %[[A]], %[[B]], %{{.*}}, <m = 64, n = 80, k = 16>, {{.*}} B[<bf16>, <one>, <row>]
func.func @narrow80(%arg0: tensor<768x2048xbf16>, %arg1: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 80, 64], threads = 160, stages = 8, mma = "wgmma_bf16", copy = "tma">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// 64 x 96 over N = 704 (7 whole column tiles and an edge of 32: the last
// tile's other two boxes lie past N, zero-filled by TMA): three boxes of 32
// columns (4 KB), 64-byte swizzled; 20480 bytes a stage. Low word | 4096 >>
// 4 << 16 (16777216), high word 0x80000020 (-2147483616: mode 2, 512 bytes
// >> 4).
// CHECK-LABEL: func.func @narrow96
// CHECK: kb.tensor_map = {box = [64, 32], dims = [1504, 704], of = "arg1", swizzle = 64 : i64}}
// CHECK: gpu.launch_func @k0_matmul_module::@k0_matmul blocks in (%c8{{.*}}, %c16{{.*}}, %c1{{.*}}) threads in (%c160
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c20480_i32
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, box[%{{.*}}, %{{.*}}] :
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: %[[LOW:.*]] = arith.ori %{{.*}}, %c16777216_i32 : i32
// CHECK-NEXT: %[[B:.*]] = llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOW]], %c-2147483616_i32
// CHECK-NEXT: nvvm.wgmma.mma_async %{{.*}}, %[[B]], %{{.*}}, <m = 64, n = 96, k = 16>
func.func @narrow96(%arg0: tensor<1024x1504xbf16>, %arg1: tensor<1504x704xbf16>) -> tensor<1024x704xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 96, 64], threads = 160, stages = 7, mma = "wgmma_bf16", copy = "tma">} : tensor<1024x1504xbf16>, tensor<1504x704xbf16> -> tensor<1024x704xbf16>
  return %0 : tensor<1024x704xbf16>
}

// -----

// BN = 192, a multiple of 64: three 128-byte boxes as before (no swizzle
// named; the 128-byte descriptor's 8192 >> 4 << 16 and 0x40000040).
// CHECK-LABEL: func.func @wide192
// CHECK: kb.tensor_map = {box = [64, 64], dims = [512, 768], of = "arg1"}}
// CHECK: %[[LOW:.*]] = arith.ori %{{.*}}, %c33554432_i32 : i32
// CHECK-NEXT: %[[B:.*]] = llvm.inline_asm "mov.b64 $0, {$1, $2};", "=l,r,r" %[[LOW]], %c1073741888_i32
// CHECK-NEXT: nvvm.wgmma.mma_async %{{.*}}, %[[B]], %{{.*}}, <m = 64, n = 192, k = 16>
func.func @wide192(%arg0: tensor<256x512xf16>, %arg1: tensor<512x768xf16>) -> tensor<256x768xf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 192, 64], threads = 160, stages = 4, mma = "wgmma_f16", copy = "tma">} : tensor<256x512xf16>, tensor<512x768xf16> -> tensor<256x768xf16>
  return %0 : tensor<256x768xf16>
}

// -----

// BN = 72: no box of 16, 32 or 64 columns divides it; refused.
func.func @narrow72(%arg0: tensor<768x2048xbf16>, %arg1: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{wgmma_bf16 needs BN a multiple of 16 and N a multiple of 8 with a row-major B so far}}
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 72, 64], threads = 160, stages = 8, mma = "wgmma_bf16", copy = "tma">} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}
