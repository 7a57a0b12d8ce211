// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on kb.attention: every #kb.config is written out as
// kb-select-config chooses it, so this file breaks only when the lowering
// changes. The kernel: BQ / 16 warps of 16 query rows, K/V tiles of BKV keys
// in a cp.async ring of `stages`, S = Q K^T and O += P V on mma.sync, the
// online softmax in registers (docs/design.md, "Fused attention").

// f32, rank 3, tile multiples, no mask: a three-stage ring (two groups in
// flight before the loop), K and V tiles of 64 rows padded by 4 f32, 16-byte
// copies; the loop runs over all 2 key blocks; tf32 m16n8k8; no masking
// branch; the row max and sum reduced over the quad by xor shuffles; O
// stored as pairs.
// CHECK-LABEL: func.func @attention_f32
// Grid: 2 query blocks x 8 heads; 3 x 64 x (68 + 68) x 4 bytes of ring.
// CHECK: gpu.launch_func @{{.*}} blocks in (%c2, %c8, %c1) threads in (%c128, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c104448_i32
// CHECK: gpu.func @{{.*}}(%[[Q:[a-z0-9_]+]]: memref<8x128x64xf32> {{.*}}, %[[K:[a-z0-9_]+]]: memref<8x128x64xf32> {{.*}}, %[[V:[a-z0-9_]+]]: memref<8x128x64xf32> {{.*}}, %[[O:[a-z0-9_]+]]: memref<8x128x64xf32> {{.*}})
// CHECK: memref.view {{.*}} to memref<64x68xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %[[K]]{{.*}}, 4 {bypassL1}
// CHECK: nvgpu.device_async_copy %[[V]]{{.*}}, 4 {bypassL1}
// CHECK: nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_create_group
// CHECK: memref.load %[[Q]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2{{.*}} iter_args
// CHECK-NOT: memref.store
// CHECK: nvgpu.device_async_wait %{{.*}} {numGroups = 1 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: scf.if
// CHECK: gpu.shuffle xor %{{.*}}, %c1_i32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: gpu.shuffle xor
// CHECK: scf.if
// CHECK: vector.store %{{.*}}, %[[O]]{{.*}} : memref<8x128x64xf32>, vector<2xf32>
func.func @attention_f32(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %o = kb.attention %q, %k, %v scale(1.250000e-01) precision(tf32) {config = #kb.config<block = [64, 64], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// -----

// bf16, rank 4, causal, S = 1000 (not a multiple of 64), head dim 128, with
// the log-sum-exp: the key loop ends at the block's last visible key,
// min(Sk, q0 + BQ) (fully masked blocks are never loaded); rows past Sk are
// zero-filled (a copy of 0 or 8 elements); the mask runs in a branch only
// on the blocks that need it (past Sk, or across the diagonal); bf16
// m16n8k16; lse written by one lane of each quad.
// CHECK-LABEL: func.func @attention_bf16_causal
// CHECK: gpu.func @{{.*}}(%[[Q:[a-z0-9_]+]]: memref<2x4x1000x128xbf16> {{.*}}, %{{.*}}: memref<2x4x1000x128xbf16> {{.*}}, %{{.*}}: memref<2x4x1000x128xbf16> {{.*}}, %[[O:[a-z0-9_]+]]: memref<2x4x1000x128xbf16> {{.*}}, %[[L:[a-z0-9_]+]]: memref<2x4x1000xf32> {{.*}})
// CHECK: arith.minui %{{.*}}, %c1000
// CHECK: memref.view {{.*}} to memref<64x136xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8, %{{.*}} {bypassL1}
// CHECK: vector.load %[[Q]]{{.*}} : memref<2x4x1000x128xbf16>, vector<2xbf16>
// CHECK: scf.for
// CHECK: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>
// CHECK: scf.if %{{.*}} -> (f32,
// CHECK: arith.cmpi ule
// CHECK: arith.select
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: math.log
// CHECK: vector.store %{{.*}}, %[[O]]{{.*}} : memref<2x4x1000x128xbf16>, vector<2xbf16>
// CHECK: memref.store %{{.*}}, %[[L]]
func.func @attention_bf16_causal(%q: tensor<2x4x1000x128xbf16>, %k: tensor<2x4x1000x128xbf16>, %v: tensor<2x4x1000x128xbf16>) -> (tensor<2x4x1000x128xbf16>, tensor<2x4x1000xf32>) {
  %o, %lse = kb.attention %q, %k, %v scale(0.0883883461) causal lse {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16>, tensor<2x4x1000x128xbf16> -> tensor<2x4x1000x128xbf16>, tensor<2x4x1000xf32>
  return %o, %lse : tensor<2x4x1000x128xbf16>, tensor<2x4x1000xf32>
}

// -----

// f16 with an additive [Sq, Sk] mask, Sq != Sk: the mask is read at
// [row, key] (clamped into it) and added after the scale; f16 operands go
// to the mma as vector<2xf16>.
// CHECK-LABEL: func.func @attention_f16_mask
// CHECK: gpu.func @{{.*}}(%{{.*}}: memref<4x100x64xf16> {{.*}}, %{{.*}}: memref<4x300x64xf16> {{.*}}, %{{.*}}: memref<4x300x64xf16> {{.*}}, %[[M:[a-z0-9_]+]]: memref<100x300xf16> {{.*}}, %{{.*}}: memref<4x100x64xf16> {{.*}})
// CHECK: scf.for
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK: memref.load %[[M]][%{{.*}}, %{{.*}}] : memref<100x300xf16>
// CHECK: arith.extf
// CHECK: scf.yield
func.func @attention_f16_mask(%q: tensor<4x100x64xf16>, %k: tensor<4x300x64xf16>, %v: tensor<4x300x64xf16>, %m: tensor<100x300xf16>) -> tensor<4x100x64xf16> {
  %o = kb.attention %q, %k, %v mask(%m) scale(1.250000e-01) {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<4x100x64xf16>, tensor<4x300x64xf16>, tensor<4x300x64xf16>, tensor<100x300xf16> -> tensor<4x100x64xf16>
  return %o : tensor<4x100x64xf16>
}
