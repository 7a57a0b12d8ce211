// The wgmma attention kernel with three consumer warpgroups (issue #46;
// AttentionWgmma.cpp, block = [192, 128], schedule = "overlap": one K/V
// tile for 192 query rows) through the whole pipeline and ptxas: bf16
// D = 64, bf16 D = 64 causal with the log-sum-exp (rank 4), f16 D = 64
// causal, S = 1000 (a partial last key block; 6 query blocks of 192, the
// last with 40 rows inside Sq; causal query blocks with different key
// counts). 512 threads (setmaxnreg: producer 24, consumers 160), 3
// stages; no spills, and no "wgmma ... serialized" warning from ptxas.
// kb-run checks the bundle against its float64 reference on the GPU
// (scripts/differential.sh carries every test/Target/gpu-*.mlir); a hang
// there would be a ring deadlock (12 releases a stage).
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=RUNCHECK %}
// RUNCHECK: OK (
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k1_attention.ptx
// RUN: %ptxas -arch=sm_90a -v %t/b/k0_attention.ptx %t/b/k1_attention.ptx %t/b/k2_attention.ptx -o %t/x.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// PTX: .maxntid 512, 1, 1
// PTX: setmaxnreg.dec.sync.aligned.u32 24;
// PTX: setmaxnreg.inc.sync.aligned.u32 160;
// PTX: wgmma.wait_group.sync.aligned 1;
// PTX: ex2.approx.ftz.f32
// PTX: mbarrier.try_wait.parity
// PTX: wgmma.wait_group.sync.aligned 0;
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: serialized
// CHECK: "kernels": [
// CHECK: "config": "#kb.config<block = [192, 128], threads = 512, stages = 3, mma = \"wgmma_bf16\", schedule = \"overlap\">"
// CHECK: "dynamic_shared_bytes": 123960
// CHECK: "name": "k0_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [192, 128], threads = 512, stages = 3, mma = \"wgmma_bf16\", schedule = \"overlap\">"
// CHECK: "name": "k1_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [192, 128], threads = 512, stages = 3, mma = \"wgmma_f16\", schedule = \"overlap\">"
// CHECK: "name": "k2_attention"
// CHECK: "spill_store_bytes": 0

func.func @attention(%h: tensor<8x1000x64xbf16>, %h2: tensor<2x2x1000x64xbf16>, %f: tensor<2x4x1000x64xf16>)
    -> (tensor<8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>) {
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<block = [192, 128]>} : tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16>, tensor<8x1000x64xbf16> -> tensor<8x1000x64xbf16>
  %1, %l1 = kb.attention %h2, %h2, %h2 scale(1.250000e-01) causal lse {config = #kb.config<block = [192, 128], mma = "wgmma_bf16", schedule = "overlap">} : tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16> -> tensor<2x2x1000x64xbf16>, tensor<2x2x1000xf32>
  %2 = kb.attention %f, %f, %f scale(1.250000e-01) causal {config = #kb.config<threads = 512>} : tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16>, tensor<2x4x1000x64xf16> -> tensor<2x4x1000x64xf16>
  return %0, %1, %l1, %2 : tensor<8x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000xf32>, tensor<2x4x1000x64xf16>
}
