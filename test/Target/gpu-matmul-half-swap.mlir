// 16-bit wgmma matmuls with a row-major B and operands = "ba": the kernel
// computes C^T = B^T A^T (MatmulWgmmaMma.cpp, mmaStepSwapped), one
// consumer warpgroup per 64 columns of the tile and a producer warpgroup,
// B's tile in 128-byte boxes of 64 columns read MN-major as wgmma's A
// operand (imm-trans-a = 1), the A tile K-major as its B operand (N = BM,
// the narrow side: any multiple of 8), the accumulators stored transposed.
// Through the whole pipeline and ptxas: 80 x 64 in 11 stages over 24 k
// tiles with an edge in M (cuBLAS's 64 x 80 on 768 x 768 x 2048, its
// narrow side moved to A), 88 x 64 with edges in M and N and bias + ReLU
// in the epilogue, an f16 48 x 128 (two consumer warpgroups) with bias +
// GELU, an f32 C and an edge in N, a batch of 4 at 56 x 64 with an edge in
// M in each batch, and 64 x 64 split in 2 (kb.split_sum adds the f32
// partials). A 16-bit C leaves in 4-byte pairs of columns (a shuffle with
// lane ^ 4), an f32 one element at a time.
// The PTX holds the A descriptor (low word | 8192 >> 4 << 16, high word
// 0x40000040: 128B, 1024 bytes a group of 8 k rows) and wgmma's
// `p, 1, 1, 1, 0` (A transposed, B not); ptxas keeps every kernel under
// the limits with no spills; kb-run checks the bundle against its float64
// reference on the GPU (scripts/differential.sh carries every
// test/Target/gpu-*.mlir; scripts/build-bench.sh builds it as
// gpu-matmul-half-swap-sm90a). Built 2026-12-08 with no GPU to be had: not
// yet run on one.
// GPU-CHIPS: sm_90a
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=MAPS < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=N80 < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=SHFL80 < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=N88 < %t/b/k1_fused_matmul_bias_add_relu.ptx
// RUN: FileCheck %s --check-prefix=N48 < %t/b/k2_fused_matmul_bias_add_gelu.ptx
// RUN: FileCheck %s --check-prefix=N56 < %t/b/k3_matmul.ptx
// RUN: FileCheck %s --check-prefix=SPLIT < %t/b/k4_matmul.ptx
//
// The maps: A's boxes of BM rows, B's of 64 k rows x 64 columns, all
// 128-byte swizzled (3-D with the batch).
// MAPS: "tensor_map":{"box":[80,64],"dims":[200,1536],"of":"a","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[1536,320],"of":"b","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[88,64],"dims":[250,320],"of":"c","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[320,200],"of":"d","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[48,64],"dims":[192,384],"of":"v","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[384,320],"of":"w","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[1,56,64],"dims":[4,100,192],"of":"x","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[1,64,64],"dims":[4,192,128],"of":"y","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[128,2048],"of":"p","swizzle":"128B"}
// MAPS-SAME: "tensor_map":{"box":[64,64],"dims":[2048,192],"of":"q","swizzle":"128B"}
// CHECK: "kernels": [
// CHECK: "block": [
// CHECK-NEXT: 256,
// CHECK: "dynamic_shared_bytes": 203952,
// CHECK-NEXT: "grid": [
// CHECK-NEXT: 5,
// CHECK-NEXT: 3,
// CHECK: "name": "k0_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k1_fused_matmul_bias_add_relu"
// CHECK: "spill_store_bytes": 0
// CHECK: "block": [
// CHECK-NEXT: 384,
// CHECK: "name": "k2_fused_matmul_bias_add_gelu"
// CHECK: "spill_store_bytes": 0
// CHECK: "grid": [
// CHECK-NEXT: 2,
// CHECK-NEXT: 2,
// CHECK-NEXT: 4
// CHECK: "name": "k3_matmul"
// CHECK: "spill_store_bytes": 0
// CHECK: "name": "k4_matmul"
// CHECK: "spill_store_bytes": 0
//
// 80 x 64: a stage of 18432 bytes, A's box then B's at 10240; the A
// descriptor (B's box, MN-major) and the B one (A's tile, K-major: leading
// byte offset 1) share the high word; k16 steps 2048 bytes (128) along
// B's box, 32 (2) along A's rows. Twenty 4-byte stores a thread (pairs of
// columns through a shuffle with lane ^ 4) where C^T's column of 40 values
// would take 40 of 2 bytes.
// N80: mov.b32 {{.*}}, 18432;
// N80: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// N80-NEXT: add.s64 {{.*}}, 10240;
// N80: cp.async.bulk.tensor.2d
// N80-NOT: cp.async.bulk.tensor.2d
// N80: wgmma.fence
// N80: or.b32 {{.*}}, 33554432;
// N80-NEXT: mov.b32 {{.*}}, 1073741888;
// N80: or.b32 {{.*}}, 65536;
// N80: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// N80: add.s32 {{.*}}, 33554560;
// N80: or.b32 {{.*}}, 65538;
// N80: wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// N80-COUNT-20: st.global.b32
// N80-NOT: st.global
// SHFL80-COUNT-20: shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// SHFL80-NOT: shfl.sync
//
// N88: wgmma.mma_async.sync.aligned.m64n88k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// N88-COUNT-22: st.global.b32
// N88-NOT: st.global
// N48: mov.b32 {{.*}}, 22528;
// N48: wgmma.mma_async.sync.aligned.m64n48k16.f32.f16.f16 {{.*}}, p, 1,  1, 1,  0;
// N56: cp.async.bulk.tensor.3d
// N56: wgmma.mma_async.sync.aligned.m64n56k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// N56-COUNT-14: st.global.b32
// SPLIT: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, p, 1,  1, 1,  0;
// SPLIT-COUNT-32: st.global.b32
func.func @half_swap(%a: tensor<200x1536xbf16> {kb.name = "a"}, %b: tensor<1536x320xbf16> {kb.name = "b"},
                     %c: tensor<250x320xbf16> {kb.name = "c"}, %d: tensor<320x200xbf16> {kb.name = "d"},
                     %v: tensor<192x384xf16> {kb.name = "v"}, %w: tensor<384x320xf16> {kb.name = "w"},
                     %bias: tensor<320xf32> {kb.name = "bias"}, %bias2: tensor<200xbf16> {kb.name = "bias2"},
                     %x: tensor<4x100x192xbf16> {kb.name = "x"}, %y: tensor<4x192x128xbf16> {kb.name = "y"},
                     %p: tensor<128x2048xbf16> {kb.name = "p"}, %q: tensor<2048x192xbf16> {kb.name = "q"})
    -> (tensor<200x320xbf16>, tensor<250x200xbf16>, tensor<192x320xf32>, tensor<4x100x128xbf16>, tensor<128x192xbf16>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [80, 64, 64], threads = 256, stages = 11, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<200x1536xbf16>, tensor<1536x320xbf16> -> tensor<200x320xbf16>
  %1 = kb.matmul %c, %d {config = #kb.config<block = [88, 64, 64], threads = 256, stages = 6, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<250x320xbf16>, tensor<320x200xbf16> -> tensor<250x200xbf16>
  %7 = kb.bias_add %1, %bias2 : tensor<250x200xbf16>, tensor<200xbf16> -> tensor<250x200xbf16>
  %8 = kb.relu %7 : tensor<250x200xbf16>
  %2 = kb.matmul %v, %w {config = #kb.config<block = [48, 128, 64], threads = 384, stages = 4, mma = "wgmma_f16", copy = "tma", operands = "ba">} : tensor<192x384xf16>, tensor<384x320xf16> -> tensor<192x320xf32>
  %3 = kb.bias_add %2, %bias : tensor<192x320xf32>, tensor<320xf32> -> tensor<192x320xf32>
  %4 = kb.gelu %3 approx(tanh) : tensor<192x320xf32>
  %5 = kb.matmul %x, %y {config = #kb.config<block = [56, 64, 64], stages = 4, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<4x100x192xbf16>, tensor<4x192x128xbf16> -> tensor<4x100x128xbf16>
  %6 = kb.matmul %p, %q {config = #kb.config<block = [64, 64, 64], stages = 4, split = 2, mma = "wgmma_bf16", copy = "tma", operands = "ba">} : tensor<128x2048xbf16>, tensor<2048x192xbf16> -> tensor<128x192xbf16>
  return %0, %8, %4, %5, %6 : tensor<200x320xbf16>, tensor<250x200xbf16>, tensor<192x320xf32>, tensor<4x100x128xbf16>, tensor<128x192xbf16>
}
