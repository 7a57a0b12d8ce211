// RUN: kb-opt %s --kb-tile=chip=sm_90a -split-input-file -verify-diagnostics | FileCheck %s

// kb-tile writes `split` (split-K) when the output tiles leave more than
// half of the 132 SMs idle and K is long: the count of chunks (each at
// least 8 k tiles, none empty) that the model (Tile.cpp) finds fastest.

// Few output tiles (wgmma): the tile and the split chosen together
// (chooseFewTiles). 256 x 256 outputs over K = 262144 (8192 k tiles): two
// 256 x 128 tiles in 64 chunks, one block an SM (run 5: 0.146 ms, against
// 0.207 for 64 x 64 tiles in 16 chunks).
// CHECK-LABEL: func.func @long_k
// CHECK: block = [256, 128, 32]{{.*}}split = 64
func.func @long_k(%a: tensor<256x262144xf32>, %b: tensor<262144x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x262144xf32>, tensor<262144x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A grid of one wave reads each chunk of the larger operand once from DRAM
// (L2 serves its other rows of tiles): 256 x 1024 x 65536 with B^T is then
// bound by its flops, where 128 x 256 tiles (in 16 chunks, 128 blocks) run
// at wgmma's full rate (run 20: 0.1107 ms; 128 x 128 in 8 chunks, which
// the model took while it counted B read twice, 0.1157).
// CHECK-LABEL: func.func @long_k_one_wave
// CHECK: block = [128, 256, 32]{{.*}}split = 16
func.func @long_k_one_wave(%a: tensor<256x65536xf32>, %b: tensor<1024x65536xf32>) -> tensor<256x1024xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x65536xf32>, tensor<1024x65536xf32> -> tensor<256x1024xf32>
  return %0 : tensor<256x1024xf32>
}

// -----

// A split that does not divide the k tiles: 384 x 384 x 200000 is 6250 k
// tiles (2 x 5^5); over nine 128 x 128 tiles the divisors give 10 chunks
// (90 blocks) or 25 (225, two waves), chunks of ceil(6250 / 14) = 447 give
// 126 blocks at five stages (run 20: 0.2217 ms; 256 x 128 tiles in 22
// uneven chunks at four, the choice while the model read B again for each
// row of tiles in a grid of one wave, 0.2192; 128 x 128 in 10 chunks, 0.296
// in run 7).
// CHECK-LABEL: func.func @long_k_uneven
// CHECK: block = [128, 128, 32]{{.*}}split = 14
func.func @long_k_uneven(%a: tensor<384x200000xf32>, %b: tensor<200000x384xf32>) -> tensor<384x384xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<384x200000xf32>, tensor<200000x384xf32> -> tensor<384x384xf32>
  return %0 : tensor<384x384xf32>
}

// -----

// A hand-set tile keeps chooseSplitK's split for it: 64 x 64 tiles are 16
// blocks, 16 chunks make 256, two 64-row wgmma blocks per SM.
// CHECK-LABEL: func.func @long_k_hand_set_tile
// CHECK: block = [64, 64, 32]{{.*}}split = 16
func.func @long_k_hand_set_tile(%a: tensor<256x262144xf32>, %b: tensor<262144x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", block = [64, 64, 32]>} : tensor<256x262144xf32>, tensor<262144x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A few rows against a wide weight (B^T): 64 x 64 tiles would cover the
// SMs (128 blocks) but read the weight twice, 64 rows at a time; 128 x 128
// tiles in 4 chunks read it once (run 5: 0.0343 ms against 0.0497).
// CHECK-LABEL: func.func @skinny
// CHECK: block = [128, 128, 32]{{.*}}split = 4
func.func @skinny(%a: tensor<128x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<128x4096xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<128x4096xf32>, tensor<4096x4096xf32> -> tensor<128x4096xf32>
  return %0 : tensor<128x4096xf32>
}

// -----

// Rows of 192 x 160 outputs fit one tile exactly (three warpgroups, wgmma
// N = 160); K = 300000 is 9375 k tiles, 125 chunks (run 5: 0.1295 ms,
// against 0.2116 for 64 x 64 tiles in 375 chunks).
// CHECK-LABEL: func.func @exact_fit
// CHECK: block = [192, 160, 32]{{.*}}split = 125
func.func @exact_fit(%a: tensor<192x300000xf32>, %b: tensor<160x300000xf32>) -> tensor<192x160xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<192x300000xf32>, tensor<160x300000xf32> -> tensor<192x160xf32>
  return %0 : tensor<192x160xf32>
}

// -----

// The same with a hand-set cp.async copy: its tiles must split evenly among
// the threads, which 192 x 160 does not; the old rule (64 x 64 tiles,
// chooseSplitK's split).
// CHECK-LABEL: func.func @exact_fit_cp_async
// CHECK: block = [64, 64, 32]{{.*}}split = 375
func.func @exact_fit_cp_async(%a: tensor<192x300000xf32>, %b: tensor<160x300000xf32>) -> tensor<192x160xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32", copy = "cp_async">} : tensor<192x300000xf32>, tensor<160x300000xf32> -> tensor<192x160xf32>
  return %0 : tensor<192x160xf32>
}

// -----

// The exact fit where A's rows split 128-byte lines (K % 32 = 16): over
// more than 128 k tiles (here 1001) the few-tiles model still chooses (it
// used to stand down for every B^T with split lines, leaving the medium
// rule's 128 x 128 in 2 chunks: 8 blocks on 132 SMs; bf16 192 x 160 x
// 300000, the same case in 16 bits, ran 0.17x cuBLAS, 2026-12-07).
// CHECK-LABEL: func.func @exact_fit_lines_split
// CHECK: block = [192, 160, 32]{{.*}}split = 91
func.func @exact_fit_lines_split(%a: tensor<192x32016xf32>, %b: tensor<160x32016xf32>) -> tensor<192x160xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<192x32016xf32>, tensor<160x32016xf32> -> tensor<192x160xf32>
  return %0 : tensor<192x160xf32>
}

// -----

// A matrix-vector product: the narrowest wgmma (N = 8), and split-K.
// CHECK-LABEL: func.func @matvec
// CHECK: block = [64, 8, 32]{{.*}}split = 4
func.func @matvec(%a: tensor<4096x4096xf32>, %b: tensor<1x4096xf32>) -> tensor<4096x1xf32> {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<1x4096xf32> -> tensor<4096x1xf32>
  return %0 : tensor<4096x1xf32>
}

// -----

// Enough tiles (1024 blocks), or a short K: no split.
// CHECK-LABEL: func.func @no_split
// CHECK-NOT: split =
func.func @no_split(%a: tensor<4096x4096xf32>, %s: tensor<256x64xf32>, %t: tensor<64x256xf32>) -> (tensor<4096x4096xf32>, tensor<256x256xf32>) {
  %0 = kb.matmul %a, %a precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<4096x4096xf32>, tensor<4096x4096xf32> -> tensor<4096x4096xf32>
  %1 = kb.matmul %s, %t precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x64xf32>, tensor<64x256xf32> -> tensor<256x256xf32>
  return %0, %1 : tensor<4096x4096xf32>, tensor<256x256xf32>
}

// -----

// A hand-set split is kept, and checked.
// CHECK-LABEL: func.func @hand_set
// CHECK: split = 4
func.func @hand_set(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<mma = "ffma", split = 4>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A split need not divide the k tiles (chunks of ceil(128 / 3) = 43, the
// last of 42), but every chunk must hold one: 10 k tiles in 6 chunks of 2
// would leave the sixth empty.
// CHECK-LABEL: func.func @not_a_divisor
// CHECK: split = 3
func.func @not_a_divisor(%a: tensor<256x4096xf32>, %b: tensor<4096x256xf32>) -> tensor<256x256xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", split = 3>} : tensor<256x4096xf32>, tensor<4096x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @empty_chunk(%a: tensor<256x320xf32>, %b: tensor<320x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config split = 6 leaves a chunk of the 10 k tiles (K = 320, BK = 32) empty}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", split = 6>} : tensor<256x320xf32>, tensor<320x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// A batch of 1 (rank 3) over a long K: not split (kb-split-k makes rank-2
// partials only); neither by the wgmma rules' joint choice in 16 bits.
// CHECK-LABEL: func.func @batch_of_one
// CHECK-NOT: split =
// CHECK: return
func.func @batch_of_one(%a: tensor<1x55x16448xf32>, %b: tensor<1x7x16448xf32>, %c: tensor<1x55x16448xbf16>, %d: tensor<1x7x16448xbf16>) -> (tensor<1x55x7xf32>, tensor<1x55x7xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<mma = "wgmma_tf32">} : tensor<1x55x16448xf32>, tensor<1x7x16448xf32> -> tensor<1x55x7xf32>
  %1 = kb.matmul %c, %d transpose_b {config = #kb.config<mma = "wgmma_bf16">} : tensor<1x55x16448xbf16>, tensor<1x7x16448xbf16> -> tensor<1x55x7xf32>
  return %0, %1 : tensor<1x55x7xf32>, tensor<1x55x7xf32>
}

// -----

func.func @batched(%a: tensor<2x256x4096xf32>, %b: tensor<2x4096x256xf32>) -> tensor<2x256x256xf32> {
  // expected-error @+1 {{#kb.config split = 2: a batched matmul is not split}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32", split = 2>} : tensor<2x256x4096xf32>, tensor<2x4096x256xf32> -> tensor<2x256x256xf32>
  return %0 : tensor<2x256x256xf32>
}

// -----

// The few-tiles model counts the stages each candidate will get
// (wgmmaDefaultStages): 128 x 128 tiles in 32 chunks of 256 x 256 x 16384
// are 128 blocks, one an SM either way, so five stages and their loads in
// flight (kb-tune's exhaustive best, 0.0210 ms; 256 x 64 in 32 chunks, the
// choice at four, 0.0217 as kb's old default); 128 x 128 x 1048576 takes
// 64 x 64 tiles in 64 chunks at five (256 blocks, two an SM either way; run
// 20: 0.2641 ms against 0.2683 for 128 x 64 in 128 at four).
// CHECK-LABEL: func.func @long_k_stages
// CHECK: block = [128, 128, 32]{{.*}}split = 32
// CHECK: block = [64, 64, 32]{{.*}}split = 64
func.func @long_k_stages(%a: tensor<256x16384xf32>, %b: tensor<16384x256xf32>, %c: tensor<128x1048576xf32>, %d: tensor<1048576x128xf32>) -> (tensor<256x256xf32>, tensor<128x128xf32>) {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<256x16384xf32>, tensor<16384x256xf32> -> tensor<256x256xf32>
  %1 = kb.matmul %c, %d precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<128x1048576xf32>, tensor<1048576x128xf32> -> tensor<128x128xf32>
  return %0, %1 : tensor<256x256xf32>, tensor<128x128xf32>
}

// -----

// Where the tile above (64 x 64: 128 blocks for 64 x 8192) covers the SMs,
// only another tile replaces it, and the others are weighed without it: a
// split of 64 x 64 that the model rates first must not hide 64 x 128 in 4
// chunks (kb's measured default of 64 x 8192 x 2048, 0.0307 ms, against
// 0.0324 for 64 x 64 unsplit in kb-tune's exhaustive run).
// CHECK-LABEL: func.func @skinny_other_tile
// CHECK: block = [64, 128, 32]{{.*}}split = 4
func.func @skinny_other_tile(%a: tensor<64x2048xf32>, %b: tensor<2048x8192xf32>) -> tensor<64x8192xf32> {
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<mma = "wgmma_tf32">} : tensor<64x2048xf32>, tensor<2048x8192xf32> -> tensor<64x8192xf32>
  return %0 : tensor<64x8192xf32>
}
