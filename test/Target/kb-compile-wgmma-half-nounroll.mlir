// The 16-bit wgmma kernel's k loop of 3 to 5 k tiles is marked not to be
// unrolled (`.pragma "nounroll"`, MatmulWgmmaConsumer.cpp): unrolled whole,
// the persistent 128 x 256 x 64 kernel with 4 stages and the TMA store at K
// = 256 spilled 172 bytes at ptxas's 168 registers (the suite's batched 256
// x 256^3 B^T; 56 with direct stores). Not unrolled it spills none. Loops of
// 8 k tiles (K = 512) and of 2 (K = 128) are left to LLVM as before.
// REQUIRES: ptxas
// RUN: rm -rf %t && kb-opt %s --kb-compile="output=%t chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/manifest.json
// RUN: FileCheck %s --check-prefix=SHORT < %t/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=LONG < %t/k1_matmul.ptx
// RUN: FileCheck %s --check-prefix=LONG < %t/k2_matmul.ptx
// SHORT: .pragma "nounroll";
// LONG-NOT: nounroll
// CHECK: "name": "k0_matmul"
// CHECK: "spill_store_bytes": 0
func.func @three(%a: tensor<16x256x256xbf16>, %b: tensor<16x256x256xbf16>,
                 %c: tensor<16x256x512xbf16>, %d: tensor<16x256x512xbf16>,
                 %e: tensor<1024x128xbf16>, %f: tensor<1024x128xbf16>)
    -> (tensor<16x256x256xbf16>, tensor<16x256x256xbf16>, tensor<1024x1024xbf16>) {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<block = [128, 256, 64], threads = 288, stages = 4, grid = 12, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<16x256x256xbf16>, tensor<16x256x256xbf16> -> tensor<16x256x256xbf16>
  %1 = kb.matmul %c, %d transpose_b {config = #kb.config<block = [128, 256, 64], threads = 288, stages = 4, grid = 12, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<16x256x512xbf16>, tensor<16x256x512xbf16> -> tensor<16x256x256xbf16>
  %2 = kb.matmul %e, %f transpose_b {config = #kb.config<block = [128, 256, 64], threads = 288, stages = 4, grid = 12, mma = "wgmma_bf16", copy = "tma", store = "tma">} : tensor<1024x128xbf16>, tensor<1024x128xbf16> -> tensor<1024x1024xbf16>
  return %0, %1, %2 : tensor<16x256x256xbf16>, tensor<16x256x256xbf16>, tensor<1024x1024xbf16>
}
