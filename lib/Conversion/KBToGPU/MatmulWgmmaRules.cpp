//===- MatmulWgmmaRules.cpp - what the wgmma kernel accepts and reads once ===//
//
// The rules of the wgmma TF32 kernel that build no IR: the configs it
// accepts (checkWgmmaConfig: one line for each it refuses) and the
// operands it reads once (readOnceOperands). The kernel is built in
// MatmulWgmma.cpp.
//
//===----------------------------------------------------------------------===//

#include "MatmulGen.h"

using namespace mlir;
using namespace mlir::kb;

LogicalResult mlir::kb::checkWgmmaConfig(MatmulEmitter &e) {
  int64_t bm = e.bm, bn = e.bn, bk = e.bk;
  int64_t stages = e.config.getStages();
  // A row-major B: the kernel computes the tile transposed (C^T = B^T
  // A^T).
  bool rowB = !e.shape.transB;
  bool tma = e.config.getCopy() == CopyKind::tma;
  // 16-bit operands: 64 to a 128-byte row; so far by TMA, C stored
  // directly, split-K through kb.split_sum or stream-K (f32 partials
  // either way), no cluster reduce (its partial would pass through C).
  bool half = isWgmma16(e.config.getMma());
  StringRef unit = half ? stringifyMmaUnit(*e.config.getMma()) : "wgmma_tf32";
  // operands = "ba": C^T = B^T A^T, one warpgroup per 64 columns, B's
  // tile (boxes of 64 columns) as wgmma's A operand, read MN-major, the A
  // tile as its B operand (N = BM).
  bool swapped = e.config.getOperands() == OperandOrder::ba;
  if (half && swapped) {
    std::string why;
    if (!rowB)
      why = "a row-major B (B^T is read K-major as it is)";
    else if (e.shape.n % 8)
      why = "N a multiple of 8 (16-byte rows of B)";
    else if (!tma)
      why = "copy = \"tma\"";
    else if (e.clusterReduce)
      why = "no cluster reduce";
    if (!why.empty())
      return e.op->emitOpError()
             << unit << " with operands = \"ba\" needs " << why;
    if (bk != 64 || bn % 64 || bn > 256 || bm % 8 || bm > 256 || bm < 8)
      return e.op->emitOpError()
             << unit << " with operands = \"ba\" needs block = [M, 64k, 64] "
             << "with M a multiple of 8 up to 256 and 64k up to 256; got ["
             << bm << ", " << bn << ", " << bk << "]";
    if (e.shape.k % 8)
      return e.op->emitOpError()
             << unit << " copies 16-byte chunks: K = " << e.shape.k
             << " must be a multiple of 8";
    // The rest is the C^T kernel's (one warpgroup per 64 columns, a
    // producer warpgroup): rowB stays.
  } else if (half) {
    // A row-major B is read as it is (MN-major, boxes of 64, 32 or 16
    // columns: wgmmaMnBoxCols).
    std::string why;
    if (rowB && (!wgmmaMnBoxCols(bn) || e.shape.n % 8))
      why = "BN a multiple of 16 and N a multiple of 8 with a row-major B";
    else if (!tma)
      why = "copy = \"tma\"";
    else if (e.clusterReduce)
      why = "no cluster reduce (split = S summed by kb.split_sum, or reduce "
            "= \"stream\", does)";
    if (!why.empty())
      return e.op->emitOpError() << unit << " needs " << why << " so far";
    if (bk != 64 || bm % 64 || bn % 8 || bn > 256 || bn < 8)
      return e.op->emitOpError()
             << unit << " needs block = [64k, N, 64] with N a multiple of 8 "
             << "up to 256; got [" << bm << ", " << bn << ", " << bk << "]";
    if (e.shape.k % 8)
      return e.op->emitOpError()
             << unit << " copies 16-byte chunks: K = " << e.shape.k
             << " must be a multiple of 8";
    // The rest is the B^T kernel's (one warpgroup per 64 rows).
    rowB = false;
  }
  if (rowB && !tma)
    return e.op->emitOpError()
           << "wgmma_tf32 with a row-major B needs copy = \"tma\"";
  if (rowB && e.shape.n % 4)
    return e.op->emitOpError()
           << "wgmma_tf32 with a row-major B copies its rows by TMA: N = "
           << e.shape.n << " must be a multiple of 4";
  if (!half && !rowB && (bk != 32 || bm % 64 || bn % 8 || bn > 256 || bn < 8))
    return e.op->emitOpError()
           << "wgmma_tf32 needs block = [64k, N, 32] with N a multiple of 8 "
              "up to 256; got ["
           << bm << ", " << bn << ", " << bk << "]";
  if (rowB && !half && (bk != 32 || bn % 64 || bm % 8 || bm > 256 || bm < 8))
    return e.op->emitOpError()
           << "wgmma_tf32 with a row-major B needs block = [M, 64k, 32] with M "
              "a multiple of 8 up to 256; got ["
           << bm << ", " << bn << ", " << bk << "]";
  if (stages < 3)
    return e.op->emitOpError()
           << "wgmma_tf32 needs at least 3 stages, got " << stages;
  if (!half && e.shape.k % 4)
    return e.op->emitOpError()
           << "wgmma_tf32 copies 16-byte chunks: K = " << e.shape.k
           << " must be a multiple of 4";
  // One warpgroup per 64 rows (columns with a row-major B); with TMA, a
  // producer warpgroup more with a row-major B, a producer warp with B^T
  // (or, with two consumer warpgroups, a warpgroup where the config asks).
  int64_t wantThreads = wgmmaThreads(bm, bn, !rowB, tma);
  if (!wgmmaThreadsAllowed(bm, bn, !rowB, tma, e.threads))
    return e.op->emitOpError()
           << unit << " runs one warpgroup per 64 "
           << (rowB ? "columns" : "rows")
           << (!tma                  ? ""
               : wantThreads % 128 ? " and a producer warp"
                                     : " and a producer warpgroup")
           << ": " << wantThreads << " threads, got " << e.threads;

  if (tma && (!e.tmapA || !e.tmapB))
    return e.op->emitOpError()
           << "internal error: copy = \"tma\" without tensor maps";
  if (!tma && e.config.getCopy() != CopyKind::cp_async)
    return e.op->emitOpError() << unit << " copies its tiles with copy = "
                                  "\"tma\" or \"cp_async\": run "
                                  "kb-promote-shared-memory";
  bool persistent = e.config.getGrid() > 0;
  if (e.clusterReduce && (!tma || persistent || e.config.getCluster() > 1 ||
                          e.config.getStore() == StoreKind::tma))
    return e.op->emitOpError()
           << "internal error: reduce = \"cluster\" without TMA copies, or "
              "with a persistent grid, another cluster or a TMA store";
  // store = "tma": the TMA-store epilogue.
  bool tmaStore = e.config.getStore() == StoreKind::tma;
  if (tmaStore) {
    int64_t cBytes = e.cElem().getIntOrFloatBitWidth() / 8;
    std::string why;
    if (!tma)
      why = "copy = \"tma\"";
    else if (rowB)
      why = "B transposed (transpose_b)";
    else if (e.shape.splits > 1)
      why = "an unsplit matmul";
    else if (e.shape.n % (16 / cBytes))
      why = "N a multiple of " + std::to_string(16 / cBytes) +
            " (16-byte rows of C); N = " + std::to_string(e.shape.n);
    else if (bn % wgmmaStoreBoxCols(cBytes))
      why = "BN a multiple of " + std::to_string(wgmmaStoreBoxCols(cBytes)) +
            " (boxes of 128-byte rows); BN = " + std::to_string(bn);
    if (!why.empty())
      return e.op->emitOpError()
             << "store = \"tma\" (the wgmma TMA-store epilogue) needs " << why;
    if (!e.tmapC)
      return e.op->emitOpError()
             << "internal error: store = \"tma\" without C's tensor map";
  }
  return success();
}

ReadOnce mlir::kb::readOnceOperands(const MatmulShape &s, int64_t bm,
                                    int64_t bn) {
  // C: the output, or with split-K the S partial products written.
  int64_t outputs = s.batch * std::max<int64_t>(s.splits, 1);
  double aBytes = 4.0 * s.batch * s.m * s.k, bBytes = 4.0 * s.batch * s.n * s.k,
         cBytes = 4.0 * outputs * s.m * s.n;
  double total = aBytes + bBytes + cBytes;
  constexpr double kMaxBytes = 256.0 * (1 << 20);
  auto streams = [&](double bytes) {
    return 4 * bytes >= 3 * total && bytes <= kMaxBytes;
  };
  ReadOnce r;
  r.a = llvm::divideCeil(s.n, bn) == 1 && streams(aBytes);
  r.b = llvm::divideCeil(s.m, bm) == 1 && streams(bBytes);
  return r;
}
