// kb.attention bthd (issue #47): q, k, v and O in [B, S, H, D], the layout
// of a linear's [B, T, H * D] output seen as heads, through the whole
// pipeline and ptxas. The 16-bit wgmma kernel reads q, k and v through
// 4-D tensor maps of the [B, S, H, D] buffers with boxes [1, rows, 1, 64]
// (rows H x D elements apart; the same rows x 128 bytes in shared memory as
// BHTD's boxes) and coordinates (column, head, row, batch); the mma.sync
// kernel (f32, tf32) indexes [b, row, h, col]. S = 1000 (not a multiple of
// the blocks), causal, lse ([B, H, Sq]) on the D 128 one. ptxas: no spill.
// kb-run checks each against its float64 reference (bthd in the program's
// attrs) on the GPU (scripts/differential.sh carries test/Target/gpu-*.mlir).
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=TM < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_attention.ptx
// RUN: kb-opt %s --kb-select-config="chip=sm_90a" --kb-lower-to-gpu | FileCheck %s --check-prefix=IR
// On sm_90 (no wgmma) all three run the mma.sync kernel (bf16 m16n8k16,
// cp.async of 16-byte chunks of [b, row, h, col]): no tensor map, no spill.
// RUN: kb-opt %s --kb-compile="output=%t/c chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=S90 < %t/c/manifest.json
// S90-NOT: tensor_map
// S90: "config": "#kb.config<block = [64, 64], threads = 128, stages = 3>"
// S90: "name": "k0_attention"
// S90: "spill_store_bytes": 0
// S90: "name": "k1_attention"
// S90: "spill_store_bytes": 0
// S90: mma = \"mma_sync_tf32\"
// S90: "name": "k2_attention"
// S90: "spill_store_bytes": 0
// PTX: .entry k0_attention(
// PTX: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX-NOT: cp.async.bulk.tensor.3d
// CHECK: "kernels": [
// CHECK: mma = \"wgmma_bf16\"
// CHECK: "name": "k0_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: mma = \"wgmma_bf16\"
// CHECK: "name": "k1_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: mma = \"mma_sync_tf32\"
// CHECK: "name": "k2_attention"
// CHECK: "spill_store_bytes": 0
// CHECK: "program": [
// CHECK: "bthd": true,
// CHECK-NEXT: "causal": false,
// CHECK: "bthd": true,
// CHECK-NEXT: "causal": true,
// CHECK: "lse_output":
// CHECK: "bthd": true,
// CHECK-NEXT: "causal": true,
// TM: "role": "tensor_map"
// TM: "box": [
// TM-NEXT: 1,
// TM-NEXT: 128,
// TM-NEXT: 1,
// TM-NEXT: 64
// TM: "dims": [
// TM-NEXT: 2,
// TM-NEXT: 1000,
// TM-NEXT: 4,
// TM-NEXT: 64
// The mma.sync kernel's Q loads and O stores: [b (block z), row, h (block y), col].
// IR-LABEL: gpu.func @k2_attention
// IR: memref.load %arg0[%block_id_z, %{{.*}}, %block_id_y, %{{.*}}] : memref<2x1000x4x64xf32>
// IR: vector.store %{{.*}}, %arg3[%block_id_z, %{{.*}}, %block_id_y, %{{.*}}] : memref<2x1000x4x64xf32>, vector<2xf32>

func.func @attention(%q: tensor<2x1000x4x64xbf16>, %q2: tensor<1x1000x2x128xbf16>, %f: tensor<2x1000x4x64xf32>)
    -> (tensor<2x1000x4x64xbf16>, tensor<1x1000x2x128xbf16>, tensor<1x2x1000xf32>, tensor<2x1000x4x64xf32>) {
  %o = kb.attention %q, %q, %q scale(0.125) bthd : tensor<2x1000x4x64xbf16>, tensor<2x1000x4x64xbf16>, tensor<2x1000x4x64xbf16> -> tensor<2x1000x4x64xbf16>
  %o2, %l = kb.attention %q2, %q2, %q2 scale(0.088) causal bthd lse : tensor<1x1000x2x128xbf16>, tensor<1x1000x2x128xbf16>, tensor<1x1000x2x128xbf16> -> tensor<1x1000x2x128xbf16>, tensor<1x2x1000xf32>
  %o3 = kb.attention %f, %f, %f scale(0.125) causal bthd : tensor<2x1000x4x64xf32>, tensor<2x1000x4x64xf32>, tensor<2x1000x4x64xf32> -> tensor<2x1000x4x64xf32>
  return %o, %o2, %l, %o3 : tensor<2x1000x4x64xbf16>, tensor<1x1000x2x128xbf16>, tensor<1x2x1000xf32>, tensor<2x1000x4x64xf32>
}
