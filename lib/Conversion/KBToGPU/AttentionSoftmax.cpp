//===- AttentionSoftmax.cpp - masking, online softmax, epilogue -----------===//
//
// The register side of the fused attention kernel. Each thread holds, per
// key block, S values of two query rows (g and g + 8 of its warp) at keys
// 8j + 2t and 8j + 2t + 1; the four threads of a quad (same g) hold a row
// between them, so a row's max and sum are reduced by two xor shuffles.
//
// Online softmax, per row, in f32, on scores x in "score units" of c
// natural units each (scoreUnit: c = scale, the raw Q K^T values, when there
// is no additive mask and scale > 0, so max_j (scale x_j) = scale max_j x_j;
// else c = 1 and maskScores scales, and adds the mask, first). With
// k = c log2 e, as FlashAttention does:
//   m' = max(m, max_j x_j);  alpha = 2^(m k - m' k);  p_j = 2^(x_j k - m' k)
//   l' = alpha l + sum_j p_j;  O' = alpha O + P V
// each exponent one fma (x k + (-m' k)) and 2^ one ex2.approx.ftz.f32 (no
// libdevice call, no subnormal fix-up: a p below 2^-126 is 0). m' is taken
// as 0 in the exponents while it is -inf (a row whose keys so far are all
// masked), so that no -inf - -inf appears; a masked score is -inf and its
// p is 2^-inf = 0. Each thread keeps its partial l (alpha is the same over
// the quad) and the quad adds them once, in the epilogue: O / l, 0 where
// l = 0 (a row with every key masked by an additive -inf: PyTorch gives NaN
// there, kb 0; docs/design.md), and lse = m c + log l in natural units
// (-inf where l = 0).
//
//===----------------------------------------------------------------------===//

#include "AttentionGen.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kb;

namespace {

constexpr double kLog2e = 1.4426950408889634;

Value negInfinity(OpBuilder &b, Location loc) {
  return arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
}

/// 2^x as one ex2.approx.ftz.f32 (one MUFU.EX2). math.exp2 would become
/// libdevice's __nv_exp2f, ex2.approx.f32 without .ftz, which ptxas wraps
/// in a subnormal fix-up (a compare and two predicated multiplies).
Value exp2Approx(OpBuilder &b, Location loc, Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, b.getF32Type(),
             b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{x})
      .getResult(0);
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
      // Raw scores (scoreUnit) are left as they are: the softmax scales
      // them inside its exponents.
      Value xv = s[j * 4 + e];
      if (!rawScores() && !shape.hasMask)
        xv = arith::MulFOp::create(b, loc, xv, scale);
      if (shape.hasMask) {
        // Clamped into the mask; masked-off keys get -inf below anyway.
        Value row = minIdx(queryRow(e / 2), shape.sq - 1);
        Value col = minIdx(keyOf(j, e), shape.sk - 1);
        Value m = memref::LoadOp::create(b, loc, mask, maskIndex(row, col));
        if (!m.getType().isF32())
          m = arith::ExtFOp::create(b, loc, b.getF32Type(), m);
        xv = math::FmaOp::create(b, loc, xv, scale, m);
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
AttentionEmitter::softmaxStep(SmallVectorImpl<Value> &x, const RowState &state,
                              Value alpha[2]) {
  int64_t frags = bkv / 8;
  Value negInf = negInfinity(b, loc);
  // k = c log2 e: one score unit in base-2 exponent units.
  float kUnit = float(double(scoreUnit()) * kLog2e);
  Value zero = cf32(b, loc, 0.0f), k = cf32(b, loc, kUnit),
        negK = cf32(b, loc, -kUnit);
  auto maxf = [&](Value l, Value r) {
    return arith::MaxNumFOp::create(b, loc, l, r).getResult();
  };
  RowState next;
  for (int64_t h = 0; h < 2; ++h) {
    // The thread's max of the row in four interleaved chains (max is exact
    // in any order): BKV / 16 + 2 dependent steps instead of BKV / 4 - 1.
    // (A full tree cost the D = 128 causal kernel 8 bytes of spill at its
    // 168-register cap.)
    SmallVector<Value> level;
    for (int64_t j = 0; j < frags; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value xv = x[j * 4 + 2 * h + e];
        size_t i = (j * 2 + e) % 4;
        if (i >= level.size())
          level.push_back(xv);
        else
          level[i] = maxf(level[i], xv);
      }
    while (level.size() > 1) {
      SmallVector<Value> up;
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        up.push_back(maxf(level[i], level[i + 1]));
      if (level.size() % 2)
        up.push_back(level.back());
      level = std::move(up);
    }
    Value m = quadReduce(b, loc, level.front(), maxf);
    Value mNew = maxf(state.max[h], m);
    Value allMasked = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                            mNew, negInf);
    Value mUse = arith::SelectOp::create(b, loc, allMasked, zero, mNew);
    // alpha from the difference (exactly 1 while the max holds); each p
    // as one fma and one ex2: p = 2^(x k + (-m' k)).
    alpha[h] = exp2Approx(
        b, loc,
        arith::MulFOp::create(
            b, loc, arith::SubFOp::create(b, loc, state.max[h], mUse), k));
    Value negMk = arith::MulFOp::create(b, loc, mUse, negK);
    Value sum = arith::MulFOp::create(b, loc, state.sum[h], alpha[h]);
    for (int64_t j = 0; j < frags; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value &xv = x[j * 4 + 2 * h + e];
        xv = exp2Approx(b, loc, math::FmaOp::create(b, loc, xv, k, negMk));
        sum = arith::AddFOp::create(b, loc, sum, xv);
      }
    next.max[h] = mNew;
    next.sum[h] = sum;
  }
  return next;
}

void AttentionEmitter::rescale(SmallVectorImpl<Value> &acc,
                               const Value alpha[2]) {
  for (int64_t nf = 0; nf < shape.dv / 8; ++nf)
    for (int64_t e = 0; e < 4; ++e) {
      Value &a = acc[nf * 4 + e];
      a = arith::MulFOp::create(b, loc, a, alpha[e / 2]);
    }
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
      // The max in natural units: m c.
      if (scoreUnit() != 1.0f)
        mUse = arith::MulFOp::create(b, loc, mUse, cf32(b, loc, scoreUnit()));
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
