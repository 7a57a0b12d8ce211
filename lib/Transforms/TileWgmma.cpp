//===- TileWgmma.cpp - kb-tile's default wgmma tile and its rules ---------===//
//
// The wgmma tile kb-tile picks for a matmul with no hand-set block: the
// largest tile whose grid covers the SMs, then the rules measured on
// nn.Linear and medium shapes (waves, widths, few tiles with split-K, the
// medium, cluster, reduce, skinny-reduce, wide-reduce, pair and persistent
// rules), each above its code with the measurements that set it. Tile.cpp's
// pass calls defaultWgmmaTile, pairRule and persistentRule.
//
//===----------------------------------------------------------------------===//

#include "TileRules.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::tile;


/// kb-tile's medium rule: returns true where it takes 128 x 128 tiles in
/// two K chunks (f.block, f.split).
///
/// Medium shapes: a grid of tiles smaller than 128 x 128 that covers the
/// SMs, where 128 x 128 tiles in two chunks still fit one wave and each
/// chunk holds at least 24 k tiles. Per output element a 64 x 64 tile
/// reads 1/32 of a row of A and of B, 64 x 128 3/128, 128 x 128 1/64:
/// two thirds to a half of the operand bytes into the SMs, for the
/// partials (8 x M x N bytes) and the sum kernel. Measured on 20 medium
/// programs, each against its default in the same call (interleaved,
/// bench/results/2026-12-02-medium, 2026-12-03-l2-stages; docs/shapes.md
/// "Medium shapes"): with 47 to 94 k tiles 4-18% faster on 12 of 13
/// (1024 x 704 x 1504 B^T 3.8% slower), with 32-35 k tiles 1-17%
/// slower on all 4 (the sum kernel's 2-3 us against a shorter main
/// loop): hence 24 k tiles a chunk. Out of sample (12 programs of
/// bench/programs.py, 2026-12-03-medium-rule): 1-11% faster on 8, ties on
/// 2, and with B^T and whole-line rows (K % 32 == 0: its 64 x 64 reads
/// half the L2 sectors of split rows) 1-3% slower at 47 k tiles (1024 x
/// 704 and 1024 x 768, K = 1504), where 768 x 768 x 2048 (64 k tiles)
/// gained 7%: such a matmul needs 32 k tiles a chunk. The few-tiles model
/// (chooseFewTiles, in defaultWgmmaTile) does not see this (it puts 64 x
/// 128 unsplit at 16.7 us for 1000 x 700 x 1500, measured 22.4; 128 x 128
/// in two at 20.0, measured 21.0).
static bool mediumRule(const MatmulShape &s, ConfigFields &f) {
  bool rowB = !s.transposeB, linesSplit = s.k % 32 != 0;
  int64_t kTiles = llvm::divideCeil(s.k, 32);
  int64_t minChunk = !rowB && !linesSplit ? 32 : 24;
  if (s.batch != 1 || f.split != 0 || f.grid != 0 ||
      f.copy == CopyKind::cp_async || f.store == StoreKind::tma ||
      f.block[0] * f.block[1] >= 128 * 128 || std::min(s.m, s.n) <= 128 ||
      s.blocksFor(128, 128) * 2 > s.sms ||
      llvm::divideCeil(kTiles, 2) < minChunk)
    return false;
  f.block = {128, 128, 32};
  f.split = 2;
  return true;
}

/// kb-tile's cluster rule, after the medium rule (`medium`: it took 128 x
/// 128 in two chunks; `splitChosen`: a split was chosen by any rule).
///
/// Split rows with B^T (K % 32 != 0): every row of a TMA box spans two
/// 128-byte lines, and the kernel waits on L2 requests. Clusters of 4
/// blocks of one column of tiles share B's tile by multicast (each copies
/// a quarter of it: cuBLAS's medium kernels run in clusters of 8, with 41%
/// fewer L2 sectors than kb's, 2026-12-03-medium-rule/raw.tar.xz:ncu-summary.txt).
/// Measured against the default, interleaved, same call
/// (bench/results/2026-12-03-clusters, calls 1 and 2; docs/shapes.md
/// "Clusters on the medium shapes"):
/// - the medium rule's 128 x 128 in two chunks, in clusters of 4: 5-13%
///   faster with 24-40 k tiles a chunk (1000 x 700 x 1500, 900 x 800 x
///   1900, 800 x 600 x 2500), 6.5% slower with 47 (1500 x 500 x 3000), 31%
///   slower where whole clusters of rows take a second wave (1300 x 700 x
///   1700: 144 blocks, 120 at once);
/// - where 128 x 128 tiles fit one wave but not in two chunks (the
///   covering 128 x 64 of 1100 x 1000 x 1100 and 1200 x 900 x 1000):
///   64 x 128 in clusters of 4 (160 blocks: two cluster waves) 14-20%
///   faster; 128 x 64 in clusters of 4, 3-9% slower;
/// - whole-line rows (1024 x 704 x 1504, 768 x 768 x 2048): every cluster
///   form slower (3-6% on 128 x 128 in two chunks, 4-21% on 64 x 128);
///   a row-major B: from 5% faster to 71% slower, not taken.
/// The 40 k tiles a chunk are fitted to these points; the measured
/// programs had K of 700 to 3000 (22 to 94 k tiles) and 6 to 22 row tiles,
/// so the rule asks for at least 22 k tiles and a whole cluster of rows
/// (no quarter of the grid empty). Not on the padded B^T that a row-major
/// B with N % 4 != 0 becomes (its rows are whole lines; not measured).
/// The 64 x 128 branch not in a kb.fusion: its epilogue would run in the
/// clustered kernel, which no GPU has checked with one yet (the split
/// branch's epilogue runs in the sum kernel: checked, call 3).
static void clusterRule(const MatmulShape &s, ConfigFields &f,
                        const TargetModel &model, bool medium,
                        bool splitChosen) {
  int64_t m = s.m, n = s.n, sms = s.sms;
  int64_t kTiles = llvm::divideCeil(s.k, 32);
  int64_t wave4 = model.clusterOf4Blocks;
  if (!s.transposeB || s.paddedB || s.k % 32 == 0 || wave4 <= 0 ||
      s.batch != 1 || f.cluster != 0 || f.grid != 0 ||
      f.copy == CopyKind::cp_async || f.store == StoreKind::tma ||
      std::min(m, n) <= 128 || kTiles < 22)
    return;
  int64_t cols = llvm::divideCeil(n, 128);
  int64_t rows128 = llvm::divideCeil(m, 128);
  int64_t rows64 = llvm::divideCeil(m, 64);
  if (medium) {
    if (llvm::divideCeil(kTiles, 2) <= 40 && rows128 >= 4 &&
        2 * llvm::alignTo(rows128, 4) * cols <= wave4)
      f.cluster = 4;
    return;
  }
  int64_t tiles128 = s.blocksFor(128, 128);
  if (!splitChosen && f.split == 0 && !s.fused &&
      f.block[0] * f.block[1] < 128 * 128 && tiles128 <= sms &&
      tiles128 * 2 > sms && rows64 >= 4 &&
      llvm::alignTo(rows64, 4) * cols <= 2 * wave4) {
    f.block = {64, 128, 32};
    f.cluster = 4;
  }
}

/// kb-tile's reduce rule, after the cluster rule: where the medium rule
/// took 128 x 128 tiles in two chunks and no cluster shares B's tile, the
/// two chunks sum inside the matmul kernel (reduce = "cluster": a cluster
/// of two blocks a tile, each finishing half of it, MatmulWgmma.cpp)
/// instead of in kb.split_sum's kernel after it. Measured against
/// kb.split_sum, interleaved, same call (bench/results/2026-12-03-reduce,
/// docs/shapes.md "Split-K summed in a cluster"):
/// - a row-major B: 3-10% faster on 12 of 13 programs (8 out of sample,
///   a fused bias + GELU among them, +9%); 1300 x 700 x 1700, the one
///   whose 132 blocks fill every SM, 0.7% and 1.2% slower in two calls:
///   hence fewer blocks than SMs (fitted to that one shape);
/// - B^T with whole-line rows (K % 32 == 0, or the padded B^T of a
///   row-major B with N % 4 != 0) and 32 k tiles a chunk: 2-5% faster
///   (768 x 768 x 2048 in two calls, 1000 x 600 x 2048, padded 1000 x 701
///   x 1500); with 40 and 47, 3.5% slower and a tie (960 x 640 x 2560,
///   1500 x 500 x 3000); in a kb.fusion (F.linear + bias + GELU or swish:
///   the finishing warpgroup runs the epilogue alone on half the tile)
///   1.6% and 7.7% slower. Split rows with B^T were measured only in the
///   first form of the kernel (1300 x 700 x 1700: 11.6% slower): left to
///   kb.split_sum;
/// - against the cluster rule's clusters of 4 (B^T, split rows) it lost
///   6-25%: the cluster rule goes first.
static void reduceRule(const MatmulShape &s, ConfigFields &f, bool medium) {
  if (!medium || f.cluster != 0 || f.reduce || f.split != 2 ||
      2 * s.blocksFor(128, 128) >= s.sms)
    return;
  int64_t chunkTiles = llvm::divideCeil(llvm::divideCeil(s.k, 32), 2);
  bool wholeLines = s.k % 32 == 0 || s.paddedB;
  if (s.transposeB && (s.fused || chunkTiles > 32 || !wholeLines))
    return;
  f.reduce = ReduceKind::cluster;
}

/// kb-tile's skinny-reduce rule, after the few-tiles model split a B^T
/// tile of two consumer warpgroups (BM = 128) over one row of output tiles
/// (M <= 128) in two K chunks: the chunks summed in a cluster (reduce =
/// "cluster") instead of by kb.split_sum's second kernel, whose partials
/// are a small part of the bytes here (the weight is read once). Measured
/// (bench/results/2026-12-04-memory-bound, call 2; the same tile and split
/// with kb.split_sum / with the cluster, interleaved, 3 turns, L2 flushed):
/// 96 x 12288 x 4096 (the suite's) 0.984, out of sample 128 x 11008 x 4096
/// 0.975, 80 x 14336 x 4096 0.984, 112 x 12288 x 5120 0.981, 128 x 14336 x
/// 4096 0.955, every turn faster. With one warpgroup (BM = 64, M <= 64)
/// block 0 finishes the whole tile alone: 16 x 11008 x 4096 at 64 x 128 in
/// two chunks ran 4.4% slower than with kb.split_sum (call 1), so those
/// keep the sum kernel. Not in a kb.fusion (the reduce rule's fused B^T
/// programs lost), nor where K is outside the measured 4096-5120.
static void skinnyReduceRule(const MatmulShape &s, ConfigFields &f) {
  if (!s.transposeB || s.fused || s.batch != 1 || f.split != 2 ||
      f.reduce || f.cluster != 0 || f.grid != 0 ||
      f.copy == CopyKind::cp_async || f.store == StoreKind::tma ||
      f.block.size() != 3 || f.block[0] != 128 || s.m > 128 ||
      s.k < 4096 || s.k > 5120)
    return;
  f.reduce = ReduceKind::cluster;
}

/// kb-tile's wide-reduce rule (B^T, before the medium rule): where the
/// default is 128 x 128 tiles in one wave and 128 x 256 tiles in two K
/// chunks still fit one wave, the big tile in two chunks summed in a
/// cluster (reduce = "cluster"). nn.Linear shapes of M = 256-512 against
/// weights 4096-8192 wide are the case: 512 x 4096 has 64 tiles of 128 x
/// 256, so the default took 128 blocks of 128 x 128, which compute at
/// about 0.8 of the big tile's rate (the few-tiles model's efficiency).
/// Measured against that default (bench/results/2026-12-03-linear; old time
/// / new time, interleaved, same call), with L2 flushed between runs (kb's
/// protocol): K = 11008 and 16384 (+ bias + ReLU, + bias + scale + GELU)
/// 1.10 and 1.11 (call 1); K = 8192 1.016-1.057 on three programs, K = 6144
/// 1.045, K = 4096 1.02-1.04 on four (calls 1-2). Back to back with L2 warm
/// (kb-run --warm-l2, call 5): K = 4096 1.020 and 0.944 (+ bias + ReLU),
/// K = 6144 and 8192 0.965-1.017 (those four inside their runs' spread).
/// In single launches under ncu (call 3, clocks free) the 512 x 4096 x 4096
/// kernel took 50.0 us against the old one's 47.5. So the gain is the
/// flushed protocol's at K = 4096 and holds best at long K: the rule takes
/// K >= 8192 (whole 128-byte rows), M <= 512 and N >= 4096 (the measured
/// range; 128 x 16384 or 4096 x 512 grids were not measured), no edge in M
/// or N (ptxas spills where a split 128 x 256 tile has edges), one wave of
/// either grid, and no hand-set stages (the big tile may not fit them).
/// Fused + bias + ReLU kernels spill 20 bytes at ptxas's 168 registers for
/// 288 threads at every K (384 x 5120 x 8192: 1.019 flushed, 0.984 warm).
/// (Where it does not apply, 128 x 128 in clusters of two sharing B^T's
/// tile: the pair rule, below.)
static bool wideReduceRule(const MatmulShape &s, ConfigFields &f) {
  if (!s.transposeB || s.paddedB || s.batch != 1 || f.split != 0 ||
      f.grid != 0 || f.cluster != 0 || f.reduce ||
      f.copy == CopyKind::cp_async || f.store == StoreKind::tma ||
      f.block.size() != 3 || f.block[0] != 128 || f.block[1] != 128 ||
      f.stages != 0 || s.k % 32 != 0 || s.k / 32 < 256 || s.m > 512 ||
      s.n < 4096 || s.m % 128 != 0 || s.n % 256 != 0 ||
      s.blocksFor(128, 128) > s.sms || 2 * s.blocksFor(128, 256) > s.sms)
    return false;
  f.block = {128, 256, 32};
  f.split = 2;
  f.reduce = ReduceKind::cluster;
  return true;
}

/// kb-tile's pair rule, after the split decision: kb's default one wave of
/// 128 x 128 B^T tiles in clusters of two blocks of one column of tiles,
/// which share B's tile by multicast (each copies half of it; cuBLAS's
/// kernel at 512 x 4096 x 4096 B^T is 128 x 128 in clusters of 2, 384
/// threads). Predicted 2-5% faster (less L2 traffic for B, the larger
/// operand at M <= 1024); measured against the default, interleaved, same
/// call (bench/results/2026-12-03-pair; old time / new time, L2 flushed):
/// 1.012-1.064 on 7 nn.Linear programs (plain, + bias + ReLU, + bias +
/// scale + GELU, + bias + swish; M 256-1024, N 2048-8192, K 3072-6144),
/// 1.009 at K = 8192 (1024 x 2048); back to back with L2 warm 0.997-1.045.
/// 384 x 5120 x 4096 (3 rows of tiles, so the cluster pads the grid to 4:
/// 160 blocks, two waves) ran 1.83x slower: whole pairs of rows only. The
/// measured range: K 3072-8192 in whole 128-byte rows, no edge in M or N,
/// one wave. Not with a split (each chunk would be its own cluster grid).
void mlir::kb::tile::pairRule(const MatmulShape &s, ConfigFields &f) {
  if (!s.transposeB || s.paddedB || s.batch != 1 || f.split > 1 ||
      f.grid != 0 || f.cluster != 0 || f.reduce ||
      f.copy == CopyKind::cp_async || f.store == StoreKind::tma ||
      f.block.size() != 3 || f.block[0] != 128 || f.block[1] != 128 ||
      s.k % 32 != 0 || s.k < 3072 || s.k > 8192 || s.m % 256 != 0 ||
      s.n % 128 != 0 || s.blocksFor(128, 128) > s.sms)
    return;
  f.cluster = 2;
}

/// kb-tile's persistent rule, after the split decision: where kb-tile's
/// own tile is 128 x 160 to 128 x 256 with B^T over more tiles than SMs,
/// a persistent grid (one block an SM walking the tiles: its producer
/// copies the next tile's first k tiles during this tile's epilogue).
/// Seen in bench/results/2026-12-03-streamk call 2 (the stream-K plan
/// leaves such grids a persistent grid): 1536x4096x4096 and 768x8192x4096
/// + ReLU at 128 x 192 3.1-4.9% faster, 4096x5120x13824 at 128 x 256 3.5%.
/// Checked out of sample in call 3 (10 nn.Linear programs, default time /
/// persistent time, L2 flushed): unfused 128 x 256 1.014-1.016 (three,
/// 4096^3 among them) and 128 x 192 1.033, fused 128 x 192 1.022-1.040
/// (two); fused 128 x 256 0.988-1.047 (2048x5120x5120 + GELU 1.2% slower:
/// its persistent kernel spills 36 bytes at ptxas's 168 registers), so a
/// fusion takes it only at 128 x 192.
/// Back to back (L2 warm) 0.976-1.093, every program inside its runs'
/// spread. Not with an edge in M, nor in N at 128 x 256 (ptxas spills there
/// in the persistent loop, above); the measured 128 x 192 grids with an
/// edge in N (384x14336, 640x8192) did not spill. At most 5 waves of tiles
/// (the measured grids had 1.7-4.85; 8192^3 with a row-major B, 15.5 waves,
/// was 3% slower persistent in 2026-12-01's runs 8-9); with B^T at any
/// count since bench/results/2026-12-03-width call 4: 5 nn.Linear programs
/// of 7.8-15.5 waves of 128 x 256, M 2048-8192, persistent / default time
/// 0.926-0.994, faster in 3 or 4 of 4 turns each, all inside the spread
/// (a fused one among them, 4096 x 16384 x 4096 + ReLU, 0.982, though a
/// fusion keeps 128 x 256 one block a tile, above). A fusion stays at five
/// waves at most: its persistent kernels were measured up to there. The
/// widths rule's
/// 128 x 160 and 128 x 224 (bench/results/2026-12-03-width, call 1):
/// persistent 0.97-1.04x of the same tile one block a tile, on 8 of 10
/// programs faster (1536 x 3072 x 4096 at 128 x 160 2.5% slower).
bool mlir::kb::tile::persistentRule(const MatmulShape &s,
                                    const ConfigFields &f, int64_t tiles) {
  if (!s.transposeB || s.paddedB || s.batch != 1 || f.split > 1 ||
      f.cluster != 0 || f.reduce || f.store == StoreKind::tma ||
      f.block.size() != 3 || f.block[0] != 128 ||
      f.block[1] < 160 || f.block[1] % 32 || tiles <= s.sms ||
      (s.fused && tiles > 5 * s.sms) || s.m % 128 != 0)
    return false;
  if (f.block[1] == 256 && (s.fused || s.n % 256 != 0))
    return false;
  return true;
}

/// kb-tile's default wgmma tile (f.block), and where it chose the tile and
/// split-K together (few output tiles), the split too: returns true then.
bool mlir::kb::tile::defaultWgmmaTile(const MatmulShape &s, ConfigFields &f,
                                      const TargetModel &model) {
  int64_t m = s.m, n = s.n, k = s.k, batch = s.batch, sms = s.sms;
  auto blocksFor = [&](int64_t bm, int64_t bn) { return s.blocksFor(bm, bn); };
  bool splitChosen = false;
  // One warpgroup per 64 rows; the largest tile whose grid covers at
  // least 90% of the SMs (BK = 32: one 128-byte swizzled row of K).
  // Run 27: 2048^3 with 128x256 tiles (128 blocks) 0.0706 ms against
  // 0.0859 with 128x128 (256 blocks); 1024x768x1536 with 64x64 (192
  // blocks) 0.0307 against 0.0319 with 128x64 (96).
  auto covers = [&](int64_t bm, int64_t bn) {
    return blocksFor(bm, bn) * 10 >= sms * 9;
  };
  // When A's rows are not whole 128-byte lines (K % 32 != 0), each row
  // of an A box spans two lines and the 64x64 kernel is bound by its L2
  // reads: 64x128 reads each A tile half as often and wins with half of
  // the SMs busy (2026-11-30 run 40, 1000x700x1500: 0.0271 ms against
  // 0.0290 for 64x64, two passes; with aligned rows, 1024x704x1504,
  // 64x64 stays ahead, 0.0249 against 0.0253).
  bool linesSplit = k % 32 != 0;
  // At most 64 rows: one warpgroup (64-row tiles; a 128-row tile would
  // compute 64 rows of nothing for as many blocks).
  bool fewRows = m <= 64;
  // A row-major B: the warpgroups split the columns, and the rows are
  // wgmma's N (MatmulWgmma.cpp, "Row-major B"), so the big tile is
  // 256 x 128 (two warpgroups of 64 columns x 256 rows: the same
  // accumulators and shared-memory reads per flop as 128 x 256 with B
  // K-major), and a few rows take the narrowest wgmma that holds them.
  bool rowB = !s.transposeB;
  if (rowB) {
    if (!fewRows && m > 128 && covers(256, 128))
      f.block = {256, 128, 32};
    else if (!fewRows && covers(128, 128))
      f.block = {128, 128, 32};
    else if (!fewRows && covers(128, 64))
      f.block = {128, 64, 32};
    else if (covers(64, 128) || (linesSplit && blocksFor(64, 128) * 2 >= sms))
      f.block = {64, 128, 32};
    else
      f.block = {64, 64, 32};
    if (m < f.block[0])
      f.block[0] = std::max<int64_t>(8, llvm::alignTo(m, 8));
  } else if (!fewRows && covers(128, 256))
    f.block = {128, 256, 32};
  else if (!fewRows && covers(128, 128))
    f.block = {128, 128, 32};
  else if (!fewRows && covers(128, 64))
    f.block = {128, 64, 32};
  else if (fewRows && covers(64, 256))
    f.block = {64, 256, 32};
  else if (fewRows && covers(64, 128))
    f.block = {64, 128, 32};
  else if (linesSplit && blocksFor(64, 128) * 2 >= sms)
    f.block = {64, 128, 32};
  else
    f.block = {64, 64, 32};
  // Waves: 128 x 128 tiles whose grid covers the SMs only by spilling into
  // a second wave (one block an SM) against the big tile (256 x 128, or
  // 128 x 256 with B^T), whose grid is under 90% of the SMs but takes
  // fewer waves. Each wave of the big tile does twice the work at
  // wgmma's full rate, 128 x 128 at 0.785 of it (the few-tiles model's
  // efficiency, run 5): the big tile where that is faster. kb-tune's
  // held-out batched 16x384x384x768: 128 x 128 in 144 blocks (two waves)
  // 0.0323 ms, 256 x 128 in 96 (one) 0.0267 (bench/results/2026-12-02-
  // tune6); its 32x256x256x1024 and 8x512^3 (128 blocks of 128 x 128: one
  // wave) keep 128 x 128, their exhaustive best.
  if (f.block[0] == 128 && f.block[1] == 128 && !fewRows &&
      (!rowB || m > 128)) {
    int64_t bigM = rowB ? 256 : 128, bigN = rowB ? 128 : 256;
    double wavesSmall = llvm::divideCeil(blocksFor(128, 128), sms);
    double wavesBig = llvm::divideCeil(blocksFor(bigM, bigN), sms);
    if (2.0 * wavesBig < wavesSmall / 0.785)
      f.block = {bigM, bigN, 32};
  }
  // Waves of the big B^T tile: a grid costs its waves times a tile's
  // time, the tile's area over the few-tiles model's efficiency ((area /
  // 32768)^0.35: 128 x 192 at 0.904 of 128 x 256's rate); 128 x 192 where
  // that cost is at least 10% under 128 x 256's, i.e. where 128 x 192
  // takes no more waves. The case: a grid of 128 x 256 tiles a little over
  // a whole number of waves (512 x 11008: 172 tiles, a second wave 30%
  // full; 128 x 192 takes 232 tiles, 1.76 waves): predicted 17% faster,
  // measured 15% with + bias + swish (bench/results/2026-12-03-linear, call
  // 1). Checked on 8 programs, 7 out of sample (call 2, L2 flushed:
  // 1.037-1.338 old time / new time, 6 of 8 at 1.15-1.21; call 5, back to
  // back with L2 warm: 1.018-1.379).
  // Not in a kb.fusion with an edge in M: the measured fused programs had
  // none, and ptxas spills more there (1999 x 3072 x 4096 + bias + scale +
  // GELU: 128 bytes at 128 x 192, 20 at 128 x 256).
  // The widths between (bench/results/2026-12-03-width, call 1): the same
  // cost for 128 x 160 and 128 x 224 (wgmma N = 160 / 224, whole boxes of
  // 32 rows of B), taken where it is at least 5% under the width above.
  // In-sample, 10 nn.Linear programs the model moved (predicted 1.09-1.13x;
  // each variant against the default of the time, L2 flushed, 3 turns):
  // 1.07-1.12x with the persistent grid the rule below then takes, e.g.
  // 1024 x 5120 x 13824 from 216 tiles of 128 x 192 (1.64 waves) to 256 of
  // 128 x 160 (1.94 waves) 1.105x, 2048 x 5120 x 13824 from 320 of 128 x
  // 256 (2.42) to 368 of 128 x 224 (2.79) 1.08x. 128 x 224 in a kb.fusion
  // only on a persistent grid: not persistent, 2048 x 5120 x 5120 + GELU
  // spilled 136 bytes at ptxas's 168 registers (and ran 1.03x, against
  // 1.10x persistent, which spilled none).
  if (!rowB && !fewRows && f.block[0] == 128 && f.block[1] == 256 &&
      !(s.fused && m % 128 != 0)) {
    auto cost = [&](int64_t bn) {
      return double(llvm::divideCeil(blocksFor(128, bn), sms)) * bn /
             tileEfficiency(128, bn);
    };
    int64_t bn = cost(192) * 1.1 <= cost(256) ? 192 : 256;
    int64_t best = 0;
    for (int64_t w : {224, 160}) {
      int64_t tiles = blocksFor(128, w);
      // A fusion's 128 x 224 only where the persistent rule will take it
      // (not with a hand-set cluster, split, reduce, TMA store or cp.async
      // copy, nor a padded B: one block a tile spilled there).
      if (w == 224 && s.fused) {
        ConfigFields trial = f;
        trial.block = {128, 224, 32};
        if (f.copy == CopyKind::cp_async || !persistentRule(s, trial, tiles))
          continue;
      }
      if (cost(w) * 1.05 <= cost(bn) && (!best || cost(w) < cost(best)))
        best = w;
    }
    f.block = {128, best ? best : bn, 32};
  }
  // A few columns (a matrix-vector product, N = 1): the narrowest
  // wgmma that holds them (N a multiple of 8), not 64 columns of which
  // all but N are computed for nothing.
  if (!rowB && n < f.block[1])
    f.block[1] = std::max<int64_t>(8, llvm::alignTo(n, 8));
  // Few output tiles, or a small tile with at most 128 rows or columns
  // (a few rows against a wide weight; not a 1000 x 700 x 1504, where
  // 64 x 64 measured ahead of 64 x 128, run 40): the tile and split chosen
  // together (chooseFewTiles), where that gains 10% over the tile above and
  // the split chooseSplitK would give it (run 5: 128 x 4096 x 4096 with B^T
  // on 64 x 64 tiles, 128 blocks, 0.0497 ms; 128 x 128 at split 4, 0.0343).
  // Not with a hand-set split, nor for a batch (never split), nor with a
  // hand-set cp.async copy (its tiles must split among the threads, which
  // an exact fit such as 192 x 160 need not), nor with store = "tma" (never
  // split). K % 32 != 0 (the lines-split
  // rule above) only with a row-major B: 1000 x 700 x 1500 (47 k tiles) at
  // the model's 256 x 128 in 4 uneven chunks ran 0.0241 ms against 0.0258
  // for the lines-split rule's 64 x 128; with B^T the model's 128 x 192 in
  // 4 ran 0.0230 against 0.0224 (run 11, same call). That exclusion holds
  // up to 128 k tiles (the run's 47, and the 22-94 the medium and cluster
  // rules below were measured on): over a longer K it left the grid to the
  // medium rule's two chunks, or to no split at all (bf16 192 x 160 x
  // 300000 B^T, whose K / 2 = 150000 splits lines: 64 x 64, then 128 x 128
  // in 2 chunks, 8 blocks on 132 SMs, 0.6648 ms against cuBLAS's 0.1102 on
  // an H100, 2026-12-07; docs/shapes.md "bf16 losses, 2026-12-07: why").
  // Nor with reduce = "stream" (stream-K shares the k tiles among its
  // grid's blocks instead).
  bool linesKept = linesSplit && !rowB && llvm::divideCeil(k, 32) <= 128;
  if (batch == 1 && f.split == 0 && !linesKept &&
      f.copy != CopyKind::cp_async && f.store != StoreKind::tma &&
      f.reduce != ReduceKind::stream &&
      (!covers(f.block[0], f.block[1]) ||
       (f.block[0] * f.block[1] < 128 * 128 && std::min(m, n) <= 128))) {
    // The stages kb-promote-shared-memory will give each candidate (its
    // loads in flight are part of the model).
    auto stagesFor = [&](int64_t bm, int64_t bn, int64_t blocks) {
      if (f.stages > 0)
        return f.stages;
      return wgmmaDefaultStages(bm, bn, 32, !rowB, /*tma=*/true, f.grid > 0,
                                n, f.grid > 0 ? f.grid : blocks, model,
                                f.store == StoreKind::tma);
    };
    int64_t bm0 = f.block[0], bn0 = f.block[1];
    // Where the tile above covers the SMs, only a different tile: a
    // split alone of such a grid did not pay (run 7, 64 x 16384 x 4096
    // B^T, 64 x 128 tiles: 0.0797 ms unsplit, 0.0828 in 2 chunks). The
    // others are weighed without it, so that a split of it the model
    // prefers does not hide the best other tile.
    bool coversAbove = covers(bm0, bn0);
    FewTilesChoice few = chooseFewTiles(
        m, n, k, rowB, sms, model.wgmmaTf32Tflops, model.copyGBs, stagesFor,
        coversAbove ? bm0 : 0, coversAbove ? bn0 : 0);
    int64_t resident0 = (!rowB ? bm0 >= 128 : bm0 * bn0 >= 128 * 128) ? 1 : 2;
    int64_t s0 = chooseSplitK(m, n, k, bm0, bn0, 32, batch, sms, resident0,
                              model.wgmmaTf32Tflops, model.copyGBs);
    double t0 = fewTilesSeconds(
        m, n, k, bm0, bn0, s0, sms, model.wgmmaTf32Tflops, model.copyGBs,
        stagesFor(bm0, bn0,
                  llvm::divideCeil(m, bm0) * llvm::divideCeil(n, bn0) * s0));
    if (few.seconds * 1.1 <= t0) {
      f.block = {few.bm, few.bn, 32};
      if (few.split > 1)
        f.split = few.split;
      splitChosen = true;
    }
  }
  if (splitChosen)
    skinnyReduceRule(s, f);
  if (!splitChosen && wideReduceRule(s, f))
    return true;
  // The medium rule and the cluster rule (their measurements above them).
  bool medium = !splitChosen && mediumRule(s, f);
  splitChosen = splitChosen || medium;
  clusterRule(s, f, model, medium, splitChosen);
  reduceRule(s, f, medium);
  return splitChosen;
}

/// A 16-bit wgmma matmul's default tile (its rules on K / 2, in 128-byte
/// lines): the rules' tile and split where they chose a split and no
/// cluster (the f32 partials summed by kb.split_sum, also where the cluster
/// reduce was to sum them), else the tile they choose with the split rules
/// stood down (a preset split = 1): a tile the cluster rule chose is one for
/// clusters, whose rule was measured in tf32 only (a 16-bit kernel runs in
/// clusters where the config sets cluster = C by hand, kept here). Returns
/// whether the split was chosen (kb-tile's own split-K then stays out).
bool mlir::kb::tile::defaultHalfWgmmaTile(const MatmulShape &ms,
                                          ConfigFields &f,
                                          const TargetModel &model) {
  // A hand-set reduce = "stream" stays (it has a 16-bit form).
  std::optional<ReduceKind> handReduce = f.reduce;
  int64_t handCluster = f.cluster;
  ConfigFields free = f;
  bool chosen = defaultWgmmaTile(ms, free, model);
  if (free.split > 1 && free.cluster <= 1) {
    f = free;
    f.reduce = handReduce;
    f.cluster = handCluster;
    return chosen;
  }
  f.split = 1;
  defaultWgmmaTile(ms, f, model);
  f.split = 0;
  f.reduce = handReduce;
  f.cluster = handCluster;
  // 65-128 rows with B^T over few tiles: tf32's rules give 64 x 64 (one
  // consumer warpgroup a block, 32 flops a byte of shared memory filled);
  // in 16 bits 128 x 128 split over about half the SMs is faster. Measured
  // on an H100 (2026-12-07, session 28, call 2, variants in one call), 128
  // x 4096 x 4096 B^T: 64 x 64 0.0312 ms, 128 x 128 in 2 chunks (64
  // blocks) 0.0227, in 4 0.0237, 128 x 64 in 2 0.0237, unsplit 0.0277;
  // F.linear 0.0212. Only as measured: N of 2048 and more, K up to 16384
  // (longer K takes the few-tiles split above).
  if (!chosen && free.cluster <= 1 && ms.transposeB && !ms.paddedB &&
      ms.batch == 1 && ms.m > 64 && ms.m <= 128 && ms.n >= 2048 &&
      ms.k <= 8192 && f.block.size() == 3 &&
      f.block[0] == 64 && f.block[1] == 64 && !handReduce && handCluster <= 1) {
    int64_t tiles = llvm::divideCeil(ms.n, 128);
    int64_t kTiles = llvm::divideCeil(ms.k, 32); // 128-byte lines of K
    int64_t split = std::max<int64_t>(1, (ms.sms / 2) / tiles);
    while (split > 1 && kTiles / split < 8)
      --split;
    f.block = {128, 128, 32};
    f.split = split;
    return true;
  }
  // Where the cluster rule fired, no split of kb-tile's own either (the
  // tile above was chosen for a whole K).
  return free.cluster > 1 || chosen;
}
