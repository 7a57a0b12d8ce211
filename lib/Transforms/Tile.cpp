//===- Tile.cpp - block, warp and thread tiles for each kernel ------------===//
//
// kb-tile: for a matmul, the output tile of a block [BM, BN, BK] and how it is
// split: among threads ([TM, TN] register tiles, FFMA) or among warps
// ([WM, WN] tiles of m16n8k8 or, 16-bit, m16n8k16 fragments, mma.sync) or
// among warpgroups (64 rows each, wgmma). The tile shrinks when the default
// would leave multiprocessors idle. Elementwise kernels get their
// elements per block. Hand-set tiles are checked for an even split. The
// default wgmma tile and its measured rules are in TileWgmma.cpp, the gemv
// kernel's tiles in TileGemv.cpp.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"
#include "TileRules.h"

#include <cmath>
#include <limits>

namespace mlir::kb {
#define GEN_PASS_DEF_KBTILE
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::tile;

namespace {

/// The tile order of a wgmma matmul (`raster` in #kb.config): the number of
/// block rows a group walks, row fastest (1: row by row). A wave of blocks
/// (one per SM at the tiles kb-tile picks for wgmma) reads the A tiles of
/// the rows it touches and the B tiles of its columns, each BM (BN) x K
/// floats; row by row, a wave of one block per SM (the model's smCount) over
/// a grid 112 tiles wide reads almost all of B (nn.Linear 2048x28672x8192: 896
/// MB a wave), in groups of 16 rows a seventh of it. The group that reads least
/// a wave is taken when it reads at most 85% of what row order does. Measured
/// (2026-12-01 runs 1-3): that nn.Linear shape 4.04 -> 2.73 ms with raster =
/// 16; a 4096^3 square (B^T given), where groups save 17% of a wave's bytes,
/// 0.4007 -> 0.3873 ms (+3.5%, predicted 0-2%); below 15% nothing was measured.
int64_t chooseRaster(int64_t m, int64_t n, int64_t k, int64_t bm, int64_t bn,
                     int64_t batch, int64_t sms) {
  int64_t tilesM = llvm::divideCeil(m, bm), tilesN = llvm::divideCeil(n, bn);
  int64_t wave = sms; // blocks at once: one per SM for wgmma's tiles
  if (batch > 1 || tilesM <= 1 || tilesM * tilesN <= wave)
    return 0;
  double aTile = double(bm) * k, bTile = double(bn) * k;
  auto waveReads = [&](int64_t rows) {
    // A wave of `wave` blocks in groups of `rows` block rows.
    // (A group narrower than a wave: the wave spans whole groups.)
    int64_t cols = llvm::divideCeil(wave, rows);
    int64_t rowsTouched = std::max<int64_t>(
        rows, llvm::divideCeil(wave, tilesN) + (rows == 1 ? 1 : 0));
    return std::min<int64_t>(rowsTouched, tilesM) * aTile +
           std::min<int64_t>(cols, tilesN) * bTile;
  };
  double plain = waveReads(1);
  int64_t best = 0;
  double bestReads = plain;
  for (int64_t g : {2, 4, 8, 16, 32})
    if (g <= tilesM && waveReads(g) < bestReads) {
      best = g;
      bestReads = waveReads(g);
    }
  return bestReads <= 0.85 * plain ? best : 0;
}

} // namespace

/// Split-K: a grid of output tiles that leaves more than half of the
/// block slots idle (SMs x the blocks of these tiles one SM runs at once)
/// gets its K tiles cut into S chunks, each a block of its own. The
/// model: a block that computes one output tile over all of K takes T, the
/// longer of its operand bytes ((BM + BN) x K floats) at one SM's share of
/// the copy bandwidth and its flops at one SM's share of its unit's rate;
/// with S chunks the grid runs in ceil(tiles x S / SMs) waves of T / S each,
/// and the partials add S x M x N floats written and read once more, and a
/// kernel launch. S is
/// the divisor of the K tiles (each chunk at least 8 of them) that minimises
/// this; the smallest S within 3% of the best is taken (fewer partials,
/// the same time by the model), and no split unless it gains 25%.
int64_t mlir::kb::chooseSplitK(int64_t m, int64_t n, int64_t k, int64_t bm,
                               int64_t bn, int64_t bk, int64_t batch,
                               int64_t sms, int64_t residentBlocks,
                               double unitTflops, double copyGBs) {
  if (batch > 1 || sms <= 0 || unitTflops <= 0 || copyGBs <= 0)
    return 1;
  int64_t tiles = llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn);
  int64_t kTiles = llvm::divideCeil(k, bk);
  // Blocks of these tiles that run on one SM at once (a guess before the
  // registers are known: by threads, at most 4), each with its share of
  // the SM: the slots a wave fills.
  int64_t slots = sms * std::max<int64_t>(residentBlocks, 1);
  if (tiles * 2 > sms)
    return 1;
  double smBw = copyGBs * 1e9 / slots, smRate = unitTflops * 1e12 / slots;
  double tileTime =
      std::max(4.0 * (bm + bn) * k / smBw, 2.0 * bm * bn * k / smRate);
  auto timeFor = [&](int64_t s) {
    double waves = llvm::divideCeil(tiles * s, slots);
    // The partials' traffic, and the launch of the kernel that sums them
    // (about 4 us on the H200 between two dependent kernels).
    double partials = s > 1 ? 8.0 * s * m * n / (copyGBs * 1e9) + 4e-6 : 0;
    return waves * tileTime / s + partials;
  };
  SmallVector<std::pair<int64_t, double>> options{{1, timeFor(1)}};
  for (int64_t s = 2; s <= std::min<int64_t>(kTiles / 8, 1024); ++s)
    if (kTiles % s == 0)
      options.push_back({s, timeFor(s)});
  // A matmul of a few tens of microseconds is its launches' (and the
  // sum kernel would be one more): not split.
  if (timeFor(1) < 50e-6)
    return 1;
  double best = timeFor(1);
  for (auto [s, t] : options)
    best = std::min(best, t);
  for (auto [s, t] : options)
    if (t <= best * 1.03)
      return t * 1.25 <= timeFor(1) ? s : 1;
  return 1;
}

/// The few-tiles model's efficiency of a BM x BN wgmma tile: the fraction
/// of the unit's rate a block of it reaches, (BM x BN / 32768)^0.35, at
/// most 1 (fitted in run 5: fewTilesSeconds below).
double mlir::kb::tile::tileEfficiency(int64_t bm, int64_t bn) {
  return std::min(1.0, std::pow(double(bm * bn) / 32768.0, 0.35));
}

/// Few output tiles (wgmma, batch 1): the tile and the split chosen
/// together. kb-tile's big tiles need a grid that covers the SMs; without
/// one it used to take 64 x 64 tiles and let chooseSplitK fill the grid, and
/// those ran at half of wgmma's rate (run 5, 512 x 512 x 131072: 64 x 64 at
/// split 4 0.368 ms, 256 x 128 at split 16 0.191). The model, fitted to run
/// 5's tile variants (docs/shapes.md, "Few output tiles"):
/// - a block of a BM x BN tile computes at one SM's share of the unit's rate
///   times an efficiency that grows with the tile's area, (BM x BN /
///   32768)^0.35, at most 1 (the wgmma of small tiles wait on shared memory
///   and their fences: 64 x 64 ran at 0.5, 128 x 128 at 0.75-0.8, 256 x
///   128 and 192 x 160 at 1); blocks that share an SM share it;
/// - the operands are read once, except the larger one, which every row (or
///   column) of tiles across the smaller one reads again where the grid
///   takes more than one wave (in one wave L2 serves the repeats);
/// - those bytes move at the copy bandwidth at most, and at most at what the
///   blocks keep in flight (their stages, wgmmaDefaultStages, of their
///   tiles' real rows) per 5 us, the round trip run 5's narrow tiles showed
///   (128 x 32: 82 KB a block, 10 GB/s);
/// - split-K's partials: S x M x N floats written and read, and the sum
///   kernel's launch (4 us).
/// The tiles: 256 x 128, 128 x 128 (and the rows rounded up to 8 with 128
/// or 64 columns) with a row-major B; 128 x 256, 128 x 192, 128 x 128, 64 x
/// 128 (and the exact fit of the rows to 64 and the columns to 8) with B
/// transposed; 64 x 64 for both. Not 192 x 128 with a row-major B nor 64 x
/// 256 with B^T: run 6 measured them behind what the model said (384 x 384
/// x 200000 at 192 x 128 in 10 chunks 0.332 ms, 128 x 128 in 10 0.296 in
/// run 5; 64 x 16384 x 4096 at 64 x 256 in 2 chunks 0.0837, 64 x 128 unsplit
/// 0.0797). The splits: any count of chunks of ceil(k tiles / S) (the last
/// shorter, none empty), at least 8 k tiles a chunk, whose grid fits the
/// SMs' slots at once (one block an SM for tiles of 16384 or more elements,
/// else two); the model's time is the longest chunk's.
double mlir::kb::fewTilesSeconds(int64_t m, int64_t n, int64_t k, int64_t bm,
                                 int64_t bn, int64_t split, int64_t sms,
                                 double unitTflops, double copyGBs,
                                 int64_t stages) {
  int64_t tilesM = llvm::divideCeil(m, bm), tilesN = llvm::divideCeil(n, bn);
  int64_t blocks = tilesM * tilesN * split;
  int64_t kTiles = llvm::divideCeil(k, 32);
  double bw = copyGBs * 1e9, smRate = unitTflops * 1e12 / sms;
  double eff = tileEfficiency(bm, bn);
  double perSM = llvm::divideCeil(blocks, sms);
  double flops = perSM * 2.0 * bm * bn * 32.0 * splitChunkTiles(kTiles, split) /
                 (smRate * eff);
  int64_t slots = sms * (bm * bn >= 16384 ? 1 : 2);
  // A grid that runs at once reads each chunk of the larger operand in all
  // its rows (or columns) of tiles at about the same time: DRAM once, L2
  // for the others (256 x 1024 x 65536 B^T: 128 x 256 tiles in 16 chunks
  // ran 0.1107 ms, under the 0.142 ms two reads of B at the copy bandwidth
  // take; run 19). A grid of several waves reads it again.
  bool oneWave = blocks <= slots;
  double bytes =
      4.0 * k *
          (oneWave ? double(m + n)
                   : (m <= n ? m + double(n) * tilesM
                             : n + double(m) * tilesN)) +
      4.0 * m * n;
  double inFlight =
      double(stages) * (std::min(bm, m) + std::min(bn, n)) * 32 * 4;
  double rate = std::min(bw, std::min(blocks, slots) * inFlight / 5e-6);
  double partials = split > 1 ? 8.0 * split * m * n / bw + 4e-6 : 0;
  return std::max(flops, bytes / rate) + partials;
}

FewTilesChoice mlir::kb::chooseFewTiles(int64_t m, int64_t n, int64_t k,
                                        bool rowB, int64_t sms,
                                        double unitTflops, double copyGBs,
                                        WgmmaStagesFn stagesFor,
                                        int64_t skipBm, int64_t skipBn) {
  SmallVector<std::pair<int64_t, int64_t>> tiles;
  int64_t rows64 = llvm::alignTo(m, 64), rows8 = llvm::alignTo(m, 8);
  if (rowB) {
    tiles = {{256, 128}, {128, 128}, {64, 128}, {64, 64}};
    if (rows8 <= 256)
      tiles.append({{rows8, 128}, {rows8, 64}});
    // No tile wider or taller than the matrix needs.
    llvm::erase_if(tiles, [&](auto t) {
      return t.first > std::max<int64_t>(8, rows8) ||
             t.second > std::max<int64_t>(64, llvm::alignTo(n, 64));
    });
  } else {
    tiles = {{128, 256}, {128, 192}, {128, 128}, {64, 128}, {64, 64}};
    int64_t cols8 = llvm::alignTo(n, 8);
    if (rows64 <= 192 && cols8 <= 256 && rows64 * cols8 <= 32768)
      tiles.push_back({rows64, cols8});
    llvm::erase_if(tiles, [&](auto t) {
      return t.first > std::max<int64_t>(64, rows64) ||
             t.second > std::max<int64_t>(64, cols8);
    });
  }
  llvm::erase_if(tiles, [&](auto t) {
    return t.first == skipBm && t.second == skipBn;
  });
  int64_t kTiles = llvm::divideCeil(k, 32);
  // The best choice over splits that divide the k tiles (`even`), and over
  // any split (uneven ones: chunks of ceil(T / S) k tiles, the last
  // shorter). 384 x 384 x 200000 is 6250 k tiles (2 x 5^5) over nine 128 x
  // 128 tiles: the divisors give 10 chunks (90 blocks) or 25 (225, two
  // waves), 14 uneven chunks 126 blocks. An uneven split is taken only
  // where the model says 10% over the best even one: where the model is
  // flat it would otherwise trade measured picks for 5-10% fewer chunks
  // (256 x 256 x 262144: 57 chunks for the 64 measured, run 6).
  FewTilesChoice none{64, 64, 1, std::numeric_limits<double>::infinity()};
  FewTilesChoice even = none, any = none, unsplit = none;
  auto consider = [](FewTilesChoice &best, FewTilesChoice c) {
    // Ties (within 2%) go to the fewer chunks, then the larger tile.
    if (c.seconds < best.seconds * 0.98 ||
        (c.seconds <= best.seconds * 1.02 &&
         (c.split < best.split ||
          (c.split == best.split && c.bm * c.bn > best.bm * best.bn))))
      best = c;
  };
  for (auto [bm, bn] : tiles) {
    int64_t grid = llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn);
    int64_t slots = sms * (bm * bn >= 16384 ? 1 : 2);
    for (int64_t s = 1; s <= kTiles / 8 || s == 1; ++s) {
      if (s > 1 && (!splitLeavesNoChunkEmpty(kTiles, s) || grid * s > slots))
        continue;
      // B^T's 128 x 256 tile split with edges in both M and N: ptxas needs
      // 168 registers and spills 68 bytes (335 x 376 x 62560 in 5 chunks;
      // 154 and none unsplit, or with either dimension whole).
      if (!rowB && bm == 128 && bn == 256 && s > 1 && m % 128 && n % 256)
        continue;
      FewTilesChoice c{bm, bn, s,
                       fewTilesSeconds(m, n, k, bm, bn, s, sms, unitTflops,
                                       copyGBs, stagesFor(bm, bn, grid * s))};
      consider(any, c);
      if (kTiles % s == 0)
        consider(even, c);
      if (s == 1 && c.seconds < unsplit.seconds * 0.98)
        unsplit = c;
    }
  }
  FewTilesChoice best = any.seconds * 1.1 <= even.seconds ? any : even;
  // A matmul of a few microseconds is its launches' (the model's 4 us for
  // the sum kernel's is a guess at that scale): not split.
  if (unsplit.seconds < 20e-6)
    return unsplit;
  return best;
}

namespace {

/// kb-tile's default mma.sync tile (f.block, f.warp).
static void defaultMmaSyncTile(const MatmulShape &s, ConfigFields &f) {
  int64_t m = s.m, n = s.n, k = s.k, sms = s.sms;
  auto blocksFor = [&](int64_t bm, int64_t bn) { return s.blocksFor(bm, bn); };
  // Measured at 4096^3 (2dfda62:docs/perf-history.md, run 9): 128x256 block tiles
  // with 64x64 warp tiles (0.854 ms) beat 128x128 / 64x32 (0.967 ms):
  // more reuse per loaded element. Taken when the grid still covers the
  // SMs.
  // Where rows are not 16-byte aligned (K % 4, or N % 4 with B as it
  // is), the tiles go through registers and 128 x 256 spills (3000^2 x
  // 3001, B^T: 255 registers and 332 bytes of spills, shapes1 run):
  // 128 x 128 then.
  bool chunks = k % 4 == 0 && (s.transposeB || n % 4 == 0);
  if (chunks && blocksFor(128, 256) >= sms) {
    f.block = {128, 256, 32};
    f.warp = {64, 64};
  } else if (blocksFor(128, 128) * 10 >= sms * 9) {
    // 128 x 128 tiles whose grid covers 90% of the SMs, as for wgmma:
    // kb-tune's first H200 run measured batched 32x256x256x1024 and
    // 8x512^3 (128 blocks on 132 SMs) 1.16x and 1.09x faster than
    // with 64 x 64 tiles (docs/kb-tune.md, "Folding back").
    f.block = {128, 128, 32};
    f.warp = {64, 32};
  } else if (m <= 16) {
    // A vector times a matrix (or a few rows): 16-row tiles, one m16
    // fragment per warp, 4 warps across 128 columns, instead of 64
    // rows of which all but M are computed for nothing.
    f.block = {16, 128, 32};
    f.warp = {16, 32};
  } else {
    f.block = {64, 64, 32};
    f.warp = {32, 32};
  }
}

/// kb-tile's default FFMA tile (f.block, f.thread, f.warp).
static void defaultFfmaTile(const MatmulShape &s, ConfigFields &f) {
  // Big tiles reuse each loaded element the most; fall back to 64x64
  // when 128x128 tiles would leave most of the SMs idle.
  bool small = s.blocksFor(128, 128) < s.sms;
  // 128 x 128 x 16, 8 x 8 a thread, a warp taking two whole rows of the
  // 16 x 16 thread grid, and (kb-promote-shared-memory) four cp.async
  // stages. BK = 16 measured 8% faster than 8 at 4096^3
  // (2dfda62:docs/perf-history.md). BK = 32 with warps of 4 x 8 threads was the
  // default where no tile had an edge from 2026-11-30 run 6 (then 1-1.5%
  // ahead) until 2026-12-03: after the FMAs' snake order (run 46) BK = 16
  // at four stages ran 0.7-2.7% faster at 2048^3, 3072^3, 4096^3, 6144^3
  // and 8192^3, every turn (bench/results/2026-12-03-ffma, calls 4-5;
  // predicted 0.7%). With edges BK = 32 took the guards to 178 registers
  // and the 4 x 8 warps to 145, one block an SM (4000^3: 0.74-0.77x
  // against 0.90x, run 5); a transposed B's register double buffer needs
  // BK = 16 to stay within 128 on sm_90 (kb-promote-shared-memory; 136 on
  // sm_80).
  f.block = small ? SmallVector<int64_t>{64, 64, 8}
                  : SmallVector<int64_t>{128, 128, 16};
  f.thread = small ? SmallVector<int64_t>{4, 4} : SmallVector<int64_t>{8, 8};
}

/// kb-tile's narrow rule for a 16-bit B^T (after the 16-bit default tile):
/// where that tile is 64 x 64 over more than one wave and a 64 x BN tile
/// (BN a multiple of 16, 80-256) fits the grid in fewer waves, the BN of the
/// least waves x (BM + BN) (waves times the bytes a block reads a k step),
/// in 8 stages. Measured on an H100 (2026-12-07, session 31, call 2,
/// variants and default in one process), 768 x 768 x 2048 bf16 B^T: 64 x 64
/// (144 blocks, two waves) 0.0138 ms, 64 x 80 (120 blocks) in 8 stages
/// 0.0113, in 6 0.0125, in 11 0.0129, 64 x 96 in 8 0.0114; cuBLASLt 0.0105.
/// Only as measured: B^T whose rows are not padded (nor K, by a kb.pad in
/// front: the caller), unfused, rank 2, K at least 1024, no hand-set split,
/// cluster or reduce. Not a row-major B: its
/// 64 x 80 (TMA boxes of 16 columns, 32-byte swizzle) ran 0.0184 against
/// 64 x 64's 0.0136 in the same call, 64 x 96 0.0127. Returns whether it
/// changed the tile.
static bool narrowHalfBtRule(const MatmulShape &s, bool rowMajorB, bool rank3,
                             ConfigFields &f) {
  if (rowMajorB || s.paddedB || s.fused || rank3 || s.batch != 1 ||
      s.k * 2 < 1024 || f.split != 0 || f.cluster > 1 || f.reduce ||
      f.stages != 0 || f.block.size() != 3 || f.block[0] != 64 ||
      f.block[1] != 64)
    return false;
  auto waves = [&](int64_t bn) {
    return llvm::divideCeil(s.blocksFor(64, bn), s.sms);
  };
  if (waves(64) < 2)
    return false;
  int64_t best = 64;
  double bestCost = double(waves(64)) * (64 + 64);
  for (int64_t bn = 80; bn <= 256; bn += 16) {
    double cost = double(waves(bn)) * (64 + bn);
    if (cost < bestCost) {
      best = bn;
      bestCost = cost;
    }
  }
  if (best == 64 || waves(best) >= waves(64))
    return false;
  f.block[1] = best;
  return true;
}

LogicalResult tileMatmul(Operation *op, MatmulOp mm, ConfigFields &f,
                         const TargetModel &model) {
  int64_t sms = model.smCount;
  auto shape = mm.getResult().getType().getShape();
  int64_t m = shape[shape.size() - 2], n = shape.back();
  int64_t batch = shape.size() == 3 ? shape[0] : 1;
  int64_t k = mm.getLhs().getType().getShape().back();
  bool tensorCores = isMmaSync(f.mma);
  bool wgmma = isWgmma(f.mma);
  if (!f.mma)
    return op->emitOpError()
           << "kb-tile needs the mma unit: run kb-select-mma first";
  if (f.mma == MmaUnit::gemv)
    return tileGemv(op, mm, f, model);
  auto blocksFor = [&](int64_t bm, int64_t bn) {
    return llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn) * batch;
  };
  // Set where kb-tile chose the tile and split together (few output tiles).
  bool splitChosen = false;
  // A 16-bit wgmma tile's row is BK = 64 elements, the 128 bytes of a tf32
  // row of 32: its rules run on K in those units (K / 2), which also makes
  // their model right for it (half the bytes of K, and twice tf32's rate
  // over K / 2 is tf32's over K). It may be split (kb.split_sum adds f32
  // partials), run stream-K (f32 partials in its workspace) or in clusters
  // of a hand-set cluster = C (B's tile multicast); the cluster reduce has
  // no 16-bit form yet.
  bool half = isWgmma16(f.mma);
  int64_t lineK = half ? 64 : 32;
  // A 16-bit mma.sync tile (mma_sync_f16, mma_sync_bf16) keeps the tf32
  // tile's shape, BK = 32 elements (64 bytes, two k16 steps); its split-K
  // model runs on K / 2 as the 16-bit wgmma tile's does (half the bytes,
  // twice tf32's rate).
  bool sync16 = isMmaSync16(f.mma);
  // It also reads a row-major B as it is (MN-major) in the B^T kernel
  // (one warpgroup per 64 rows): its tiles are B^T's, with BN a multiple
  // of 16 (boxes of 64, 32 or 16 columns, wgmmaMnBoxCols). The default
  // tile keeps BN a multiple of 64 (128-byte boxes), as measured.
  bool mnB = half && !mm.getTransposeB();
  MatmulShape ms{m,
                 n,
                 half || sync16 ? (k + 1) / 2 : k,
                 batch,
                 sms,
                 mm.getTransposeB() || half,
                 mm.getPaddedB(),
                 op != mm.getOperation()};
  bool defaultTile = f.block.empty();
  // What a 16-bit matmul has no form of yet, refused where asked (before
  // the rules below could take it for their own choice).
  if (half && f.reduce == ReduceKind::cluster)
    return op->emitOpError()
           << "a 16-bit matmul runs no cluster reduce yet: reduce = "
              "\"cluster\" does not apply to mma = \""
           << nameOf(f.mma)
           << "\" (split = S, reduce = \"stream\" and cluster = C do)";
  if (defaultTile) {
    if (wgmma && half)
      splitChosen = defaultHalfWgmmaTile(ms, f, model);
    else if (wgmma)
      splitChosen = defaultWgmmaTile(ms, f, model);
    else if (tensorCores)
      defaultMmaSyncTile(ms, f);
    else
      defaultFfmaTile(ms, f);
    // 16-bit mma.sync: the 16-row tile's A tile of 16 x 32 elements is 64
    // 16-byte chunks for 128 threads; BK = 64 gives each thread one (and
    // four k16 steps a tile).
    if (sync16 && f.block[0] == 16)
      f.block[2] = 64;
    if (half) {
      f.block[2] = lineK;
      if (mnB && f.block[1] % 64)
        f.block[1] = std::min<int64_t>(256, llvm::alignTo(f.block[1], 64));
      // kb.pad in front (K not a multiple of 8) was not measured.
      bool padded = isa_and_nonnull<PadOp>(mm.getLhs().getDefiningOp()) ||
                    isa_and_nonnull<PadOp>(mm.getRhs().getDefiningOp());
      if (!splitChosen && !padded &&
          narrowHalfBtRule(ms, mnB, shape.size() == 3, f))
        f.stages = 8;
    }
  }
  if (f.block.size() != 3)
    return op->emitOpError() << "matmul config needs block = [BM, BN, BK], got "
                             << f.block.size() << " sizes";
  int64_t bm = f.block[0], bn = f.block[1], bk = f.block[2];
  int64_t threads;
  // Whether the warpgroups split the rows (B^T's kernel, which a 16-bit
  // row-major B runs too) or the columns (C^T: an f32 row-major B, or
  // 16-bit operands = "ba").
  bool transB = wgmma ? wgmmaSplitsRows(mm.getTransposeB(), f.mma, f.operands)
                      : mm.getTransposeB() || half;
  if (wgmma) {
    if (mnB && transB && !wgmmaMnBoxCols(f.block[1]))
      return op->emitOpError()
             << "a 16-bit wgmma tile with a row-major B needs BN a multiple of "
                "16 (boxes of 64, 32 or 16 columns); got block = ["
             << bm << ", " << bn << ", " << bk << "]";
    if (transB && (bm % 64 || bn % 8 || bn > 256 || bk != lineK))
      return op->emitOpError()
             << "wgmma tiles need BM a multiple of 64 (one warpgroup per 64 "
                "rows), BN a multiple of 8 up to 256 and BK = "
             << lineK << "; got block = [" << bm << ", " << bn << ", " << bk
             << "]";
    if (!transB && (bn % 64 || bm % 8 || bm > 256 || bk != lineK))
      return op->emitOpError()
             << "wgmma tiles with a row-major B need BN a multiple of 64 (one "
                "warpgroup per 64 columns), BM a multiple of 8 up to 256 and "
                "BK = "
             << lineK << "; got block = [" << bm << ", " << bn << ", " << bk
             << "]";
    // One warpgroup per 64 rows (columns with a row-major B), and with TMA
    // a producer warp (a config that names copy = "tma" already;
    // kb-promote-shared-memory adds it when it picks TMA itself).
    threads = wgmmaThreads(bm, bn, transB, f.copy == CopyKind::tma);
  } else if (tensorCores) {
    if (f.warp.size() != 2)
      return op->emitOpError() << "mma.sync config needs warp = [WM, WN]";
    int64_t wm = f.warp[0], wn = f.warp[1];
    if (bm % wm || bn % wn || wm % 16 || wn % 8 || bk % 8)
      return op->emitOpError()
             << "mma.sync tiles must nest: BM % WM, BN % WN, WM % 16, WN % 8 "
                "and BK % 8 must be 0; got block = ["
             << bm << ", " << bn << ", " << bk << "], warp = [" << wm << ", "
             << wn << "]";
    // 16 bits: B's fragments come 16 columns an ldmatrix.x4, a k step is 16.
    if (sync16 && (wn % 16 || bk % 16))
      return op->emitOpError()
             << "16-bit mma.sync tiles need WN and BK multiples of 16 (two n8 "
                "fragments an ldmatrix.x4, k16 steps); got block = ["
             << bm << ", " << bn << ", " << bk << "], warp = [" << wm << ", "
             << wn << "]";
    threads = (bm / wm) * (bn / wn) * 32;
    // And its copies are 16-byte chunks of 8 elements, as many a thread.
    if (sync16 && ((bm * bk / 8) % threads || (bk * bn / 8) % threads))
      return op->emitOpError()
             << "16-bit mma.sync tiles copy 16-byte chunks of 8 elements: the "
                "A tile ("
             << bm << "x" << bk << ") and B tile (" << bk << "x" << bn
             << ") must have a multiple of " << threads << " chunks";
  } else {
    if (f.thread.size() != 2)
      return op->emitOpError() << "FFMA config needs thread = [TM, TN]";
    int64_t tm = f.thread[0], tn = f.thread[1];
    if (bm % tm || bn % tn || tm % 4 || tn % 4)
      return op->emitOpError()
             << "FFMA tiles must nest: BM % TM, BN % TN, TM % 4 and TN % 4 "
                "must be 0; got block = ["
             << bm << ", " << bn << ", " << bk << "], thread = [" << tm << ", "
             << tn << "]";
    threads = (bm / tm) * (bn / tn);
    // Optional: the block of threads one warp covers, WM/TM x WN/TN = 32
    // threads (default: whole rows of the thread grid, 2 x 16 at 8x8 tiles
    // of a 128x128 block).
    if (!f.warp.empty()) {
      if (f.warp.size() != 2 || f.warp[0] % tm || f.warp[1] % tn ||
          bm % f.warp[0] || bn % f.warp[1] ||
          (f.warp[0] / tm) * (f.warp[1] / tn) != 32)
        return op->emitOpError()
               << "FFMA warp tile must hold 32 threads' tiles and divide the "
                  "block: (WM / TM) * (WN / TN) == 32, BM % WM == BN % WN == 0";
    }
  }
  // `threads` itself is written by kb-promote-shared-memory, which decides
  // the copies (TMA adds a producer warp) and checks a hand-set count.
  if (threads > model.maxThreadsPerBlock)
    return op->emitOpError()
           << "tiles need " << threads << " threads per block; " << model.chip
           << " allows at most " << model.maxThreadsPerBlock;
  // Copies per thread (TMA's are issued by one thread).
  // wgmma's tiles come by TMA unless the config asks for cp.async
  // (kb-promote-shared-memory, which writes `copy`, picks TMA for it).
  bool tmaCopies = wgmma && (!f.copy || *f.copy == CopyKind::tma);
  if (!tmaCopies && ((bm * bk) % threads || (bk * bn) % threads))
    return op->emitOpError()
           << "the A tile (" << bm << "x" << bk << ") and B tile (" << bk << "x"
           << bn << ") must split evenly among " << threads << " threads";
  if (f.raster == 0 && wgmma)
    f.raster = chooseRaster(m, n, k, bm, bn, batch, sms);
  // store = "tma" (the TMA-store epilogue) is never split: a split's
  // partial products go to a workspace, not through C's tensor map.
  // Nor stream-K (reduce = "stream"), which shares the k tiles among its
  // grid's blocks instead.
  // A rank-3 matmul, even of batch 1, is not split (kb-split-k's partials
  // are S x M x N): the split a rule chose with its tile is dropped, the
  // tile kept (the cluster reduce splits inside the kernel: kept).
  bool rank3 = shape.size() == 3;
  if (rank3 && splitChosen && f.split > 1 && f.reduce != ReduceKind::cluster)
    f.split = 0;
  if (f.split == 0 && !splitChosen && !rank3 && f.store != StoreKind::tma &&
      f.reduce != ReduceKind::stream) {
    double rate = wgmma         ? model.wgmmaTf32Tflops
                  : tensorCores ? model.mmaSyncTf32Tflops
                                : model.ffmaTflops;
    // wgmma: a 128-row tile fills an SM's registers, two 64-row ones fit;
    // mma.sync and FFMA by threads, at most 4 (measured: shapes2 run).
    int64_t resident =
        wgmma
            ? ((transB ? bm >= 128 : bm * bn >= 128 * 128) ? 1 : 2)
            : std::clamp<int64_t>(model.maxThreadsPerSM / (2 * threads), 1, 4);
    // 16-bit: in 128-byte lines of K, as the rules (above).
    int64_t s = chooseSplitK(m, n, ms.k, bm, bn, half || sync16 ? bk / 2 : bk,
                             batch, sms, resident, rate, model.copyGBs);
    if (s > 1)
      f.split = s;
  } else if (f.split > 1) {
    int64_t kTiles = llvm::divideCeil(k, bk);
    if (batch > 1 || (rank3 && f.reduce != ReduceKind::cluster))
      return op->emitOpError()
             << "#kb.config split = " << f.split
             << ": a batched matmul is not split (its batch fills the grid; "
                "a batch of 1 as a rank-2 matmul can be)";
    if (!splitLeavesNoChunkEmpty(kTiles, f.split))
      return op->emitOpError()
             << "#kb.config split = " << f.split << " leaves a chunk of the "
             << kTiles << " k tiles (K = " << k << ", BK = " << bk << ") empty";
  }
  if (defaultTile && wgmma && !half)
    pairRule(ms, f);
  // A persistent grid (#kb.config grid, MatmulWgmma.cpp): one block an SM
  // walking the output tiles, its producer copying the next tile's first k
  // tiles while the consumers store this one. Where a tile has few k tiles
  // (K <= 128), so that its epilogue is a large part of its time, for the
  // wgmma tiles of which an SM holds one block (128 rows with B^T, 128 x
  // 128 and more with a row-major B), more tiles than SMs and no split.
  // Runs 8-9 (docs/shapes.md), each protocol against itself: 16384^2 x 32
  // 0.3636 -> 0.3127 ms, 32768 x 4096 x 16 0.1797 -> 0.1468, 8192^2 x 64
  // 0.1038 -> 0.0867; at K = 4096 nothing (4096^3 0.3968 -> 0.4035, B^T
  // 0.3899 -> 0.3833, 4000^3 0.3804 -> 0.3738, 8192^3 3.120 -> 3.218).
  // operands = "ba" (C^T's kernel for 16-bit operands) runs one block a
  // tile (its #kb.config refuses a grid).
  bool tmaCopy = wgmma && (!f.copy || *f.copy == CopyKind::tma) &&
                 f.operands != OperandOrder::ba;
  int64_t tiles = llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn) * batch;
  bool oneBlockAnSM = transB ? bm >= 128 : bm * bn >= 128 * 128;
  // Not where the tiles have edges in M or N: ptxas then spills in the
  // persistent loop (a sweep of 240 random shapes: 12-288 bytes at 128 x
  // 256 and 256 x 128 with edges, none one block a tile; every measured
  // shape was edge-free).
  bool edges = m % bm || n % bn;
  // Not in clusters of more than 2 (the persistent kernel pairs row tiles
  // two by two; a hand-set or kb-tune's cluster = 4 keeps the plain grid).
  // A batch of unfused matmuls up to K = 1024 (at most 32 k tiles a tile)
  // at kb-tile's own tile too: on the 5 batched shapes of the suite (256 x
  // 256^3 to 32 x 1024^3, K 256-1024, both forms of B) that tile on a
  // persistent grid took 0.904-0.973 of the default's time, every turn
  // (bench/results/2026-12-04-memory-bound, call 2); the rule takes 4 of
  // them (64 x 384^3 at 256 x 128 has an edge in M). A hand-set tile (kb-
  // tune's, or two blocks an SM at 128 x 128, measured 1.03-1.54x slower)
  // keeps one block a tile.
  // A 16-bit C at any K (8 x 2048^3 bf16, one block a tile: 0.2385 ms
  // against torch's 0.1892; persistent with direct stores 0.2196, session
  // 28): the persistent grid gives it the TMA store, which took 128 x 512^3
  // from 0.1190 to 0.0805 ms (H100, 2026-12-07, session 29).
  bool halfC =
      cast<ShapedType>(mm.getType()).getElementType().getIntOrFloatBitWidth() ==
      16;
  bool fewKTiles = k <= 128 || (batch > 1 && (k <= 1024 || halfC) &&
                                !ms.fused && defaultTile);
  if (f.grid == 0 && tmaCopy && f.split <= 1 && oneBlockAnSM && tiles > sms &&
      fewKTiles && !edges && f.cluster <= 2)
    f.grid = sms;
  // And at any K, kb-tile's own big B^T tiles over more than one wave
  // (persistentRule).
  if (defaultTile && wgmma && tmaCopy && f.grid == 0 &&
      persistentRule(ms, f, tiles))
    f.grid = sms;
  // A 16-bit wgmma tile with a row-major B on a persistent grid, edges or
  // one wave too, so that C leaves through shared memory and TMA stores
  // (kb-promote-shared-memory's default for a 16-bit C on a persistent
  // grid; the persistent loop alone changed nothing). Measured on an H100
  // (2026-12-07, session 28, call 2, one call): 2048^3 (128 tiles) 0.0330
  // -> 0.0273 ms (persistent without the TMA store 0.0336; torch 0.0269),
  // 4000^3 (edges in M and N) 0.2146 -> 0.1857 (0.2142; torch 0.1845).
  // ptxas spilled nothing in 16-bit row-major edge tiles (24 random shapes,
  // docs/shapes.md, "bf16 losses"); not with B^T's edges (8 bytes on 3 of
  // 17), a split, a batch or clusters of more than 2.
  // Unfused, with a 16-bit C and at the 128 x 256 tile only (as measured:
  // the TMA store's gain).
  if (defaultTile && half && mnB && halfC && !ms.fused && tmaCopy &&
      f.grid == 0 && f.split <= 1 && batch == 1 && !rank3 && f.cluster <= 2 &&
      !f.reduce && bm == 128 && bn == 256)
    f.grid = std::min(tiles, sms);
  return success();
}

struct TilePass : public kb::impl::KBTileBase<TilePass> {
  using Base::Base;
  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError() << "kb-tile: unknown chip '" << chip
                                 << "' (known: sm_80, sm_90, sm_90a)";
      return signalPassFailure();
    }
    for (Operation &op : getOperation().getBody().getOps()) {
      auto kind = getKernelKind(&op);
      if (!kind)
        continue;
      ConfigFields f = ConfigFields::from(getConfig(&op));
      if (*kind == KernelKind::Matmul) {
        if (failed(tileMatmul(&op, getKernelMatmul(&op), f, *model)))
          return signalPassFailure();
      } else if (*kind == KernelKind::Elementwise) {
        if (f.block.empty())
          f.block = {std::max<int64_t>(f.threads, 1) *
                     std::max<int64_t>(f.vector, 1)};
      }
      setConfig(&op, f.get(&getContext()));
    }
  }
};

} // namespace
