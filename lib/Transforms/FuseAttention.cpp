//===- FuseAttention.cpp - fold written-out attention into kb.attention ---===//
//
// kb-fuse-attention: at each kb.matmul whose left operand is a kb.softmax (or
// a kb.convert of one), walks back through the softmax's input: an optional
// kb.add of a mask and an optional kb.causal_mask (either order), optional
// kb.scale ops, and a batched kb.matmul of q by k^T. When every link has one
// use and the types and precisions agree, the chain becomes one
// kb.attention placed at the last matmul. A remark at that matmul says what
// was fused, or which link kept the chain apart.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBFUSEATTENTION
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// What a matched chain becomes: the operands and attributes of the
/// kb.attention, and the ops it replaces (users before producers).
struct AttentionChain {
  Value q, k, v, mask;
  double scale = 1.0;
  bool causal = false;
  Precision precision = Precision::native;
  /// pv, [convert], softmax, the mask and scale links, qk: erased in order.
  SmallVector<Operation *> erase;
  /// A kb.transpose of k that fed qk (erased too if nothing else reads it).
  TransposeOp kTranspose;
  /// For the remark: the links from q k^T to the softmax, in program order.
  SmallVector<std::string> steps;
};

/// Why the chain at `at` is not fused (the remark's text and the op it is
/// about); `Failure` carries no result.
struct Refusal {
  Operation *at;
  std::string why;
};

/// A link of the chain must be read by the next link only.
std::optional<Refusal> singleUse(Operation *op, StringRef what) {
  if (op->getResult(0).hasOneUse())
    return std::nullopt;
  return Refusal{op,
                 ("not fused into kb.attention: the " + what +
                  " has another use (kb.attention never writes it to memory)")
                     .str()};
}

/// Walks from the softmax's input back to q k^T, filling `c`.
std::optional<Refusal> matchScores(SoftmaxOp softmax, AttentionChain &c) {
  Value cur = softmax.getInput();
  bool sawScale = false, sawAdd = false;
  SmallVector<std::string> stepsRev;
  while (true) {
    Operation *def = cur.getDefiningOp();
    if (!def)
      return Refusal{softmax, "not fused into kb.attention: the softmax reads "
                              "a function argument, not q k^T"};
    if (isa<AddOp, CausalMaskOp>(def) && sawScale)
      return Refusal{def, "not fused into kb.attention: the mask comes before "
                          "the scale (kb.attention scales q k^T, then adds "
                          "the mask)"};
    if (auto add = dyn_cast<AddOp>(def)) {
      if (sawAdd)
        return Refusal{def, "not fused into kb.attention: a second kb.add "
                            "(kb.attention adds one mask)"};
      if (auto r = singleUse(def, "masked score tensor"))
        return r;
      // The scores side is the one that reaches a matmul through scale and
      // causal_mask links; the other side is the mask.
      auto reachesMatmul = [](Value x) {
        while (Operation *d = x.getDefiningOp()) {
          if (isa<MatmulOp>(d))
            return true;
          if (!isa<ScaleOp, CausalMaskOp>(d))
            return false;
          x = d->getOperand(0);
        }
        return false;
      };
      bool lhs = reachesMatmul(add.getLhs());
      c.mask = lhs ? add.getRhs() : add.getLhs();
      cur = lhs ? add.getLhs() : add.getRhs();
      sawAdd = true;
      c.erase.push_back(def);
      stepsRev.push_back("add mask");
      continue;
    }
    if (auto cm = dyn_cast<CausalMaskOp>(def)) {
      if (c.causal)
        return Refusal{def, "not fused into kb.attention: a second "
                            "kb.causal_mask"};
      if (auto r = singleUse(def, "causally masked score tensor"))
        return r;
      c.causal = true;
      c.erase.push_back(def);
      stepsRev.push_back("causal_mask");
      cur = cm.getInput();
      continue;
    }
    if (auto scale = dyn_cast<ScaleOp>(def)) {
      if (auto r = singleUse(def, "scaled score tensor"))
        return r;
      c.scale *= scale.getFactor().convertToDouble();
      sawScale = true;
      c.erase.push_back(def);
      std::string f;
      llvm::raw_string_ostream(f)
          << "scale " << scale.getFactor().convertToDouble();
      stepsRev.push_back(f);
      cur = scale.getInput();
      continue;
    }
    auto qk = dyn_cast<MatmulOp>(def);
    if (!qk)
      return Refusal{def, ("not fused into kb.attention: the softmax's input "
                           "comes from " +
                           def->getName().getStringRef() +
                           ", not from q k^T (a kb.matmul)")
                              .str()};
    if (auto r = singleUse(def, "q k^T matmul's result"))
      return r;
    if (qk.getLhs().getType().getRank() != 3)
      return Refusal{def, "not fused into kb.attention: q k^T is a rank-2 "
                          "matmul, and kb.attention takes a batch axis "
                          "(rank 3 or 4; kb has no reshape to add one)"};
    c.q = qk.getLhs();
    if (qk.getTransposeB()) {
      c.k = qk.getRhs();
    } else if (auto t = qk.getRhs().getDefiningOp<TransposeOp>();
               t && !t.getPad()) {
      c.k = t.getInput();
      c.kTranspose = t;
    } else {
      return Refusal{def, "not fused into kb.attention: k is given as "
                          "[..., D, Sk] (no transpose_b, and not a "
                          "kb.transpose of a [..., Sk, D] tensor)"};
    }
    if (qk.getPaddedB() || qk.getSplitChunk() || qk.getConfigAttr())
      return Refusal{def, "not fused into kb.attention: q k^T carries "
                          "padded_b, split_chunk or a config (a decision "
                          "kb.attention cannot keep)"};
    c.precision = qk.getPrecision();
    c.erase.push_back(def);
    break;
  }
  c.steps.assign(stepsRev.rbegin(), stepsRev.rend());
  return std::nullopt;
}

/// The whole chain ending at `pv`, or why it is not one.
std::optional<Refusal> matchChain(MatmulOp pv, SoftmaxOp softmax,
                                  ConvertOp convert, AttentionChain &c) {
  if (pv.getTransposeB() || pv.getPaddedB() || pv.getSplitChunk() ||
      pv.getConfigAttr())
    return Refusal{pv, "not fused into kb.attention: the matmul by v has "
                       "transpose_b, padded_b, split_chunk or a config (v is "
                       "read as [..., Sk, Dv])"};
  c.erase.push_back(pv);
  if (convert) {
    if (auto r = singleUse(convert, "converted probability tensor"))
      return r;
    c.erase.push_back(convert);
  }
  if (auto r = singleUse(softmax, "softmax's result"))
    return r;
  c.erase.push_back(softmax);
  if (auto r = matchScores(softmax, c))
    return r;
  c.v = pv.getRhs();
  Type elem = cast<ShapedType>(c.q.getType()).getElementType();
  if (pv.getResult().getType().getElementType() != elem ||
      cast<ShapedType>(c.v.getType()).getElementType() != elem)
    return Refusal{pv, "not fused into kb.attention: q, k, v and the result "
                       "are not of one element type"};
  if (c.mask && cast<ShapedType>(c.mask.getType()).getElementType() != elem)
    return Refusal{pv, "not fused into kb.attention: the mask's element "
                       "type is not the operands' (the scores are f32 where "
                       "q and k are 16-bit; add the mask in their type)"};
  if (pv.getPrecision() != c.precision)
    return Refusal{pv, ("not fused into kb.attention: the two matmuls have "
                        "precisions " +
                        stringifyEnum(c.precision) + " and " +
                        stringifyEnum(pv.getPrecision()))
                           .str()};
  // The fused kernel multiplies on tf32 tensor cores (Attention.cpp): an
  // ieee (or tf32x3) chain stays unfused, where its three kernels run, rather
  // than become a kb.attention that kb-lower-to-gpu must refuse.
  if (elem.isF32() && c.precision != Precision::tf32)
    return Refusal{pv, ("not fused into kb.attention: precision " +
                        stringifyEnum(c.precision) +
                        " (the fused kernel is built for tf32 only; the "
                        "chain runs unfused)")
                           .str()};
  if (!std::isfinite(static_cast<float>(c.scale)))
    return Refusal{pv, "not fused into kb.attention: the scales multiply to "
                       "a factor that is not a finite f32"};
  return std::nullopt;
}

/// At a kb.matmul whose left operand is a softmax's result (through at most
/// one kb.convert), the chain back to q k^T becomes one kb.attention.
struct FuseAttentionPattern : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp pv,
                                PatternRewriter &rewriter) const override {
    if (pv->getParentOfType<FusionOp>())
      return failure();
    auto softmaxOf = [](Value x, ConvertOp &convert) -> SoftmaxOp {
      convert = x.getDefiningOp<ConvertOp>();
      return (convert ? convert.getInput() : x).getDefiningOp<SoftmaxOp>();
    };
    ConvertOp convert, rhsConvert;
    SoftmaxOp softmax = softmaxOf(pv.getLhs(), convert);
    if (!softmax) {
      // v @ p, not p @ v: the softmax is over the wrong operand.
      if (softmaxOf(pv.getRhs(), rhsConvert))
        pv.emitRemark() << "not fused into kb.attention: the softmax's "
                           "result is the matmul's right operand "
                           "(attention is softmax(...) @ v)";
      return failure();
    }
    AttentionChain c;
    if (std::optional<Refusal> r = matchChain(pv, softmax, convert, c)) {
      InFlightDiagnostic d = pv.emitRemark() << r->why;
      if (r->at != pv.getOperation())
        d.attachNote(r->at->getLoc()) << "here";
      return failure();
    }
    MLIRContext *ctx = rewriter.getContext();
    auto attn = AttentionOp::create(
        rewriter, pv.getLoc(), pv.getResult().getType(), /*lse=*/Type(), c.q,
        c.k, c.v, c.mask,
        rewriter.getF32FloatAttr(static_cast<float>(c.scale)),
        c.causal ? rewriter.getUnitAttr() : UnitAttr(), /*bthd=*/UnitAttr(),
        PrecisionAttr::get(ctx, c.precision), /*config=*/ConfigAttr());
    std::string chain = "q k^T";
    for (const std::string &s : c.steps)
      chain += " -> " + s;
    attn.emitRemark() << "fused into kb.attention: " << chain
                      << " -> softmax" << (convert ? " -> convert" : "")
                      << " -> @ v";
    rewriter.replaceOp(pv, attn.getResult());
    for (Operation *op : ArrayRef(c.erase).drop_front())
      rewriter.eraseOp(op);
    if (c.kTranspose && c.kTranspose->use_empty())
      rewriter.eraseOp(c.kTranspose);
    return success();
  }
};

struct FuseAttentionPass
    : public kb::impl::KBFuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseAttentionPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::kb::populateFuseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseAttentionPattern>(patterns.getContext());
}
