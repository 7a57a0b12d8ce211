// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on mma.sync matmul kernels: every #kb.config is written out
// complete (as kb-select-mma, kb-select-config, kb-tile and
// kb-promote-shared-memory chose it), so this file breaks only when
// the lowering changes.

// TF32 matmul: a three-stage cp.async pipeline (two tiles in flight, 16-byte
// copies, one empty-or-not group committed per iteration); operands rounded to
// tf32 and multiplied on the tensor cores with m16n8k8 fragments;
// accumulators stay in registers.
// CHECK-LABEL: func.func @matmul_tf32
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<128x64xf32> {{.*}}, %{{.*}}: memref<64x128xf32> {{.*}}, %[[C:[a-z0-9_]+]]: memref<128x128xf32> {{.*}})
// CHECK: memref.view {{.*}} to memref<64x36xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<32x72xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 4, %{{.*}} {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for {{.*}} iter_args
// CHECK-NOT: memref.store %{{.*}}, %[[C]]
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.ldmatrix %{{.*}} {numTiles = 4 : i32, transpose = false} : memref<64x36xf32, #gpu.address_space<workgroup>> -> vector<4x1xf32>
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.addi %{{.*}}, %c4096_i32 : i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK: scf.yield
// Two consecutive columns of the fragment per 8-byte store.
// CHECK: vector.store %{{.*}}, %[[C]]{{.*}} : memref<128x128xf32>, vector<2xf32>
func.func @matmul_tf32(%arg0: tensor<128x64xf32>, %arg1: tensor<64x128xf32>) -> tensor<128x128xf32> {
  %0 = kb.matmul %arg0, %arg1 precision(tf32) {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async">} : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// A matmul with a fused epilogue: every accumulator of the thread goes
// through bias + GELU first (the bias index clamped into range, no branch),
// each value pinned there by an empty asm statement; only then the stores,
// each under its range guard (1000 % 64 != 0).
// CHECK-LABEL: func.func @matmul_epilogue
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<1000x64xf32> {{.*}}, %{{.*}}: memref<64x96xf32> {{.*}}, %[[BIAS:[a-z0-9_]+]]: memref<96xf32> {{.*}}, %[[C:[a-z0-9_]+]]: memref<1000x96xf32> {{.*}})
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK-NOT: scf.if
// CHECK: arith.minui
// CHECK-NEXT: memref.load %[[BIAS]]
// CHECK: math.exp
// CHECK-NOT: scf.if
// CHECK: llvm.inline_asm has_side_effects "", "f,f"
// CHECK: scf.if
// CHECK-NEXT: vector.store %{{.*}}, %[[C]]
func.func @matmul_epilogue(%arg0: tensor<1000x64xf32>, %arg1: tensor<64x96xf32>, %arg2: tensor<96xf32>) -> tensor<1000x96xf32> {
  %0 = kb.fusion ins(%arg0, %arg1, %arg2 : tensor<1000x64xf32>, tensor<64x96xf32>, tensor<96xf32>) attributes {config = #kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [4, 8], mma = "mma_sync_tf32", copy = "cp_async">} {
  ^bb0(%arg3: tensor<1000x64xf32>, %arg4: tensor<64x96xf32>, %arg5: tensor<96xf32>):
    %1 = kb.matmul %arg3, %arg4 precision(tf32) : tensor<1000x64xf32>, tensor<64x96xf32> -> tensor<1000x96xf32>
    %2 = kb.bias_add %1, %arg5 : tensor<1000x96xf32>, tensor<96xf32> -> tensor<1000x96xf32>
    %3 = kb.gelu %2 approx(tanh) : tensor<1000x96xf32>
    kb.yield %3 : tensor<1000x96xf32>
  } -> tensor<1000x96xf32>
  return %0 : tensor<1000x96xf32>
}
