// 16-bit matmuls on sm_90 (no wgmma): mma.sync m16n8k16 (issue #44) through
// the whole pipeline and ptxas: bf16 with a row-major B (ldmatrix.trans),
// f16 batched with B^T and edges in M, N and K and an f32 result, a bf16
// linear + bias + GELU with edges, K % 8 != 0 (A padded in front), N % 8
// != 0 (B^T by a kb.transpose in front) and a long K that kb-tile splits
// (f32 partials, kb.split_sum rounding once), at most 16 rows (16 x 128 x
// 64 tiles), a rank-3 batch of 1 over a long K (not split) and kb-tile's
// default 128 x 256 tile with a fused epilogue. ptxas keeps every kernel
// under the limits with no spills. kb-run checks the bundle against its
// float64 reference on the GPU (scripts/differential.sh carries every
// test/Target/gpu-*.mlir, for the chips below; on sm_90a the same programs
// take wgmma).
// GPU-CHIPS: sm_90 sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=PTX < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=PTXT < %t/b/k1_matmul.ptx
// sm_80 too: ptxas accepts the same kernels for Ampere.
// RUN: kb-opt %s --kb-compile="output=%t/a chip=sm_80 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=SM80 < %t/a/manifest.json

// PTX: cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: cvt.rn.bf16x2.f32
// PTXT-NOT: .trans
// PTXT: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// Keys are printed sorted: args, block, config, ..., name, ..., resources.
// CHECK: "kernels": [
// CHECK: "config": "#kb.config<block = [64, 64, 32], warp = [32, 32], threads = 128, stages = 3, pad = [8, 8], mma = \"mma_sync_bf16\", copy = \"cp_async\">"
// CHECK: "dynamic_shared_bytes": 29184
// CHECK: "name": "k0_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: mma = \"mma_sync_f16\"
// CHECK: "name": "k1_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k2_fused_matmul_bias_add_gelu"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k3_transpose"
// CHECK: "name": "k4_pad"
// CHECK: "name": "k5_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k7_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: split = 64>"
// CHECK: "name": "k8_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k9_split_sum"
// At most 16 rows: the 16 x 128 tile with BK = 64 (its chunks split among
// 128 threads).
// CHECK: block = [16, 128, 64], warp = [16, 32], threads = 128
// CHECK: "name": "k12_fused_matmul_gelu"
// CHECK: "spill_store_bytes": 0
// A batch of 1 (rank 3) over a long K: not split (kb-split-k has no rank-3
// form).
// CHECK: mma = \"mma_sync_bf16\", copy = \"cp_async\">"
// CHECK: "name": "k15_matmul"
// CHECK: "spill_store_bytes": 0
// The default big tile with a fused epilogue: 255 registers, no spills.
// CHECK: block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 3
// CHECK: "dynamic_shared_bytes": 92160
// CHECK: "name": "k16_fused_matmul_bias_add_gelu"
// CHECK: "spill_store_bytes": 0
// CHECK: "program": [
// SM80: mma = \"mma_sync_bf16\"
// SM80: "spill_store_bytes": 0
// SM80: mma = \"mma_sync_f16\"
// SM80: "spill_store_bytes": 0
// SM80: block = [128, 256, 32], warp = [64, 64], threads = 256, stages = 2
// SM80: "name": "k16_fused_matmul_bias_add_gelu"
// SM80: "spill_store_bytes": 0

func.func @half(%a: tensor<512x256xbf16>, %b: tensor<256x384xbf16>,
                %c: tensor<3x100x40xf16>, %d: tensor<3x72x40xf16>,
                %x: tensor<300x136xbf16>, %w: tensor<200x136xbf16>, %bias: tensor<200xbf16>,
                %e: tensor<96x100xbf16>, %f: tensor<100x64xbf16>,
                %g: tensor<64x520xf16>, %h: tensor<520x100xf16>,
                %p: tensor<128x16384xbf16>, %q: tensor<128x16384xbf16>,
                %r: tensor<11x11038xf16>, %s: tensor<11038x255xf16>,
                %u: tensor<1x55x16443xbf16>, %v: tensor<1x7x16443xbf16>,
                %x2: tensor<2048x256xbf16>, %w2: tensor<2304x256xbf16>, %bias2: tensor<2304xbf16>)
    -> (tensor<512x384xbf16>, tensor<3x100x72xf32>, tensor<300x200xbf16>, tensor<96x64xbf16>, tensor<64x100xf16>, tensor<128x128xbf16>,
        tensor<11x255xf16>, tensor<1x55x7xf32>, tensor<2048x2304xbf16>) {
  %0 = kb.matmul %a, %b : tensor<512x256xbf16>, tensor<256x384xbf16> -> tensor<512x384xbf16>
  %1 = kb.matmul %c, %d transpose_b : tensor<3x100x40xf16>, tensor<3x72x40xf16> -> tensor<3x100x72xf32>
  %2 = kb.matmul %x, %w transpose_b : tensor<300x136xbf16>, tensor<200x136xbf16> -> tensor<300x200xbf16>
  %3 = kb.bias_add %2, %bias : tensor<300x200xbf16>, tensor<200xbf16> -> tensor<300x200xbf16>
  %4 = kb.gelu %3 approx(tanh) : tensor<300x200xbf16>
  %5 = kb.matmul %e, %f : tensor<96x100xbf16>, tensor<100x64xbf16> -> tensor<96x64xbf16>
  %6 = kb.matmul %g, %h : tensor<64x520xf16>, tensor<520x100xf16> -> tensor<64x100xf16>
  %7 = kb.matmul %p, %q transpose_b : tensor<128x16384xbf16>, tensor<128x16384xbf16> -> tensor<128x128xbf16>
  %8 = kb.matmul %r, %s : tensor<11x11038xf16>, tensor<11038x255xf16> -> tensor<11x255xf16>
  %9 = kb.gelu %8 approx(tanh) : tensor<11x255xf16>
  %10 = kb.matmul %u, %v transpose_b : tensor<1x55x16443xbf16>, tensor<1x7x16443xbf16> -> tensor<1x55x7xf32>
  %11 = kb.matmul %x2, %w2 transpose_b : tensor<2048x256xbf16>, tensor<2304x256xbf16> -> tensor<2048x2304xbf16>
  %12 = kb.bias_add %11, %bias2 : tensor<2048x2304xbf16>, tensor<2304xbf16> -> tensor<2048x2304xbf16>
  %13 = kb.gelu %12 approx(tanh) : tensor<2048x2304xbf16>
  return %0, %1, %4, %5, %6, %7, %9, %10, %13 : tensor<512x384xbf16>, tensor<3x100x72xf32>, tensor<300x200xbf16>, tensor<96x64xbf16>, tensor<64x100xf16>, tensor<128x128xbf16>,
      tensor<11x255xf16>, tensor<1x55x7xf32>, tensor<2048x2304xbf16>
}
