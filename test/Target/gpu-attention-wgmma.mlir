// The 16-bit fused attention kernel on wgmma (sm_90a, issue #46;
// lib/Conversion/KBToGPU/AttentionWgmma.cpp) through the whole pipeline and
// ptxas: bf16 head dims 64 and 128, causal with the log-sum-exp, f16 with an
// additive mask, S = 1000 (not a multiple of the key block). Each is one
// kernel (asked for by mma = "wgmma_*" with the serial schedule; overlap, the default: gpu-attention-wgmma-overlap.mlir) reading q, k
// and v through three TMA tensor maps; ptxas keeps it
// under the register and shared-memory limits with no spills. kb-run checks
// the bundle against its float64 reference on the GPU
// (scripts/differential.sh carries every test/Target/gpu-*.mlir).
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=TM < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_attention.ptx
// PTX: .entry k0_attention(
// PTX-DAG: mbarrier.try_wait.parity
// PTX-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1;
// PTX-DAG: wgmma.wait_group.sync.aligned 0
// PTX-DAG: shfl.sync.bfly
// PTX-DAG: ex2.approx.ftz.f32
// The raw scores' exponent, one fma by scale log2 e = 0.180336878
// (0f3E38AA3B) each; the libdevice form (ex2.approx.f32, no .ftz) is gone.
// PTX-DAG: fma.rn.f32 %r{{[0-9]+}}, %r{{[0-9]+}}, 0f3E38AA3B, %r{{[0-9]+}};
// PTX-NOT: ex2.approx.f32
// Keys are printed sorted: args, block, config, ..., name, ..., resources.
// CHECK: "kernels": [
// CHECK: "block": [
// CHECK-NEXT: 288,
// CHECK: "config": "#kb.config<block = [128, 128], threads = 288, stages = 3, mma = \"wgmma_bf16\", schedule = \"serial\">"
// CHECK: "dynamic_shared_bytes": 115768
// CHECK: "name": "k0_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [128, 128], threads = 288, stages = 2, mma = \"wgmma_bf16\", schedule = \"serial\">"
// CHECK: "name": "k1_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [128, 128], threads = 288, stages = 3, mma = \"wgmma_f16\", schedule = \"serial\">"
// CHECK: "name": "k2_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "program": [
// TM: "role": "tensor_map"
// TM: "box": [
// TM-NEXT: 1,
// TM-NEXT: 128,
// TM-NEXT: 64

func.func @attention(%h: tensor<8x1000x64xbf16>, %h2: tensor<2x2x1000x128xbf16>, %f: tensor<2x4x1000x64xf16>, %m: tensor<1000x1000xf16>)
    -> (tensor<8x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<mma = "wgmma_bf16", schedule = "serial">} : tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16> -> tensor<8x1000x64xbf16>
  %1, %l1 = kb.attention %h2, %h2, %h2 scale(0.0883883461) causal lse {config = #kb.config<mma = "wgmma_bf16", schedule = "serial">} : tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16> -> tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>
  %2 = kb.attention %f, %f, %f mask(%m) scale(1.250000e-01) {config = #kb.config<mma = "wgmma_f16", schedule = "serial">} : tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<1000x1000xf16> -> tensor<2x4x1000x64xf16>
  return %0, %1, %l1, %2 : tensor<8x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>
}
