//===- FuseElementwise.cpp - group elementwise chains into kb.fusion ------===//
//
// kb-fuse-elementwise: starting from the last op of each chain, pulls in every
// elementwise producer that has the same shape and whose result is used only
// inside the group, and a matmul that feeds only the group (the chain becomes
// its epilogue), and wraps the group in one kb.fusion. Intermediates then live
// in registers: one read of each input, one write of the result.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBFUSEELEMENTWISE
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// Whether `op` is an elementwise kb op at the top level of a function.
bool isFusable(Operation *op) {
  return isa<ElementwiseOpInterface>(op) && !op->getParentOfType<FusionOp>();
}

/// The group rooted at `root`: producers join when they are fusable, have
/// the root's result type (so a broadcast vector computed elsewhere stays
/// out) and feed only ops already in the group.
llvm::SetVector<Operation *> collectGroup(Operation *root) {
  llvm::SetVector<Operation *> group;
  group.insert(root);
  Type shape = root->getResult(0).getType();
  bool grew = true;
  while (grew) {
    grew = false;
    for (size_t i = 0; i < group.size(); ++i) {
      for (Value operand : group[i]->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || group.contains(def) || !isFusable(def) ||
            def->getBlock() != root->getBlock() ||
            def->getResult(0).getType() != shape)
          continue;
        bool usedOnlyInGroup = llvm::all_of(def->getUsers(), [&](Operation *u) {
          return group.contains(u);
        });
        if (!usedOnlyInGroup)
          continue;
        group.insert(def);
        grew = true;
      }
    }
  }
  return group;
}

/// A matmul whose result only the group reads, at the group's shape, becomes
/// the group's anchor: the chain turns into the matmul's epilogue and the
/// product never goes to memory. One matmul per group.
void pullInMatmul(llvm::SetVector<Operation *> &group) {
  Type shape = group[0]->getResult(0).getType();
  for (Operation *op : group)
    for (Value operand : op->getOperands()) {
      auto mm = operand.getDefiningOp<MatmulOp>();
      if (!mm || mm->getParentOfType<FusionOp>() ||
          mm->getBlock() != group[0]->getBlock() || mm.getType() != shape)
        continue;
      if (!llvm::all_of(mm->getUsers(), [&](Operation *u) { return group.contains(u); }))
        continue;
      group.insert(mm);
      return;
    }
}

void fuseGroup(Operation *root, llvm::SetVector<Operation *> &group) {
  // Keep program order inside the fusion.
  SmallVector<Operation *> ops(group.begin(), group.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value v : op->getOperands())
      if (!group.contains(v.getDefiningOp()))
        inputs.insert(v);

  OpBuilder b(root);
  auto fusion = FusionOp::create(b, root->getLoc(),
                                 TypeRange{root->getResult(0).getType()},
                                 inputs.getArrayRef());
  Block &body = fusion.getBody().front();
  IRMapping map;
  for (auto [in, arg] : llvm::zip(inputs, body.getArguments()))
    map.map(in, arg);
  OpBuilder inner = OpBuilder::atBlockEnd(&body);
  for (Operation *op : ops)
    inner.clone(*op, map);
  YieldOp::create(inner, root->getLoc(),
                  ValueRange{map.lookup(root->getResult(0))});
  root->getResult(0).replaceAllUsesWith(fusion.getResult(0));
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

struct FuseElementwisePass
    : public kb::impl::KBFuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    // Roots are fusable ops with a use that is not itself fusable into them;
    // walking backwards visits every chain's last op first.
    SmallVector<Operation *> candidates;
    for (Block &block : getOperation().getBody())
      for (Operation &op : llvm::reverse(block))
        if (isFusable(&op))
          candidates.push_back(&op);
    llvm::DenseSet<Operation *> done;
    for (Operation *root : candidates) {
      if (done.contains(root))
        continue;
      auto group = collectGroup(root);
      for (Operation *op : group)
        done.insert(op);
      size_t elementwise = group.size();
      pullInMatmul(group);
      if (group.size() > 1 || group.size() > elementwise)
        fuseGroup(root, group);
    }
  }
};

} // namespace
