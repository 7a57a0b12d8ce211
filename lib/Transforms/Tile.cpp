//===- Tile.cpp - block, warp and thread tiles for each kernel ------------===//
//
// kb-tile: for a matmul, the output tile of a block [BM, BN, BK] and how it is
// split: among threads ([TM, TN] register tiles, FFMA) or among warps
// ([WM, WN] tiles of m16n8k8 fragments, mma.sync) or among warpgroups (64
// rows each, wgmma). The tile shrinks when the
// default would leave multiprocessors idle. Elementwise kernels get their
// elements per block. Hand-set tiles are checked for an even split.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

#include <cmath>
#include <limits>

namespace mlir::kb {
#define GEN_PASS_DEF_KBTILE
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

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
static double tileEfficiency(int64_t bm, int64_t bn) {
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

/// The weight bytes an SM keeps in flight for the copy bandwidth (Little's
/// law at about a microsecond: chooseGemvSplit).
static constexpr int64_t kGemvFlightPerSM = 40 * 1024;

/// Split-K for the gemv kernel. Its blocks stream the weight, so what
/// decides its speed is the weight bytes in flight: a DRAM read takes about
/// a microsecond under load, and one SM's share of the copy bandwidth
/// (4244 GB/s over 132 SMs, 32 bytes a nanosecond) needs about 40 KB in
/// flight to keep up (Little's law). With S chunks the grid has S times
/// the warps (or threads), each with `inFlight` bytes outstanding per k
/// tile; below the target the bytes run at that fraction of the copy
/// bandwidth. A split adds the partials (S x M x N floats, written and
/// read once) and the sum kernel's launch (about 4 us). S divides the k
/// tiles, each chunk at least 4 of them; the smallest S within 3% of the
/// best is taken, and only where it gains 10% over no split. A weight that
/// the copy bandwidth reads in under 4 us is never split.
int64_t mlir::kb::chooseGemvSplit(int64_t kTiles, int64_t units,
                                  int64_t inFlight, double weightBytes,
                                  double partialBytes, int64_t sms,
                                  double copyGBs) {
  if (kTiles <= 0 || units <= 0 || inFlight <= 0 || sms <= 0 || copyGBs <= 0)
    return 1;
  constexpr double kFlightPerSM = kGemvFlightPerSM;
  double bw = copyGBs * 1e9;
  // A weight read in less time than the sum kernel's launch takes (under
  // 17 MB on the H200) is not split: its launches decide.
  if (weightBytes / bw < 4e-6)
    return 1;
  auto timeFor = [&](int64_t s) {
    double flight = double(units) * s * inFlight / (kFlightPerSM * sms);
    double t = weightBytes / bw / std::min(1.0, flight);
    return s > 1 ? t + 2.0 * s * partialBytes / bw + 4e-6 : t;
  };
  SmallVector<std::pair<int64_t, double>> options{{1, timeFor(1)}};
  for (int64_t s = 2; s <= std::min<int64_t>(kTiles / 4, 1024); ++s)
    if (kTiles % s == 0)
      options.push_back({s, timeFor(s)});
  double best = timeFor(1);
  for (auto [s, t] : options)
    best = std::min(best, t);
  for (auto [s, t] : options)
    if (t <= best * 1.03)
      return t * 1.1 <= timeFor(1) ? s : 1;
  return 1;
}

namespace {

/// The gemv kernel's tiles (mma = "gemv", MatmulGemv.cpp). The few rows
/// (or columns) are all in every block; the weight's rows are split among
/// warps (WeightA, WeightB: `warp` = the C tile of one warp, whose lanes
/// split K) or its columns among threads (Columns: `thread` = one thread's
/// C tile); BK is the K one k tile covers. Defaults: 4 warps a block; a
/// warp owns 1, 2 or 4 weight rows for up to 4 (2 for four rows read in
/// 16-byte loads), 8 or 16 few rows (each vector of the few, read from L1,
/// then serves that many weight vectors: L1 carries at most 5 times the
/// DRAM bytes) and each lane keeps four
/// 16-byte loads of the weight in flight a k tile; a Columns thread owns 4
/// columns (one 16-byte vector) and reads 8 rows of K a k tile (4 above 8
/// few rows, for registers).
LogicalResult tileGemv(Operation *op, MatmulOp mm, ConfigFields &f,
                       const TargetModel &model) {
  auto c = mm.getResult().getType().getShape();
  int64_t k = mm.getLhs().getType().getShape().back();
  std::optional<GemvForm> form =
      c.size() == 2 ? gemvForm(c[0], c[1], mm.getTransposeB()) : std::nullopt;
  if (!form)
    return op->emitOpError() << "mma \"gemv\" needs a matmul of batch 1 with "
                                "at most "
                             << kGemvMaxFew << " rows or columns";
  int64_t m = c[0], n = c[1];
  int64_t ldb = mm.getRhs().getType().getShape().back();
  int64_t v = gemvVector(*form, n, k, ldb, mm.getTransposeB());
  bool columns = *form == GemvForm::Columns;
  bool weightB = *form == GemvForm::WeightB;
  int64_t few = gemvFew(*form, m, n);
  int64_t wide = weightB || columns ? n : m;
  // One row or column with 16-byte loads: eight loads in flight a lane
  // where the weight's rows fill the GPU unsplit (run 11, same call, against
  // four: 1 x 4096 x 4096 B^T 0.0284 -> 0.0259 ms, 1 x 14336 x 4096 0.0681
  // -> 0.0648, 1 x 4096 x 14336 0.0688 -> 0.0656, 4096 x 1 x 4096 0.0291 ->
  // 0.0279, 8192 x 1 x 8192 0.0802 -> 0.0780; 256 x 1 x 2^20 took 8 chunks
  // for 16 and ran 0.3062 against 0.2911; 4 rows at 4 x 28672 x 8192,
  // 0.2810 -> 0.2867, run 10). Otherwise four.
  bool defaultTile = f.block.empty();
  bool eightLoads =
      defaultTile && f.split <= 1 && !columns && v == 4 && few == 1;
  // A row-major B wide enough for 90% of the SMs in blocks of 32 to 256
  // columns (a 128-byte line of a row at least): blocks of 512 threads that
  // split each k tile among k groups (thread = [M, TN, R]: R rows of a k
  // tile a thread), which add their sums in shared memory: no split-K,
  // no second kernel. Up to 4 rows (shared memory: 512 x TN x M floats).
  // (A block of 256 columns of 1 float a thread still has 2 groups.)
  int64_t groupBn = 0;
  if (columns && m <= 4)
    for (int64_t cand : {256, 128, 64, 32})
      if (llvm::divideCeil(n, cand) * 10 >= model.smCount * 9) {
        groupBn = cand;
        break;
      }
  auto setDefaultTile = [&](bool eight) {
    if (columns && groupBn) {
      int64_t r = v == 4 ? 8 : 16;
      f.block = {m, groupBn, 512 / (groupBn / v) * r};
      f.thread = {m, v, r};
      return;
    }
    if (columns) {
      f.block = {m, 128 * v, (v == 4 ? 8 : 16) / (m > 8 ? 2 : 1)};
      f.thread = {m, v};
      return;
    }
    // Four rows of A with B^T read in 16-byte loads: two weight rows a warp
    // (runs 19-20, 4 x 28672 x 8192: 0.2808 ms at one, 0.2468 at two, same
    // call; L1 then carries 3 times the DRAM bytes, not 5), where the
    // weight's rows are enough warps at two a warp to keep what an SM
    // needs in flight unsplit (half the warps: fewer rows would be split,
    // which was not measured). Not with one-float loads: 3 x 4093 x 4099
    // ran 0.0435 ms at one, 0.0523 at two (run 20). Three rows, and the
    // N = 4 form: not measured, one.
    // (The flight is chooseGemvSplit's: each warp keeps `loads` 16-byte
    // loads a lane of each of `stages` k tiles in flight, whatever r.)
    int64_t loads = v == 4 && !eight ? 4 : 8;
    int64_t stagesHere = f.stages > 0 ? f.stages : gemvDefaultStages(few);
    int64_t warpFlight = loads * 16 * 32 * stagesHere;
    bool twoRows = weightB && few == 4 && v == 4 &&
                   (wide / 2) * warpFlight >= kGemvFlightPerSM * model.smCount;
    int64_t r = few <= 4 ? (twoRows ? 2 : 1) : few <= 8 ? 2 : 4;
    int64_t bk = 32 * v * (loads / r);
    if (weightB) {
      f.block = {m, 4 * r, bk};
      f.warp = {m, r};
    } else {
      f.block = {4 * r, n, bk};
      f.warp = {r, n};
    }
  };
  if (defaultTile)
    setDefaultTile(eightLoads);
  if (f.block.size() != 3)
    return op->emitOpError() << "matmul config needs block = [BM, BN, BK], got "
                             << f.block.size() << " sizes";
  int64_t bm = f.block[0], bn = f.block[1], bk = f.block[2];
  int64_t threads, units, inFlight;
  if (columns) {
    bool grouped = f.thread.size() == 3;
    if (f.thread.size() < 2 || f.thread.size() > 3 || !f.warp.empty() ||
        bm != m || f.thread[0] != m ||
        !(f.thread[1] == 1 || f.thread[1] == v) || bn % f.thread[1] ||
        (!grouped && (bn / f.thread[1]) % 32) || bk < 1 ||
        (grouped && (bk % f.thread[2] || bn * 4 % 128)))
      return op->emitOpError()
             << "gemv tiles over a row-major B need block = [M, BN, BK] and "
                "thread = [M, TN] or [M, TN, R] (no warp) with TN "
             << (v == 4 ? "1 or 4" : "1 (N % 4 != 0)")
             << ", BN / TN a multiple of 32 without R, and with R (R rows "
                "of each k tile a thread) R dividing BK and BN a multiple "
                "of 32; M = "
             << m;
    int64_t rows = grouped ? f.thread[2] : bk;
    threads = gemvColumnThreads(bn, bk, f.thread);
    if (grouped &&
        (threads % 32 || gemvSharedBytes(bm, bn, bk, f.thread) > 48 * 1024))
      return op->emitOpError()
             << "gemv k groups need a multiple of 32 threads and at most 48 "
                "KiB of shared memory for their sums; block = ["
             << bm << ", " << bn << ", " << bk << "], thread R = " << rows
             << " take " << threads << " threads and "
             << gemvSharedBytes(bm, bn, bk, f.thread) << " bytes";
    if (rows * f.thread[1] > kGemvMaxTileFloats)
      return op->emitOpError()
             << "gemv: a thread would load " << rows * f.thread[1]
             << " weight floats a k tile (" << rows << " rows of "
             << f.thread[1] << "); at most " << kGemvMaxTileFloats
             << ": a smaller BK, or k groups (thread = [M, TN, R])";
    units = llvm::divideCeil(n, bn) * threads;
    inFlight = rows * f.thread[1] * 4;
  } else {
    int64_t fewBlock = weightB ? bm : bn, wideBlock = weightB ? bn : bm;
    if (f.warp.size() != 2 || !f.thread.empty() || fewBlock != few ||
        f.warp[weightB ? 0 : 1] != few || wideBlock % f.warp[weightB ? 1 : 0] ||
        bk % (32 * v))
      return op->emitOpError()
             << "gemv tiles need block = ["
             << (weightB ? "M, BN, BK] and warp = [M, WN]"
                         : "BM, N, BK] and warp = [WM, N]")
             << " (no thread) with the block's weight rows a multiple of the "
                "warp's and BK a multiple of "
             << 32 * v << "; " << (weightB ? "M = " : "N = ") << few;
    int64_t r = f.warp[weightB ? 1 : 0];
    threads = wideBlock / r * 32;
    units = llvm::divideCeil(wide, wideBlock) * (threads / 32);
    if (bk * r / 32 > kGemvMaxTileFloats)
      return op->emitOpError()
             << "gemv: a lane would load " << bk * r / 32
             << " weight floats a k tile (BK = " << bk << ", " << r
             << " rows a warp); at most " << kGemvMaxTileFloats
             << ": a smaller BK";
    inFlight = r * bk * 4;
  }
  if (threads > model.maxThreadsPerBlock)
    return op->emitOpError()
           << "tiles need " << threads << " threads per block; " << model.chip
           << " allows at most " << model.maxThreadsPerBlock;
  // Each unit has `stages` k tiles of loads in flight (kb-promote-shared-
  // memory's default where the field is not set yet).
  int64_t stages = f.stages > 0 ? f.stages : gemvDefaultStages(few);
  inFlight *= stages;
  int64_t kTiles = llvm::divideCeil(k, bk);
  if (f.split == 0) {
    int64_t s = chooseGemvSplit(kTiles, units, inFlight, 4.0 * wide * k,
                                4.0 * m * n, model.smCount, model.copyGBs);
    if (s > 1 && eightLoads) {
      // A split weight keeps four loads a lane (and the split for them).
      f.block.clear();
      f.warp.clear();
      setDefaultTile(false);
      bk = f.block[2];
      inFlight = bk * 4 * stages;
      kTiles = llvm::divideCeil(k, bk);
      s = chooseGemvSplit(kTiles, units, inFlight, 4.0 * wide * k, 4.0 * m * n,
                          model.smCount, model.copyGBs);
      if (s <= 1) {
        // Unsplit at four loads after all: eight, unsplit.
        f.block.clear();
        f.warp.clear();
        setDefaultTile(true);
        s = 1;
      }
    }
    if (s > 1)
      f.split = s;
  } else if (f.split > 1 && kTiles % f.split) {
    return op->emitOpError()
           << "#kb.config split = " << f.split << " must divide the " << kTiles
           << " k tiles (K = " << k << ", BK = " << bk << ")";
  }
  return success();
}

/// A matmul's shape, as kb-tile's default tiles see it.
struct MatmulShape {
  int64_t m, n, k, batch, sms;
  bool transposeB;
  /// B^T that kb-select-mma made from a row-major B with N % 4 != 0 (its
  /// rows padded to whole 128-byte lines).
  bool paddedB = false;
  /// The matmul of a kb.fusion (an epilogue or prologue in its kernel).
  bool fused = false;
  int64_t blocksFor(int64_t bm, int64_t bn) const {
    return llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn) * batch;
  }
};

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
/// 704 and 1024 x 768, K = 1504), where 768 x 768 x 2048 (64 k tiles) gained 7%:
/// such a matmul needs 32 k tiles a chunk. The few-tiles model
/// (chooseFewTiles, in defaultWgmmaTile) does not see this (it puts 64 x 128 unsplit at 16.7 us for 1000 x 700 x
/// 1500, measured 22.4; 128 x 128 in two at 20.0, measured 21.0).
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
/// fewer L2 sectors than kb's, 2026-12-03-medium-rule/ncu-summary.txt).
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
static void pairRule(const MatmulShape &s, ConfigFields &f) {
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
static bool persistentRule(const MatmulShape &s, const ConfigFields &f,
                           int64_t tiles) {
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
static bool defaultWgmmaTile(const MatmulShape &s, ConfigFields &f,
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
  // 4 ran 0.0230 against 0.0224 (run 11, same call). Nor with reduce =
  // "stream" (stream-K shares the k tiles among its grid's blocks instead).
  if (batch == 1 && f.split == 0 && (rowB || !linesSplit) &&
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
  if (!splitChosen && wideReduceRule(s, f))
    return true;
  // The medium rule and the cluster rule (their measurements above them).
  bool medium = !splitChosen && mediumRule(s, f);
  splitChosen = splitChosen || medium;
  clusterRule(s, f, model, medium, splitChosen);
  reduceRule(s, f, medium);
  return splitChosen;
}

/// kb-tile's default mma.sync tile (f.block, f.warp).
static void defaultMmaSyncTile(const MatmulShape &s, ConfigFields &f) {
  int64_t m = s.m, n = s.n, k = s.k, sms = s.sms;
  auto blocksFor = [&](int64_t bm, int64_t bn) { return s.blocksFor(bm, bn); };
  // Measured at 4096^3 (docs/perf-history.md, run 9): 128x256 block tiles
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
  int64_t m = s.m, n = s.n, k = s.k;
  // Big tiles reuse each loaded element the most; fall back to 64x64
  // when 128x128 tiles would leave most of the SMs idle.
  bool small = s.blocksFor(128, 128) < s.sms;
  // BK = 16 measured 8% faster than 8 at 4096^3 (docs/perf-history.md);
  // with cp.async stages BK = 32 is faster again where no tile has an
  // edge (half the waits, barriers and address updates per FFMA:
  // 4096^3 0.943x cuBLAS against 0.930x, 8192^3 0.960x against 0.946x,
  // 2048^3 0.925x against 0.918x, 2026-11-30 run 6); with edges the
  // guards take it to 178 registers and one block per SM (4000^3:
  // 0.77x against 0.90x). A transposed B keeps the register-staged
  // double buffer (kb-promote-shared-memory), which needs BK = 16 to
  // stay within 128 registers (191 at BK = 32).
  bool edges = m % 128 || n % 128 || k % 32;
  bool wideK = !edges && !s.transposeB;
  f.block = small   ? SmallVector<int64_t>{64, 64, 8}
            : wideK ? SmallVector<int64_t>{128, 128, 32}
                    : SmallVector<int64_t>{128, 128, 16};
  f.thread = small ? SmallVector<int64_t>{4, 4} : SmallVector<int64_t>{8, 8};
  // A warp takes a 4 x 8 block of the 16 x 16 thread grid: its B loads
  // touch 8 distinct 16-byte vectors (one wavefront) instead of 16
  // (2026-11-30 run 3: 0.933x cuBLAS against 0.921x with whole rows).
  // Not when the tiles have edges: with the guards ptxas needs 145
  // registers there, one block per SM instead of two (4000^3: 0.74x
  // cuBLAS against 0.89x, run 5).
  if (!small && wideK)
    f.warp = {32, 64};
}

LogicalResult tileMatmul(Operation *op, MatmulOp mm, ConfigFields &f,
                         const TargetModel &model) {
  int64_t sms = model.smCount;
  auto shape = mm.getResult().getType().getShape();
  int64_t m = shape[shape.size() - 2], n = shape.back();
  int64_t batch = shape.size() == 3 ? shape[0] : 1;
  int64_t k = mm.getLhs().getType().getShape().back();
  bool tensorCores = isMmaSync(f.mma);
  bool wgmma = f.mma == MmaUnit::wgmma_tf32;
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
  MatmulShape ms{m, n, k, batch, sms, mm.getTransposeB(),
                 mm.getPaddedB(), op != mm.getOperation()};
  bool defaultTile = f.block.empty();
  if (defaultTile) {
    if (wgmma)
      splitChosen = defaultWgmmaTile(ms, f, model);
    else if (tensorCores)
      defaultMmaSyncTile(ms, f);
    else
      defaultFfmaTile(ms, f);
  }
  if (f.block.size() != 3)
    return op->emitOpError() << "matmul config needs block = [BM, BN, BK], got "
                             << f.block.size() << " sizes";
  int64_t bm = f.block[0], bn = f.block[1], bk = f.block[2];
  int64_t threads;
  bool transB = mm.getTransposeB();
  if (wgmma) {
    if (transB && (bm % 64 || bn % 8 || bn > 256 || bk != 32))
      return op->emitOpError()
             << "wgmma tiles need BM a multiple of 64 (one warpgroup per 64 "
                "rows), BN a multiple of 8 up to 256 and BK = 32; got block = ["
             << bm << ", " << bn << ", " << bk << "]";
    if (!transB && (bn % 64 || bm % 8 || bm > 256 || bk != 32))
      return op->emitOpError()
             << "wgmma tiles with a row-major B need BN a multiple of 64 (one "
                "warpgroup per 64 columns), BM a multiple of 8 up to 256 and "
                "BK = 32; got block = ["
             << bm << ", " << bn << ", " << bk << "]";
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
    threads = (bm / wm) * (bn / wn) * 32;
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
  if (f.split == 0 && !splitChosen && f.store != StoreKind::tma &&
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
    int64_t s = chooseSplitK(m, n, k, bm, bn, bk, batch, sms, resident, rate,
                             model.copyGBs);
    if (s > 1)
      f.split = s;
  } else if (f.split > 1) {
    int64_t kTiles = llvm::divideCeil(k, bk);
    if (batch > 1)
      return op->emitOpError()
             << "#kb.config split = " << f.split
             << ": a batched matmul is not split (its batch fills the grid)";
    if (!splitLeavesNoChunkEmpty(kTiles, f.split))
      return op->emitOpError()
             << "#kb.config split = " << f.split << " leaves a chunk of the "
             << kTiles << " k tiles (K = " << k << ", BK = " << bk << ") empty";
  }
  if (defaultTile && wgmma)
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
  bool tmaCopy = wgmma && (!f.copy || *f.copy == CopyKind::tma);
  int64_t tiles = llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn) * batch;
  bool oneBlockAnSM = transB ? bm >= 128 : bm * bn >= 128 * 128;
  // Not where the tiles have edges in M or N: ptxas then spills in the
  // persistent loop (a sweep of 240 random shapes: 12-288 bytes at 128 x
  // 256 and 256 x 128 with edges, none one block a tile; every measured
  // shape was edge-free).
  bool edges = m % bm || n % bn;
  // Not in clusters of more than 2 (the persistent kernel pairs row tiles
  // two by two; a hand-set or kb-tune's cluster = 4 keeps the plain grid).
  if (f.grid == 0 && tmaCopy && f.split <= 1 && oneBlockAnSM && tiles > sms &&
      k <= 128 && !edges && f.cluster <= 2)
    f.grid = sms;
  // And at any K, kb-tile's own big B^T tiles over more than one wave
  // (persistentRule).
  if (defaultTile && wgmma && tmaCopy && f.grid == 0 &&
      persistentRule(ms, f, tiles))
    f.grid = sms;
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
