// A bf16 decode matmul (1 row against a 4096 x 4096 weight) compiles on
// sm_90 (no wgmma) and sm_90a to the gemv kernel: 8-byte streamed loads of
// 4 bf16, widened to f32, f32 FMAs, one bf16 store. PTX through ptxas.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/sm90 chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/sm90/k0_matmul.ptx
// RUN: kb-opt %s --kb-compile="output=%t/sm90a chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s < %t/sm90a/k0_matmul.ptx

// CHECK: ld.global.nc.L2::cache_hint.v2.b32
// CHECK: cvt.f32.bf16
// CHECK: fma.rn.f32
// CHECK: cvt.rn.bf16.f32
// CHECK: st.global.b16
// CHECK-NOT: wgmma

func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %0 = kb.matmul %x, %w transpose_b : tensor<1x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1x4096xbf16>
  return %0 : tensor<1x4096xbf16>
}
