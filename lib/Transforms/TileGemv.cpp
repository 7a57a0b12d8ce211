//===- TileGemv.cpp - kb-tile's gemv tiles and gemv split-K --------------===//
//
// The tiles kb-tile gives a matmul on the gemv kernel (mma = "gemv",
// MatmulGemv.cpp): the weight's rows among warps or its columns among
// threads, the k tile each covers, and the split-K model that keeps enough
// weight bytes in flight. Tile.cpp's pass calls tileGemv.
//
//===----------------------------------------------------------------------===//

#include "TileRules.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::tile;

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
LogicalResult mlir::kb::tile::tileGemv(Operation *op, MatmulOp mm,
                                       ConfigFields &f,
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
  // The weight's bytes an element, for the split model's bytes in flight and
  // weight bytes: 2 in 16 bits, where a vector of v = 4 elements is 8 bytes.
  // Until 2026-12-07 it counted 4, and bf16 256 x 1 x 2^20 took 8 chunks
  // for the 16 its bytes need (79% of copy, 0.83x cuBLAS on an H100).
  int64_t eb = mm.getLhs().getType().getElementTypeBitWidth() / 8;
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
  // One row against a 16-bit row-major B whose rows are not 16-byte
  // pitched (N % 8 != 0): thread TN = 8, each thread's 8 columns of a row
  // from one 16-byte load of the aligned chunk under them, realigned in
  // registers by a warp shuffle (MatmulGemv.cpp), 8 rows a thread (16 bytes
  // each, 128 a thread in flight: twice the element loads' 64, in 8 load
  // instructions instead of 32) in the element loads' blocks of 512
  // threads. Not measured yet (bf16 1 x 4099 x 4093 was 0.0258 ms on
  // 2-byte loads, cuBLASLt 0.0220; H100, 2026-12-07).
  // Off until the kernel's first GPU run checks it against float64 (it is
  // built and ptxas-clean, never executed): `thread = [1, 8, 8]` by hand
  // until then. Turning it on is this constant and the lit expectations
  // of kb-tile-gemv.mlir's @realign_default* cases.
  constexpr bool kGemvRealignByDefault = false;
  bool realignDefault = kGemvRealignByDefault && columns && groupBn &&
                        eb == 2 && m == 1 && n % 8;
  auto setDefaultTile = [&](bool eight) {
    if (realignDefault) {
      f.block = {m, groupBn, 512 / (groupBn / 8) * 8};
      f.thread = {m, 8, 8};
      return;
    }
    if (columns && groupBn) {
      // One element a load (N % 4 != 0): 16 rows a thread, 32 in 16 bits,
      // so 64 bytes a thread in flight either way (bf16 1 x 4099 x 4093,
      // same call: 16 rows 0.0293 ms, 32 rows 0.0259; H100, 2026-12-07).
      int64_t r = v == 4 ? 8 : (eb == 2 ? 32 : 16);
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
    // TN = 8: 16-byte loads of 8 elements, realigned by a warp shuffle
    // (gemvRealignFits: whole row segments of lanes, R a multiple of 8).
    bool realign = f.thread.size() >= 2 && f.thread[1] == 8;
    if (realign && eb != 2)
      return op->emitOpError()
             << "gemv thread TN = 8 (16-byte loads of 8 elements, realigned "
                "by a warp shuffle) needs a 16-bit B; B has "
             << 8 * eb << "-bit elements";
    if (realign && !gemvRealignFits(bn, grouped ? f.thread[2] : bk))
      return op->emitOpError()
             << "gemv thread TN = 8 needs BN / 8 dividing 32 or a multiple "
                "of 32 and R (BK without k groups) a multiple of 8; BN = "
             << bn << ", R = " << (grouped ? f.thread[2] : bk);
    if (f.thread.size() < 2 || f.thread.size() > 3 || !f.warp.empty() ||
        bm != m || f.thread[0] != m ||
        !(f.thread[1] == 1 || f.thread[1] == v || realign) ||
        bn % f.thread[1] ||
        (!grouped && (bn / f.thread[1]) % 32) || bk < 1 ||
        (grouped && (bk % f.thread[2] || bn * 4 % 128)))
      return op->emitOpError()
             << "gemv tiles over a row-major B need block = [M, BN, BK] and "
                "thread = [M, TN] or [M, TN, R] (no warp) with TN "
             << (v == 4 ? "1 or 4" : "1 (N % 4 != 0)")
             << (eb == 2 ? " (or 8 in 16 bits)" : "")
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
    inFlight = rows * f.thread[1] * eb;
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
      return op->emitOpError() << "gemv: a lane would load " << bk * r / 32
                               << " weight floats a k tile (BK = " << bk << ", "
                               << r << " rows a warp); at most "
                               << kGemvMaxTileFloats << ": a smaller BK";
    inFlight = r * bk * eb;
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
    int64_t s = chooseGemvSplit(kTiles, units, inFlight, double(eb) * wide * k,
                                4.0 * m * n, model.smCount, model.copyGBs);
    if (s > 1 && eightLoads) {
      // A split weight keeps four loads a lane (and the split for them).
      f.block.clear();
      f.warp.clear();
      setDefaultTile(false);
      bk = f.block[2];
      inFlight = bk * eb * stages;
      kTiles = llvm::divideCeil(k, bk);
      s = chooseGemvSplit(kTiles, units, inFlight, double(eb) * wide * k,
                          4.0 * m * n, model.smCount, model.copyGBs);
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
