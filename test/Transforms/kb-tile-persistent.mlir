// RUN: kb-opt %s --kb-tile=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile writes a persistent grid (`grid` = the 132 SMs of sm_90a) for a
// wgmma matmul with TMA copies whose tiles have few k tiles (K <= 128: the
// epilogue is much of a tile's time), are more than the SMs, and are tiles
// of which an SM holds one block (B^T: 128 rows; a row-major B: 128 x 128
// or more). One block an SM walks the tiles, its producer copying the next
// tile's k tiles during the epilogue (runs 8-9: 16384^2 x 32 0.3636 ->
// 0.3127 ms; at K = 4096 no gain).

// CHECK-LABEL: func.func @small_k
// CHECK: block = [256, 128, 32], mma = "wgmma_tf32", grid = 132
func.func @small_k(%a: tensor<16384x32xf32>, %b: tensor<32x16384xf32>) -> tensor<16384x16384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<16384x32xf32>, tensor<32x16384xf32> -> tensor<16384x16384xf32>
  return %0 : tensor<16384x16384xf32>
}

// -----

// B^T, K = 128 (four k tiles): 128 x 256 tiles, persistent.
// CHECK-LABEL: func.func @small_k_bt
// CHECK: block = [128, 256, 32], mma = "wgmma_tf32", grid = 132
func.func @small_k_bt(%a: tensor<65536x128xf32>, %b: tensor<2048x128xf32>) -> tensor<65536x2048xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<65536x128xf32>, tensor<2048x128xf32> -> tensor<65536x2048xf32>
  return %0 : tensor<65536x2048xf32>
}

// -----

// K = 4096 (the persistent grid measured no faster, run 9), K = 160,
// 128 tiles of 128 x 256 for 132 SMs (one wave), and tiles with edges in M
// or N (ptxas spills 12-288 bytes in the persistent loop there): one block
// a tile.
// CHECK-LABEL: func.func @one_block_a_tile
// CHECK-NOT: grid
func.func @one_block_a_tile(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>, %c: tensor<16384x160xf32>, %d: tensor<160x16384xf32>, %e: tensor<2048x64xf32>, %f: tensor<2048x64xf32>, %g: tensor<13935x128xf32>, %h: tensor<19351x128xf32>) -> (tensor<4096x4096xf32>, tensor<16384x16384xf32>, tensor<2048x2048xf32>, tensor<13935x19351xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %c, %d precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<16384x160xf32>, tensor<160x16384xf32> -> tensor<16384x16384xf32>
  %2 = kb.matmul %e, %f precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<2048x64xf32>, tensor<2048x64xf32> -> tensor<2048x2048xf32>
  %3 = kb.matmul %g, %h precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<13935x128xf32>, tensor<19351x128xf32> -> tensor<13935x19351xf32>
  return %0, %1, %2, %3 : tensor<4096x4096xf32>, tensor<16384x16384xf32>, tensor<2048x2048xf32>, tensor<13935x19351xf32>
}

// -----

// Not with cp.async copies (the persistent kernel's producer is TMA's),
// nor for 64-row tiles (two blocks an SM); a hand-set grid is kept.
// CHECK-LABEL: func.func @not_persistent
// CHECK-NOT: grid = 132
// CHECK: copy = "cp_async"
// CHECK-NOT: grid = 132
// CHECK: block = [64, 64, 32]
// CHECK-NOT: grid = 132
// CHECK: grid = 66
func.func @not_persistent(%a: tensor<16384x32xf32>, %b: tensor<16384x32xf32>) -> (tensor<16384x16384xf32>, tensor<16384x16384xf32>, tensor<16384x16384xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "cp_async">} : tensor<16384x32xf32>, tensor<16384x32xf32> -> tensor<16384x16384xf32>
  %1 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [64, 64, 32], mma = "wgmma_tf32">} : tensor<16384x32xf32>, tensor<16384x32xf32> -> tensor<16384x16384xf32>
  %2 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", grid = 66>} : tensor<16384x32xf32>, tensor<16384x32xf32> -> tensor<16384x16384xf32>
  return %0, %1, %2 : tensor<16384x16384xf32>, tensor<16384x16384xf32>, tensor<16384x16384xf32>
}

// -----

func.func @grid_on_ffma(%a: tensor<4096x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  // expected-error @+1 {{#kb.config 'grid' (a persistent grid) is only for a split_global softmax or a wgmma_tf32 matmul, not mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<mma = "ffma", grid = 132>} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  return %0 : tensor<4096x4096xf32>
}

// -----

// The persistent rule (TileWgmma.cpp, persistentRule; bench/results/
// 2026-12-03-streamk calls 2-3): at any K, kb-tile's own 128 x 192 or
// 128 x 256 B^T tiles over more than one wave (at most five before
// 2026-12-03-width call 4). 4096^3 B^T (256 tiles of 128 x 256), 1536 x
// 4096 x 4096 (264 of 128 x 192), 384 x 14336 x 4096 (225 of 128 x 192, an
// edge in N), the same 128 x 192 in a kb.fusion, and 8192^3 B^T (2048
// tiles, 15.5 waves).
// CHECK-LABEL: func.func @persistent_rule
// CHECK: block = [128, 256, 32], mma = "wgmma_tf32", grid = 132{{.*}}tensor<8192x8192xf32>
// CHECK: block = [128, 256, 32], mma = "wgmma_tf32", grid = 132
// CHECK: block = [128, 192, 32], mma = "wgmma_tf32", grid = 132
// CHECK: block = [128, 192, 32], mma = "wgmma_tf32", grid = 132
// CHECK: kb.fusion {{.*}}block = [128, 192, 32], mma = "wgmma_tf32", grid = 132
func.func @persistent_rule(%a: tensor<4096x4096xf32>, %b: tensor<1536x4096xf32>, %c: tensor<384x4096xf32>, %w: tensor<14336x4096xf32>, %big: tensor<8192x8192xf32>) -> tensor<384x14336xf32> {
  %4 = kb.matmul %big, %big precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<8192x8192xf32>, tensor<8192x8192xf32> -> tensor<8192x8192xf32>
  %0 = kb.matmul %a, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %b, %a precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<1536x4096xf32>, tensor<4096x4096xf32> -> tensor<1536x4096xf32>
  %2 = kb.matmul %c, %w precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<384x4096xf32>, tensor<14336x4096xf32> -> tensor<384x14336xf32>
  %3 = kb.fusion ins(%c, %w : tensor<384x4096xf32>, tensor<14336x4096xf32>) attributes {config = #kb.config<mma = "wgmma_tf32">} {
  ^bb0(%x: tensor<384x4096xf32>, %y: tensor<14336x4096xf32>):
    %m = kb.matmul %x, %y precision(tf32) transpose_b : tensor<384x4096xf32>, tensor<14336x4096xf32> -> tensor<384x14336xf32>
    %r = kb.relu %m : tensor<384x14336xf32>
    kb.yield %r : tensor<384x14336xf32>
  } -> tensor<384x14336xf32>
  return %3 : tensor<384x14336xf32>
}

// -----

// Not taken: 128 x 256 in a kb.fusion (2048 x 5120 x 5120 + GELU was 1.2%
// slower: its persistent kernel spills), an edge in M (1000 x 4096 x
// 4096), a row-major B (8192^3: 16 waves), a hand-set tile.
// CHECK-LABEL: func.func @persistent_rule_bounds
// CHECK-NOT: grid = 132
// CHECK: return
func.func @persistent_rule_bounds(%a: tensor<2048x4096xf32>, %w: tensor<4096x4096xf32>, %b: tensor<8192x8192xf32>, %c: tensor<1000x4096xf32>) -> tensor<2048x4096xf32> {
  %0 = kb.fusion ins(%a, %w : tensor<2048x4096xf32>, tensor<4096x4096xf32>) attributes {config = #kb.config<mma = "wgmma_tf32">} {
  ^bb0(%x: tensor<2048x4096xf32>, %y: tensor<4096x4096xf32>):
    %m = kb.matmul %x, %y precision(tf32) transpose_b : tensor<2048x4096xf32>, tensor<4096x4096xf32> -> tensor<2048x4096xf32>
    %r = kb.relu %m : tensor<2048x4096xf32>
    kb.yield %r : tensor<2048x4096xf32>
  } -> tensor<2048x4096xf32>
  %1 = kb.matmul %b, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<8192x8192xf32>, tensor<8192x8192xf32> -> tensor<8192x8192xf32>
  %2 = kb.matmul %c, %w precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<1000x4096xf32>, tensor<4096x4096xf32> -> tensor<1000x4096xf32>
  %3 = kb.matmul %a, %w precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<2048x4096xf32>, tensor<4096x4096xf32> -> tensor<2048x4096xf32>
  %4 = kb.matmul %a, %w precision(tf32) transpose_b {config = #kb.config<block = [128, 256, 32], mma = "wgmma_tf32">} : tensor<2048x4096xf32>, tensor<4096x4096xf32> -> tensor<2048x4096xf32>
  return %0 : tensor<2048x4096xf32>
}

// -----

// A hand-set reduce = "stream" with few output tiles (128 x 4096): kb-tile
// picks the tile but no split (stream-K shares the k tiles among the grid's
// blocks instead).
// CHECK-LABEL: func.func @stream_no_split
// CHECK-NOT: split
// CHECK: grid = 132, reduce = "stream"
func.func @stream_no_split(%a: tensor<128x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<128x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", grid = 132, reduce = "stream">} : tensor<128x4096xf32>, tensor<4096x4096xf32> -> tensor<128x4096xf32>
  return %0 : tensor<128x4096xf32>
}

// -----

// A batch of unfused matmuls up to K = 1024 (at most 32 k tiles a tile)
// takes the persistent grid too (bench/results/2026-12-04-memory-bound:
// 0.904-0.973 of the time on the suite's five batched shapes): 256 x
// 256^3 with B^T, 128 x 512^3 with a row-major B.
// CHECK-LABEL: func.func @batched
// CHECK: block = [128, 256, 32], mma = "wgmma_tf32", grid = 132
// CHECK: block = [256, 128, 32], mma = "wgmma_tf32", grid = 132
func.func @batched(%a: tensor<256x256x256xf32>, %b: tensor<256x256x256xf32>, %c: tensor<128x512x512xf32>, %d: tensor<128x512x512xf32>) -> (tensor<256x256x256xf32>, tensor<128x512x512xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x256x256xf32>, tensor<256x256x256xf32> -> tensor<256x256x256xf32>
  %1 = kb.matmul %c, %d precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<128x512x512xf32>, tensor<128x512x512xf32> -> tensor<128x512x512xf32>
  return %0, %1 : tensor<256x256x256xf32>, tensor<128x512x512xf32>
}

// -----

// Not past K = 1024 (8 x 2048^3: 64 k tiles a tile, not measured), nor
// with edges in M (64 x 384^3 at 256 x 128); nor in a kb.fusion
// (kb-tile-persistent-fused.mlir).
// CHECK-LABEL: func.func @batched_one_block_a_tile
// CHECK-NOT: grid
func.func @batched_one_block_a_tile(%a: tensor<8x2048x2048xf32>, %b: tensor<8x2048x2048xf32>, %c: tensor<64x384x384xf32>, %d: tensor<64x384x384xf32>) -> (tensor<8x2048x2048xf32>, tensor<64x384x384xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<8x2048x2048xf32>, tensor<8x2048x2048xf32> -> tensor<8x2048x2048xf32>
  %1 = kb.matmul %c, %d precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<64x384x384xf32>, tensor<64x384x384xf32> -> tensor<64x384x384xf32>
  return %0, %1 : tensor<8x2048x2048xf32>, tensor<64x384x384xf32>
}

// -----

// A hand-set tile on a batch keeps one block a tile (the batched grid is
// for kb-tile's own tile: 128 x 128 at three stages, two blocks an SM, was
// measured 1.03-1.54x slower than the default and is not made persistent).
// CHECK-LABEL: func.func @batched_hand_set
// CHECK-NOT: grid = 132
// CHECK: return
func.func @batched_hand_set(%a: tensor<128x512x512xf32>, %b: tensor<128x512x512xf32>) -> tensor<128x512x512xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<block = [128, 128, 32], stages = 3, mma = "wgmma_tf32">} : tensor<128x512x512xf32>, tensor<128x512x512xf32> -> tensor<128x512x512xf32>
  return %0 : tensor<128x512x512xf32>
}
