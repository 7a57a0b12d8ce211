//===- SoftmaxRegisters.cpp - softmax strategies that keep the row in registers
//-===//
//
// registers (the row in one block's registers), split (a cluster's blocks
// each hold a part in registers), the same for rows that are not a multiple
// of 4 long, and online (two reads of the row). Docs in SoftmaxGen.h.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

void mlir::kb::softmax::buildRegisters(SoftmaxContext &c, Value scratchMax,
                                       Value scratchSum, Value clusterPartial,
                                       int64_t cluster) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  int64_t chunks = llvm::divideCeil(c.partLen, span);
  float negInf = -std::numeric_limits<float>::infinity();

  // All loads first: they are independent, so they are all in flight at once.
  SmallVector<Value> vals, cols;
  SmallVector<bool> partial;
  for (int64_t k = 0; k < chunks; ++k) {
    Value col = c.colOf(
        arith::AddIOp::create(b, loc, c.partStart, cidx(b, loc, k * span)));
    bool isPartial = (k + 1) * span > c.minPartLen;
    Value v;
    if (!isPartial) {
      v = c.load(col);
    } else {
      auto ifIn = scf::IfOp::create(b, loc, TypeRange{c.vecType},
                                    c.lt(col, c.partEnd), true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifIn.thenBlock());
      scf::YieldOp::create(b, loc, c.load(col));
      b.setInsertionPointToStart(ifIn.elseBlock());
      Value padv = arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(c.vecType, b.getF32FloatAttr(negInf)));
      scf::YieldOp::create(b, loc, padv);
      v = ifIn.getResult(0);
    }
    vals.push_back(v);
    cols.push_back(col);
    partial.push_back(isPartial);
  }
  Value m = cf32(b, loc, negInf);
  SmallVector<SmallVector<Value>> xs;
  for (Value v : vals) {
    xs.push_back(c.lanes(v));
    for (Value x : xs.back())
      m = c.maxf(m, x);
  }
  Value rowMax = emitBlockReduce(b, loc, m, gpu::AllReduceOperation::MAXIMUMF,
                                 c.threads, scratchMax);
  Value s = cf32(b, loc, 0.0f);
  // ds: x - max, kept for a log-softmax.
  SmallVector<SmallVector<Value>> ds(xs);
  for (auto [lane, dl] : llvm::zip(xs, ds))
    for (auto [x, d] : llvm::zip(lane, dl)) {
      d = c.subf(x, rowMax);
      x = c.exp(d); // padding: exp(-inf) = 0
      s = c.addf(s, x);
    }
  Value rowSum = emitBlockReduce(b, loc, s, gpu::AllReduceOperation::ADD,
                                 c.threads, scratchSum);
  Value inv, logSum;
  if (c.log)
    logSum = c.logf(rowSum);
  else
    inv = clusterPartial
              ? combineOverCluster(c, rowMax, rowSum, clusterPartial, cluster)
              : arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum);
  for (auto [k, lane] : llvm::enumerate(xs)) {
    SmallVector<Value> ys;
    for (auto [e, d] : llvm::zip(lane, ds[k]))
      ys.push_back(c.finalValue(e, d, inv, logSum));
    Value y = vector::FromElementsOp::create(b, loc, c.vecType, ys);
    if (!partial[k]) {
      c.store(y, cols[k]);
      continue;
    }
    auto ifIn = scf::IfOp::create(b, loc, c.lt(cols[k], c.partEnd), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    c.store(y, cols[k]);
  }
  if (clusterPartial)
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
}

void mlir::kb::softmax::buildRegistersUnaligned(SoftmaxContext &c,
                                                Value scratchMax,
                                                Value scratchSum,
                                                int64_t total) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  float negInf = -std::numeric_limits<float>::infinity();
  Value negInfVec = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(c.vecType, b.getF32FloatAttr(negInf)));
  Value rowStart = c.rowBase;
  Value rowEnd = arith::AddIOp::create(b, loc, rowStart, cidx(b, loc, c.n));
  Value base = arith::SubIOp::create(
      b, loc, rowStart,
      arith::RemUIOp::create(b, loc, rowStart, cidx(b, loc, 4)));
  int64_t chunks = llvm::divideCeil(c.n + 3, 4);
  int64_t passes = llvm::divideCeil(chunks, c.threads);

  SmallVector<Value> flats;
  SmallVector<SmallVector<Value>> xs;
  Value m = cf32(b, loc, negInf);
  for (int64_t k = 0; k < passes; ++k) {
    Value chunk =
        arith::AddIOp::create(b, loc, c.tid, cidx(b, loc, k * c.threads));
    Value flat = arith::AddIOp::create(
        b, loc, base, arith::MulIOp::create(b, loc, chunk, cidx(b, loc, 4)));
    Value flat4 = arith::AddIOp::create(b, loc, flat, cidx(b, loc, 4));
    // Whole 16 bytes inside the buffer: one load; else lane by lane, clamped.
    auto ifWhole = scf::IfOp::create(b, loc, TypeRange{c.vecType},
                                     c.ule(flat4, cidx(b, loc, total)), true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifWhole.thenBlock());
      scf::YieldOp::create(b, loc, c.loadVec(c.in, flat));
      b.setInsertionPointToStart(ifWhole.elseBlock());
      scf::YieldOp::create(b, loc, c.loadChunkClamped(flat, total));
    }
    // A chunk past the row's end reads nothing.
    Value v = arith::SelectOp::create(b, loc, c.lt(flat, rowEnd),
                                      ifWhole.getResult(0), negInfVec);
    SmallVector<Value> lanes =
        c.maskChunk(c.lanes(v), flat, rowStart, rowEnd, negInf);
    for (Value x : lanes)
      m = c.maxf(m, x);
    flats.push_back(flat);
    xs.push_back(lanes);
  }
  Value rowMax = emitBlockReduce(b, loc, m, gpu::AllReduceOperation::MAXIMUMF,
                                 c.threads, scratchMax);
  Value s = cf32(b, loc, 0.0f);
  SmallVector<SmallVector<Value>> ds(xs);
  for (auto [lanes, dl] : llvm::zip(xs, ds))
    for (auto [x, d] : llvm::zip(lanes, dl)) {
      d = c.subf(x, rowMax);
      x = c.exp(d); // outside the row: exp(-inf) = 0
      s = c.addf(s, x);
    }
  Value rowSum = emitBlockReduce(b, loc, s, gpu::AllReduceOperation::ADD,
                                 c.threads, scratchSum);
  Value inv = c.log ? Value()
                    : arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum)
                          .getResult();
  Value logSum = c.log ? c.logf(rowSum) : Value();
  for (auto [flat, lanes, dl] : llvm::zip(flats, xs, ds)) {
    SmallVector<Value> ys;
    for (auto [e, d] : llvm::zip(lanes, dl))
      ys.push_back(c.finalValue(e, d, inv, logSum));
    c.storeChunk(ys, flat, rowStart, rowEnd);
  }
}

void mlir::kb::softmax::buildOnline(SoftmaxContext &c, Value scratchMax,
                                    Value scratchSum) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  float negInf = -std::numeric_limits<float>::infinity();
  Value lb = cidx(b, loc, 0), ub = cidx(b, loc, c.n), step = cidx(b, loc, span);

  // Pass 1: running max m and running sum s of exp(x - m).
  auto loop1 =
      scf::ForOp::create(b, loc, lb, ub, step,
                         ValueRange{cf32(b, loc, negInf), cf32(b, loc, 0.0f)});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop1.getBody());
    Value m = loop1.getRegionIterArgs()[0], s = loop1.getRegionIterArgs()[1];
    Value col = c.colOf(loop1.getInductionVar());
    auto ifIn =
        scf::IfOp::create(b, loc, TypeRange{b.getF32Type(), b.getF32Type()},
                          c.lt(col, c.n), true);
    b.setInsertionPointToStart(ifIn.thenBlock());
    auto [mNew, sNew] = c.onlineUpdate(m, s, c.lanes(c.load(col)));
    scf::YieldOp::create(b, loc, ValueRange{mNew, sNew});
    b.setInsertionPointToStart(ifIn.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{m, s});
    b.setInsertionPointAfter(ifIn);
    scf::YieldOp::create(b, loc, ifIn.getResults());
  }
  Value m = loop1.getResult(0), s = loop1.getResult(1);
  Value rowMax = emitBlockReduce(b, loc, m, gpu::AllReduceOperation::MAXIMUMF,
                                 c.threads, scratchMax);
  // Rescale each thread's sum to the row max (a thread that saw nothing has
  // s = 0 and m = -inf: 0 * exp(-inf) = 0).
  Value scaled = c.mulf(s, c.exp(c.subf(m, rowMax)));
  Value rowSum = emitBlockReduce(b, loc, scaled, gpu::AllReduceOperation::ADD,
                                 c.threads, scratchSum);
  Value inv = c.log ? Value()
                    : arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum)
                          .getResult();
  Value logSum = c.log ? c.logf(rowSum) : Value();

  // Pass 2: read again, write exp(x - max) / sum (log-softmax:
  // x - max - log(sum)).
  auto loop2 = scf::ForOp::create(b, loc, lb, ub, step);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop2.getBody());
  Value col = c.colOf(loop2.getInductionVar());
  auto ifIn = scf::IfOp::create(b, loc, c.lt(col, c.n), false);
  b.setInsertionPointToStart(ifIn.thenBlock());
  SmallVector<Value> ys;
  for (Value x : c.lanes(c.load(col))) {
    Value d = c.subf(x, rowMax);
    ys.push_back(c.finalValue(c.log ? Value() : c.exp(d), d, inv, logSum));
  }
  c.store(vector::FromElementsOp::create(b, loc, c.vecType, ys), col);
}
