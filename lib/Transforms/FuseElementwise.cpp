//===- FuseElementwise.cpp - group elementwise chains into kb.fusion ------===//
//
// kb-fuse-elementwise: starting from the last op of each chain, pulls in every
// elementwise producer that has the same shape and whose result is used only
// inside the group, and a matmul, softmax or norm (kb.layer_norm,
// kb.rms_norm) that feeds only the group (the chain becomes its epilogue; a
// softmax or norm also takes its own elementwise prologue, such as a
// residual add), and wraps the group in one kb.fusion. Intermediates then live
// in registers: one read of each input, one write of the result.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBFUSEELEMENTWISE
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// Whether `op` is an elementwise kb op, or a kb.rotary (its result has
/// its input's shape; it reads its pair's other element, which a matmul
/// epilogue and the elementwise kernel hold: see rotaryAnchorRefusal), at
/// the top level of a function.
bool isFusable(Operation *op) {
  return isa<ElementwiseOpInterface, RotaryOp>(op) &&
         !op->getParentOfType<FusionOp>();
}

bool hasRotary(const llvm::SetVector<Operation *> &group) {
  return llvm::any_of(group, [](Operation *o) { return isa<RotaryOp>(o); });
}

/// Why the anchor `def` cannot take a group that holds a kb.rotary (empty
/// when it can). A matmul epilogue holds adjacent column pairs of C in one
/// thread (mma.sync's and wgmma's accumulator fragments: c0, c1 at columns
/// 2t, 2t + 1), so the pair's rotation is thread-local there; the kernels
/// that store one element a thread do not hold pairs. kb-fuse-elementwise
/// runs before the mma unit is chosen, so it refuses what could become
/// one of those: the gemv kernel (at most 16 rows or columns), the FFMA
/// kernel (precision ieee) and the wgmma kernel of an f32 row-major B
/// (its accumulators hold C^T: pairs of rows). A softmax or norm keeps its
/// row in a layout without pairs.
std::string rotaryAnchorRefusal(Operation *def) {
  auto mm = dyn_cast<MatmulOp>(def);
  if (!mm)
    return "a " + def->getName().getStringRef().drop_front(3).str() +
           " kernel holds no column pairs";
  auto shape = mm.getResult().getType().getShape();
  int64_t m = shape[shape.size() - 2], n = shape.back();
  bool batched = shape.size() == 3;
  if (!batched && gemvForm(m, n, mm.getTransposeB()))
    return "the matmul has at most 16 rows or columns (the gemv kernel, one "
           "column a thread)";
  if (mm.getPrecision() == Precision::ieee)
    return "precision ieee is the FFMA kernel, one element a store";
  if (mm.getLhs().getType().getElementType().isF32() && !mm.getTransposeB())
    return "an f32 matmul of a row-major B may be the wgmma kernel whose "
           "accumulators hold C^T (pairs of rows, not columns)";
  return "";
}

/// The group rooted at `root`: producers join when they are fusable, have
/// the root's result type (so a broadcast vector computed elsewhere stays
/// out) and feed only ops already in the group.
/// Grows `group` by elementwise producers (see collectGroup).
void growGroup(llvm::SetVector<Operation *> &group, Operation *root) {
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
        bool usedOnlyInGroup = llvm::all_of(
            def->getUsers(), [&](Operation *u) { return group.contains(u); });
        if (!usedOnlyInGroup)
          continue;
        group.insert(def);
        grew = true;
      }
    }
  }
}

/// The anchors whose row kernel takes an elementwise prologue: softmax and
/// the norms (their input is the row; a norm's weight and bias stay kernel
/// inputs).
bool takesPrologue(Operation *op) {
  return isa<SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp>(op);
}

llvm::SetVector<Operation *> collectGroup(Operation *root) {
  llvm::SetVector<Operation *> group;
  group.insert(root);
  growGroup(group, root);
  return group;
}

/// A matmul or softmax whose result only the group reads, at the group's
/// shape, becomes the group's anchor: the chain turns into its epilogue and
/// its result never goes to memory. One anchor per group. A softmax also
/// takes the elementwise chain that feeds only it (its prologue): the row is
/// computed in registers from the chain's inputs. Returns the anchor.
Operation *pullInAnchor(llvm::SetVector<Operation *> &group, Operation *root) {
  Type shape = root->getResult(0).getType();
  for (size_t i = 0; i < group.size(); ++i)
    for (Value operand : group[i]->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !isa<MatmulOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp>(def) ||
          def->getParentOfType<FusionOp>() ||
          def->getBlock() != root->getBlock() ||
          def->getResult(0).getType() != shape)
        continue;
      if (!llvm::all_of(def->getUsers(),
                        [&](Operation *u) { return group.contains(u); }))
        continue;
      // A group with a kb.rotary: the anchor must hold column pairs; else
      // the group stays an elementwise kernel (whole pairs a vector) and
      // the anchor its own kernel, said in a remark at the rotary.
      if (hasRotary(group)) {
        if (std::string why = rotaryAnchorRefusal(def); !why.empty()) {
          Operation *rot = *llvm::find_if(
              group, [](Operation *o) { return isa<RotaryOp>(o); });
          rot->emitRemark() << "kb.rotary stays out of the epilogue of '"
                            << def->getName() << "': " << why
                            << "; it runs in an elementwise kernel";
          continue;
        }
      }
      size_t epilogue = group.size();
      group.insert(def);
      if (takesPrologue(def)) {
        growGroup(group, root);
        // The prologue is what joined after the softmax. An epilogue op that
        // reads a prologue value (relu feeding both the softmax and a tanh
        // after it) would need that value at the epilogue's element, which
        // the lowering does not keep: the softmax then takes no prologue,
        // and the shared value stays a kernel input (the differential run's
        // kb-opt crash,
        // test/Target/repro-softmax-epilogue-uses-prologue-value.mlir).
        llvm::SmallPtrSet<Operation *, 8> prologue(group.begin() + epilogue + 1,
                                                   group.end());
        bool epilogueReadsPrologue = false;
        for (size_t j = 0; j < epilogue; ++j)
          for (Value v : group[j]->getOperands())
            if (Operation *d = v.getDefiningOp(); d && prologue.contains(d))
              epilogueReadsPrologue = true;
        // A norm's weight or bias computed by the prologue (a rank-1 row,
        // whose weight has the row's shape) would be a value of the kernel,
        // not a buffer: keep the prologue out then too.
        for (Value p : def->getOperands().drop_front())
          if (Operation *d = p.getDefiningOp(); d && prologue.contains(d))
            epilogueReadsPrologue = true;
        if (epilogueReadsPrologue)
          while (group.size() > epilogue + 1)
            group.pop_back();
      }
      return def;
    }
  return nullptr;
}

LogicalResult fuseGroup(Operation *root, llvm::SetVector<Operation *> &group) {
  // Program order inside the fusion, except that the anchor (the group's
  // matmul, softmax or norm) comes right after the ops that compute its
  // operands (its prologue): the lowering takes every op after the anchor
  // as its epilogue, so an op that does not feed the anchor must follow it
  // even where the program wrote it first. (In SwiGLU, silu(x W1) * (x W3),
  // the silu of the first matmul's result came before the second matmul,
  // the anchor: the epilogue had no value for it and kb-opt crashed in
  // emitChainScalar; exp(y) written before softmax(x) in exp(y) *
  // softmax(x) was refused as a prologue value. Found by the torch.compile
  // backend on a Llama block; test/Transforms/fuse-epilogue-order.mlir.)
  SmallVector<Operation *> ops(group.begin(), group.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  auto anchorIt = llvm::find_if(ops, [](Operation *op) {
    return isa<MatmulOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp>(op);
  });
  if (anchorIt != ops.end()) {
    Operation *anchor = *anchorIt;
    llvm::SmallPtrSet<Operation *, 8> feeds;
    SmallVector<Operation *> work{anchor};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      for (Value v : op->getOperands())
        if (Operation *d = v.getDefiningOp();
            d && group.contains(d) && feeds.insert(d).second)
          work.push_back(d);
    }
    SmallVector<Operation *> ordered;
    for (Operation *op : ops)
      if (feeds.contains(op))
        ordered.push_back(op);
    ordered.push_back(anchor);
    for (Operation *op : ops)
      if (op != anchor && !feeds.contains(op))
        ordered.push_back(op);
    ops = std::move(ordered);
  }
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
  // The kernel's config is the fusion's: a config the program gave the
  // anchor (the matmul or softmax), or in a chain without one any op's,
  // moves onto it, where kb-select-config and the lowering read it (it used
  // to stay on the op inside, ignored). A config the kernel would not use
  // is refused (it was dropped with a warning until 2026-12-06).
  LogicalResult adopted = adoptInnerConfig(fusion);
  root->getResult(0).replaceAllUsesWith(fusion.getResult(0));
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return adopted;
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
      size_t elementwise = group.size();
      Operation *anchor = pullInAnchor(group, root);
      // A chain whose only user is a softmax or a norm, as its row input,
      // becomes that op's prologue (which then ends the group).
      // (Not a kb.split_sum's chain: a softmax reads no partials.)
      if (!anchor && root->hasOneUse() && !hasRotary(group) &&
          llvm::none_of(group,
                        [](Operation *o) { return isa<SplitSumOp>(o); })) {
        Operation *sm = *root->getUsers().begin();
        if (takesPrologue(sm) && !done.contains(sm) &&
            sm->getBlock() == root->getBlock() &&
            sm->getOperand(0) == root->getResult(0) &&
            llvm::count(sm->getOperands(), root->getResult(0)) == 1 &&
            sm->getResult(0).getType() == root->getResult(0).getType()) {
          group.insert(sm);
          anchor = sm;
          root = sm;
        }
      }
      for (Operation *op : group)
        done.insert(op);
      if ((group.size() > 1 || (anchor && group.size() > elementwise)) &&
          failed(fuseGroup(root, group)))
        return signalPassFailure();
    }
  }
};

} // namespace
