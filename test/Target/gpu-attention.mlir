// The fused attention kernel (issue #46) through the whole pipeline and
// ptxas: head dims 64 and 128 in f32 (tf32) and bf16, causal with the
// log-sum-exp, S = 1000 (not a multiple of the key block). Each is one
// kernel; ptxas keeps it under the register and shared-memory limits with no
// spills. kb-run checks the bundle against its float64 reference on the GPU
// (scripts/differential.sh carries every test/Target/gpu-*.mlir; the larger
// cases are scripts/build-attention.sh's).
// GPU-CHIPS: sm_90 sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_attention.ptx
// RUN: FileCheck %s --check-prefix=PTX16 < %t/b/k3_attention.ptx
// PTX: .entry k0_attention(
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group 1
// PTX-DAG: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// PTX-DAG: shfl.sync.bfly
// PTX-DAG: ex2.approx.ftz.f32
// PTX-NOT: ex2.approx.f32
// PTX16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// Keys are printed sorted: args, block, config, ..., name, ..., resources.
// CHECK: "kernels": [
// CHECK: "config": "#kb.config<block = [64, 64], threads = 128, stages = 3, mma = \"mma_sync_tf32\">"
// CHECK: "dynamic_shared_bytes": 104448
// CHECK: "name": "k0_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "out1",
// CHECK-NEXT: "out2"
// CHECK: "config": "#kb.config<block = [64, 32], threads = 128, stages = 3, mma = \"mma_sync_tf32\">"
// CHECK: "name": "k1_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "config": "#kb.config<block = [64, 64], threads = 128, stages = 3>"
// CHECK: "dynamic_shared_bytes": 55296
// CHECK: "name": "k2_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k3_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "program": [
// CHECK: "has_mask": false
// CHECK: "op": "kb.attention"
// CHECK: "causal": true
// CHECK: "lse": true
// CHECK: "lse_output": "out2"

func.func @attention(%q: tensor<4x1000x64xf32>, %q2: tensor<4x1000x128xf32>, %h: tensor<2x2x1000x64xbf16>, %h2: tensor<2x2x1000x128xbf16>)
    -> (tensor<4x1000x64xf32>, tensor<4x1000x128xf32>, tensor<4x1000xf32>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>) {
  %0 = kb.attention %q, %q, %q scale(1.250000e-01) precision(tf32) : tensor<4x1000x64xf32>, tensor<4x1000x64xf32>, tensor<4x1000x64xf32> -> tensor<4x1000x64xf32>
  %1, %l1 = kb.attention %q2, %q2, %q2 scale(0.0883883461) causal precision(tf32) lse : tensor<4x1000x128xf32>, tensor<4x1000x128xf32>, tensor<4x1000x128xf32> -> tensor<4x1000x128xf32>, tensor<4x1000xf32>
  %2 = kb.attention %h, %h, %h scale(1.250000e-01) : tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x64xbf16> -> tensor<2x2x1000x64xbf16>
  %3, %l3 = kb.attention %h2, %h2, %h2 scale(0.0883883461) causal lse : tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000x128xbf16> -> tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>
  return %0, %1, %l1, %2, %3, %l3 : tensor<4x1000x64xf32>, tensor<4x1000x128xf32>, tensor<4x1000xf32>, tensor<2x2x1000x64xbf16>, tensor<2x2x1000x128xbf16>, tensor<2x2x1000xf32>
}
