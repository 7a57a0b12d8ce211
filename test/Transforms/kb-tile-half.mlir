// RUN: kb-opt %s --kb-select-mma --kb-select-config --kb-tile -split-input-file -verify-diagnostics | FileCheck %s

// 16-bit matmuls on sm_90a: BK = 64 (a 128-byte row), split-K as for tf32
// (the rules on K / 2; kb.split_sum adds the f32 partials), a hand-set
// stream-K kept, no cluster and no cluster reduce (neither has a 16-bit
// form yet), and B in either form on the B^T kernel's tiles.

// A hand-set tile over a long K gets kb-tile's split-K, as tf32 does (4
// output tiles, 256 k tiles: 32 chunks of 8).
// CHECK-LABEL: func.func @handset_long_k
// CHECK: kb.config<block = [64, 64, 64], mma = "wgmma_bf16", split = 32>
func.func @handset_long_k(%a: tensor<128x16384xbf16>, %b: tensor<128x16384xbf16>) -> tensor<128x128xf32> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<block = [64, 64, 64]>} : tensor<128x16384xbf16>, tensor<128x16384xbf16> -> tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}

// -----

// A row-major B, K % 64 != 0 (where tf32 would take a cluster of 4): no
// cluster, the tile chosen for no split; BN a multiple of 64 (B's boxes of
// 64 columns).
// CHECK-LABEL: func.func @rowb_default
// CHECK: kb.config<block = [128, 64, 64], mma = "wgmma_bf16">
func.func @rowb_default(%a: tensor<1024x1512xbf16>, %b: tensor<1512x1280xbf16>) -> tensor<1024x1280xbf16> {
  %0 = kb.matmul %a, %b : tensor<1024x1512xbf16>, tensor<1512x1280xbf16> -> tensor<1024x1280xbf16>
  return %0 : tensor<1024x1280xbf16>
}

// -----

// A hand-set BN of 80 or 96 with a row-major B (boxes of 16 or 32
// columns) is kept; the default tile stays on multiples of 64.
// CHECK-LABEL: func.func @rowb_handset_narrow
// CHECK: kb.config<block = [64, 80, 64], stages = 8, mma = "wgmma_bf16">
// CHECK: kb.config<block = [64, 96, 64], stages = 6, mma = "wgmma_bf16">
func.func @rowb_handset_narrow(%a: tensor<768x2048xbf16>, %b: tensor<2048x768xbf16>) -> (tensor<768x768xbf16>, tensor<768x768xbf16>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [64, 80, 64], stages = 8>} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  %1 = kb.matmul %a, %b {config = #kb.config<block = [64, 96, 64], stages = 6>} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0, %1 : tensor<768x768xbf16>, tensor<768x768xbf16>
}

// -----

// BN = 40 with a row-major B: no box of 16, 32 or 64 columns divides it.
func.func @rowb_bn40(%a: tensor<768x2048xbf16>, %b: tensor<2048x768xbf16>) -> tensor<768x768xbf16> {
  // expected-error @+1 {{a 16-bit wgmma tile with a row-major B needs BN a multiple of 16 (boxes of 64, 32 or 16 columns); got block = [64, 40, 64]}}
  %0 = kb.matmul %a, %b {config = #kb.config<block = [64, 40, 64]>} : tensor<768x2048xbf16>, tensor<2048x768xbf16> -> tensor<768x768xbf16>
  return %0 : tensor<768x768xbf16>
}

// -----

// Few output tiles over a long K: 128 x 128 in two chunks, as tf32 (whose
// chunks the cluster reduce sums; a 16-bit one's, kb.split_sum).
// CHECK-LABEL: func.func @medium
// CHECK: kb.config<block = [128, 128, 64], mma = "wgmma_bf16", split = 2>
// CHECK-NOT: reduce
func.func @medium(%a: tensor<1024x8192xbf16>, %b: tensor<1024x8192xbf16>) -> tensor<1024x1024xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<1024x8192xbf16>, tensor<1024x8192xbf16> -> tensor<1024x1024xbf16>
  return %0 : tensor<1024x1024xbf16>
}

// -----

// K = 300000 in 16 bits is 150000 in 128-byte lines, 16 past a whole k
// tile of 32: A's rows split lines. Over more than 128 k tiles the
// few-tiles model chooses anyway: the exact fit in 115 chunks (it used to
// stand down, leaving the medium rule's 128 x 128 in 2 chunks, 8 blocks on
// 132 SMs: 0.6648 ms against cuBLAS's 0.1102 on an H100, 2026-12-07).
// CHECK-LABEL: func.func @long_k_lines_split
// CHECK: kb.config<block = [192, 160, 64], mma = "wgmma_bf16", split = 115>
func.func @long_k_lines_split(%a: tensor<192x300000xbf16>, %b: tensor<160x300000xbf16>) -> tensor<192x160xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<192x300000xbf16>, tensor<160x300000xbf16> -> tensor<192x160xbf16>
  return %0 : tensor<192x160xbf16>
}

// -----

// Split lines over at most 128 k tiles (K = 6432: 101) stay out of the
// few-tiles model, as measured for tf32 (run 11): the medium rule's 128 x
// 128 in 2 chunks, not the model's 64 x 128 in 4.
// CHECK-LABEL: func.func @short_k_lines_split
// CHECK: kb.config<block = [128, 128, 64], mma = "wgmma_bf16", split = 2>
func.func @short_k_lines_split(%a: tensor<1024x6432xbf16>, %b: tensor<256x6432xbf16>) -> tensor<1024x256xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<1024x6432xbf16>, tensor<256x6432xbf16> -> tensor<1024x256xbf16>
  return %0 : tensor<1024x256xbf16>
}

// -----

// A hand-set split is kept.
// CHECK-LABEL: func.func @split_handset
// CHECK: kb.config<block = [64, 64, 64], mma = "wgmma_bf16", split = 2>
func.func @split_handset(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<split = 2>} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

// A hand-set reduce = "stream" stays on the default tile.
// CHECK-LABEL: func.func @stream_handset
// CHECK: kb.config<block = [64, 64, 64], mma = "wgmma_bf16", grid = 8, reduce = "stream">
func.func @stream_handset(%a: tensor<512x512xbf16>, %b: tensor<384x512xbf16>) -> tensor<512x384xbf16> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<grid = 8, reduce = "stream">} : tensor<512x512xbf16>, tensor<384x512xbf16> -> tensor<512x384xbf16>
  return %0 : tensor<512x384xbf16>
}

// -----

func.func @reduce_refused(%a: tensor<512x512xbf16>, %b: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  // expected-error @+1 {{a 16-bit matmul runs no cluster reduce yet: reduce = "cluster" does not apply to mma = "wgmma_bf16" (split = S, reduce = "stream" and cluster = C do)}}
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<split = 2, reduce = "cluster">} : tensor<512x512xbf16>, tensor<512x512xbf16> -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

// A cluster of blocks sharing B's tile by multicast is kept.
// CHECK-LABEL: func.func @cluster_kept
// CHECK: cluster = 2
func.func @cluster_kept(%a: tensor<512x512xf16>, %b: tensor<512x512xf16>) -> tensor<512x512xf16> {
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<cluster = 2>} : tensor<512x512xf16>, tensor<512x512xf16> -> tensor<512x512xf16>
  return %0 : tensor<512x512xf16>
}

// -----

func.func @wide_softmax(%x: tensor<8x1000003xf16>) -> tensor<8x1000003xf16> {
  // expected-error @+1 {{a 16-bit softmax runs the row in registers only so far; rows of 1000003 are too wide for it (strategy "split_global" would do)}}
  %0 = kb.softmax %x : tensor<8x1000003xf16>
  return %0 : tensor<8x1000003xf16>
}

// -----

// At most 4 rows against a weight: the gemv kernel, as for f32 (16-bit
// loads, f32 FMAs), with a remark where wgmma would have been the unit.
// CHECK-LABEL: func.func @gemv_default
// CHECK: kb.config<block = [1, 4, 1024], warp = [1, 1], mma = "gemv">
func.func @gemv_default(%a: tensor<1x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  // expected-remark @+1 {{gemv, not wgmma_bf16: 1 x 4096 outputs are bound by the weight's bytes; f32 FMAs stream it in 16 bits (wgmma tiles of 64 rows would compute rows that do not exist)}}
  %0 = kb.matmul %a, %b transpose_b : tensor<1x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1x4096xbf16>
  return %0 : tensor<1x4096xbf16>
}

// -----

func.func @gemv_too_many_rows(%a: tensor<64x4096xf16>, %b: tensor<4096x4096xf16>) -> tensor<64x4096xf16> {
  // expected-error @+1 {{config asks for mma "gemv", which computes matmuls of batch 1 with at most 16 rows or columns; this one is 64 x 4096}}
  %0 = kb.matmul %a, %b transpose_b {config = #kb.config<mma = "gemv">} : tensor<64x4096xf16>, tensor<4096x4096xf16> -> tensor<64x4096xf16>
  return %0 : tensor<64x4096xf16>
}

// -----

// 65-128 rows with B^T over few tiles (the tf32 rules' 64 x 64): 128 x 128
// split over about half the SMs (32 tiles, 2 chunks: 64 blocks; measured
// 2026-12-07, TileWgmma.cpp).
// CHECK-LABEL: func.func @skinny_128_rows
// CHECK: kb.config<block = [128, 128, 64], mma = "wgmma_bf16", split = 2>
func.func @skinny_128_rows(%a: tensor<128x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<128x4096xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<128x4096xbf16>, tensor<4096x4096xbf16> -> tensor<128x4096xbf16>
  return %0 : tensor<128x4096xbf16>
}

// -----

// Negative: 64 rows keep one warpgroup's tile (no 128-row tile of 64 empty
// rows).
// CHECK-LABEL: func.func @skinny_64_rows
// CHECK-NOT: block = [128, 128
// CHECK: return
func.func @skinny_64_rows(%a: tensor<64x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<64x4096xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<64x4096xbf16>, tensor<4096x4096xbf16> -> tensor<64x4096xbf16>
  return %0 : tensor<64x4096xbf16>
}

// -----

// A row-major B at 128 x 256 takes the persistent grid in one wave (128
// tiles: grid = 128) and with edges (4000^3: 16 x 32 tiles, grid = 132), so
// that kb-promote-shared-memory gives the 16-bit C its TMA store.
// CHECK-LABEL: func.func @rowb_one_wave
// CHECK: kb.config<block = [128, 256, 64], mma = "wgmma_bf16", grid = 128
// CHECK-LABEL: func.func @rowb_edges
// CHECK: kb.config<block = [128, 256, 64], mma = "wgmma_bf16", grid = 132
func.func @rowb_one_wave(%a: tensor<2048x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16> {
  %0 = kb.matmul %a, %b : tensor<2048x2048xbf16>, tensor<2048x2048xbf16> -> tensor<2048x2048xbf16>
  return %0 : tensor<2048x2048xbf16>
}
func.func @rowb_edges(%a: tensor<4000x4000xbf16>, %b: tensor<4000x4000xbf16>) -> tensor<4000x4000xbf16> {
  %0 = kb.matmul %a, %b : tensor<4000x4000xbf16>, tensor<4000x4000xbf16> -> tensor<4000x4000xbf16>
  return %0 : tensor<4000x4000xbf16>
}

// -----

// Negative: an f32 C (no TMA store to gain) stays one block a tile.
// CHECK-LABEL: func.func @rowb_f32_out
// CHECK-NOT: grid =
// CHECK: return
func.func @rowb_f32_out(%a: tensor<2048x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<2048x2048xf32> {
  %0 = kb.matmul %a, %b : tensor<2048x2048xbf16>, tensor<2048x2048xbf16> -> tensor<2048x2048xf32>
  return %0 : tensor<2048x2048xf32>
}

// -----

// A batch with a 16-bit C takes the persistent grid at any K (and with it
// the TMA store); an f32 C keeps one block a tile above K = 1024.
// CHECK-LABEL: func.func @batched_half_c
// CHECK: kb.config<block = [128, 256, 64], mma = "wgmma_bf16", grid = 132
// CHECK-LABEL: func.func @batched_f32_c
// CHECK-NOT: grid =
// CHECK: return
func.func @batched_half_c(%a: tensor<8x2048x2048xbf16>, %b: tensor<8x2048x2048xbf16>) -> tensor<8x2048x2048xbf16> {
  %0 = kb.matmul %a, %b : tensor<8x2048x2048xbf16>, tensor<8x2048x2048xbf16> -> tensor<8x2048x2048xbf16>
  return %0 : tensor<8x2048x2048xbf16>
}
func.func @batched_f32_c(%a: tensor<8x2048x2048xbf16>, %b: tensor<8x2048x2048xbf16>) -> tensor<8x2048x2048xf32> {
  %0 = kb.matmul %a, %b : tensor<8x2048x2048xbf16>, tensor<8x2048x2048xbf16> -> tensor<8x2048x2048xf32>
  return %0 : tensor<8x2048x2048xf32>
}
