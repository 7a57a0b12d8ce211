//===- SelectMma.cpp - pick the arithmetic unit of each matmul ------------===//
//
// kb-select-mma: the lab notes' second lesson made explicit. In strict fp32
// (precision ieee) the tensor cores sit idle and the inner tile is FFMA; tf32
// puts it on mma.sync.m16n8k8; tf32x3 runs three tf32 products (big x big,
// big x small, small x big) for near-fp32 accuracy on tensor cores.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBSELECTMMA
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// wgmma copies A in 16-byte chunks along K.
bool wgmmaFits(MatmulOp mm) {
  return mm.getLhs().getType().getShape().back() % 4 == 0;
}

StringRef unitFor(MatmulOp mm, const TargetModel &model) {
  switch (mm.getPrecision()) {
  case Precision::ieee:
    return "ffma";
  case Precision::tf32:
    return model.hasWgmma && wgmmaFits(mm) ? "wgmma_tf32" : "mma_sync_tf32";
  case Precision::tf32x3:
    return "mma_sync_tf32x3";
  }
  llvm_unreachable("unknown precision");
}

struct SelectMmaPass : public kb::impl::KBSelectMmaBase<SelectMmaPass> {
  using Base::Base;
  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError() << "kb-select-mma: unknown chip '" << chip
                                 << "' (known: sm_80, sm_90, sm_90a)";
      return signalPassFailure();
    }
    for (Operation &op : getOperation().getBody().getOps()) {
      MatmulOp mm = getKernelMatmul(&op);
      if (!mm)
        continue;
      ConfigFields f = ConfigFields::from(getConfig(&op));
      if (f.mma.empty()) {
        f.mma = unitFor(mm, *model).str();
      } else if (mm.getPrecision() == Precision::ieee && f.mma != "ffma") {
        op.emitOpError() << "config asks for mma \"" << f.mma
                         << "\", but precision(ieee) needs fp32 arithmetic "
                            "(\"ffma\"): tensor-core tf32 would lose precision";
        return signalPassFailure();
      } else if (f.mma == "wgmma_tf32") {
        if (!model->hasWgmma) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which needs "
                              "chip sm_90a; the target is "
                           << model->chip;
          return signalPassFailure();
        }
        if (mm.getPrecision() != Precision::tf32) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which "
                              "computes precision(tf32) only";
          return signalPassFailure();
        }
        if (!wgmmaFits(mm)) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which "
                              "copies A in 16-byte chunks: K must be a "
                              "multiple of 4";
          return signalPassFailure();
        }
      }
      setConfig(&op, f.get(&getContext()));
    }
  }
};

} // namespace
