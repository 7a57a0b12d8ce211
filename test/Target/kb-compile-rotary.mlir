// kb.rotary through kb's passes to PTX checked by ptxas: in a bf16
// linear's epilogue on wgmma (sm_90a) and mma.sync (sm_90), each thread
// rotating the column pairs of its accumulator fragment (one kernel, the
// tables read at the pair's position); in the split-K sum's elementwise
// kernel (kb-tile splits the f32 linear of few tiles and K = 2048); and
// alone, a memory-bound kernel whose 16-byte vectors hold whole pairs.
// kb-run reads each manifest.
// REQUIRES: ptxas
// RUN: rm -rf %t && mkdir -p %t
// RUN: kb-opt %s --kb-compile="output=%t/a chip=sm_90a ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=WGMMA < %t/a/k0_fused_matmul_rotary.ptx
// RUN: FileCheck %s --check-prefix=ALONE < %t/a/k3_rotary.ptx
// RUN: kb-opt %s --kb-compile="output=%t/b chip=sm_90 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=SYNC < %t/b/k0_fused_matmul_rotary.ptx
// RUN: kb-opt %s --kb-compile="output=%t/c chip=sm_80 ptxas=%ptxas" -o /dev/null
// RUN: FileCheck %s --check-prefix=SPLIT < %t/c/k2_fused_split_sum_bias_add_rotary_scale.ptx
// RUN: %if kb-run %{ kb-run --check %t/a | FileCheck %s --check-prefix=VALID %}
// RUN: %if kb-run %{ kb-run --check %t/b | FileCheck %s --check-prefix=VALID %}
// RUN: %if kb-run %{ kb-run --check %t/c | FileCheck %s --check-prefix=VALID %}

// WGMMA: .entry k0_fused_matmul_rotary
// WGMMA: wgmma.mma_async
// The tables: cos and sin, 16-bit, at the pair's position.
// WGMMA: ld.global.nc.b16
// WGMMA: ld.global.nc.b16
// WGMMA-COUNT-16: cvt.rn.bf16x2.f32
// SYNC: .entry k0_fused_matmul_rotary
// SYNC: mma.sync.aligned
// SYNC: ld.global.nc.b16
// SYNC-COUNT-16: st.global.b32
// SPLIT: .entry k2_fused_split_sum_bias_add_rotary_scale
// The partials (4 floats of each), the bias, then the f32 tables.
// SPLIT: ld.global.nc.v4.b32
// SPLIT: ld.global.nc.v4.b32
// SPLIT: ld.global.nc.b32
// SPLIT: st.global.v4.b32
// ALONE: .entry k3_rotary
// ALONE: ld.global.nc.v4.b32
// ALONE-COUNT-8: ld.global.nc.b16
// ALONE: st.global.v4.b32
// VALID: OK (4 kernels
func.func @rotaries(%x: tensor<256x256xbf16> {kb.name = "x"}, %w: tensor<256x256xbf16> {kb.name = "w"}, %c: tensor<128x32xbf16> {kb.name = "cos"}, %s: tensor<128x32xbf16> {kb.name = "sin"},
                    %xf: tensor<256x2048xf32> {kb.name = "xf"}, %wf: tensor<256x2048xf32> {kb.name = "wf"}, %cf: tensor<128x32xf32> {kb.name = "cosf"}, %sf: tensor<128x32xf32> {kb.name = "sinf"}, %b: tensor<256xf32> {kb.name = "b"},
                    %h: tensor<2x4x128x64xbf16> {kb.name = "h"})
    -> (tensor<256x256xbf16> {kb.name = "q"}, tensor<256x256xf32> {kb.name = "k"}, tensor<2x4x128x64xbf16> {kb.name = "y"}) {
  %0 = kb.matmul %x, %w transpose_b : tensor<256x256xbf16>, tensor<256x256xbf16> -> tensor<256x256xbf16>
  %1 = kb.rotary %0, %c, %s : tensor<256x256xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16> -> tensor<256x256xbf16>
  %2 = kb.matmul %xf, %wf precision(tf32) transpose_b : tensor<256x2048xf32>, tensor<256x2048xf32> -> tensor<256x256xf32>
  %3 = kb.bias_add %2, %b : tensor<256x256xf32>, tensor<256xf32> -> tensor<256x256xf32>
  %4 = kb.rotary %3, %cf, %sf : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
  %5 = kb.scale %4 by 0.5 : tensor<256x256xf32>
  %6 = kb.rotary %h, %c, %s : tensor<2x4x128x64xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16> -> tensor<2x4x128x64xbf16>
  return %1, %5, %6 : tensor<256x256xbf16>, tensor<256x256xf32>, tensor<2x4x128x64xbf16>
}
