// RUN: kb-opt %s -split-input-file | kb-opt -split-input-file | FileCheck %s
// RUN: kb-opt %s -split-input-file -mlir-print-op-generic | kb-opt -split-input-file | FileCheck %s

// kb.rotary round-trips: a linear's output (B*T, heads*head_dim) with
// P = T, a contiguous (B, heads, T, head_dim) tensor (one head a row), 16-bit
// inputs with tables of their type or f32.

// CHECK-LABEL: func.func @rotaries
// CHECK: kb.rotary %{{.*}}, %{{.*}}, %{{.*}} : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
// CHECK: kb.rotary %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4x128x64xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16> -> tensor<2x4x128x64xbf16>
// CHECK: kb.rotary %{{.*}}, %{{.*}}, %{{.*}} {config = #kb.config<vector = 2>} : tensor<64x128xf16>, tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x128xf16>
func.func @rotaries(%x: tensor<256x256xf32>, %c: tensor<128x32xf32>, %s: tensor<128x32xf32>,
                    %q: tensor<2x4x128x64xbf16>, %cb: tensor<128x32xbf16>, %sb: tensor<128x32xbf16>,
                    %h: tensor<64x128xf16>, %c2: tensor<64x32xf32>, %s2: tensor<64x32xf32>)
    -> (tensor<256x256xf32>, tensor<2x4x128x64xbf16>, tensor<64x128xf16>) {
  %0 = kb.rotary %x, %c, %s : tensor<256x256xf32>, tensor<128x32xf32>, tensor<128x32xf32> -> tensor<256x256xf32>
  %1 = kb.rotary %q, %cb, %sb : tensor<2x4x128x64xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16> -> tensor<2x4x128x64xbf16>
  %2 = kb.rotary %h, %c2, %s2 {config = #kb.config<vector = 2>} : tensor<64x128xf16>, tensor<64x32xf32>, tensor<64x32xf32> -> tensor<64x128xf16>
  return %0, %1, %2 : tensor<256x256xf32>, tensor<2x4x128x64xbf16>, tensor<64x128xf16>
}
