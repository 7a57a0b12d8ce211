// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on FFMA matmul kernels: every #kb.config is written out
// complete (as kb-select-mma, kb-select-config, kb-tile and
// kb-promote-shared-memory chose it), so this file breaks only when
// the lowering changes.

// FFMA matmul with stages = 2: operand tiles in dynamic shared memory,
// double-buffered (the
// first tile staged before the loop, the next one loaded to registers before
// the FFMAs and stored after them, one barrier per tile); accumulators carried
// in registers through the k loop (no store to C inside it), C written once
// after it. No tensor-core instruction. Edges are guarded (100 % 64 != 0).
// The inputs are marked read-only and unaliased, the output unaliased: a
// kernel writes only its own output buffer.
// CHECK-LABEL: func.func @matmul_ieee
// CHECK: gpu.launch_func {{.*}}dynamic_shared_memory_size
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<100x70xf32> {llvm.noalias, llvm.readonly}, %{{.*}}: memref<70x50xf32> {llvm.noalias, llvm.readonly}, %[[C:[a-z0-9_]+]]: memref<100x50xf32> {llvm.noalias})
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<8x68xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: arith.minui
// CHECK: memref.load
// CHECK: math.fma
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<8x68xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield %{{.*}}, %{{.*}}, %{{.*}}
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK-NOT: nvvm.mma.sync
func.func @matmul_ieee(%arg0: tensor<100x70xf32>, %arg1: tensor<70x50xf32>) -> tensor<100x50xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(ieee) {config = #kb.config<block = [64, 64, 8], thread = [4, 4], threads = 256, stages = 2, pad = [4, 0], mma = "ffma", copy = "registers">} : tensor<100x70xf32>, tensor<70x50xf32> -> tensor<100x50xf32>
  return %0 : tensor<100x50xf32>
}

// -----

// FFMA matmul by default (row-major B, N a multiple of 4; 128x128x16 tiles,
// none of M, N, K a multiple): four cp.async stages, three tiles in
// flight. A is transposed on the way in by 4-byte copies (A[r][k] to
// As[k][r]; a copy past M or K copies nothing and zero-fills), B moves in
// 16-byte chunks; one wait and one barrier per k tile, no register staging,
// no store to C inside the loop. The thread's A and B fragments are 16-byte
// shared loads.
// CHECK-LABEL: func.func @matmul_ieee_async
// CHECK: gpu.func @{{.*}}(%[[A:[a-z0-9_]+]]: memref<1500x72xf32> {{.*}}, %[[B:[a-z0-9_]+]]: memref<72x1500xf32> {{.*}}, %[[C:[a-z0-9_]+]]: memref<1500x1500xf32> {{.*}})
// CHECK: nvgpu.device_async_copy %[[A]][{{.*}}], %{{.*}}[{{.*}}], 1, %{{.*}} : memref<1500x72xf32> to memref<16x132xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[B]][{{.*}}], %{{.*}}[{{.*}}], 4, %{{.*}} {bypassL1} : memref<72x1500xf32> to memref<16x128xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 2 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: vector.load %{{.*}} : memref<16x132xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK: math.fma
// CHECK: scf.yield
// CHECK: memref.store %{{.*}}, %[[C]]
func.func @matmul_ieee_async(%arg0: tensor<1500x72xf32>, %arg1: tensor<72x1500xf32>) -> tensor<1500x1500xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(ieee) {config = #kb.config<block = [128, 128, 16], thread = [8, 8], threads = 256, stages = 4, pad = [4, 0], mma = "ffma", copy = "cp_async">} : tensor<1500x72xf32>, tensor<72x1500xf32> -> tensor<1500x1500xf32>
  return %0 : tensor<1500x1500xf32>
}

// -----

// The FFMA micro-kernel's order: the thread's rows one after the other,
// every other row backwards, so that consecutive FMAs share an A value and,
// where the row changes, a B value too. 4096^3 went from 0.943x to 0.973x
// cuBLAS fp32 with this order alone (2026-11-30 run 46; ptxas: 127 -> 119
// registers). A row-major order (row 1 forwards) fails here.
// CHECK-LABEL: func.func @matmul_ffma_order
// CHECK: %[[VA:.*]] = vector.load %{{.*}} : memref<8x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: %[[A0:.*]] = vector.extract %[[VA]][0]
// CHECK-NEXT: %[[A1:.*]] = vector.extract %[[VA]][1]
// CHECK: %[[VB:.*]] = vector.load %{{.*}} : memref<8x64xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: %[[B0:.*]] = vector.extract %[[VB]][0]
// CHECK-NEXT: %[[B1:.*]] = vector.extract %[[VB]][1]
// CHECK-NEXT: %[[B2:.*]] = vector.extract %[[VB]][2]
// CHECK-NEXT: %[[B3:.*]] = vector.extract %[[VB]][3]
// CHECK-NEXT: math.fma %[[A0]], %[[B0]]
// CHECK-NEXT: math.fma %[[A0]], %[[B1]]
// CHECK-NEXT: math.fma %[[A0]], %[[B2]]
// CHECK-NEXT: math.fma %[[A0]], %[[B3]]
// CHECK-NEXT: math.fma %[[A1]], %[[B3]]
// CHECK-NEXT: math.fma %[[A1]], %[[B2]]
// CHECK-NEXT: math.fma %[[A1]], %[[B1]]
// CHECK-NEXT: math.fma %[[A1]], %[[B0]]
func.func @matmul_ffma_order(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(ieee) {config = #kb.config<block = [64, 64, 8], thread = [4, 4], threads = 256, stages = 3, pad = [4, 0], mma = "ffma", copy = "cp_async">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
