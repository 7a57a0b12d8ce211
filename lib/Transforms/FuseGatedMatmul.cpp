//===- FuseGatedMatmul.cpp - gate(A B1^T) * (A B2^T) into one op ---------===//
//
// kb-fuse-gated-matmul: SwiGLU's (Llama's MLP) and GeGLU's two up
// projections, `mul(silu(matmul(A, B1)), matmul(A, B2))`, read the same A.
// The pass replaces them with one kb.gated_matmul, whose kernel computes
// both products of one output tile from one A tile in shared memory, so
// neither MxN product goes to memory (docs/design.md "Gated matmul").
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBFUSEGATEDMATMUL
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// A plain B^T matmul that a gated matmul can take: unbatched, unsplit,
/// no padded B and no config of its own (a config would name one kernel's
/// tiles, which the fused kernel does not have).
bool isPlainLinear(MatmulOp mm) {
  return mm && mm.getTransposeB() && !mm.getPaddedB() &&
         !mm.getSplitChunk() && !mm.getConfig() &&
         mm.getLhs().getType().getRank() == 2;
}

/// The gate of `op` (a kb.silu or kb.gelu), if it is one.
std::optional<Gate> gateOf(Operation *op) {
  if (isa<SiluOp>(op))
    return Gate::silu;
  if (auto g = dyn_cast<GeluOp>(op))
    return g.getApprox() == GeluApprox::tanh ? Gate::gelu_tanh
                                             : Gate::gelu_erf;
  return std::nullopt;
}

/// `mul`'s match: its operand `gated` is gate(mmG), the other mmU, with
/// mmG and mmU two linears of one A whose results only these ops read.
/// Returns the rewrite's op, or null.
GatedMatmulOp tryFuse(MulOp mul) {
  if (mul.getConfig())
    return nullptr;
  for (int gatedSide : {0, 1}) {
    Operation *gateOp = mul->getOperand(gatedSide).getDefiningOp();
    if (!gateOp || !gateOf(gateOp) || !gateOp->hasOneUse() ||
        gateOp->getAttr("config"))
      continue;
    auto mmG = gateOp->getOperand(0).getDefiningOp<MatmulOp>();
    auto mmU = mul->getOperand(1 - gatedSide).getDefiningOp<MatmulOp>();
    if (!isPlainLinear(mmG) || !isPlainLinear(mmU) || mmG == mmU ||
        mmG.getLhs() != mmU.getLhs() ||
        mmG.getRhs().getType() != mmU.getRhs().getType() ||
        mmG.getPrecision() != mmU.getPrecision() ||
        mmG.getResult().getType() != mmU.getResult().getType() ||
        mmG.getResult().getType() != mul.getResult().getType() ||
        !mmG->hasOneUse() || !mmU->hasOneUse() ||
        mmG->getBlock() != mul->getBlock() ||
        mmU->getBlock() != mul->getBlock())
      continue;
    OpBuilder b(mul);
    auto fused = GatedMatmulOp::create(
        b, mul.getLoc(), mul.getResult().getType(), mmG.getLhs(),
        mmG.getRhs(), mmU.getRhs(), *gateOf(gateOp), mmG.getPrecision(),
        /*transpose_b=*/true);
    mul.getResult().replaceAllUsesWith(fused.getResult());
    mul->erase();
    gateOp->erase();
    mmG->erase();
    mmU->erase();
    return fused;
  }
  return nullptr;
}

struct FuseGatedMatmulPass
    : public kb::impl::KBFuseGatedMatmulBase<FuseGatedMatmulPass> {
  void runOnOperation() override {
    SmallVector<MulOp> muls;
    getOperation().walk([&](MulOp mul) {
      if (!mul->getParentOfType<FusionOp>())
        muls.push_back(mul);
    });
    for (MulOp mul : muls)
      tryFuse(mul);
  }
};

} // namespace
