//===- AttentionSoftmax.cpp - masking, online softmax, epilogue -----------===//
//
// The register side of the fused attention kernel. Each thread holds, per
// key block, S values of two query rows (g and g + 8 of its warp) at keys
// 8j + 2t and 8j + 2t + 1; the four threads of a quad (same g) hold a row
// between them, so a row's max and sum are reduced by two xor shuffles.
//
// Online softmax, per row, in f32 (natural units; exp2 of the difference
// times log2 e):
//   m' = max(m, max_j x_j);  alpha = exp(m - m');  p_j = exp(x_j - m')
//   l' = alpha l + sum_j p_j;  O' = alpha O + P V
// with m' taken as 0 in the exponents while it is -inf (a row whose keys so
// far are all masked), so that no -inf - -inf appears. Each thread keeps
// its partial l (alpha is the same over the quad) and the quad adds them
// once, in the epilogue: O / l, 0 where l = 0 (a row with every key masked
// by an additive -inf: PyTorch gives NaN there, kb 0; docs/design.md), and
// lse = m + log l (-inf where l = 0).
//
//===----------------------------------------------------------------------===//

#include "AttentionGen.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kb;

namespace {

constexpr float kLog2e = 1.4426950408889634f;

Value negInfinity(OpBuilder &b, Location loc) {
  return arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
}

/// `v` combined over the quad (lanes 4g .. 4g + 3) by `combine`.
Value quadReduce(OpBuilder &b, Location loc, Value v,
                 function_ref<Value(Value, Value)> combine) {
  for (int32_t offset : {1, 2}) {
    Value other =
        gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    v = combine(v, other);
  }
  return v;
}

} // namespace

SmallVector<Value> AttentionEmitter::maskScores(ArrayRef<Value> s, Value kv0) {
  int64_t frags = bkv / 8;
  Value scale = cf32(b, loc, shape.scale);
  auto keyOf = [&](int64_t j, int64_t e) {
    return add(kv0, add(mul(t, 2), j * 8 + (e % 2)));
  };
  SmallVector<Value> x;
  for (int64_t j = 0; j < frags; ++j)
    for (int64_t e = 0; e < 4; ++e) {
      Value xv = arith::MulFOp::create(b, loc, s[j * 4 + e], scale);
      if (shape.hasMask) {
        // Clamped into the mask; masked-off keys get -inf below anyway.
        Value row = minIdx(queryRow(e / 2), shape.sq - 1);
        Value col = minIdx(keyOf(j, e), shape.sk - 1);
        Value m = memref::LoadOp::create(b, loc, mask, maskIndex(row, col));
        if (!m.getType().isF32())
          m = arith::ExtFOp::create(b, loc, b.getF32Type(), m);
        xv = arith::AddFOp::create(b, loc, xv, m);
      }
      x.push_back(xv);
    }
  bool pastSk = shape.sk % bkv != 0;
  if (!pastSk && !shape.causal)
    return x;
  // Does this warp's block need a mask? Keys past Sk (the last block), or
  // (causal) a key after the warp's first row: the blocks on the diagonal.
  Value lastKey = add(kv0, bkv - 1);
  Value need;
  auto ugt = [&](Value l, Value r) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, l, r)
        .getResult();
  };
  if (pastSk)
    need = ugt(lastKey, cidx(b, loc, shape.sk - 1));
  if (shape.causal) {
    Value diag = ugt(lastKey, add(q0, mul(warp, 16)));
    need = need ? arith::OrIOp::create(b, loc, need, diag).getResult() : diag;
  }
  SmallVector<Type> types(x.size(), b.getF32Type());
  auto ifOp = scf::IfOp::create(b, loc, types, need, /*withElse=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value negInf = negInfinity(b, loc);
    Value rows[2] = {queryRow(0), queryRow(1)};
    SmallVector<Value> masked;
    for (int64_t j = 0; j < frags; ++j)
      for (int64_t e = 0; e < 4; ++e) {
        Value key = keyOf(j, e);
        Value keep;
        if (pastSk)
          keep = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, key,
                                       cidx(b, loc, shape.sk));
        if (shape.causal) {
          Value visible = arith::CmpIOp::create(
              b, loc, arith::CmpIPredicate::ule, key, rows[e / 2]);
          keep = keep ? arith::AndIOp::create(b, loc, keep, visible).getResult()
                      : visible;
        }
        masked.push_back(
            arith::SelectOp::create(b, loc, keep, x[j * 4 + e], negInf));
      }
    scf::YieldOp::create(b, loc, masked);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, x);
  }
  return SmallVector<Value>(ifOp.getResults().begin(), ifOp.getResults().end());
}

AttentionEmitter::RowState
AttentionEmitter::softmaxStep(SmallVectorImpl<Value> &x,
                              SmallVectorImpl<Value> &acc,
                              const RowState &state) {
  int64_t frags = bkv / 8;
  Value negInf = negInfinity(b, loc);
  Value zero = cf32(b, loc, 0.0f), log2e = cf32(b, loc, kLog2e);
  auto maxf = [&](Value l, Value r) {
    return arith::MaxNumFOp::create(b, loc, l, r).getResult();
  };
  auto exp = [&](Value diff) {
    return math::Exp2Op::create(
               b, loc, arith::MulFOp::create(b, loc, diff, log2e))
        .getResult();
  };
  RowState next;
  for (int64_t h = 0; h < 2; ++h) {
    Value m = x[2 * h];
    for (int64_t j = 0; j < frags; ++j)
      for (int64_t e = 0; e < 2; ++e)
        if (j || e)
          m = maxf(m, x[j * 4 + 2 * h + e]);
    m = quadReduce(b, loc, m, maxf);
    Value mNew = maxf(state.max[h], m);
    Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            mNew, negInf);
    Value mUse = arith::SelectOp::create(b, loc, allMasked, zero, mNew);
    Value alpha =
        exp(arith::SubFOp::create(b, loc, state.max[h], mUse).getResult());
    Value sum = arith::MulFOp::create(b, loc, state.sum[h], alpha);
    for (int64_t j = 0; j < frags; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value &xv = x[j * 4 + 2 * h + e];
        xv = exp(arith::SubFOp::create(b, loc, xv, mUse).getResult());
        sum = arith::AddFOp::create(b, loc, sum, xv);
      }
    for (int64_t nf = 0; nf < shape.dv / 8; ++nf)
      for (int64_t e = 0; e < 2; ++e) {
        Value &a = acc[nf * 4 + 2 * h + e];
        a = arith::MulFOp::create(b, loc, a, alpha);
      }
    next.max[h] = mNew;
    next.sum[h] = sum;
  }
  return next;
}

void AttentionEmitter::storeOutputs(ArrayRef<Value> acc,
                                    const RowState &state) {
  Value zero = cf32(b, loc, 0.0f), one = cf32(b, loc, 1.0f);
  auto addf = [&](Value l, Value r) {
    return arith::AddFOp::create(b, loc, l, r).getResult();
  };
  auto pairType = VectorType::get({2}, shape.elem);
  for (int64_t h = 0; h < 2; ++h) {
    Value l = quadReduce(b, loc, state.sum[h], addf);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, zero);
    Value inv = arith::SelectOp::create(
        b, loc, positive, arith::DivFOp::create(b, loc, one, l), zero);
    Value row = queryRow(h);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          row, cidx(b, loc, shape.sq));
    SmallVector<Value> pairs;
    for (int64_t nf = 0; nf < shape.dv / 8; ++nf) {
      Value v0 = arith::MulFOp::create(b, loc, acc[nf * 4 + 2 * h], inv);
      Value v1 = arith::MulFOp::create(b, loc, acc[nf * 4 + 2 * h + 1], inv);
      if (!shape.isF32()) {
        v0 = arith::TruncFOp::create(b, loc, shape.elem, v0);
        v1 = arith::TruncFOp::create(b, loc, shape.elem, v1);
      }
      pairs.push_back(vector::FromElementsOp::create(b, loc, pairType,
                                                     ValueRange{v0, v1}));
    }
    Value lseValue;
    if (shape.lse) {
      Value mUse = arith::SelectOp::create(
          b, loc,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                state.max[h], negInfinity(b, loc)),
          zero, state.max[h]);
      Value lse = arith::AddFOp::create(
          b, loc, mUse, math::LogOp::create(b, loc, l).getResult());
      lseValue =
          arith::SelectOp::create(b, loc, positive, lse, negInfinity(b, loc));
    }
    auto ifIn = scf::IfOp::create(b, loc, inRange, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    for (int64_t nf = 0; nf < shape.dv / 8; ++nf)
      vector::StoreOp::create(b, loc, pairs[nf], out,
                              index(row, add(mul(t, 2), nf * 8)));
    if (shape.lse) {
      // One lane of the quad writes the row's log-sum-exp.
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                          cidx(b, loc, 0));
      auto ifFirst = scf::IfOp::create(b, loc, first, false);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      memref::StoreOp::create(b, loc, lseValue, lse, lseIndex(row));
    }
  }
}
