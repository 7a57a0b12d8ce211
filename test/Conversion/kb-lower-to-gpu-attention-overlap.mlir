// RUN: kb-opt %s --kb-lower-to-gpu | FileCheck %s

// kb-lower-to-gpu alone on the wgmma attention kernel with schedule =
// "overlap" (AttentionWgmma.cpp, buildOverlap), the config written out: 384
// threads, the producer warpgroup down to 40 registers and the consumers up
// to 232; S_0 and its softmax before the loop; per key block j >= 1 S_j
// (m64n128) and PV_{j-1} (m64n64, A = P from registers) issued as two
// groups, wait_group 1 (S_j, its accumulators through the wait), the softmax
// (ex2) while PV runs, block j + 1's full barrier (a branch: ptxas moves a
// wait to the top of its block; its condition also reads the rows' two new
// sums, `sum >= 0 or unordered`, always true, so that ptxas computes every
// ex2 before it), wait_group 0, the release of block j - 1 and O's rescale;
// the last PV after the loop. The prologue's branch (no wgmma in flight)
// reads no sums.
// CHECK-LABEL: func.func @overlap
// CHECK: threads in (%c384,
// CHECK: [[ZERO:%cst[_0-9]*]] = arith.constant 0.000000e+00 : f32
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister  increase 232
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: arith.cmpf uge
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: scf.for %{{.*}} = %c1 to
// CHECK-NOT: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}<m = 64, n = 128, k = 16>
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wait_group
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;"
// CHECK-NOT: wait_group
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: wait_group
// CHECK: [[LAST:%[0-9]+]] = arith.cmpi ult,
// CHECK-NEXT: [[OK0:%[0-9]+]] = arith.cmpf uge, %{{[0-9]+}}, [[ZERO]] : f32
// CHECK-NEXT: [[C0:%[0-9]+]] = arith.andi [[LAST]], [[OK0]] : i1
// CHECK-NEXT: [[OK1:%[0-9]+]] = arith.cmpf uge, %{{[0-9]+}}, [[ZERO]] : f32
// CHECK-NEXT: [[C1:%[0-9]+]] = arith.andi [[C0]], [[OK1]] : i1
// CHECK-NEXT: scf.if [[C1]] {
// CHECK-NOT: mbarrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: mbarrier
// CHECK-NOT: llvm.nvvm.ex2
// CHECK: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvvm.mbarrier.arrive
// CHECK: arith.mulf
// CHECK: scf.yield
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;"
// CHECK: nvvm.mbarrier.arrive
// CHECK: gpu.return
func.func @overlap(%h: tensor<8x256x64xbf16>) -> tensor<8x256x64xbf16> {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) causal {config = #kb.config<block = [128, 128], threads = 384, stages = 3, mma = "wgmma_bf16", schedule = "overlap">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>
  return %0 : tensor<8x256x64xbf16>
}
