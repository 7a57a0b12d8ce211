//===- TargetModel.cpp - what kb knows about each target chip -------------===//
//
// The per-chip facts the decision passes decide with and check configs
// against: multiprocessors, threads, registers and shared memory per block
// and per multiprocessor, clusters, wgmma. The one place they are written.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kb;

FailureOr<TargetModel> mlir::kb::getTargetModel(StringRef chip) {
  TargetModel m;
  m.chip = chip.str();
  // Common to sm_80 and sm_90.
  m.maxThreadsPerBlock = 1024;
  m.reservedSharedPerBlock = 1024;
  m.registersPerSM = 65536;
  m.maxRegistersPerThread = 255;
  if (chip == "sm_90" || chip == "sm_90a") {
    m.smCount = 132;
    m.maxSharedPerBlock = 232448; // 227 KB
    m.sharedPerSM = 233472;       // 228 KB
    m.maxThreadsPerSM = 2048;
    m.hasWgmma = chip == "sm_90a";
    m.hasClusters = true;
    // H200 (2026-12-01 runs): 4244 GB/s copy; kb's wgmma 317 and mma.sync
    // 166 TFLOP/s at 4096^3.
    m.copyGBs = 4244;
    m.wgmmaTf32Tflops = m.hasWgmma ? 317 : 0;
    m.mmaSyncTf32Tflops = 166;
    // mma.sync with K % 4 != 0: 76 TFLOP/s at 2048x2048x2050, 47-55 at
    // 1009x1013x1019, 2003x2011x2017 and 3000x3000x3001
    // (bench/results/2026-12-01-shapes1, -shapes2).
    m.mmaSyncTf32UnalignedTflops = 76;
    m.ffmaTflops = 50; // kb's FFMA matmul at 4096^3
    // 30 clusters of 4 at once (kb-run, 64 x 128 wgmma tiles at 120 KB of
    // shared memory, bench/results/2026-12-03-clusters/call1/quick.txt).
    m.clusterOf4Blocks = 120;
    return m;
  }
  if (chip == "sm_80") {
    m.smCount = 108;
    m.maxSharedPerBlock = 166912; // 163 KB
    m.sharedPerSM = 167936;       // 164 KB
    m.maxThreadsPerSM = 2048;
    // A100 datasheet-scaled guesses (not measured by kb): 1.5 TB/s, mma.sync
    // at about half of the 156 TFLOP/s TF32 peak.
    m.copyGBs = 1500;
    m.mmaSyncTf32Tflops = 80;
    m.ffmaTflops = 15;
    return m;
  }
  return failure();
}

int64_t mlir::kb::matmulSharedBytes(ConfigAttr config, bool transposeB,
                                    int64_t n, bool cF32) {
  if (!config || config.getBlock().size() != 3)
    return 0;
  auto b = config.getBlock();
  int64_t stages = std::max<int64_t>(config.getStages(), 1);
  auto pad = config.getPad();
  int64_t padA = pad.size() == 2 ? pad[0] : 0,
          padB = pad.size() == 2 ? pad[1] : 0;
  int64_t bm = b[0], bn = b[1], bk = b[2];
  // gemv reads its operands from global memory (L1 and L2 keep the few).
  if (config.getMma() == MmaUnit::gemv)
    return gemvSharedBytes(bm, bn, bk, config.getThread());
  if (isWgmma(config.getMma())) {
    int64_t elemBytes = isWgmma16(config.getMma()) ? 2 : 4;
    return wgmmaSharedBytes(
        bm, bn, bk, stages, config.getCopy() == CopyKind::tma,
        wgmmaStagingBytes(bm, bn, bk, stages, transposeB,
                          config.getCopy() == CopyKind::tma,
                          config.getGrid() > 0, n,
                          config.getStore() == StoreKind::tma, elemBytes, cF32),
        elemBytes);
  }
  if (isMmaSync(config.getMma())) {
    // A as BM rows of BK + padA (row-major, as the fragments read it); B as
    // BK rows of BN + padB, or BN rows of BK + padA when transposed and
    // copied as is by cp.async (through registers it is stored row-major).
    // The 16-bit kernel (mma_sync_f16, mma_sync_bf16) copies by cp.async
    // only, 2-byte elements (pad in elements too).
    bool transB = transposeB && config.getCopy() != CopyKind::registers;
    int64_t bBytes = transB ? bn * (bk + padA) : bk * (bn + padB);
    int64_t elemBytes = isMmaSync16(config.getMma()) ? 2 : 4;
    return stages * (bm * (bk + padA) + bBytes) * elemBytes;
  }
  // FFMA: A transposed, BK rows of BM + padA; B as BK rows of BN + padB.
  return stages * bk * ((bm + padA) + (bn + padB)) * 4;
}

bool mlir::kb::mmaSyncCopiesFit(int64_t n, int64_t k, bool transposeB,
                                int64_t bm, int64_t bn, int64_t bk,
                                int64_t threads, int64_t elemBytes) {
  int64_t chunk = 16 / elemBytes; // elements a 16-byte chunk
  return threads > 0 && k % chunk == 0 && (transposeB || n % chunk == 0) &&
         bk % chunk == 0 && (bm * bk / chunk) % threads == 0 &&
         (bk * bn / chunk) % threads == 0;
}

bool mlir::kb::ffmaCopiesFit(int64_t bm, int64_t bn, int64_t bk,
                             int64_t threads) {
  return threads > 0 && (bm * bk) % threads == 0 && (bk * bn) % threads == 0;
}

std::optional<GemvForm> mlir::kb::gemvForm(int64_t m, int64_t n, bool transB) {
  if (m <= kGemvMaxFew && transB)
    return GemvForm::WeightB;
  if (n <= kGemvMaxFew)
    return GemvForm::WeightA;
  if (m <= kGemvMaxFew)
    return GemvForm::Columns;
  return std::nullopt;
}

int64_t mlir::kb::gemvDefaultStages(int64_t few) { return few <= 3 ? 2 : 1; }

/// BK / R for thread = [M, TN, R] (R dividing BK), else 1.
static int64_t gemvGroups(int64_t bk, ArrayRef<int64_t> thread) {
  if (thread.size() != 3 || thread[2] <= 0 || bk % thread[2])
    return 1;
  return bk / thread[2];
}

int64_t mlir::kb::gemvColumnThreads(int64_t bn, int64_t bk,
                                    ArrayRef<int64_t> thread) {
  if (thread.size() < 2 || thread.size() > 3 || thread[1] <= 0 ||
      bn % thread[1] || (thread.size() == 3 && (thread[2] <= 0 ||
                                                bk % thread[2])))
    return 0;
  return bn / thread[1] * gemvGroups(bk, thread);
}

int64_t mlir::kb::gemvSharedBytes(int64_t bm, int64_t bn, int64_t bk,
                                  ArrayRef<int64_t> thread) {
  int64_t groups = gemvGroups(bk, thread);
  return groups > 1 ? groups * bm * bn * 4 : 0;
}

bool mlir::kb::gemvRealignFits(int64_t bn, int64_t r) {
  int64_t cols = bn / 8;
  return bn % 8 == 0 && cols > 0 && (32 % cols == 0 || cols % 32 == 0) &&
         r > 0 && r % 8 == 0;
}

int64_t mlir::kb::gemvVector(GemvForm form, int64_t n, int64_t k, int64_t ldb,
                             bool transB) {
  switch (form) {
  case GemvForm::WeightB:
    return k % 4 == 0 && ldb % 4 == 0 ? 4 : 1;
  case GemvForm::WeightA:
    // B's columns as the few: rows of B^T (transposed, or N = 1, where
    // the K x 1 column is contiguous) in vectors too, else one by one.
    return k % 4 == 0 && (!transB || ldb % 4 == 0) ? 4 : 1;
  case GemvForm::Columns:
    return n % 4 == 0 ? 4 : 1;
  }
  return 1;
}

int64_t mlir::kb::wgmmaDefaultStages(int64_t bm, int64_t bn, int64_t bk,
                                     bool transposeB, bool tma,
                                     bool persistent, int64_t n,
                                     int64_t blocks,
                                     const TargetModel &model, bool tmaStore) {
  auto sharedBytes = [&](int64_t stages) {
    return wgmmaSharedBytes(bm, bn, bk, stages, tma,
                            wgmmaStagingBytes(bm, bn, bk, stages, transposeB,
                                              tma, persistent, n, tmaStore));
  };
  if (sharedBytes(4) > model.maxSharedPerBlock)
    return 3;
  // A fifth stage where a stage is at most 32 KB (128 x 128 x 32 tiles or
  // smaller) and it costs no block an SM that the grid would use. Over
  // kb-tune's exhaustive H200 runs (bench/results/2026-12-02-tune5 and
  // -tune6, docs/kb-tune.md), five stages against four where this holds:
  // 128 x 128 (one block an SM either way) faster in 41 of 42 tile groups
  // (geometric mean 0.958); 64 x 128 where the grid has at most one block
  // an SM anyway (blocks <= SMs) 15 of 15 (0.893); 64 x 64 where it has at
  // most two 15 of 17 (0.958, at most 0.9% slower). Where the fifth stage
  // drops a block an SM the grid would use, 64 x 128 was faster in 2 of 22
  // (1.189) and 128 x 64 in 1 of 21 (1.263). 128 x 64 is left at four even
  // in small grids: 7 of 13 faster, 1.004, up to 9.5% slower. (Counts:
  // bench/tune/stage_pairs.py over tune5 and tune6; tune7's held-out
  // programs, measured after this rule, add 17 of 20 groups on its side.) Larger stages
  // gained nothing (run 18: 128 x 192 1.4% and 192 x 160 0.5% slower).
  if ((bm + bn) * bk * 4 > 32768 || sharedBytes(5) > model.maxSharedPerBlock)
    return 4;
  auto perSM = [&](int64_t stages) {
    return model.sharedPerSM /
           (sharedBytes(stages) + model.reservedSharedPerBlock);
  };
  int64_t used = std::max<int64_t>(1, llvm::divideCeil(
                                          blocks, std::max<int64_t>(
                                                      1, model.smCount)));
  if (std::min(perSM(5), used) < std::min(perSM(4), used))
    return 4;
  // 128 x 64 (and the narrower fits of more than 64 rows on at most 64
  // columns, 120 x 64 or 128 x 56, not measured) keep four.
  if (perSM(5) < perSM(4) && bm > 64 && bn <= 64)
    return 4;
  return 5;
}
