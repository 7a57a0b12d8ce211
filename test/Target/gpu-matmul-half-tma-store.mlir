// 16-bit wgmma matmuls with store = "tma" (the TMA-store epilogue: a 16-bit
// C staged in boxes of 64 x 64, 128-byte swizzled rows, each pair rounded
// once; MatmulWgmmaEpilogue.cpp) and in clusters (cluster = 2: B's tile
// multicast), through the whole pipeline and ptxas: a bf16 row-major B with
// edges in M and N (1000 x 704: TMA clips the boxes past M), an f16 B^T in a
// persistent grid of pairs with bias + GELU in the epilogue, and a bf16 row-major
// B in plain pairs with an f32 result (boxes of 64 x 32). ptxas keeps every
// kernel under the limits with no spills; kb-run checks the bundle against
// its float64 reference on the GPU (scripts/differential.sh carries every
// test/Target/gpu-*.mlir). Built 2026-12-07 with no GPU to be had: not yet
// run on one.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_matmul.ptx
// PTX: cvt.rn.bf16x2.f32
// PTX: st.shared.b32
// PTX: fence.proxy.async.shared::cta
// PTX: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX: cp.async.bulk.wait_group 0;
// CHECK: "kernels": [
// CHECK: "name": "k0_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "cluster": [
// CHECK-NEXT: 2,
// CHECK: "name": "k1_fused_matmul_bias_add_gelu"
// CHECK: "spill_store_bytes": 0
// CHECK: "cluster": [
// CHECK-NEXT: 1,
// CHECK-NEXT: 2,
// CHECK: "name": "k2_matmul"
// CHECK: "spill_store_bytes": 0
func.func @half_tma_store(%a: tensor<1000x1024xbf16> {kb.name = "a"}, %b: tensor<1024x704xbf16> {kb.name = "b"},
                          %f: tensor<512x512xf16> {kb.name = "f"}, %w: tensor<384x512xf16> {kb.name = "w"}, %bias: tensor<384xf16> {kb.name = "bias"},
                          %c: tensor<256x512xbf16> {kb.name = "c"}, %d: tensor<512x256xbf16> {kb.name = "d"})
    -> (tensor<1000x704xbf16>, tensor<512x384xf16>, tensor<256x256xf32>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 4, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<1000x1024xbf16>, tensor<1024x704xbf16> -> tensor<1000x704xbf16>
  %1 = kb.matmul %f, %w transpose_b {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 4, grid = 4, cluster = 2, mma = "wgmma_f16", copy = "tma", store = "tma">} : tensor<512x512xf16>, tensor<384x512xf16> -> tensor<512x384xf16>
  %2 = kb.bias_add %1, %bias : tensor<512x384xf16>, tensor<384xf16> -> tensor<512x384xf16>
  %3 = kb.gelu %2 approx(tanh) : tensor<512x384xf16>
  %4 = kb.matmul %c, %d {config = #kb.config<block = [128, 128, 64], threads = 288, stages = 4, cluster = 2, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<256x512xbf16>, tensor<512x256xbf16> -> tensor<256x256xf32>
  return %0, %3, %4 : tensor<1000x704xbf16>, tensor<512x384xf16>, tensor<256x256xf32>
}
