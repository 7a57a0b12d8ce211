// RUN: kb-opt %s --kb-select-mma --kb-select-config --kb-tile -split-input-file -verify-diagnostics | FileCheck %s

// 16-bit matmuls on sm_90a: BK = 64 (a 128-byte row), no split, no cluster
// (none has a 16-bit form yet), the tile chosen without the split the
// rules would pair it with, and B in either form on the B^T kernel's tiles.

// A hand-set tile over a long K gets no split-K of kb-tile's own.
// CHECK-LABEL: func.func @handset_long_k
// CHECK: kb.config<block = [64, 64, 64], mma = "wgmma_bf16">
func.func @handset_long_k(%a: tensor<128x16384xbf16>, %b: tensor<128x16384xbf16>) -> tensor<128x128xf32> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<block = [64, 64, 64]>} : tensor<128x16384xbf16>, tensor<128x16384xbf16> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// A row-major B, K % 64 != 0 (where tf32 would take a cluster of 4): no
// cluster; BN a multiple of 64 (B's boxes of 64 columns).
// CHECK-LABEL: func.func @rowb_default
// CHECK: kb.config<block = [128, 64, 64], mma = "wgmma_bf16">
func.func @rowb_default(%a: tensor<1024x1512xbf16>, %b: tensor<1512x1280xbf16>) -> tensor<1024x1280xbf16> {
  %0 = kb.matmul %a, %b : tensor<1024x1512xbf16>, tensor<1512x1280xbf16> -> tensor<1024x1280xbf16>
  return %0 : tensor<1024x1280xbf16>
}

// -----

// Few output tiles over a long K: tf32 takes 128 x 128 in two chunks; with
// no split the 16-bit tile is 128 x 64 (128 blocks, not 64).
// CHECK-LABEL: func.func @medium
// CHECK: kb.config<block = [128, 64, 64], mma = "wgmma_bf16"
// CHECK-NOT: split
func.func @medium(%a: tensor<1024x8192xbf16>, %b: tensor<1024x8192xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<1024x8192xbf16>, tensor<1024x8192xbf16> -> tensor<1024x1024xbf16>
  return %0 : tensor<1024x1024xbf16>
}

// -----

func.func @split_refused(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  // expected-error @+1 {{a 16-bit matmul is not split and runs no cluster yet: split, reduce and cluster do not apply to mma = "wgmma_bf16"}}
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<split = 2>} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

func.func @wide_softmax(%x: tensor<8x1000003xf16>) -> tensor<8x1000003xf16> {
  // expected-error @+1 {{a 16-bit softmax runs the row in registers only so far; rows of 1000003 are too wide for it (strategy "split_global" would do)}}
  %0 = kb.softmax %x : tensor<8x1000003xf16>
  return %0 : tensor<8x1000003xf16>
}
