//===- SelectConfig.cpp - attach a launchable #kb.config to each kernel ---===//
//
// kb-select-config: every top-level kb op and kb.fusion is one kernel. This
// pass picks what the later passes build on: threads per block, the global
// vector width and, for softmax, the strategy (the row in registers, read
// once, or an online tiled loop that reads it twice). Hand-set fields are
// kept and checked against the target model.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBSELECTCONFIG
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

int64_t mlir::kb::widestVector(int64_t lastDim) {
  return lastDim % 4 == 0 ? 4 : lastDim % 2 == 0 ? 2 : 1;
}

void mlir::kb::fillElementwiseDefaults(ConfigFields &f, int64_t lastDim) {
  if (!f.threads)
    f.threads = 256;
  if (!f.vector)
    f.vector = widestVector(lastDim);
}

namespace {

int64_t nextPow2(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

/// The most f32 values of one row a thread may hold in registers (a forced
/// config), and the most kb picks by itself: at 32 values a 1024-thread
/// block still fits its registers without spilling (51 per thread at
/// 8192x32768).
constexpr int64_t kMaxRowValuesPerThread = 64;
constexpr int64_t kAutoRowValuesPerThread = 32;
/// The largest thread-block cluster sm_90 launches (16 is non-portable:
/// kb-run opts in with CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).
constexpr int64_t kMaxCluster = 16;
/// split_global: blocks per row at most (the config verifier's limit); the
/// shared memory the driver reserves for each block is the target model's.
constexpr int64_t kMaxGlobalBlocks = 64;
/// split_global: the most blocks per row for which kb picks a persistent
/// grid by itself (below).
constexpr int64_t kMaxPersistentBlocksPerRow = 8;

/// Values of a `len`-long row part each of `threads` threads holds.
int64_t valuesPerThread(int64_t len, int64_t threads, int64_t vector) {
  return llvm::divideCeil(len, threads * vector) * vector;
}

/// Whether kb-select-config gives a norm's kernel (layer_norm, rms_norm and
/// the fusions they anchor) the cluster strategy for rows one block's
/// registers cannot hold by itself: `online` reads such a row twice from
/// global memory, a cluster's registers once. Measured (H100, one call,
/// bench/results/2026-12-07-h100-pingpong-clusters-tmastore): residual +
/// layer_norm 1024 x 65536 f32 0.5977 ms online, 0.2920 in clusters of 8
/// (256 threads); rms_norm 0.2708 -> 0.1852, bf16 0.1283 -> 0.1138. A row
/// sum reads its row once either way and was slower in clusters (0.0969
/// online, 0.1051), so row reductions keep `online`. One known loss: a bf16
/// layer_norm of 256 x 40000 ran 0.0306 ms in clusters of 4, 0.0240 online
/// (a later call on the same H100; not yet explained).
constexpr bool kRowClusterByDefault = true;
/// Two rows a block, one warp a row (block = [2], threads = 64), for rows
/// of 64 to 128 vectors: at four vectors a thread such a row is one warp's,
/// and 64 threads of two vectors (the old rule: a block of one warp leaves
/// half an SM idle at 32 blocks) hold a bf16 row of 1024 at 32 bytes a
/// thread, 74-80% of copy on the H200 against f32's 88-91%
/// (bench/results/2026-12-07-h200-norms-attn-wgmma). Warp rows reduce by
/// shuffles alone, without the barrier, in half the blocks. Predicted 5-10%
/// faster; measured (H100, 2026-12-07, session 29, same call, against the
/// old threads = 64): layer_norm + residual bf16 16384 x 1024 0.0393 against
/// 0.0392 ms, rms_norm 0.0276 against 0.0272, plain layer_norm 0.0276
/// against 0.0283: no gain either way (one run each; why is not known).
constexpr bool kRowsPerBlockByDefault = true;
/// Online instead of clusters for a norm whose rows fill the chip (rows >=
/// SMs: one 1024-thread block a row) and whose rows in flight, one an SM,
/// take at most a quarter of the H100's and H200's 50 MB L2: its second and
/// third reads then hit L2. H100: bf16 layer_norm 256 x 40000 (10.6 MB in
/// flight) 0.0240 ms online, 0.0306 in clusters; bf16 rms_norm 1024 x 65536
/// (16.9 MB) 0.1283 online, 0.1138 in clusters. Session 29 (one call):
/// bf16 256 x 40000 0.0243 online against 0.0269 in clusters, but f32
/// layer_norm 256 x 40000 (21 MB, so clusters) 0.0432 against 0.0409
/// online: the threshold misses it.
constexpr int64_t kOnlineRowsInFlightBytes = 50 * 1024 * 1024 / 4;
/// The vectors a thread holds of a cluster block's part of the row by
/// default: eight (256 threads for a part of 8192 f32) measured ahead of
/// four (512 threads): layer_norm 1024 x 65536 0.2920 against 0.3188 ms,
/// rms_norm 0.1852 against 0.1892 (same call as above).
constexpr int64_t kRowClusterVectorsPerThread = 8;
/// The row kernels' cluster strategy: blocks a row is split over at most
/// (portable cluster sizes).
constexpr int64_t kMaxRowCluster = 8;
/// ... and the bytes of a part kb aims at: the registers strategy's rows of
/// 8192 f32 (32 KB) reach 88-96% of copy on the H200, 512 threads of four
/// vectors (bench/results/2026-12-07-h200-norms-attn-wgmma).
constexpr int64_t kRowClusterPartBytes = 32768;

/// The cluster size (2, 4 or 8) for rows of `n` elements of `type` that one
/// block's registers do not hold: the fewest blocks whose parts are whole
/// vectors of at most kRowClusterPartBytes, else the most whose parts fit
/// `maxThreads` threads of kAutoRowValuesPerThread; 0 where none fits.
int64_t rowClusterBlocks(int64_t n, int64_t vector, RankedTensorType type,
                         int64_t maxThreads) {
  int64_t bytes = type.getElementType().getIntOrFloatBitWidth() / 8;
  int64_t fits = 0;
  for (int64_t c = 2; c <= kMaxRowCluster; c *= 2) {
    if (n % (c * vector) != 0 ||
        valuesPerThread(n / c, maxThreads, vector) > kAutoRowValuesPerThread)
      continue;
    if (n / c * bytes <= kRowClusterPartBytes)
      return c;
    fits = c;
  }
  return fits;
}

/// Whether every tensor the kernel of `op` reads or writes is f16 or bf16.
bool isAll16Bit(Operation *op) {
  auto is16 = [](Type t) {
    auto s = cast<ShapedType>(t);
    return s.getElementType().isF16() || s.getElementType().isBF16();
  };
  return llvm::all_of(op->getOperandTypes(), is16) &&
         llvm::all_of(op->getResultTypes(), is16);
}

LogicalResult selectElementwise(Operation *op, ConfigFields &f,
                                const TargetModel &model) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t last = type.getShape().back();
  if (f.vector == 8 && !isAll16Bit(op))
    return op->emitOpError() << "config asks for vector width 8, which is for "
                                "kernels whose tensors are all 16-bit (16 "
                                "bytes an access)";
  if (f.vector && last % f.vector != 0)
    return op->emitOpError() << "config asks for vector width " << f.vector
                             << ", which needs the last dimension (" << last
                             << ") to be a multiple of it";
  // kb.rotary rotates pairs of adjacent elements: a vector holds whole ones.
  if (holdsRotary(op) && f.vector == 1)
    return op->emitOpError() << "config asks for vector width 1; kb.rotary "
                                "needs whole pairs of elements a vector (2, 4 "
                                "or 8)";
  // A chain whose buffers are all 16-bit reads 8 of them a 16-byte access
  // (with dropout, two Philox draws of four a vector).
  if (!f.vector && last % 8 == 0 && isAll16Bit(op))
    f.vector = 8;
  fillElementwiseDefaults(f, last);
  return success();
}

LogicalResult selectSoftmax(Operation *op, ConfigFields &f,
                            const TargetModel &model) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t n = type.getShape().back();
  int64_t maxThreads = model.maxThreadsPerBlock;
  if (f.strategy == SoftmaxStrategy::cluster)
    return op->emitOpError()
           << "strategy \"cluster\" is the row kernels' (norms, row "
              "reductions); a softmax splits a row over a cluster with "
              "\"split\" or \"split_shared\"";
  if (f.vector == 8 && !isAll16Bit(op))
    return op->emitOpError() << "config asks for vector width 8, which is for "
                                "kernels whose tensors are all 16-bit (16 "
                                "bytes an access)";
  // Rows that are not a multiple of 4 long: an unfused softmax reads them as
  // aligned 16-byte chunks with masked edges (vector = 4) in the registers
  // and split_shared strategies; other strategies take narrower accesses.
  bool unfused = isa<SoftmaxOp, LogSoftmaxOp>(op);
  // A log-softmax is built with the registers and online strategies only
  // (the split ones' partial exchanges return softmax's factor, not its
  // logarithm).
  bool isLog = isa<LogSoftmaxOp>(op);
  if (auto fusion = dyn_cast<FusionOp>(op))
    isLog = isa_and_nonnull<LogSoftmaxOp>(getFusionAnchor(fusion));
  auto alignedChunksAllowed = [&] {
    return unfused && f.vector == 4 &&
           (f.strategy == SoftmaxStrategy::registers ||
            f.strategy == SoftmaxStrategy::split_shared ||
            f.strategy == SoftmaxStrategy::split_global);
  };
  // Elements a row's accesses cover: aligned chunks cover up to 3 more.
  auto covered = [&](int64_t len) { return n % f.vector ? len + 3 : len; };
  // Split over a cluster: the fewest blocks (a power of two, so that clusters
  // tile a GPC's multiprocessors) whose parts fit in registers
  // (kAutoRowValuesPerThread per thread) or in one block's shared memory, or
  // 0 if none does. (Measured at 1024x400000, run 17: 8 blocks of 1024
  // threads, 200 KB each, one per multiprocessor: 83% of copy; 16 blocks of
  // 512 threads, two per multiprocessor: 79%.)
  auto fewestBlocks = [&](bool shared, int64_t threads,
                          int64_t maxBlocks) -> int64_t {
    for (int64_t c = 2; c <= maxBlocks; c *= 2) {
      if (shared ? splitSharedBytes(n, c, f.vector) <= model.maxSharedPerBlock
                 : valuesPerThread(splitPartLength(n, c, f.vector), threads,
                                   f.vector) <= kAutoRowValuesPerThread)
        return c;
    }
    return 0;
  };
  // One read whenever the row fits on chip: in one block's registers, else
  // over the shared memory of up to 64 ordinary blocks exchanging partials
  // through global memory (split_global); two reads (online) beyond.
  // split_global rather than a cluster's registers (split) or shared
  // memory (split_shared), which kb chose before 2026-11-30: at
  // 1024x400000 it ties split_shared (85% of copy), at 1024x400001 80%
  // against 70%, at 7x400001 35% against 27% (runs 4-5); against the
  // register split of 2-4 blocks 93.5% against 83.1% at 4096x49152, 89.0%
  // against 78.3% at 16384x40000, 89.4% against 86.2% at 2048x65536 and
  // 85.4% against 79.9% at 1024x131072 (run 8).
  auto globalBlocks = [&]() -> int64_t {
    for (int64_t c = 2; c <= kMaxGlobalBlocks; c *= 2)
      if (splitSharedBytes(n, c, f.vector) + model.reservedSharedPerBlock <=
          model.sharedPerSM / 2)
        return c;
    return 0;
  };
  auto chooseStrategy = [&]() -> SoftmaxStrategy {
    if (valuesPerThread(covered(n), maxThreads, f.vector) <=
        kAutoRowValuesPerThread)
      return SoftmaxStrategy::registers;
    if (globalBlocks() && !isLog)
      return SoftmaxStrategy::split_global;
    return SoftmaxStrategy::online;
  };
  bool autoVector = !f.vector, autoStrategy = !f.strategy;
  // 16-bit rows a multiple of 8 long: 8 values a 16-byte access.
  if (autoVector)
    f.vector = n % 8 == 0 && isAll16Bit(op) ? 8
               : unfused                    ? 4
                                            : widestVector(n);
  if (autoStrategy)
    f.strategy = chooseStrategy();
  if (isLog && f.strategy != SoftmaxStrategy::registers &&
      f.strategy != SoftmaxStrategy::online)
    return op->emitOpError()
           << "log_softmax is built with strategy \"registers\" or "
              "\"online\", not \""
           << nameOf(f.strategy) << "\"";
  // 16-bit rows: the registers softmax is the only one built so far.
  if (isAll16Bit(op) && f.strategy != SoftmaxStrategy::registers)
    return op->emitOpError()
           << "a 16-bit softmax runs the row in registers only so far; "
           << (autoStrategy ? "rows of " + std::to_string(n) +
                                  " are too wide for it (strategy \"" +
                                  nameOf(f.strategy).str() + "\" would do)"
                            : "strategy \"" + nameOf(f.strategy).str() +
                                  "\" is not built for 16 bits");
  if (n % f.vector != 0 && !alignedChunksAllowed()) {
    if (!autoVector)
      return op->emitOpError() << "config asks for vector width " << f.vector
                               << ", which needs the row length (" << n
                               << ") to be a multiple of it";
    // The chosen strategy cannot read aligned chunks: narrower accesses, and
    // the choice again with them.
    f.vector = widestVector(n);
    if (autoStrategy)
      f.strategy = chooseStrategy();
  }
  bool global = f.strategy == SoftmaxStrategy::split_global;
  if (f.grid && !global)
    return op->emitOpError()
           << "softmax config grid = " << f.grid
           << " (a persistent grid) is only for strategy \"split_global\", "
              "not \""
           << nameOf(f.strategy) << "\"";
  bool staged = f.strategy == SoftmaxStrategy::split_shared || global;
  bool split = f.strategy == SoftmaxStrategy::split || staged;
  if (!f.threads) {
    if (f.strategy == SoftmaxStrategy::registers)
      // About four vectors per thread: enough loads in flight per thread,
      // and enough threads to cover the row. Rows that are not a multiple of
      // the vector (aligned chunks, one more than n / 4) round up to whole
      // warps rather than a power of two: 4099 columns take 288 threads and
      // four chunks each, not 512 threads and three passes, the last almost
      // empty.
      f.threads = std::clamp<int64_t>(
          n % f.vector
              ? llvm::alignTo(llvm::divideCeil(n + 3, 4 * f.vector), 32)
              : nextPow2(llvm::divideCeil(n, 4 * f.vector)),
          32, maxThreads);
    else if (f.strategy == SoftmaxStrategy::split_global)
      // Two blocks per SM (see the blocks per row below) need at most 32K
      // registers each: 512 threads (the kernel takes about 60 per thread).
      f.threads = std::min<int64_t>(512, maxThreads);
    else
      f.threads = maxThreads;
  }
  if (global && !f.cluster) {
    // split_global: the fewest blocks per row (a power of two) whose parts
    // fit in half of an SM's shared memory, so that two blocks share each
    // SM and one streams while the other waits for its row's partials.
    f.cluster = globalBlocks();
    if (!f.cluster)
      f.cluster = kMaxGlobalBlocks; // checked below
  }
  if (split && !f.cluster) {
    f.cluster = fewestBlocks(staged, f.threads, kMaxCluster);
    if (!f.cluster)
      f.cluster = kMaxCluster; // checked below
  }
  if (f.strategy == SoftmaxStrategy::registers ||
      f.strategy == SoftmaxStrategy::split) {
    int64_t len = f.strategy == SoftmaxStrategy::split
                      ? splitPartLength(n, f.cluster, f.vector)
                      : covered(n);
    int64_t perThread = valuesPerThread(len, f.threads, f.vector);
    if (perThread > kMaxRowValuesPerThread) {
      auto diag = op->emitOpError()
                  << "softmax strategy '" << nameOf(f.strategy)
                  << "' would hold " << perThread
                  << " values of each row per thread (row length " << n << ", ";
      if (f.strategy == SoftmaxStrategy::split)
        diag << f.cluster << " blocks of ";
      diag << f.threads << " threads); at most " << kMaxRowValuesPerThread
           << " fit: use strategy \"online\" or more threads";
      if (f.strategy == SoftmaxStrategy::split)
        diag << " or blocks";
      return diag;
    }
  }
  if (staged &&
      splitSharedBytes(n, f.cluster, f.vector) > model.maxSharedPerBlock)
    return op->emitOpError()
           << "softmax strategy '" << nameOf(f.strategy) << "' would stage "
           << splitSharedPartBytes(n, f.cluster, f.vector)
           << " bytes of each row per block (row length " << n << ", "
           << f.cluster << " blocks); " << model.chip << " has "
           << model.maxSharedPerBlock
           << " per block: use strategy \"online\" or more blocks";
  int64_t rows = type.getNumElements() / n;
  if (f.block.empty()) {
    // split_shared: each cluster takes 4 consecutive rows (or 2), so that
    // the copies of the next row overlap the stores of the current one.
    f.block = {1};
    // (split_global: one row per group of blocks, 84.8% of copy at
    // 1024x400000 against 83.2% with 4, run 4.)
    if (f.strategy == SoftmaxStrategy::split_shared && isa<SoftmaxOp>(op))
      for (int64_t k : {4, 2})
        if (rows % k == 0) {
          f.block = {k};
          break;
        }
  }
  if (f.block.size() != 1 || f.block[0] < 1 ||
      (f.block[0] > 1 && (!staged || !isa<SoftmaxOp>(op) || rows % f.block[0])))
    return op->emitOpError()
           << "softmax config block = [k] (rows per block or cluster) must be "
              "[1], "
              "or for an unfused split_shared or split_global softmax a k that "
              "divides the "
           << rows << " rows";
  if (f.grid && f.block[0] > 1)
    return op->emitOpError()
           << "softmax config grid = " << f.grid
           << " (a persistent grid) takes one row per group of "
              "blocks (block = [1]), not "
           << f.block[0];
  if (global && !f.grid && f.block[0] == 1 &&
      f.cluster <= kMaxPersistentBlocksPerRow) {
    // A persistent grid: as many blocks as the chip holds at once (shared
    // memory, threads, and registers at an estimated 40 per thread; these
    // kernels take 32-63), each taking parts from tickets until none is
    // left. Its next ticket is drawn during the exchange, so no block waits
    // for one before its first load (the ticket cost a trip to L2 at the
    // start of every part), and no block is launched per part. A grid larger
    // than what fits only launches a few blocks at the end that find no
    // ticket and copy nothing. Fewer parts than that: one block each. Not
    // with `block = [k]` rows per group of blocks (a persistent block takes
    // one row's part at a time).
    // Only for rows of up to 8 blocks: measured (2026-11-30 runs 29-30)
    // 0.8-2.7% faster at 2 to 8 blocks per row and 4% on the fused
    // attention softmax, but 1.4% and 2.6% slower at 16 (1024x400000,
    // 1024x400001).
    int64_t perSM = std::min(
        {model.sharedPerSM / (splitSharedBytes(n, f.cluster, f.vector) +
                              model.reservedSharedPerBlock),
         model.maxThreadsPerSM / f.threads,
         model.registersPerSM / (f.threads * 40)});
    int64_t parts = rows / f.block[0] * f.cluster;
    int64_t grid = std::max<int64_t>(perSM, 1) * model.smCount;
    if (grid < parts) {
      f.grid = grid;
      // Two stages: each block copies its next part while it stores this
      // one. Without (each part copied at the start of its turn) the
      // persistent grid was slower than one block per part (run 31).
      if (!f.stages)
        f.stages = 2;
    }
  }
  return success();
}

/// A transpose moves T x T tiles (T = 64 by default, or 32) through shared
/// memory; the block's threads split a tile into whole rows.
LogicalResult selectTranspose(Operation *op, ConfigFields &f) {
  if (!f.threads)
    f.threads = 256;
  if (f.block.empty())
    f.block = {64, 64};
  if (f.block != SmallVector<int64_t>{32, 32} &&
      f.block != SmallVector<int64_t>{64, 64})
    return op->emitOpError()
           << "transpose config needs block = [64, 64] or [32, 32]";
  int64_t t = f.block[0];
  if (f.threads % t || t % (f.threads / t))
    return op->emitOpError()
           << "transpose config asks for " << f.threads << " threads; a " << t
           << " x " << t << " tile needs a multiple of " << t
           << " that splits its rows evenly";
  return success();
}

/// A pad is a copy: 256 threads, each storing 16-byte chunks of the output
/// (kPadChunksPerThread of them); it has no tile to choose.
LogicalResult selectPad(Operation *op, ConfigFields &f) {
  if (!f.threads)
    f.threads = 256;
  if (!f.block.empty())
    return op->emitOpError()
           << "pad config takes threads only; block does not apply";
  return success();
}

/// A row reduction or norm (kb.layer_norm, kb.rms_norm, kb.reduce, or a
/// fusion around a norm): one block a row, the row in registers as the
/// registers softmax holds it. 16-bit rows a multiple of 8 long read 8
/// values a 16-byte access, others the widest vector dividing the row (so
/// every row starts aligned); about four vectors a thread, in a power of two
/// of threads from 64 (32 for rows of fewer than 64 vectors) to the chip's
/// limit; rows of 64 to 128 vectors one warp a row, two rows a block
/// (kRowsPerBlockByDefault). Rows that do not fit in one block's registers
/// at kAutoRowValuesPerThread a thread take strategy "cluster" (norms on
/// sm_90, unless kOnlineRowsInFlightBytes says online) or "online".
/// A kb.reduce over a non-last axis (ColumnReduce.cpp), its input viewed
/// as [outer, R, inner]: the vector as for rows, but of inner; C column
/// threads, 32 where inner is that wide, halved (down to 8, a 128-byte
/// line of f32 a row for 8 threads of 4) while the grid has fewer than two
/// blocks a multiprocessor; the reduced axis split over S = block[0]
/// slices of a block of 512 threads (fewer where R is short).
LogicalResult selectColumnReduce(ReduceOp op, ConfigFields &f,
                                 const TargetModel &model) {
  if (f.strategy || f.cluster || f.grid || f.stages || f.block.size() > 1)
    return op->emitOpError() << "column reduction config takes threads, "
                                "vector and block = [slices] only";
  ArrayRef<int64_t> shape = op.getInput().getType().getShape();
  int64_t axis = op.getReducedAxis();
  int64_t outer = 1, inner = 1, len = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  if (f.vector == 8 && !isAll16Bit(op))
    return op->emitOpError() << "config asks for vector width 8, which is for "
                                "kernels whose tensors are all 16-bit (16 "
                                "bytes an access)";
  if (f.vector && inner % f.vector != 0)
    return op->emitOpError() << "config asks for vector width " << f.vector
                             << ", which needs the " << inner
                             << " columns after the reduced axis to be a "
                                "multiple of it";
  if (!f.vector)
    f.vector = inner % 8 == 0 && isAll16Bit(op) ? 8 : widestVector(inner);
  int64_t cols = std::min<int64_t>(
      32, nextPow2(llvm::divideCeil(inner, f.vector)));
  while (cols > 8 && outer * llvm::divideCeil(inner, cols * f.vector) <
                         2 * model.smCount)
    cols /= 2;
  if (f.threads)
    cols = std::min<int64_t>(cols, f.threads);
  if (f.block.empty()) {
    int64_t threads = f.threads ? f.threads : 512;
    // At least one warp: slices past R (a short axis) reduce nothing.
    f.block = {std::max<int64_t>(
        32 / cols, std::min<int64_t>(threads / cols, nextPow2(len)))};
  }
  if (!f.threads)
    f.threads = cols * f.block[0];
  if (f.threads % f.block[0] != 0 || f.threads > model.maxThreadsPerBlock)
    return op->emitOpError()
           << "column reduction config needs threads (" << f.threads
           << ", at most " << model.maxThreadsPerBlock
           << ") a multiple of block[0] (" << f.block[0]
           << ", the slices of the reduced axis)";
  return success();
}

/// A kb.reduce of the whole tensor (WholeReduce.cpp): the vector as for
/// rows, 512 threads, and a grid of stage-1 blocks: one a 512 vectors, at
/// most four a multiprocessor (2048 threads each).
LogicalResult selectWholeReduce(ReduceOp op, ConfigFields &f,
                                const TargetModel &model) {
  if (f.strategy || f.cluster || f.stages || !f.block.empty())
    return op->emitOpError() << "whole-tensor reduction config takes "
                                "threads, vector and grid only";
  int64_t total = op.getInput().getType().getNumElements();
  if (f.vector == 8 && !isAll16Bit(op))
    return op->emitOpError() << "config asks for vector width 8, which is for "
                                "kernels whose tensors are all 16-bit (16 "
                                "bytes an access)";
  if (f.vector && total % f.vector != 0)
    return op->emitOpError() << "config asks for vector width " << f.vector
                             << ", which needs the " << total
                             << " elements to be a multiple of it";
  if (!f.vector)
    f.vector = total % 8 == 0 && isAll16Bit(op) ? 8 : widestVector(total);
  if (!f.threads)
    f.threads = 512;
  if (f.threads % 32 != 0 || f.threads > model.maxThreadsPerBlock)
    return op->emitOpError()
           << "whole-tensor reduction config needs threads a multiple of 32, "
              "at most "
           << model.maxThreadsPerBlock << ", got " << f.threads;
  if (!f.grid)
    f.grid = std::clamp<int64_t>(
        llvm::divideCeil(total / f.vector, f.threads), 1,
        4 * model.smCount);
  return success();
}

LogicalResult selectRowReduce(Operation *op, ConfigFields &f,
                              const TargetModel &model) {
  if (auto red = dyn_cast<ReduceOp>(op)) {
    if (red.getAll())
      return selectWholeReduce(red, f, model);
    if (red.isColumnReduction())
      return selectColumnReduce(red, f, model);
  }
  auto fusion = dyn_cast<FusionOp>(op);
  Operation *anchor = fusion ? getFusionAnchor(fusion) : op;
  auto type = cast<RankedTensorType>(anchor->getOperand(0).getType());
  int64_t n = type.getShape().back();
  int64_t maxThreads = model.maxThreadsPerBlock;
  int64_t rows = type.getNumElements() / n;
  bool split = f.strategy == SoftmaxStrategy::cluster;
  if (f.block.size() > 1 || (f.cluster && !split) || f.stages ||
      (f.strategy && f.strategy != SoftmaxStrategy::online && !split))
    return op->emitOpError()
           << "row reduction config takes threads, vector, block = [rows a "
              "block], grid, strategy = \"online\" and strategy = "
              "\"cluster\" with cluster = 2, 4 or 8 only";
  // grid = G: a persistent grid of G blocks of warp rows (RowNorm.cpp),
  // asked for by hand; kb-select-config never sets it.
  if (f.grid && (f.block.empty() || f.grid * f.block[0] > rows))
    return op->emitOpError()
           << "row reduction grid = " << f.grid
           << " (a persistent grid) takes block = [rows a block], one warp "
              "a row, and at most "
           << rows << " warps (grid x rows a block)";
  if (!f.block.empty()) {
    int64_t r = f.block[0];
    if (f.strategy)
      return op->emitOpError()
             << "row reduction block = [rows a block] is for the row in "
                "registers, one warp a row; strategy \""
             << nameOf(f.strategy) << "\" takes one row a block";
    if (r < 1 || rows % r != 0)
      return op->emitOpError()
             << "row reduction block = [" << r << "] needs the rows (" << rows
             << ") to be a multiple of it";
    if (f.threads && f.threads != 32 * r)
      return op->emitOpError()
             << "row reduction block = [" << r << "] holds one row a warp: "
             << "threads must be " << 32 * r << ", not " << f.threads;
  }
  if (split && !model.hasClusters)
    return op->emitOpError() << "row reduction strategy \"cluster\" needs "
                                "thread-block clusters, which "
                             << model.chip << " does not have";
  if (split && f.cluster && !llvm::is_contained({2, 4, 8}, f.cluster))
    return op->emitOpError() << "row reduction strategy \"cluster\" splits a "
                                "row over 2, 4 or 8 blocks, not "
                             << f.cluster;
  if (f.vector == 8 && !isAll16Bit(op))
    return op->emitOpError() << "config asks for vector width 8, which is for "
                                "kernels whose tensors are all 16-bit (16 "
                                "bytes an access)";
  if (f.vector && n % f.vector != 0)
    return op->emitOpError() << "config asks for vector width " << f.vector
                             << ", which needs the row length (" << n
                             << ") to be a multiple of it";
  if (!f.vector)
    f.vector = n % 8 == 0 && isAll16Bit(op) ? 8 : widestVector(n);
  // Rows wider than one block's registers hold: split over a cluster's
  // registers where C x one block's capacity holds them (sm_90), else the
  // row read in loops by the chip's most threads.
  if (!f.strategy && !f.threads && f.block.empty() &&
      valuesPerThread(n, maxThreads, f.vector) > kAutoRowValuesPerThread) {
    bool norm = isa<LayerNormOp, RmsNormOp>(anchor);
    int64_t rowBytes = n * type.getElementType().getIntOrFloatBitWidth() / 8;
    bool onlineInL2 = rows >= model.smCount &&
                      model.smCount * rowBytes <= kOnlineRowsInFlightBytes;
    f.cluster = kRowClusterByDefault && norm && model.hasClusters && !onlineInL2
                    ? rowClusterBlocks(n, f.vector, type, maxThreads)
                    : 0;
    f.strategy = f.cluster ? SoftmaxStrategy::cluster : SoftmaxStrategy::online;
  }
  if (f.strategy == SoftmaxStrategy::online) {
    if (!f.threads)
      f.threads = maxThreads;
    return success();
  }
  if (split && !f.cluster) {
    f.cluster = rowClusterBlocks(n, f.vector, type, maxThreads);
    if (!f.cluster)
      f.cluster = kMaxRowCluster; // checked below
  }
  int64_t part = n;
  if (f.strategy == SoftmaxStrategy::cluster) {
    if (n % (f.cluster * f.vector) != 0)
      return op->emitOpError()
             << "row reduction strategy \"cluster\" with cluster = "
             << f.cluster << " and vector " << f.vector
             << " needs the row length (" << n
             << ") to split into whole vectors a block";
    part = n / f.cluster;
  }
  // Rows of 64 to 128 vectors: one warp a row, two rows a block
  // (kRowsPerBlockByDefault).
  if (!f.threads && f.block.empty() && !f.strategy && kRowsPerBlockByDefault &&
      part / f.vector >= 64 && part <= 128 * f.vector && rows % 2 == 0)
    f.block = {2};
  if (!f.block.empty() && !f.threads)
    f.threads = 32 * f.block[0];
  if (!f.threads) {
    // At least two warps where the row has 64 vectors: a multiprocessor
    // holds at most 32 blocks, so blocks of one warp would leave half its
    // threads idle (a bf16 row of 1024 is 128 vectors).
    // (A cluster's block: the same for its part of the row.)
    int64_t fewest = part / f.vector >= 64 ? 64 : 32;
    int64_t vectorsEach = f.strategy == SoftmaxStrategy::cluster
                              ? kRowClusterVectorsPerThread
                              : 4;
    f.threads = std::clamp<int64_t>(
        nextPow2(llvm::divideCeil(part, vectorsEach * f.vector)), fewest,
        maxThreads);
  }
  int64_t rowThreads = f.block.empty() ? f.threads : 32;
  int64_t perThread = valuesPerThread(part, rowThreads, f.vector);
  if (perThread > kMaxRowValuesPerThread) {
    auto diag = op->emitOpError()
                << "would hold " << perThread
                << " values of each row per thread (row length " << n << ", ";
    if (!f.block.empty())
      return diag << "one warp a row, block = [" << f.block[0]
                  << "]); at most " << kMaxRowValuesPerThread
                  << " fit: leave block out (one row a block)";
    if (f.strategy == SoftmaxStrategy::cluster)
      diag << f.cluster << " blocks of ";
    diag << f.threads << " threads); at most " << kMaxRowValuesPerThread
         << " fit: use ";
    if (f.strategy != SoftmaxStrategy::cluster)
      return diag << "more threads";
    diag << "strategy \"online\"";
    if (f.threads < maxThreads)
      diag << " or more threads";
    if (f.cluster < kMaxRowCluster)
      diag << " or a larger cluster";
    return diag;
  }
  return success();
}

LogicalResult selectMatmul(Operation *op, ConfigFields &f,
                           const TargetModel &model) {
  // Threads follow from the tiles, which kb-tile chooses.
  return success();
}

struct SelectConfigPass
    : public kb::impl::KBSelectConfigBase<SelectConfigPass> {
  using Base::Base;
  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError() << "kb-select-config: unknown chip '" << chip
                                 << "' (known: sm_80, sm_90, sm_90a)";
      return signalPassFailure();
    }
    std::optional<TuningDb> db;
    if (!tuningDb.empty()) {
      std::string error;
      auto loaded = loadTuningDb(tuningDb, error);
      if (failed(loaded)) {
        getOperation().emitError() << "kb-select-config: " << error;
        return signalPassFailure();
      }
      db = std::move(*loaded);
    }
    for (Operation &op : getOperation().getBody().getOps()) {
      auto kind = getKernelKind(&op);
      if (!kind)
        continue;
      // A kb.fusion written by hand may carry its config on the op inside
      // instead of its own `attributes {config = ...}`.
      if (auto fusion = dyn_cast<FusionOp>(op);
          fusion && failed(adoptInnerConfig(fusion)))
        return signalPassFailure();
      if (db && failed(applyTuningEntry(&op, *db, model->chip)))
        return signalPassFailure();
      ConfigFields f = ConfigFields::from(getConfig(&op));
      LogicalResult ok = success();
      switch (*kind) {
      case KernelKind::Elementwise:
        ok = selectElementwise(&op, f, *model);
        break;
      case KernelKind::Softmax:
        ok = selectSoftmax(&op, f, *model);
        break;
      case KernelKind::Matmul:
        ok = selectMatmul(&op, f, *model);
        break;
      case KernelKind::Transpose:
        ok = selectTranspose(&op, f);
        break;
      case KernelKind::Pad:
        ok = selectPad(&op, f);
        break;
      case KernelKind::RowReduce:
        ok = selectRowReduce(&op, f, *model);
        break;
      case KernelKind::Attention:
        ok = selectAttentionConfig(&op, f, *model);
        break;
      }
      // A wgmma matmul's cluster of blocks sharing B's tile (cluster = 2, 4
      // or 8; kb-lower-to-gpu checks the rest).
      bool wgmmaPair = *kind == KernelKind::Matmul &&
                       isWgmmaClusterSize(f.cluster) &&
                       isWgmma(f.mma) &&
                       f.copy != CopyKind::cp_async;
      bool rowCluster = *kind == KernelKind::RowReduce &&
                        f.strategy == SoftmaxStrategy::cluster;
      if (succeeded(ok) && f.cluster > 1 && !wgmmaPair && !rowCluster &&
          !(*kind == KernelKind::Softmax &&
            (f.strategy == SoftmaxStrategy::split ||
             f.strategy == SoftmaxStrategy::split_shared ||
             f.strategy == SoftmaxStrategy::split_global))) {
        op.emitOpError() << "config asks for a cluster of " << f.cluster
                         << " blocks, which only softmax strategies \"split\", "
                            "\"split_shared\" and \"split_global\", the row "
                            "kernels' strategy \"cluster\" and a "
                            "wgmma_tf32 matmul with TMA (cluster = 2, 4 or 8) use";
        ok = failure();
      }
      if (succeeded(ok) && f.threads > model->maxThreadsPerBlock) {
        op.emitOpError() << "config asks for " << f.threads
                         << " threads per block; " << model->chip
                         << " allows at most " << model->maxThreadsPerBlock;
        ok = failure();
      }
      if (succeeded(ok) && f.threads % 32 != 0) {
        op.emitOpError() << "config asks for " << f.threads
                         << " threads per block; kb needs a multiple of 32 "
                            "(whole warps)";
        ok = failure();
      }
      if (failed(ok))
        return signalPassFailure();
      setConfig(&op, f.get(&getContext()));
    }
  }
};

} // namespace
