// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on the wgmma attention kernel (AttentionWgmma.cpp)
// with schedule = "pingpong", the config written out: the two consumer
// warpgroups (warpgroup = warp / 4) take turns through named barriers 1 and
// 2 (turn[w] = 1 + w; bar 0 is the set-up's gpu.barrier), 256 threads each.
// Warpgroup 1 hands the first turn to warpgroup 0; each waits on its turn
// before the loop and before each P V, and hands it over after each
// S-GEMM's commit (before its wait); after the loop only warpgroup 0 hands
// over (turn[1]).
// CHECK-LABEL: func.func @pingpong
// CHECK: gpu.barrier
// The producer: no named barrier.
// CHECK: scf.for
// CHECK-NOT: nvvm.barrier
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[WG1:.+]] = arith.cmpi eq, %[[WG:.+]], %c1 : index
// CHECK-NEXT: scf.if %[[WG1]] {
// CHECK-NEXT: nvvm.barrier.arrive id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: %[[W32:.+]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: %[[MINE:.+]] = arith.addi %[[W32]], %c1_i32 : i32
// CHECK-NEXT: nvvm.barrier id = %[[MINE]] number_of_threads = %c256_i32
// CHECK-NEXT: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: %[[OTHER:.+]] = arith.subi %c1, %[[WG]] : index
// CHECK-NEXT: %[[O32:.+]] = arith.index_castui %[[OTHER]] : index to i32
// CHECK-NEXT: %[[THEIRS:.+]] = arith.addi %[[O32]], %c1_i32 : i32
// CHECK-NEXT: nvvm.barrier.arrive id = %[[THEIRS]] number_of_threads = %c256_i32
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// The softmax (ex2) runs outside the turn, then P V inside it.
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[W32B:.+]] = arith.index_castui %[[WG]] : index to i32
// CHECK-NEXT: %[[MINEB:.+]] = arith.addi %[[W32B]], %c1_i32 : i32
// CHECK-NEXT: nvvm.barrier id = %[[MINEB]] number_of_threads = %c256_i32
// CHECK-NOT: nvvm.barrier
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: scf.yield
// CHECK: %[[WG0:.+]] = arith.xori %[[WG1]], %true : i1
// CHECK-NEXT: scf.if %[[WG0]] {
// CHECK-NEXT: nvvm.barrier.arrive id = %c2_i32 number_of_threads = %c256_i32
// CHECK-NEXT: }
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
func.func @pingpong(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) causal {config = #kb.config<block = [128, 128], threads = 288, stages = 3, mma = "wgmma_bf16", schedule = "pingpong">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}

// -----

// The serial schedule (absent, or written out) has no named barrier.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
func.func @serial(%h: tensor<8x256x64xbf16>) -> (tensor<8x256x64xbf16>, tensor<8x256x64xbf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) causal {config = #kb.config<block = [128, 128], threads = 288, stages = 3, mma = "wgmma_bf16">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  %1 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [128, 128], threads = 288, stages = 3, mma = "wgmma_bf16", schedule = "serial">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0, %1 : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>
}
