// A bf16 matmul with few output tiles over a long K compiles on sm_90a to
// kb-tile's split-K: the bf16 wgmma kernel writing f32 partials, and the
// kb.split_sum kernel adding them in f32 and rounding once, at its bf16
// store; hand-set stream-K runs the bf16 wgmma in one kernel with its
// workspace (12 tiles over 8 blocks: 4 of them in two chunks). PTX
// through ptxas.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/b chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=MANIFEST < %t/b/manifest.json
// RUN: FileCheck %s --check-prefix=MM < %t/b/k0_matmul.ptx
// RUN: FileCheck %s --check-prefix=SUM < %t/b/k1_split_sum.ptx
// RUN: FileCheck %s --check-prefix=STREAM < %t/b/k2_matmul.ptx

// MANIFEST: "dtype": "f32",
// MANIFEST-NEXT: "name": "t0",
// MANIFEST: "role": "workspace"
// MANIFEST: "name": "k0_matmul",
// MANIFEST: "name": "k1_split_sum",

// MM: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// MM-NOT: cvt.rn.bf16
// MM: st.global.v2.b32
// MM-NOT: cvt.rn.bf16

// SUM: ld.global.nc.v4.b32
// SUM: ld.global.nc.v4.b32
// SUM: add.rn.f32
// SUM: cvt.rn.bf16x2.f32
// SUM: st.global.v2.b32

// STREAM: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// STREAM-DAG: ld.acquire.gpu.global.u32
// STREAM-DAG: cvt.rn.f16x2.f32

func.func @halfsplit(%a: tensor<1024x8192xbf16>, %b: tensor<1024x8192xbf16>, %c: tensor<512x512xf16>, %d: tensor<384x512xf16>) -> (tensor<1024x1024xbf16>, tensor<512x384xf16>) {
  %0 = kb.matmul %a, %b transpose_b : tensor<1024x8192xbf16>, tensor<1024x8192xbf16> -> tensor<1024x1024xbf16>
  %1 = kb.matmul %c, %d transpose_b {config = #kb.config<block = [128, 128, 64], grid = 8, reduce = "stream">} : tensor<512x512xf16>, tensor<384x512xf16> -> tensor<512x384xf16>
  return %0, %1 : tensor<1024x1024xbf16>, tensor<512x384xf16>
}
