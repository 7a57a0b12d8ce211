// RUN: kb-opt %s --kb-tile=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile on the gemv kernel (mma = "gemv", written by kb-select-mma): the
// few rows (or columns) whole in every block, the weight's rows among warps
// or its columns among threads, and split-K by the weight bytes in flight
// (chooseGemvSplit, Tile.cpp: about 40 KB an SM, counting `stages` k tiles
// of loads in flight: kb-promote-shared-memory's default 2 where unset).

// B transposed, M = 1: a warp owns one row of B; four warps a block; each
// lane 8 x 16 bytes a k tile (BK = 1024; 512 ran 9% slower, run 10). 4096
// warps keep 16 MB in flight: no split.
// CHECK-LABEL: func.func @weight_b
// CHECK: block = [1, 4, 1024], warp = [1, 1], mma = "gemv"
// CHECK-NOT: split
// M = 8: two rows of B a warp (BK = 256); M = 16: four (BK = 128).
// CHECK: block = [8, 8, 256], warp = [8, 2], mma = "gemv"
// CHECK: block = [16, 16, 128], warp = [16, 4], mma = "gemv"
// CHECK-NOT: split
func.func @weight_b(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>, %x8: tensor<8x4096xf32>, %x16: tensor<16x4096xf32>, %w2: tensor<11008x4096xf32>) -> (tensor<1x4096xf32>, tensor<8x4096xf32>, tensor<16x11008xf32>) {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %1 = kb.matmul %x8, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<8x4096xf32>, tensor<4096x4096xf32> -> tensor<8x4096xf32>
  %2 = kb.matmul %x16, %w2 precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<16x4096xf32>, tensor<11008x4096xf32> -> tensor<16x11008xf32>
  return %0, %1, %2 : tensor<1x4096xf32>, tensor<8x4096xf32>, tensor<16x11008xf32>
}

// -----

// Four rows of A against B^T read in 16-byte loads: two rows of B a warp
// (runs 19-20: 12% faster at 4 x 28672 x 8192) where the weight's rows are
// enough warps at two a warp to keep 40 KB an SM in flight (28672 rows:
// 14336 warps); 4096 rows would need a split at two and keep one, as do
// one-float loads (K % 4 != 0), three rows and the N = 4 form (not
// measured at two).
// CHECK-LABEL: func.func @four_rows
// CHECK: block = [4, 8, 256], warp = [4, 2], mma = "gemv"
// CHECK: block = [4, 4, 512], warp = [4, 1], mma = "gemv"
// CHECK: block = [4, 4, 256], warp = [4, 1], mma = "gemv"
// CHECK: block = [3, 4, 512], warp = [3, 1], mma = "gemv"
// CHECK: block = [4, 4, 512], warp = [1, 4], mma = "gemv"
func.func @four_rows(%x4: tensor<4x8192xf32>, %w: tensor<28672x8192xf32>, %y4: tensor<4x4096xf32>, %v: tensor<4096x4096xf32>, %z4: tensor<4x8190xf32>, %u: tensor<28672x8190xf32>, %x3: tensor<3x8192xf32>, %b4: tensor<8192x4xf32>) -> (tensor<4x28672xf32>, tensor<4x4096xf32>, tensor<4x28672xf32>, tensor<3x28672xf32>, tensor<28672x4xf32>) {
  %0 = kb.matmul %x4, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<4x8192xf32>, tensor<28672x8192xf32> -> tensor<4x28672xf32>
  %1 = kb.matmul %y4, %v precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<4x4096xf32>, tensor<4096x4096xf32> -> tensor<4x4096xf32>
  %2 = kb.matmul %z4, %u precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<4x8190xf32>, tensor<28672x8190xf32> -> tensor<4x28672xf32>
  %3 = kb.matmul %x3, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<3x8192xf32>, tensor<28672x8192xf32> -> tensor<3x28672xf32>
  %4 = kb.matmul %w, %b4 precision(tf32) {config = #kb.config<mma = "gemv">} : tensor<28672x8192xf32>, tensor<8192x4xf32> -> tensor<28672x4xf32>
  return %0, %1, %2, %3, %4 : tensor<4x28672xf32>, tensor<4x4096xf32>, tensor<4x28672xf32>, tensor<3x28672xf32>, tensor<28672x4xf32>
}

// -----

// N = 1: A's rows are the weight (BK = 1024 for one column, as above).
// 4096 rows need no split; 256 rows of K = 2^20 (256 warps) do, and a
// split weight keeps four loads a lane (BK = 512; run 11: 0.2911 ms against
// 0.3062 at BK = 1024 in 8 chunks, one stage each) in 8 chunks: two stages
// of four loads keep what 16 chunks of one stage kept in flight.
// CHECK-LABEL: func.func @weight_a
// CHECK: block = [4, 1, 1024], warp = [1, 1], mma = "gemv">
// CHECK: block = [4, 1, 512], warp = [1, 1], mma = "gemv", split = 8>
func.func @weight_a(%a: tensor<4096x4096xf32>, %v: tensor<1x4096xf32>, %a2: tensor<256x1048576xf32>, %v2: tensor<1x1048576xf32>) -> (tensor<4096x1xf32>, tensor<256x1xf32>) {
  %0 = kb.matmul %a, %v precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<4096x4096xf32>, tensor<1x4096xf32> -> tensor<4096x1xf32>
  %1 = kb.matmul %a2, %v2 precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<256x1048576xf32>, tensor<1x1048576xf32> -> tensor<256x1xf32>
  return %0, %1 : tensor<4096x1xf32>, tensor<256x1xf32>
}

// -----

// The same in 16 bits: a vector of 4 elements is 8 bytes, half of f32's
// bytes in flight, so 16 chunks where f32 takes 8 (bf16 at 8 chunks ran at
// 79% of copy on an H100, 2026-12-07; the model says 77.5%). A 4096-row
// weight still needs no split.
// CHECK-LABEL: func.func @weight_a_half
// CHECK: block = [4, 1, 1024], warp = [1, 1], mma = "gemv">
// CHECK: block = [4, 1, 512], warp = [1, 1], mma = "gemv", split = 16>
func.func @weight_a_half(%a: tensor<4096x4096xbf16>, %v: tensor<1x4096xbf16>, %a2: tensor<256x1048576xbf16>, %v2: tensor<1x1048576xbf16>) -> (tensor<4096x1xbf16>, tensor<256x1xbf16>) {
  %0 = kb.matmul %a, %v transpose_b {config = #kb.config<mma = "gemv">} : tensor<4096x4096xbf16>, tensor<1x4096xbf16> -> tensor<4096x1xbf16>
  %1 = kb.matmul %a2, %v2 transpose_b {config = #kb.config<mma = "gemv">} : tensor<256x1048576xbf16>, tensor<1x1048576xbf16> -> tensor<256x1xbf16>
  return %0, %1 : tensor<4096x1xbf16>, tensor<256x1xbf16>
}

// -----

// A row-major 16-bit B with N % 8 != 0 against one row keeps one element a
// load (32 rows a thread) by default: the realigned 16-byte loads (thread
// TN = 8) are hand-set only until their first GPU check
// (kGemvRealignByDefault in TileGemv.cpp); N % 8 = 0 keeps f32's 8 rows
// of one 4-element vector.
// CHECK-LABEL: func.func @columns_half
// CHECK: block = [1, 32, 512], thread = [1, 1, 32], mma = "gemv">
// CHECK: block = [1, 32, 512], thread = [1, 4, 8], mma = "gemv">
func.func @columns_half(%x: tensor<1x4093xbf16>, %w: tensor<4093x4099xbf16>, %x2: tensor<1x4096xbf16>, %w2: tensor<4096x4096xbf16>) -> (tensor<1x4099xbf16>, tensor<1x4096xbf16>) {
  %0 = kb.matmul %x, %w {config = #kb.config<mma = "gemv">} : tensor<1x4093xbf16>, tensor<4093x4099xbf16> -> tensor<1x4099xbf16>
  %1 = kb.matmul %x2, %w2 {config = #kb.config<mma = "gemv">} : tensor<1x4096xbf16>, tensor<4096x4096xbf16> -> tensor<1x4096xbf16>
  return %0, %1 : tensor<1x4099xbf16>, tensor<1x4096xbf16>
}

// -----

// N % 8 = 4 (rows 8-byte pitched) keeps 4-element vectors; two rows, or
// f16's N % 8 = 0, keep their tiles: one element a load for two rows (32
// rows a thread), 4-element vectors at N = 4096. A hand-set TN = 8 is
// kept, over BN = 256 (a row segment of 32 threads: a warp).
// CHECK-LABEL: func.func @columns_half_realign
// CHECK: block = [1, 32, 512], thread = [1, 4, 8], mma = "gemv">
// CHECK: block = [2, 32, 512], thread = [2, 1, 32], mma = "gemv">
// CHECK: block = [1, 32, 512], thread = [1, 4, 8], mma = "gemv">
// CHECK: block = [1, 256, 128], thread = [1, 8, 8], mma = "gemv", split = 3>
func.func @columns_half_realign(%x: tensor<1x4099xbf16>, %w: tensor<4099x4092xbf16>, %x2: tensor<2x4099xbf16>, %w2: tensor<4099x4093xbf16>, %x3: tensor<1x4096xf16>, %w3: tensor<4096x4096xf16>) -> (tensor<1x4092xbf16>, tensor<2x4093xbf16>, tensor<1x4096xf16>, tensor<1x4093xbf16>) {
  %0 = kb.matmul %x, %w {config = #kb.config<mma = "gemv">} : tensor<1x4099xbf16>, tensor<4099x4092xbf16> -> tensor<1x4092xbf16>
  %1 = kb.matmul %x2, %w2 {config = #kb.config<mma = "gemv">} : tensor<2x4099xbf16>, tensor<4099x4093xbf16> -> tensor<2x4093xbf16>
  %2 = kb.matmul %x3, %w3 {config = #kb.config<mma = "gemv">} : tensor<1x4096xf16>, tensor<4096x4096xf16> -> tensor<1x4096xf16>
  %3 = kb.matmul %x, %w2 {config = #kb.config<block = [1, 256, 128], thread = [1, 8, 8], mma = "gemv">} : tensor<1x4099xbf16>, tensor<4099x4093xbf16> -> tensor<1x4093xbf16>
  return %0, %1, %2, %3 : tensor<1x4092xbf16>, tensor<2x4093xbf16>, tensor<1x4096xf16>, tensor<1x4093xbf16>
}

// -----

// TN = 8 (realigned 16-byte loads) needs 16-bit elements: f32 refused.
func.func @realign_f32(%x: tensor<1x4099xf32>, %w: tensor<4099x4093xf32>) -> tensor<1x4093xf32> {
  // expected-error @+1 {{gemv thread TN = 8 (16-byte loads of 8 elements, realigned by a warp shuffle) needs a 16-bit B; B has 32-bit elements}}
  %0 = kb.matmul %x, %w precision(ieee) {config = #kb.config<block = [1, 32, 1024], thread = [1, 8, 8], mma = "gemv">} : tensor<1x4099xf32>, tensor<4099x4093xf32> -> tensor<1x4093xf32>
  return %0 : tensor<1x4093xf32>
}

// -----

// A row segment (BN / 8 threads) must be whole lanes of warps, and R a
// multiple of 8 (each row's shift a constant): BN = 96 refused.
func.func @realign_segment(%x: tensor<1x4099xbf16>, %w: tensor<4099x4093xbf16>) -> tensor<1x4093xbf16> {
  // expected-error @+1 {{gemv thread TN = 8 needs BN / 8 dividing 32 or a multiple of 32 and R (BK without k groups) a multiple of 8; BN = 96, R = 8}}
  %0 = kb.matmul %x, %w {config = #kb.config<block = [1, 96, 256], thread = [1, 8, 8], mma = "gemv">} : tensor<1x4099xbf16>, tensor<4099x4093xbf16> -> tensor<1x4093xbf16>
  return %0 : tensor<1x4093xbf16>
}

// -----

// R = 4: row i's shift (i N mod 8) would depend on where the thread's rows
// start.
func.func @realign_rows(%x: tensor<1x4099xbf16>, %w: tensor<4099x4093xbf16>) -> tensor<1x4093xbf16> {
  // expected-error @+1 {{gemv thread TN = 8 needs BN / 8 dividing 32 or a multiple of 32 and R (BK without k groups) a multiple of 8; BN = 32, R = 4}}
  %0 = kb.matmul %x, %w {config = #kb.config<block = [1, 32, 512], thread = [1, 8, 4], mma = "gemv">} : tensor<1x4099xbf16>, tensor<4099x4093xbf16> -> tensor<1x4093xbf16>
  return %0 : tensor<1x4093xbf16>
}

// -----

// B row-major, wide enough for 90% of the SMs in blocks of 32 to 256
// columns: blocks of 512 threads whose k groups split each k tile
// (thread = [M, TN, R]: R rows of a k tile a thread) and add their sums in
// shared memory; no split. 4096 columns: 32 a block (128 blocks), 64 groups
// of 8 threads, 8 rows each (BK = 512); N % 4 != 0: one column a thread,
// 16 groups of 32 threads, 16 rows each. Above 4 rows, or too few columns
// (300), the older tiles: a thread owns TN columns and walks the block's K
// (BK = 4 above 8 rows; a weight of 77 KB, read faster than a launch: no
// split); set by hand with thread = [M, TN], split-K as before (64 ways at
// one stage).
// CHECK-LABEL: func.func @columns
// CHECK: block = [1, 32, 512], thread = [1, 4, 8], mma = "gemv">
// CHECK: block = [16, 512, 4], thread = [16, 4], mma = "gemv">
// CHECK: block = [1, 32, 256], thread = [1, 1, 16], mma = "gemv">
// CHECK: block = [1, 512, 8], thread = [1, 4], stages = 1, mma = "gemv", split = 64>
func.func @columns(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>, %x16: tensor<16x64xf32>, %w2: tensor<64x300xf32>, %x3: tensor<1x4093xf32>, %w3: tensor<4093x4099xf32>) -> (tensor<1x4096xf32>, tensor<16x300xf32>, tensor<1x4099xf32>, tensor<1x4096xf32>) {
  %0 = kb.matmul %x, %w precision(tf32) {config = #kb.config<mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  %1 = kb.matmul %x16, %w2 precision(ieee) {config = #kb.config<mma = "gemv">} : tensor<16x64xf32>, tensor<64x300xf32> -> tensor<16x300xf32>
  %2 = kb.matmul %x3, %w3 precision(tf32) {config = #kb.config<mma = "gemv">} : tensor<1x4093xf32>, tensor<4093x4099xf32> -> tensor<1x4099xf32>
  %3 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 4], stages = 1, mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0, %1, %2, %3 : tensor<1x4096xf32>, tensor<16x300xf32>, tensor<1x4099xf32>, tensor<1x4096xf32>
}

// -----

// K % 4 != 0: rows are not 16-byte aligned, one float a load (BK = 256 for
// 8 loads a lane).
// CHECK-LABEL: func.func @odd_k
// CHECK: block = [3, 4, 256], warp = [3, 1], mma = "gemv"
func.func @odd_k(%x: tensor<3x4099xf32>, %w: tensor<4093x4099xf32>) -> tensor<3x4093xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv">} : tensor<3x4099xf32>, tensor<4093x4099xf32> -> tensor<3x4093xf32>
  return %0 : tensor<3x4093xf32>
}

// -----

// Hand-set tiles are kept when they fit...
// CHECK-LABEL: func.func @hand_set
// CHECK: block = [2, 16, 1024], warp = [2, 4], mma = "gemv", split = 2>
func.func @hand_set(%x: tensor<2x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<2x4096xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [2, 16, 1024], warp = [2, 4], mma = "gemv", split = 2>} : tensor<2x4096xf32>, tensor<4096x4096xf32> -> tensor<2x4096xf32>
  return %0 : tensor<2x4096xf32>
}

// -----

// ...and refused when the block does not hold every one of the few rows.
func.func @few_rows_split(%x: tensor<8x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<8x4096xf32> {
  // expected-error @+1 {{gemv tiles need block = [M, BN, BK] and warp = [M, WN] (no thread) with the block's weight rows a multiple of the warp's and BK a multiple of 128; M = 8}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [4, 8, 256], warp = [4, 2], mma = "gemv">} : tensor<8x4096xf32>, tensor<4096x4096xf32> -> tensor<8x4096xf32>
  return %0 : tensor<8x4096xf32>
}

// -----

func.func @columns_wrong_tile(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{gemv tiles over a row-major B need block = [M, BN, BK] and thread = [M, TN] or [M, TN, R] (no warp) with TN 1 or 4, BN / TN a multiple of 32 without R, and with R (R rows of each k tile a thread) R dividing BK and BN a multiple of 32; M = 1}}
  %0 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 512, 8], thread = [1, 2], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

// A hand-set split keeps four loads a lane (BK = 512), as a chosen one does.
// CHECK-LABEL: func.func @hand_set_split
// CHECK: block = [1, 4, 512], warp = [1, 1], mma = "gemv", split = 8
func.func @hand_set_split(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv", split = 8>} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

func.func @split_not_dividing(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{#kb.config split = 3 must divide the 8 k tiles (K = 4096, BK = 512)}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<mma = "gemv", split = 3>} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

// k groups that need more shared memory for their sums than 48 KiB (16
// rows x 256 columns x 4 groups) are refused.
func.func @groups_too_big(%x: tensor<16x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<16x4096xf32> {
  // expected-error @+1 {{gemv k groups need a multiple of 32 threads and at most 48 KiB of shared memory for their sums; block = [16, 256, 32], thread R = 8 take 256 threads and 65536 bytes}}
  %0 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [16, 256, 32], thread = [16, 4, 8], mma = "gemv">} : tensor<16x4096xf32>, tensor<4096x4096xf32> -> tensor<16x4096xf32>
  return %0 : tensor<16x4096xf32>
}

// -----

// BK = 2^20 (the most #kb.config takes) once took minutes to lower: a
// thread's weight loads of a k tile are capped at 256 floats.
func.func @tile_too_long(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{gemv: a thread would load 4194304 weight floats a k tile (1048576 rows of 4); at most 256: a smaller BK, or k groups (thread = [M, TN, R])}}
  %0 = kb.matmul %x, %w precision(tf32) {config = #kb.config<block = [1, 128, 1048576], thread = [1, 4], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}

// -----

func.func @lane_tile_too_long(%x: tensor<1x4096xf32>, %w: tensor<4096x4096xf32>) -> tensor<1x4096xf32> {
  // expected-error @+1 {{gemv: a lane would load 32768 weight floats a k tile (BK = 1048576, 1 rows a warp); at most 256: a smaller BK}}
  %0 = kb.matmul %x, %w precision(tf32) transpose_b {config = #kb.config<block = [1, 4, 1048576], warp = [1, 1], mma = "gemv">} : tensor<1x4096xf32>, tensor<4096x4096xf32> -> tensor<1x4096xf32>
  return %0 : tensor<1x4096xf32>
}
