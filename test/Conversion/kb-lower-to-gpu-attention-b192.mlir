// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file -verify-diagnostics | FileCheck %s

// kb-lower-to-gpu alone on the wgmma attention kernel with three consumer
// warpgroups (AttentionWgmma.cpp; block = [192, 128], schedule =
// "overlap"), causal, S 1000: Q's tensor map has boxes of 192 rows and
// k's and v's of 128; 6 blocks of 192 query rows a head, 512 threads and
// Q (24576 bytes) + 3 stages of K and V + 1024 + 7 mbarriers of shared
// memory; the causal cut from the block's last row (min(192 x + 192,
// 1000)); the empty barriers count 12 arrivals (lane 0 of each consumer
// warp); threads 384 .. 511 are the producer warpgroup, down to 24
// registers, thread 384 issues the TMA (Q: 24576 bytes), the consumers go up
// to 160 and each reads its 64 Q rows at 8192 bytes a warpgroup.
// CHECK-LABEL: func.func @b192
// CHECK: kb.tensor_map = {box = [1, 192, 64], dims = [8, 1000, 64]
// CHECK: kb.tensor_map = {box = [1, 128, 64], dims = [8, 1000, 64]
// CHECK: kb.tensor_map = {box = [1, 128, 64], dims = [8, 1000, 64]
// CHECK: blocks in (%c6, %c8, %c1) threads in (%c512, %{{.*}}) dynamic_shared_memory_size %c123960_i32
// CHECK: gpu.func @k0_attention
// CHECK: [[BX:%.*]] = gpu.block_id x
// CHECK-NEXT: [[Q0:%.*]] = arith.muli [[BX]], %c192 : index
// CHECK: [[END:%.*]] = arith.addi [[Q0]], %c192 : index
// CHECK-NEXT: arith.minui [[END]], %c1000 : index
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK-NEXT: arith.addi
// CHECK-NEXT: arith.index_castui
// CHECK-NEXT: llvm.inttoptr
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %c12_i32
// CHECK-NOT: %c8_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: [[PROD:%.*]] = arith.cmpi uge, %thread_id_x, %c384 : index
// CHECK-NEXT: scf.if [[PROD]] {
// CHECK-NEXT: nvvm.setmaxregister  decrease 24
// CHECK-NEXT: [[LEAD:%.*]] = arith.cmpi eq, %thread_id_x, %c384 : index
// CHECK-NEXT: scf.if [[LEAD]] {
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister  increase 160
// CHECK-NEXT: [[WG:%.*]] = arith.divui %{{.*}}, %c4 : index
// CHECK: arith.muli [[WG]], %c8192 : index
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>
// CHECK: scf.for
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;"
// CHECK: gpu.return
func.func @b192(%h: tensor<8x1000x64xbf16>) -> tensor<8x1000x64xbf16> {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) causal {config = #kb.config<block = [192, 128], threads = 512, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16> -> tensor<8x1000x64xbf16>
  return %0 : tensor<8x1000x64xbf16>
}

// -----

// The lowering checks a hand-written config again: three warpgroups at
// D = 128 do not fit their registers.
func.func @b192_head_dim(%h: tensor<8x256x128xbf16>) -> tensor<8x256x128xbf16> {
  // expected-error @+1 {{'kb.attention' op #kb.config: mma = "wgmma_bf16" with block = [192, 128]: three consumer warpgroups keep O, S and P in their 160 registers only at D = Dv = 64, BKV <= 128 and without a mask, got D = 128, Dv = 128}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128], threads = 512, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<8x256x128xbf16>, tensor<8x256x128xbf16>, tensor<8x256x128xbf16> -> tensor<8x256x128xbf16>
  return %0 : tensor<8x256x128xbf16>
}

// -----

func.func @b192_pingpong(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  // expected-error @+1 {{'kb.attention' op #kb.config: mma = "wgmma_bf16" with block = [192, 128]: three consumer warpgroups run schedule = "overlap" only}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128], threads = 416, stages = 3, mma = "wgmma_bf16", schedule = "pingpong">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}
