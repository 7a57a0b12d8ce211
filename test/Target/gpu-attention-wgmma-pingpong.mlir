// The wgmma attention kernel with schedule = "pingpong" (issue #46;
// lib/Conversion/KBToGPU/AttentionWgmma.cpp: the two consumer warpgroups
// take turns at the tensor cores through named barriers 1 and 2) through the
// whole pipeline and ptxas: bf16 D = 64, bf16 D = 128 causal with the
// log-sum-exp, f16 with an additive mask, S = 1000 (not a multiple of the key
// block, and causal query blocks that see different numbers of key blocks).
// ptxas keeps each under the register and shared-memory limits with no
// spills (141, 168, 167 registers with CUDA 13's ptxas; serial: 129, 168,
// 168). kb-run checks the bundle against its float64 reference on the GPU
// (scripts/differential.sh carries every test/Target/gpu-*.mlir); a hang
// there would be a deadlock of the turns.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// kb-run reads the config back (its own parser once lacked `schedule` and
// refused every ping-pong bundle on the GPU, run of 2026-12-07).
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=RUNCHECK %}
// RUNCHECK: OK (
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_attention.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k1_attention.ptx
// Warpgroup 1 hands warpgroup 0 the first turn; each waits on its own turn
// (barrier 1 + warpgroup, in a register) before the loop and again before P V
// (LLVM lays the rotated loop out as softmax, P V, then the next S-GEMM);
// after an S-GEMM's commit it hands the turn over, then waits on the wgmma;
// after the loop warpgroup 0 hands over barrier 2.
// PTX: .entry k{{[01]}}_attention(
// PTX: bar.sync 0;
// PTX: bar.arrive 1, 256;
// PTX: bar.sync %r{{[0-9]+}}, 256;
// PTX: ex2.approx
// PTX: bar.sync %r{{[0-9]+}}, 256;
// PTX: wgmma.mma_async.sync.aligned.m64n{{64|128}}k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// PTX: wgmma.commit_group.sync.aligned;
// PTX-NEXT: wgmma.wait_group.sync.aligned 0;
// PTX: wgmma.commit_group.sync.aligned;
// PTX-NOT: wgmma.wait_group
// PTX: bar.arrive %r{{[0-9]+}}, 256;
// PTX: wgmma.wait_group.sync.aligned 0
// PTX: mbarrier.arrive.shared.b64
// PTX: bar.arrive 2, 256;
// PTX-NOT: bar.sync
// PTX-NOT: bar.arrive
// Keys are printed sorted: args, block, config, ..., name, ..., resources.
// CHECK: "kernels": [
// CHECK: "config": "#kb.config<block = [128, 128], threads = 288, stages = 3, mma = \"wgmma_bf16\", schedule = \"pingpong\">"
// CHECK: "dynamic_shared_bytes": 115768
// CHECK: "name": "k0_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [128, 128], threads = 288, stages = 2, mma = \"wgmma_bf16\", schedule = \"pingpong\">"
// CHECK: "name": "k1_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [128, 128], threads = 288, stages = 3, mma = \"wgmma_f16\", schedule = \"pingpong\">"
// CHECK: "name": "k2_attention"
// CHECK: "spill_store_bytes": 0

func.func @attention(%h: tensor<8x1000x64xbf16>, %h2: tensor<2x2x1000x128xbf16>, %f: tensor<2x4x1000x64xf16>, %m: tensor<1000x1000xf16>)
    -> (tensor<8x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "pingpong">} : tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16> -> tensor<8x1000x64xbf16>
  %1, %l1 = kb.attention %h2, %h2, %h2 scale(0.0883883461) causal lse {config = #kb.config<mma = "wgmma_bf16", schedule = "pingpong">} : tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16> -> tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>
  %2 = kb.attention %f, %f, %f mask(%m) scale(1.250000e-01) {config = #kb.config<mma = "wgmma_f16", schedule = "pingpong">} : tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<1000x1000xf16> -> tensor<2x4x1000x64xf16>
  return %0, %1, %l1, %2 : tensor<8x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>
}
