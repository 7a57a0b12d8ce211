//===- RowNormOnline.cpp - norms and row reductions of rows too wide ------===//
//
// The `online` strategy of the row kernels (RowNorm.cpp), for rows too wide
// for one block's registers (more than 64 values a thread): one block a
// row still, but the row is read in loops over chunks of threads x vector
// columns instead of held. kb.reduce: one read. kb.rms_norm: one read for
// the sum of squares, a second that writes. kb.layer_norm: the mean, then
// the squared deviations from it, then the write: three reads of the row
// (the two-pass variance of the registers strategy, the same numerics; a
// block's row is at most a few hundred KB, so the second and third reads
// of the rows in flight come mostly from L2). Each thread adds its values
// in order, then emitBlockReduce's tree: a sum's depth is the registers
// strategy's formula (rowSumDepth), only deeper.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

void mlir::kb::softmax::buildRowNormOnline(SoftmaxContext &c,
                                           Operation *anchor, Value weight,
                                           Value bias, Value scratch0,
                                           Value scratch1, Value row) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  bool partial = c.n % span != 0;
  auto f32 = b.getF32Type();
  // Runs `body` on each of this thread's vectors of the row (those past
  // the row's end skipped), folding one f32 through the loop.
  auto fold = [&](Value init,
                  function_ref<Value(Value acc, ArrayRef<Value> xs)> body) {
    auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, c.n),
                                   cidx(b, loc, span), ValueRange{init});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value acc = loop.getRegionIterArgs()[0];
    Value col = c.colOf(loop.getInductionVar());
    if (!partial) {
      scf::YieldOp::create(b, loc, body(acc, c.lanes(c.load(col))));
    } else {
      auto ifIn =
          scf::IfOp::create(b, loc, TypeRange{f32}, c.lt(col, c.n), true);
      b.setInsertionPointToStart(ifIn.thenBlock());
      scf::YieldOp::create(b, loc, body(acc, c.lanes(c.load(col))));
      b.setInsertionPointToStart(ifIn.elseBlock());
      scf::YieldOp::create(b, loc, acc);
      b.setInsertionPointAfter(ifIn);
      scf::YieldOp::create(b, loc, ifIn.getResult(0));
    }
    return loop.getResult(0);
  };
  auto add = gpu::AllReduceOperation::ADD;
  Value nF = cf32(b, loc, static_cast<float>(c.n));

  if (auto red = dyn_cast<ReduceOp>(anchor)) {
    ReductionKind kind = red.getKind();
    Value result;
    if (kind == ReductionKind::sum || kind == ReductionKind::mean) {
      Value s = fold(cf32(b, loc, 0.0f), [&](Value a, ArrayRef<Value> xs) {
        for (Value x : xs)
          a = c.addf(a, x);
        return a;
      });
      result = emitBlockReduce(b, loc, s, add, c.threads, scratch0);
      if (kind == ReductionKind::mean)
        result = arith::DivFOp::create(b, loc, result, nF);
    } else {
      // min(x) = -max(-x), as in the registers strategy.
      bool isMin = kind == ReductionKind::min;
      Value m = fold(cf32(b, loc, -std::numeric_limits<float>::infinity()),
                     [&](Value a, ArrayRef<Value> xs) {
                       for (Value x : xs)
                         a = c.maxf(a, isMin ? arith::NegFOp::create(b, loc, x)
                                                   .getResult()
                                             : x);
                       return a;
                     });
      result = emitBlockReduce(b, loc, m, gpu::AllReduceOperation::MAXIMUMF,
                               c.threads, scratch0);
      if (isMin)
        result = arith::NegFOp::create(b, loc, result);
    }
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         c.tid, cidx(b, loc, 0));
    auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
    b.setInsertionPointToStart(ifZero.thenBlock());
    memref::StoreOp::create(b, loc, c.narrow(result, c.out), c.out,
                            ValueRange{row});
    return;
  }

  // The norms: the mean (layer_norm), the mean square of x or of x - mean,
  // then a pass that writes y = (x - mean) rsqrt(ms + eps) (* w) (+ b).
  auto ln = dyn_cast<LayerNormOp>(anchor);
  Value mean;
  if (ln) {
    Value s = fold(cf32(b, loc, 0.0f), [&](Value a, ArrayRef<Value> xs) {
      for (Value x : xs)
        a = c.addf(a, x);
      return a;
    });
    mean = arith::DivFOp::create(
        b, loc, emitBlockReduce(b, loc, s, add, c.threads, scratch0), nF);
  }
  auto centred = [&](Value x) { return mean ? c.subf(x, mean) : x; };
  Value q = fold(cf32(b, loc, 0.0f), [&](Value a, ArrayRef<Value> xs) {
    for (Value x : xs) {
      Value d = centred(x);
      a = c.addf(a, c.mulf(d, d));
    }
    return a;
  });
  Value ms = arith::DivFOp::create(
      b, loc, emitBlockReduce(b, loc, q, add, c.threads, ln ? scratch1 : scratch0),
      nF);
  FloatAttr eps = ln ? ln.getEpsAttr() : cast<RmsNormOp>(anchor).getEpsAttr();
  Value rstd = math::RsqrtOp::create(
      b, loc, c.addf(ms, arith::ConstantOp::create(b, loc, eps)));

  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, c.n),
                                 cidx(b, loc, span));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value col = c.colOf(loop.getInductionVar());
  if (partial) {
    auto ifIn = scf::IfOp::create(b, loc, c.lt(col, c.n), /*withElse=*/false);
    b.setInsertionPointToStart(ifIn.thenBlock());
  }
  SmallVector<Value> ws, bs, ys;
  if (weight)
    ws = c.lanes(c.loadVec(weight, col));
  if (bias)
    bs = c.lanes(c.loadVec(bias, col));
  for (auto [l, x] : llvm::enumerate(c.lanes(c.load(col)))) {
    Value y = c.mulf(centred(x), rstd);
    if (weight)
      y = c.mulf(y, ws[l]);
    if (bias)
      y = c.addf(y, bs[l]);
    ys.push_back(y);
  }
  c.store(vector::FromElementsOp::create(b, loc, c.vecType, ys), col);
}
