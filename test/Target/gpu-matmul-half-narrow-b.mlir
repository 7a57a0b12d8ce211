// 16-bit wgmma matmuls with a row-major B and BN not a multiple of 64: B's
// tile lies in boxes of 64 k rows x 32 columns (64 bytes, 64-byte swizzle)
// where 32 divides BN, else of 16 columns (32 bytes, 32-byte swizzle), read
// MN-major by wgmma (wgmmaMnBoxCols; MatmulWgmmaMma.cpp, descriptor).
// Through the whole pipeline and ptxas: 64 x 80 in 11 stages (five
// 16-column boxes: cuBLAS's nvjet tile and stages on 768 x 768 x 2048;
// more than 8 stages take a wgmma mma), 64 x 96 with edges in M and
// N (three 32-column boxes; the last column tile's third box lies wholly
// past N, zero-filled by TMA), 64 x 48 with an edge in N (three 16-column
// boxes), and an f16 128 x 160 on a persistent grid with bias + GELU in the
// epilogue and an f32 C (five 32-column boxes, two consumer warpgroups).
// The manifest names each map's box and swizzle (kb-run encodes it,
// CU_TENSOR_MAP_SWIZZLE_64B / 32B); the PTX holds the B descriptors' high
// words (swizzle mode 2 or 3 in bits 62-63, the stride byte offset of one
// 8-row group of k, 512 or 256 bytes, >> 4) and low words' leading byte
// offsets (one box, 64 rows of 64 or 32 bytes, >> 4, in bits 16-29).
// ptxas keeps every kernel under the limits with no spills; kb-run checks
// the bundle against its float64 reference on the GPU
// (scripts/differential.sh carries every test/Target/gpu-*.mlir). Built
// 2026-12-07 with no GPU to be had: not yet run on one.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=MAPS < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=SW32 < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=SW64 < %t/b/k1_matmul.ptx
// RUN: FileCheck %s --check-prefix=SW32N48 < %t/b/k2_matmul.ptx
// RUN: FileCheck %s --check-prefix=SW64 < %t/b/k3_fused_matmul_bias_add_gelu.ptx
//
// The maps (the bundle record in each PTX file holds the manifest on one
// line): A's 128-byte boxes of 64 columns, B's narrower ones.
// MAPS: "tensor_map":{"box":[64,64],"dims":[256,1536],"of":"a","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,16],"dims":[1536,400],"of":"b","swizzle":"32B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[200,320],"of":"c","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,32],"dims":[320,704],"of":"d","swizzle":"64B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[128,256],"of":"e","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,16],"dims":[256,200],"of":"f","swizzle":"32B"}
// MAPS-SAME: "tensor_map":{"box":[128,64],"dims":[192,384],"of":"v","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,32],"dims":[384,320],"of":"w","swizzle":"64B"}
// CHECK: "kernels": [
// CHECK: "dynamic_shared_bytes": 203952,
// CHECK-NEXT: "grid": [
// CHECK: "name": "k0_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k1_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k2_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k3_fused_matmul_bias_add_gelu"
// CHECK: "spill_store_bytes": 0
//
// 64 x 80: the A tile (8 KB), then five boxes of 2 KB; the B descriptor's
// leading byte offset 2048 (128 << 16), high word 0xC0000010 (32B, 256
// bytes), its k16 steps 512 bytes (32) apart; wgmma reads B N-major.
// A stage's 18432 bytes expected, its copies: A's box, then B's at 8192 +
// 2048 j.
// SW32: mov.b32 {{.*}}, 18432;
// SW32: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SW32-NEXT: add.s64 {{.*}}, 8192;
// SW32: cp.async.bulk.tensor.2d
// SW32-NEXT: add.s64 {{.*}}, 10240;
// SW32: cp.async.bulk.tensor.2d
// SW32-NEXT: add.s64 {{.*}}, 12288;
// SW32: cp.async.bulk.tensor.2d
// SW32-NEXT: add.s64 {{.*}}, 14336;
// SW32: cp.async.bulk.tensor.2d
// SW32-NEXT: add.s64 {{.*}}, 16384;
// SW32: cp.async.bulk.tensor.2d
// SW32-NOT: cp.async.bulk.tensor.2d
// SW32: wgmma.fence
// SW32: mov.b32 {{.*}}, 1073741888;
// SW32: or.b32 {{.*}}, 8388608;
// SW32: mov.b32 {{.*}}, -1073741808;
// SW32: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 0,  1;
// SW32: {{add.s32|or.b32}} {{.*}}, 8388640;
// SW32: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16
//
// 32-column boxes of 4 KB: leading byte offset 4096 (256 << 16), high word
// 0x80000020 (64B, 512 bytes), k16 steps 1024 bytes (64) apart.
// SW64: or.b32 {{.*}}, 16777216;
// SW64: mov.b32 {{.*}}, -2147483616;
// SW64: wgmma.mma_async.sync.aligned.m64n{{96|160}}k16.f{{32|16}}.{{.*}}, p, 1,  1, 0,  1;
// SW64: {{add.s32|or.b32}} {{.*}}, 16777280;
//
// 64 x 48: three boxes, the next stage 14336 bytes on.
// SW32N48: cp.async.bulk.tensor.2d
// SW32N48-NEXT: add.s64 {{.*}}, 8192;
// SW32N48: cp.async.bulk.tensor.2d
// SW32N48-NEXT: add.s64 {{.*}}, 10240;
// SW32N48: cp.async.bulk.tensor.2d
// SW32N48-NEXT: add.s64 {{.*}}, 12288;
// SW32N48: cp.async.bulk.tensor.2d
// SW32N48-NEXT: add.s64 {{.*}}, 14336;
// SW32N48: mov.b32 {{.*}}, -1073741808;
// SW32N48: wgmma.mma_async.sync.aligned.m64n48k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 0,  1;
func.func @half_narrow_b(%a: tensor<256x1536xbf16> {kb.name = "a"}, %b: tensor<1536x400xbf16> {kb.name = "b"},
                         %c: tensor<200x320xbf16> {kb.name = "c"}, %d: tensor<320x704xbf16> {kb.name = "d"},
                         %e: tensor<128x256xbf16> {kb.name = "e"}, %f: tensor<256x200xbf16> {kb.name = "f"},
                         %v: tensor<192x384xf16> {kb.name = "v"}, %w: tensor<384x320xf16> {kb.name = "w"},
                         %bias: tensor<320xf32> {kb.name = "bias"})
    -> (tensor<256x400xbf16>, tensor<200x704xbf16>, tensor<128x200xf32>, tensor<192x320xf32>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [64, 80, 64], threads = 160, stages = 11, mma = "wgmma_bf16", copy = "tma">} : tensor<256x1536xbf16>, tensor<1536x400xbf16> -> tensor<256x400xbf16>
  %1 = kb.matmul %c, %d {config = #kb.config<block = [64, 96, 64], threads = 160, stages = 6, mma = "wgmma_bf16", copy = "tma">} : tensor<200x320xbf16>, tensor<320x704xbf16> -> tensor<200x704xbf16>
  %2 = kb.matmul %e, %f {config = #kb.config<block = [64, 48, 64], threads = 160, stages = 4, mma = "wgmma_bf16", copy = "tma">} : tensor<128x256xbf16>, tensor<256x200xbf16> -> tensor<128x200xf32>
  %3 = kb.matmul %v, %w {config = #kb.config<block = [128, 160, 64], threads = 288, stages = 4, grid = 3, mma = "wgmma_f16", copy = "tma">} : tensor<192x384xf16>, tensor<384x320xf16> -> tensor<192x320xf32>
  %4 = kb.bias_add %3, %bias : tensor<192x320xf32>, tensor<320xf32> -> tensor<192x320xf32>
  %5 = kb.gelu %4 approx(tanh) : tensor<192x320xf32>
  return %0, %1, %2, %5 : tensor<256x400xbf16>, tensor<200x704xbf16>, tensor<128x200xf32>, tensor<192x320xf32>
}
