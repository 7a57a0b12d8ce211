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

namespace {

int64_t widestVector(int64_t lastDim) {
  return lastDim % 4 == 0 ? 4 : lastDim % 2 == 0 ? 2 : 1;
}

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

/// Values of a `len`-long row part each of `threads` threads holds.
int64_t valuesPerThread(int64_t len, int64_t threads, int64_t vector) {
  return llvm::divideCeil(len, threads * vector) * vector;
}

LogicalResult selectElementwise(Operation *op, ConfigFields &f,
                                const TargetModel &model) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t last = type.getShape().back();
  if (!f.threads)
    f.threads = 256;
  if (!f.vector)
    f.vector = widestVector(last);
  else if (last % f.vector != 0)
    return op->emitOpError() << "config asks for vector width " << f.vector
                             << ", which needs the last dimension (" << last
                             << ") to be a multiple of it";
  return success();
}

LogicalResult selectSoftmax(Operation *op, ConfigFields &f,
                            const TargetModel &model) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t n = type.getShape().back();
  if (!f.vector)
    f.vector = widestVector(n);
  else if (n % f.vector != 0)
    return op->emitOpError() << "config asks for vector width " << f.vector
                             << ", which needs the row length (" << n
                             << ") to be a multiple of it";
  int64_t maxThreads = model.maxThreadsPerBlock;
  if (f.strategy.empty()) {
    // One read whenever the row fits on chip: in one block's registers, else
    // split over the blocks of a cluster; two reads (online) beyond.
    int64_t perThread = valuesPerThread(n, maxThreads, f.vector);
    if (perThread <= kAutoRowValuesPerThread)
      f.strategy = "registers";
    else if (perThread <= kAutoRowValuesPerThread * kMaxCluster)
      f.strategy = "split";
    else
      f.strategy = "online";
  }
  if (f.cluster > 1 && f.strategy != "split")
    return op->emitOpError() << "config asks for a cluster of " << f.cluster
                             << " blocks, which only softmax strategy "
                                "\"split\" uses";
  if (!f.threads) {
    if (f.strategy == "registers")
      // About four vectors per thread: enough loads in flight per thread,
      // and enough threads to cover the row.
      f.threads = std::clamp<int64_t>(
          nextPow2(llvm::divideCeil(n, 4 * f.vector)), 32, maxThreads);
    else
      f.threads = maxThreads;
  }
  if (f.strategy == "split" && !f.cluster) {
    // The fewest blocks (a power of two, so that clusters tile the GPCs'
    // multiprocessors) whose parts fit in registers.
    f.cluster = 2;
    while (f.cluster < kMaxCluster &&
           valuesPerThread(splitPartLength(n, f.cluster, f.vector), f.threads,
                           f.vector) > kAutoRowValuesPerThread)
      f.cluster *= 2;
  }
  if (f.strategy == "registers" || f.strategy == "split") {
    int64_t len = f.strategy == "split"
                      ? splitPartLength(n, f.cluster, f.vector)
                      : n;
    int64_t perThread = valuesPerThread(len, f.threads, f.vector);
    if (perThread > kMaxRowValuesPerThread) {
      auto diag = op->emitOpError() << "softmax strategy '" << f.strategy
                                    << "' would hold " << perThread
                                    << " values of each row per thread (row length "
                                    << n << ", ";
      if (f.strategy == "split")
        diag << f.cluster << " blocks of ";
      diag << f.threads << " threads); at most " << kMaxRowValuesPerThread
           << " fit: use strategy \"online\" or more threads";
      if (f.strategy == "split")
        diag << " or blocks";
      return diag;
    }
  }
  if (f.block.empty())
    f.block = {1};
  return success();
}

LogicalResult selectMatmul(Operation *op, ConfigFields &f,
                           const TargetModel &model) {
  // Threads follow from the tiles, which kb-tile chooses.
  return success();
}

struct SelectConfigPass : public kb::impl::KBSelectConfigBase<SelectConfigPass> {
  using Base::Base;
  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError() << "kb-select-config: unknown chip '" << chip
                                 << "' (known: sm_80, sm_90, sm_90a)";
      return signalPassFailure();
    }
    for (Operation &op : getOperation().getBody().getOps()) {
      auto kind = getKernelKind(&op);
      if (!kind)
        continue;
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
      }
      if (succeeded(ok) && f.cluster > 1 && *kind != KernelKind::Softmax) {
        op.emitOpError() << "config asks for a cluster of " << f.cluster
                         << " blocks, which only softmax strategy \"split\" uses";
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
