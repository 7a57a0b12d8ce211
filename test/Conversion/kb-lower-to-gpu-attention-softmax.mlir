// RUN: kb-opt %s --kb-lower-to-gpu -split-input-file | FileCheck %s

// kb-lower-to-gpu alone on the attention kernels' online softmax
// (AttentionSoftmax.cpp, shared by the mma.sync and wgmma kernels), configs
// written out. FlashAttention's form: the row max over the raw Q K^T scores
// (no mask, scale > 0), each p = 2^(fma(s, k, -m k)) with k = scale log2 e
// (0.125 x 1.4427 = 0.180336878), 2^ one ex2.approx.ftz.f32 (an LLVM
// intrinsic: math.exp2 became libdevice's ex2.approx.f32 without .ftz, whose
// subnormal fix-up ptxas spells as a compare and two multiplies); lse in
// natural units, m scale + log l.
// CHECK-LABEL: func.func @raw_scores
// CHECK: gpu.func @k0_attention
// CHECK-DAG: %[[NEGK:.+]] = arith.constant -0.180336878 : f32
// CHECK-DAG: %[[K:.+]] = arith.constant 0.180336878 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// The scores are not scaled before the max.
// CHECK-NOT: arith.mulf
// CHECK: arith.maxnumf
// CHECK: %[[M:.+]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %{{.*}}, %[[M]] : f32
// CHECK-NEXT: %[[DK:.+]] = arith.mulf %[[D]], %[[K]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[DK]]) : (f32) -> f32
// CHECK-NEXT: %[[NEGMK:.+]] = arith.mulf %[[M]], %[[NEGK]] : f32
// CHECK: %[[A:.+]] = math.fma %{{.*}}, %[[K]], %[[NEGMK]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[A]]) : (f32) -> f32
// CHECK-NOT: math.exp2
// CHECK: scf.yield
// CHECK: %[[MS:.+]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK-NEXT: math.log
// CHECK-NEXT: arith.addf %[[MS]]
func.func @raw_scores(%h: tensor<8x256x64xbf16>) -> (tensor<8x256x64xbf16>, tensor<8x256xf32>) {
  %0, %l = kb.attention %h, %h, %h scale(1.250000e-01) lse {config = #kb.config<block = [128, 128], threads = 288, stages = 3, mma = "wgmma_bf16">} : tensor<8x256x64xbf16>, tensor<8x256x64xbf16>, tensor<8x256x64xbf16> -> tensor<8x256x64xbf16>, tensor<8x256xf32>
  return %0, %l : tensor<8x256x64xbf16>, tensor<8x256xf32>
}

// -----

// An additive mask: the scores are scaled and the mask added first (one fma:
// a max over raw scores would not be the max of the masked ones), then each
// p = 2^(fma(x, log2 e, -m log2 e)) on the mma.sync kernel.
// CHECK-LABEL: func.func @mask
// CHECK: gpu.func @k0_attention
// CHECK-DAG: %[[NEGL2E:.+]] = arith.constant -1.44269502 : f32
// CHECK-DAG: %[[L2E:.+]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK: nvvm.mma.sync
// CHECK: %[[MV:.+]] = arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: math.fma %{{.*}}, %[[SCALE]], %[[MV]] : f32
// CHECK: arith.maxnumf
// CHECK: %[[M:.+]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[NEGM:.+]] = arith.mulf %[[M]], %[[NEGL2E]] : f32
// CHECK: %[[A:.+]] = math.fma %{{.*}}, %[[L2E]], %[[NEGM]] : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[A]])
// CHECK-NOT: math.exp2
// CHECK: gpu.return
func.func @mask(%q: tensor<4x100x64xf16>, %k: tensor<4x300x64xf16>, %v: tensor<4x300x64xf16>, %m: tensor<100x300xf16>) -> tensor<4x100x64xf16> {
  %o = kb.attention %q, %k, %v mask(%m) scale(1.250000e-01) {config = #kb.config<block = [64, 64], threads = 128, stages = 3>} : tensor<4x100x64xf16>, tensor<4x300x64xf16>, tensor<4x300x64xf16>, tensor<100x300xf16> -> tensor<4x100x64xf16>
  return %o : tensor<4x100x64xf16>
}

// -----

// A negative scale: max(scale s) is not scale max(s), so the scores are
// scaled before the max (a multiply each) and the lse takes m as it is.
// CHECK-LABEL: func.func @negative_scale
// CHECK: gpu.func @k0_attention
// CHECK-DAG: %[[L2E:.+]] = arith.constant 1.44269502 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant -2.500000e-01 : f32
// CHECK: nvvm.mma.sync
// CHECK: arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: arith.maxnumf
// CHECK: math.fma %{{.*}}, %[[L2E]], %{{.*}} : f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: scf.yield
// CHECK-NOT: %[[SCALE]]
// CHECK: math.log
// CHECK: gpu.return
func.func @negative_scale(%q: tensor<8x128x64xf32>) -> (tensor<8x128x64xf32>, tensor<8x128xf32>) {
  %o, %l = kb.attention %q, %q, %q scale(-2.500000e-01) causal precision(tf32) lse {config = #kb.config<block = [64, 64], threads = 128, stages = 3, mma = "mma_sync_tf32">} : tensor<8x128x64xf32>, tensor<8x128x64xf32>, tensor<8x128x64xf32> -> tensor<8x128x64xf32>, tensor<8x128xf32>
  return %o, %l : tensor<8x128x64xf32>, tensor<8x128xf32>
}
