// The wgmma attention kernel with schedule = "overlap" (issue #46;
// AttentionWgmma.cpp, buildOverlap: a warpgroup's softmax of key block j
// runs while its P V of block j - 1 does) through the whole pipeline and
// ptxas: bf16 D = 64, bf16 D = 128 causal with the log-sum-exp, f16 with an
// additive mask, S = 1000 (a partial last key block; causal query blocks
// with different key counts). 384 threads (setmaxnreg: consumers 232), 3
// stages; no spills, and no "wgmma ... serialized" warning from ptxas (it
// prints one where it must serialize wgmma). kb-run checks the bundle
// against its float64 reference on the GPU (scripts/differential.sh carries
// every test/Target/gpu-*.mlir); a hang there would be a ring deadlock.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=RUNCHECK %}
// RUNCHECK: OK (
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k1_attention.ptx
// RUN: FileCheck %s --check-prefix=PTX0 < %t/b/k0_attention.ptx
// RUN: %ptxas -arch=sm_90a -v %t/b/k0_attention.ptx %t/b/k1_attention.ptx %t/b/k2_attention.ptx -o %t/x.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTX: .maxntid 384, 1, 1
// PTX: setmaxnreg.dec.sync.aligned.u32 40;
// PTX: setmaxnreg.inc.sync.aligned.u32 232;
// PTX: wgmma.wait_group.sync.aligned 1;
// PTX: ex2.approx.ftz.f32
// PTX: mbarrier.try_wait.parity
// PTX: wgmma.wait_group.sync.aligned 0;
// In the key loop the branch of block j + 1's wait also tests the rows'
// sums (min(sum0, sum1) < 0: never true; LLVM keeps it), after the step's
// last ex2; no ex2 between it and PV_{j-1}'s wait (wait_group 0, laid out
// earlier in the text). Without the test ptxas sank 15 of the 66 ex2 below
// that wait (bf16 D = 64 and 128, CUDA 13.0's SASS).
// PTX0: wgmma.wait_group.sync.aligned 1;
// PTX0: ex2.approx.ftz.f32
// PTX0: min.f32 [[MIN:%r[0-9]+]], %r{{[0-9]+}}, %r{{[0-9]+}};
// PTX0-NEXT: setp.lt.f32 [[NEG:%p[0-9]+]], [[MIN]], 0f00000000;
// PTX0-NEXT: or.pred [[SKIP:%p[0-9]+]], {{.*}}[[NEG]]
// PTX0-NEXT: @[[SKIP]] bra
// PTX0-NOT: ex2
// PTX0: mbarrier.try_wait.parity
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores
// PTXAS-NOT: serialized
// CHECK: "kernels": [
// CHECK: "config": "#kb.config<block = [128, 128], threads = 384, stages = 3, mma = \"wgmma_bf16\", schedule = \"overlap\">"
// CHECK: "name": "k0_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [128, 128], threads = 384, stages = 3, mma = \"wgmma_bf16\", schedule = \"overlap\">"
// CHECK: "dynamic_shared_bytes": 230456
// CHECK: "name": "k1_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [128, 128], threads = 384, stages = 3, mma = \"wgmma_f16\", schedule = \"overlap\">"
// CHECK: "name": "k2_attention"
// CHECK: "spill_store_bytes": 0

func.func @attention(%h: tensor<8x1000x64xbf16>, %h2: tensor<2x2x1000x128xbf16>, %f: tensor<2x4x1000x64xf16>, %m: tensor<1000x1000xf16>)
    -> (tensor<8x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "overlap">} : tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16> -> tensor<8x1000x64xbf16>
  %1, %l1 = kb.attention %h2, %h2, %h2 scale(0.0883883461) causal lse {config = #kb.config<mma = "wgmma_bf16", schedule = "overlap">} : tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16> -> tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>
  %2 = kb.attention %f, %f, %f mask(%m) scale(1.250000e-01) {config = #kb.config<mma = "wgmma_f16", schedule = "overlap">} : tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<1000x1000xf16> -> tensor<2x4x1000x64xf16>
  return %0, %1, %l1, %2 : tensor<8x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>
}
