// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// kb-lower-to-gpu alone on the 16-bit mma.sync kernel (mma =
// "mma_sync_bf16", "mma_sync_f16"; sm_80 and sm_90): every #kb.config is
// written out complete, as the decision passes chose it for sm_90, so this
// file breaks only when the lowering changes.

// bf16, row-major B: a three-stage cp.async pipeline of 16-byte chunks (8
// bf16) into rows padded by 8 elements; A's fragments by ldmatrix.x4, B's
// by ldmatrix.x4.trans straight from its [BK][BN + 8] rows; m16n8k16 bf16
// with f32 accumulators in registers; C rounded to bf16 once, at its
// store, two columns a store.
// CHECK-LABEL: func.func @bf16_row_major_b
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<128x64xbf16> {{.*}}, %{{.*}}: memref<64x128xbf16> {{.*}}, %[[C:[a-z0-9_]+]]: memref<128x128xbf16> {{.*}})
// CHECK: memref.view {{.*}} to memref<64x40xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<32x72xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1} : memref<128x64xbf16> to memref<64x40xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = true} : memref<32x72xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: scf.yield
// CHECK: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[C]]{{.*}} : memref<128x128xbf16>, vector<2xbf16>
func.func @bf16_row_major_b(%arg0: tensor<128x64xbf16>, %arg1: tensor<64x128xbf16>) -> tensor<128x128xbf16> {
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [8, 8], mma = "mma_sync_bf16", copy = "cp_async">} : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

// f16, B^T, batched, edges in M, N and K (100 x 72 x 40 on 64 x 64 x 32
// tiles): B^T's [BN][BK + 8] tile read by ldmatrix.x4 without .trans (as
// A's); chunks past M, N or K zero-filled by a byte count, no branch; f16
// operands as vector<2xf16>; f32 C stored under a range guard.
// CHECK-LABEL: func.func @f16_transposed_b_edges
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<2x100x40xf16> {{.*}}, %{{.*}}: memref<2x72x40xf16> {{.*}}, %[[C:[a-z0-9_]+]]: memref<2x100x72xf32> {{.*}})
// CHECK: memref.view {{.*}} to memref<64x40xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<64x40xf16, #gpu.address_space<workgroup>>
// CHECK: arith.minui
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: nvgpu.ldmatrix {{.*}} transpose = true
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x40xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-NOT: nvgpu.ldmatrix {{.*}} transpose = true
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK-NOT: nvgpu.ldmatrix {{.*}} transpose = true
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[C]]{{.*}} : memref<2x100x72xf32>, vector<2xf32>
func.func @f16_transposed_b_edges(%arg0: tensor<2x100x40xf16>, %arg1: tensor<2x72x40xf16>) -> tensor<2x100x72xf32> {
  %0 = kb.matmul %arg0, %arg1 transpose_b {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 2, pad = [8, 8], mma = "mma_sync_f16", copy = "cp_async">} : tensor<2x100x40xf16>, tensor<2x72x40xf16> -> tensor<2x100x72xf32>
  return %0 : tensor<2x100x72xf32>
}

// -----

// A 16-bit tile the kernel cannot read: pad of 4 elements leaves ldmatrix's
// 16-byte rows misaligned.
func.func @misaligned_pad(%arg0: tensor<128x64xbf16>, %arg1: tensor<64x128xbf16>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{16-bit mma.sync tiles need pad = [padA, padB] multiples of 8 elements (ldmatrix reads 16-byte rows); got [4, 8]}}
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [4, 8], mma = "mma_sync_bf16", copy = "cp_async">} : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

// -----

// Through registers: the 16-bit kernel copies by cp.async only.
func.func @registers_copy(%arg0: tensor<128x64xbf16>, %arg1: tensor<64x128xbf16>) -> tensor<128x128xbf16> {
  // expected-error @+1 {{16-bit mma.sync kernel runs copy = "cp_async" with at least 2 stages}}
  %0 = kb.matmul %arg0, %arg1 {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 1, pad = [8, 8], mma = "mma_sync_bf16", copy = "registers">} : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}
