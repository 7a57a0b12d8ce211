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

StringRef unitFor(Precision p) {
  switch (p) {
  case Precision::ieee:
    return "ffma";
  case Precision::tf32:
    return "mma_sync_tf32";
  case Precision::tf32x3:
    return "mma_sync_tf32x3";
  }
  llvm_unreachable("unknown precision");
}

struct SelectMmaPass : public kb::impl::KBSelectMmaBase<SelectMmaPass> {
  void runOnOperation() override {
    for (Operation &op : getOperation().getBody().getOps()) {
      MatmulOp mm = getKernelMatmul(&op);
      if (!mm)
        continue;
      ConfigFields f = ConfigFields::from(getConfig(&op));
      StringRef wanted = unitFor(mm.getPrecision());
      if (f.mma.empty()) {
        f.mma = wanted.str();
      } else if (mm.getPrecision() == Precision::ieee && f.mma != "ffma") {
        op.emitOpError() << "config asks for mma \"" << f.mma
                         << "\", but precision(ieee) needs fp32 arithmetic "
                            "(\"ffma\"): tensor-core tf32 would lose precision";
        return signalPassFailure();
      }
      setConfig(&op, f.get(&getContext()));
    }
  }
};

} // namespace
