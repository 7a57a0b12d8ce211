// Batched 16-bit wgmma matmuls with store = "tma" (the TMA-store epilogue
// through C's 3-D tensor map: column, row, batch; MatmulWgmmaEpilogue.cpp),
// through the whole pipeline and ptxas: a bf16 row-major B on a persistent
// grid (the suite's 128 x 512^3 at its default tile, a batch of 16 here to
// keep the bundle small: 128 tiles over a grid of 12, so each block's walk
// crosses batches), and an f16 B^T one block a tile with an edge in M (M =
// 200: the second row of tiles' boxes must be clipped at the end of their
// own batch, not written into the next one's first 56 rows). ptxas keeps
// both under the limits with no spills; kb-run checks the bundle against its
// float64 reference on the GPU (scripts/differential.sh carries every
// test/Target/gpu-*.mlir). Built 2026-12-07 with no GPU: not yet run on one.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=st.global < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=PTX --implicit-check-not=st.global < %t/b/k1_matmul.ptx
// RUN: FileCheck %s --check-prefix=WAIT < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=WAIT < %t/b/k1_matmul.ptx
// PTX: cvt.rn.{{b?}}f16x2.f32
// PTX: st.shared.b32
// PTX: fence.proxy.async.shared::cta
// PTX: cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group
// WAIT: cp.async.bulk.wait_group 0;
// CHECK: "of": "b"
// CHECK: "box": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64
// CHECK-NEXT: ],
// CHECK-NEXT: "dims": [
// CHECK-NEXT: 16,
// CHECK-NEXT: 512,
// CHECK-NEXT: 512
// CHECK-NEXT: ],
// CHECK-NEXT: "of": "c0"
// CHECK: "of": "w"
// CHECK: "box": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 64,
// CHECK-NEXT: 64
// CHECK-NEXT: ],
// CHECK-NEXT: "dims": [
// CHECK-NEXT: 4,
// CHECK-NEXT: 200,
// CHECK-NEXT: 256
// CHECK-NEXT: ],
// CHECK-NEXT: "of": "c1"
// CHECK: "kernels": [
// CHECK: "name": "k0_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k1_matmul"
// CHECK: "spill_store_bytes": 0
func.func @batched_tma_store(%a: tensor<16x512x512xbf16> {kb.name = "a"}, %b: tensor<16x512x512xbf16> {kb.name = "b"},
                             %f: tensor<4x200x512xf16> {kb.name = "f"}, %w: tensor<4x256x512xf16> {kb.name = "w"})
    -> (tensor<16x512x512xbf16> {kb.name = "c0"}, tensor<4x200x256xf16> {kb.name = "c1"}) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [128, 256, 64], threads = 288, stages = 4, grid = 12, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<16x512x512xbf16>, tensor<16x512x512xbf16> -> tensor<16x512x512xbf16>
  %1 = kb.matmul %f, %w transpose_b {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 4, mma = "wgmma_f16", copy = "tma", store = "tma">} : tensor<4x200x512xf16>, tensor<4x256x512xf16> -> tensor<4x200x256xf16>
  return %0, %1 : tensor<16x512x512xbf16>, tensor<4x200x256xf16>
}
