// RUN: kb-opt %s -split-input-file -verify-diagnostics
// #kb.config fields out of range, too large for kb's arithmetic, or not for
// the op they are set on (repros crash/tile_overflow_sigfpe*.mlir,
// crash/hang_matmul_bk_huge.mlir, crash/hang_matmul_thread_tile_128x128.mlir,
// invalid/smem_overflow_pad.mlir and the README's "Also seen" list).

// crash/tile_overflow_sigfpe_min.mlir: the thread count overflowed to 0 and
// kb-tile divided by it (SIGFPE).
func.func @f(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config field 'block' size 17179869184 is too large (at most 1048576)}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [17179869184, 17179869184, 8], thread = [4, 4], mma = "ffma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// crash/hang_matmul_bk_huge.mlir: BK = 2^62 passed the shared-memory check by
// overflow and the lowering grew past 5 GB.
func.func @f(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config field 'block' size 4611686018427387904 is too large (at most 1048576)}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [64, 64, 4611686018427387904], thread = [4, 4], mma = "ffma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// crash/hang_matmul_thread_tile_128x128.mlir: 16,384 accumulators a thread.
func.func @f(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config thread = [128, 128] needs 16640 registers per thread (16384 accumulators and 256 operands); a thread has at most 255}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [128, 128, 8], thread = [128, 128], mma = "ffma">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// The largest register tile that fits: 12 x 12 (144 + 24 registers) is kept.
func.func @thread_tile_12x12(%a: tensor<96x96xf32>, %b: tensor<96x96xf32>) -> tensor<96x96xf32> {
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [96, 96, 8], thread = [12, 12], mma = "ffma">} : tensor<96x96xf32>, tensor<96x96xf32> -> tensor<96x96xf32>
  return %0 : tensor<96x96xf32>
}

// -----

func.func @thread_tile_16x16(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config thread = [16, 16] needs 288 registers per thread (256 accumulators and 32 operands); a thread has at most 255}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<block = [128, 128, 8], thread = [16, 16], mma = "ffma">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @warp_tile_huge(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config warp = [256, 256] puts 2048 accumulators in each of a warp's 32 threads; at most 510 (a thread has 255 registers)}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<block = [256, 256, 32], warp = [256, 256], mma = "mma_sync_tf32">} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// invalid/smem_overflow_pad.mlir: pad = 2^62 overflowed the shared-memory size.
func.func @f(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  // expected-error @+1 {{#kb.config 'pad' 4611686018427387904 is too large (at most 1048576)}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<pad = [4611686018427387904, 0]>} : tensor<256x256xf32>, tensor<256x256xf32> -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

func.func @block_four_sizes(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config takes at most 3 block sizes, 2 warp sizes and 3 thread sizes, got 4, 0 and 0}}
  %0 = kb.relu %x {config = #kb.config<block = [1, 2, 3, 4]>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @threads_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'threads' must be at least 1, got 0 (leave the field out to let kb choose)}}
  %0 = kb.relu %x {config = #kb.config<threads = 0>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @stages_zero(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config 'stages' must be at least 1, got 0}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<stages = 0>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// At most 8 stages, 16 with a wgmma mma unit (its TMA pipeline; cuBLAS's
// 64 x 80 bf16 tiles run 11). 11 with wgmma_bf16 parses (no error here).
func.func @stages_many(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [64, 80, 64], stages = 11, mma = "wgmma_bf16">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  // expected-error @+1 {{#kb.config 'stages' must be in [1, 8] (16 with a wgmma mma), got 9}}
  %1 = kb.matmul %a, %b {config = #kb.config<stages = 9, mma = "mma_sync_bf16">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %0, %1 : tensor<64x64xbf16>, tensor<64x64xbf16>
}

// -----

func.func @stages_too_many_wgmma(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{#kb.config 'stages' must be in [1, 16], got 17}}
  %0 = kb.matmul %a, %b {config = #kb.config<stages = 17, mma = "wgmma_bf16">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %0 : tensor<64x64xbf16>
}

// -----

func.func @cluster_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'cluster' must be at least 1, got 0}}
  %0 = kb.softmax %x {config = #kb.config<strategy = "split", cluster = 0>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @vector_negative(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'vector' must be 1, 2, 4 or 8, got -4}}
  %0 = kb.relu %x {config = #kb.config<vector = -4>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// `threads = true` used to read as -1 ("got -1").
func.func @threads_true(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config 'threads' expects a positive integer, not a keyword}}
  %0 = kb.relu %x {config = #kb.config<threads = true>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Fields that do not apply to the op were ignored silently.
func.func @strategy_on_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.matmul' op #kb.config field 'strategy' does not apply to a matmul kernel (kb would ignore it)}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<strategy = "online">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @grid_on_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config 'grid' (a persistent grid) is only for a split_global softmax or a wgmma_tf32 matmul, not mma = "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<grid = 4, mma = "ffma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @cluster_on_ffma_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config 'cluster' on a matmul is only for mma = "wgmma_tf32" (two blocks sharing B^T's tile), not "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<cluster = 2, mma = "ffma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @vector_on_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.matmul' op #kb.config field 'vector' does not apply to a matmul kernel (kb would ignore it)}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<vector = 4>} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @mma_on_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softmax' op #kb.config field 'mma' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.softmax %x {config = #kb.config<mma = "ffma">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @thread_on_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softmax' op #kb.config field 'thread' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.softmax %x {config = #kb.config<thread = [4, 4]>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @stages_on_relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.relu' op #kb.config field 'stages' does not apply to an elementwise kernel (kb would ignore it)}}
  %0 = kb.relu %x {config = #kb.config<stages = 2>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @vector_on_transpose(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.transpose' op #kb.config field 'vector' does not apply to a transpose kernel (kb would ignore it)}}
  %0 = kb.transpose %x {config = #kb.config<vector = 4>} : tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A matmul fusion takes the matmul's fields; a softmax field on it is refused.
func.func @strategy_on_matmul_fusion(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.fusion' op #kb.config field 'strategy' does not apply to a matmul kernel (kb would ignore it)}}
  %0 = kb.fusion ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) attributes {config = #kb.config<strategy = "online">} {
  ^bb0(%x: tensor<64x64xf32>, %y: tensor<64x64xf32>):
    %1 = kb.matmul %x, %y precision(ieee) : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    %2 = kb.relu %1 : tensor<64x64xf32>
    kb.yield %2 : tensor<64x64xf32>
  } -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @vector_on_pad(%x: tensor<64x63xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.pad' op #kb.config field 'vector' does not apply to a pad kernel (kb would ignore it)}}
  %0 = kb.pad %x multiple(32) {config = #kb.config<vector = 4>} : tensor<64x63xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// A third thread size (R rows of a k tile, gemv's k groups) only with gemv.
func.func @thread_three_sizes_ffma(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config thread = [M, TN, R] (three sizes) is for mma = "gemv" only}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<thread = [8, 8, 2], mma = "ffma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// store = "tma" (the wgmma TMA-store epilogue) is never split: a split's
// partial products go to a workspace.
func.func @store_tma_split(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config store = "tma" is not for a split-K matmul (split = 2: its partial products go to a workspace)}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<split = 2, store = "tma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @store_tma_ffma(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config store = "tma" is only for mma = "wgmma_tf32", not "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<mma = "ffma", store = "tma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @store_tma_cp_async(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config store = "tma" needs copy = "tma", not "cp_async"}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<copy = "cp_async", store = "tma">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @store_on_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softmax' op #kb.config field 'store' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.softmax %x {config = #kb.config<store = "tma">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @store_unknown(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+2 {{#kb.config 'store' must be "direct" or "tma", got "stg"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'store'}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<store = "stg">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// reduce = "cluster" (split-K's two chunks summed in the wgmma kernel by a
// cluster of two blocks) needs exactly two chunks...
func.func @reduce_cluster_split_4(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs split = 2 (two chunks, one cluster of two blocks a tile), got split = 4}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<split = 4, reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @reduce_cluster_no_split(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs split = 2 (two chunks, one cluster of two blocks a tile), got no split}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// ...the wgmma kernel, and no cluster of its own.
func.func @reduce_cluster_ffma(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs mma = "wgmma_tf32", not "ffma"}}
  %0 = kb.matmul %a, %b precision(ieee) {config = #kb.config<mma = "ffma", split = 2, reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @reduce_cluster_multicast(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs no other cluster (its blocks share B's tile), got cluster = 4}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<cluster = 4, split = 2, reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @reduce_cluster_cp_async(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs copy = "tma", not "cp_async"}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<copy = "cp_async", split = 2, reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @reduce_cluster_grid(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "cluster" needs no persistent grid, got grid = 132}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<grid = 132, split = 2, reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// (A TMA store is refused for any split, before the reduce checks.)
func.func @reduce_cluster_tma_store(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config store = "tma" is not for a split-K matmul}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<split = 2, store = "tma", reduce = "cluster">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @reduce_on_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{#kb.config field 'reduce' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.softmax %x {config = #kb.config<reduce = "kernel">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @reduce_unknown(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+2 {{#kb.config 'reduce' must be "kernel", "cluster" or "stream", got "atomic"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'reduce'}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<split = 2, reduce = "atomic">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// reduce = "stream" (stream-K) shares the k tiles among a persistent
// grid's blocks...
func.func @reduce_stream_no_grid(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs a persistent grid (grid = G: the blocks the k tiles are shared among)}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<reduce = "stream">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// ...instead of a split, with no cluster...
func.func @reduce_stream_split(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs no split (its k tiles are shared among the blocks instead), got split = 2}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<grid = 132, split = 2, reduce = "stream">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @reduce_stream_cluster(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs no cluster, got cluster = 2}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<grid = 132, cluster = 2, reduce = "stream">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// ...and stores its partials through C, not by TMA.
func.func @reduce_stream_tma_store(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config reduce = "stream" needs store = "direct" (a partial goes through C)}}
  %0 = kb.matmul %a, %b precision(tf32) transpose_b {config = #kb.config<grid = 132, store = "tma", reduce = "stream">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

// schedule = "pingpong" is the wgmma attention kernel's (kb-select-config
// checks the unit).
func.func @schedule_on_matmul(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{'kb.matmul' op #kb.config field 'schedule' does not apply to a matmul kernel (kb would ignore it)}}
  %0 = kb.matmul %a, %b precision(tf32) {config = #kb.config<schedule = "pingpong">} : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}

// -----

func.func @schedule_on_softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kb.softmax' op #kb.config field 'schedule' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.softmax %x {config = #kb.config<schedule = "serial">} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @schedule_unknown(%h: tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16> {
  // expected-error @+2 {{#kb.config 'schedule' must be "serial", "pingpong" or "overlap", got "ping_pong"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'schedule'}}
  %0 = kb.attention %h, %h, %h scale(1.250000e-01) {config = #kb.config<schedule = "ping_pong">} : tensor<8x128x64xbf16>, tensor<8x128x64xbf16>, tensor<8x128x64xbf16> -> tensor<8x128x64xbf16>
  return %0 : tensor<8x128x64xbf16>
}

// -----

// operands = "ba" (the 16-bit wgmma kernel computing C^T): 16-bit wgmma
// only, one block a tile, C stored directly. A config with no mma yet
// parses, up to 16 stages as a wgmma mma's (kb-select-mma decides the
// unit; the matmul's type is checked there).
func.func @operands_ba(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>) {
  %0 = kb.matmul %a, %b {config = #kb.config<block = [80, 64, 64], stages = 11, operands = "ba">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  // expected-error @+1 {{#kb.config operands = "ba" needs mma = "wgmma_bf16" or "wgmma_f16", not "mma_sync_bf16"}}
  %1 = kb.matmul %a, %b {config = #kb.config<mma = "mma_sync_bf16", operands = "ba">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %0, %1 : tensor<64x64xbf16>, tensor<64x64xbf16>
}

// -----

func.func @operands_ba_grid(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{#kb.config operands = "ba" needs no persistent grid, got grid = 132}}
  %0 = kb.matmul %a, %b {config = #kb.config<grid = 132, mma = "wgmma_bf16", operands = "ba">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %0 : tensor<64x64xbf16>
}

// -----

func.func @operands_ba_store(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{#kb.config operands = "ba" needs store = "direct" (its accumulators hold C^T)}}
  %0 = kb.matmul %a, %b {config = #kb.config<mma = "wgmma_bf16", store = "tma", operands = "ba">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %0 : tensor<64x64xbf16>
}

// -----

func.func @operands_unknown(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  // expected-error @+2 {{#kb.config 'operands' must be "ab" or "ba", got "swapped"}}
  // expected-error @+1 {{failed to parse KB_ConfigAttr parameter 'operands'}}
  %0 = kb.matmul %a, %b {config = #kb.config<operands = "swapped">} : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  return %0 : tensor<64x64xbf16>
}

// -----

func.func @operands_softmax(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  // expected-error @+1 {{#kb.config field 'operands' does not apply to a softmax kernel (kb would ignore it)}}
  %0 = kb.softmax %x {config = #kb.config<operands = "ba">} : tensor<64x64xf32>
  return %0 : tensor<64x64xf32>
}
