//===- SplitK.cpp - split-K as partial products and an ordered sum --------===//
//
// kb-split-k: a matmul whose #kb.config has `split = S` (kb-tile decides it
// when the output tiles leave most multiprocessors idle) becomes
//   %p = kb.matmul %a, %b ... {split_chunk = C} -> tensor<S x M x N>
//   %c = kb.split_sum %p -> tensor<M x N>
// with the matmul's fused epilogue (a kb.fusion anchored on it) moved after
// the kb.split_sum, into one elementwise kernel. The sum adds the partials
// in order s = 0..S-1: the same bits run to run (no atomics). The partials
// are f32 for a 16-bit matmul too; the sum rounds once, at its store.
// A config with reduce = "cluster" is left as it is: its wgmma kernel sums
// the two chunks in a cluster of two blocks, in one kernel.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBSPLITK
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// The sum kernel's blocks kb aims for: about two an SM on a 132-SM Hopper
/// part. Each thread of the sum issues S loads per vector, all in flight at
/// once, so the sum is bound by the SMs that issue them, not by the bytes:
/// matvec 1x4096x4096 with 64 partials ran its sum on kb-select-config's
/// defaults (256 threads, vector 4) as 4 blocks, 7.2 us against the
/// partials' 20.5 us (ncu, 2026-12-01 run 10).
constexpr int64_t kSumBlocks = 256;

/// The elementwise kernel's config for a result of `type`: kb-select-config's
/// defaults (256 threads, the widest vector), halved first in threads (down
/// to 64), then in vector width, then to 32 threads, while the grid has
/// fewer than kSumBlocks blocks; and the elements per block kb-tile writes
/// for them.
ConfigAttr sumConfig(MLIRContext *ctx, RankedTensorType type,
                     int64_t minVector = 1) {
  ConfigFields f;
  fillElementwiseDefaults(f, type.getShape().back());
  int64_t elements = type.getNumElements();
  auto blocks = [&] { return llvm::divideCeil(elements, f.threads * f.vector); };
  while (blocks() < kSumBlocks && f.threads > 64)
    f.threads /= 2;
  while (blocks() < kSumBlocks && f.vector > minVector)
    f.vector /= 2;
  while (blocks() < kSumBlocks && f.threads > 32)
    f.threads /= 2;
  f.block = {f.threads * f.vector};
  return f.get(ctx);
}

LogicalResult splitOne(Operation *op, MatmulOp mm, ConfigAttr cfg) {
  int64_t splits = cfg.getSplit();
  auto aType = mm.getLhs().getType();
  if (aType.getRank() != 2)
    return op->emitOpError() << "#kb.config split = " << splits
                             << ": a batched matmul is not split";
  if (mm.getSplitChunk())
    return success(); // already split
  if (cfg.getBlock().size() != 3)
    return op->emitOpError() << "#kb.config split = " << splits
                             << " needs the block tile: run kb-tile first";
  int64_t k = aType.getShape().back(), bk = cfg.getBlock()[2];
  int64_t kTiles = llvm::divideCeil(k, bk);
  if (!splitLeavesNoChunkEmpty(kTiles, splits))
    return op->emitOpError()
           << "#kb.config split = " << splits << " leaves a chunk of the "
           << kTiles << " k tiles (K = " << k << ", BK = " << bk
           << ") empty";
  // Chunks of ceil(k tiles / S) tiles, the last one shorter when S does not
  // divide the k tiles (the kernels guard the tiles past K).
  int64_t chunk = splitChunkTiles(kTiles, splits) * bk;
  // The partials in f32 whatever C's type (a 16-bit matmul accumulates in
  // f32): kb.split_sum rounds once, at its store.
  auto cType = cast<RankedTensorType>(mm.getResult().getType());
  auto pType =
      RankedTensorType::get({splits, cType.getDimSize(0), cType.getDimSize(1)},
                            Float32Type::get(op->getContext()));

  auto fusion = dyn_cast<FusionOp>(op);
  auto outer = [&](Value v) -> Value {
    if (auto ba = dyn_cast<BlockArgument>(v); ba && fusion)
      return fusion.getInputs()[ba.getArgNumber()];
    return v;
  };
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto partial = MatmulOp::create(b, mm.getLoc(), pType, outer(mm.getLhs()),
                                  outer(mm.getRhs()), mm.getPrecisionAttr(),
                                  mm.getTransposeBAttr(), mm.getPaddedBAttr(),
                                  b.getI64IntegerAttr(chunk), cfg);
  MLIRContext *ctx = op->getContext();
  if (!fusion) {
    auto sum = SplitSumOp::create(b, loc, cType, partial.getResult(),
                                  sumConfig(ctx, cType));
    mm.getResult().replaceAllUsesWith(sum.getResult());
    mm.erase();
    return success();
  }
  // The epilogue after the sum: the fusion's inputs that its other ops read.
  Block &body = fusion.getBody().front();
  SmallVector<Value> inputs{partial.getResult()};
  SmallVector<BlockArgument> kept;
  for (BlockArgument arg : body.getArguments())
    if (llvm::any_of(arg.getUsers(), [&](Operation *u) { return u != mm; })) {
      kept.push_back(arg);
      inputs.push_back(fusion.getInputs()[arg.getArgNumber()]);
    }
  auto sumFusion =
      FusionOp::create(b, loc, fusion.getResultTypes(), ValueRange(inputs));
  Block &nb = sumFusion.getBody().front();
  OpBuilder inner = OpBuilder::atBlockEnd(&nb);
  IRMapping map;
  for (auto [i, arg] : llvm::enumerate(kept))
    map.map(arg, nb.getArgument(i + 1));
  auto sum =
      SplitSumOp::create(inner, loc, cType, nb.getArgument(0), ConfigAttr());
  map.map(mm.getResult(), sum.getResult());
  for (Operation &o : body.without_terminator())
    if (&o != mm.getOperation())
      inner.clone(o, map);
  inner.clone(*body.getTerminator(), map);
  // A kb.rotary in the epilogue needs whole pairs in a vector.
  setConfig(sumFusion, sumConfig(ctx, cType, holdsRotary(fusion) ? 2 : 1));
  fusion->replaceAllUsesWith(sumFusion->getResults());
  fusion.erase();
  return success();
}

struct SplitKPass : public kb::impl::KBSplitKBase<SplitKPass> {
  void runOnOperation() override {
    SmallVector<Operation *> todo;
    for (Operation &op : getOperation().getBody().getOps()) {
      MatmulOp mm = getKernelMatmul(&op);
      ConfigAttr cfg = getConfig(&op);
      // reduce = "cluster": the matmul kernel sums its two chunks itself
      // (MatmulWgmma.cpp); the op stays whole.
      if (mm && cfg && cfg.getSplit() > 1 &&
          cfg.getReduce() != ReduceKind::cluster)
        todo.push_back(&op);
    }
    for (Operation *op : todo)
      if (failed(splitOne(op, getKernelMatmul(op), getConfig(op))))
        return signalPassFailure();
  }
};

} // namespace
