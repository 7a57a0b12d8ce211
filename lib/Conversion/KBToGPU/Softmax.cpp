//===- Softmax.cpp - softmax kernels, one block per row -------------------===//
//
// Elementwise work fused before the softmax (its prologue) is computed from
// the kernel's inputs as each element is loaded; work fused after it (its
// epilogue) is applied just before each store. Two strategies, picked by
// kb-select-config and recorded in #kb.config:
// - registers: each thread loads its slice of the row into registers (16-byte
//   loads, all issued before the first use), the block reduces the max and
//   the sum of exponentials, and each element is written once. One read, one
//   write: the bandwidth floor.
// - online: for rows too wide for registers; a loop keeps a running max and
//   a rescaled running sum, then a second loop reads the row again to write
//   it. Two reads, one write.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/KBToGPU/KernelGen.h"

using namespace mlir;
using namespace mlir::kb;

namespace {

struct SoftmaxContext {
  OpBuilder &b;
  Location loc;
  int64_t n, threads, vec;
  Value in, out, rowBase, tid;
  VectorType vecType;
  /// Fused elementwise work: the prologue computes the softmax's input from
  /// the kernel's inputs, the epilogue is applied to its output. `memOf`
  /// maps each chain input (a kb.fusion block argument) to its flattened
  /// kernel argument; full-shaped inputs are read at the element, bias
  /// vectors at its column.
  std::optional<ElementwiseChain> pro{}, epi{};
  DenseMap<Value, Value> memOf{};
  DenseSet<Value> isBias{};

  Value loadVec(Value mem, Value at) {
    return vector::LoadOp::create(b, loc, vecType, mem, ValueRange{at}, false,
                                  llvm::MaybeAlign(vec * 4));
  }
  /// Per-lane values of every chain input (other than `skip`) at `col`.
  DenseMap<Value, Value> inputLanes(const ElementwiseChain &chain, Value col,
                                    int64_t lane, Value skip,
                                    DenseMap<Value, Value> &vectors) {
    DenseMap<Value, Value> values;
    for (Value inV : chain.inputs) {
      if (inV == skip || !memOf.count(inV))
        continue;
      if (!vectors.count(inV)) {
        Value at = isBias.contains(inV) ? col : arith::AddIOp::create(b, loc, rowBase, col);
        vectors[inV] = loadVec(memOf.lookup(inV), at);
      }
      values[inV] = vector::ExtractOp::create(b, loc, vectors[inV], ArrayRef<int64_t>{lane});
    }
    return values;
  }
  Value flatIndex(Value col, int64_t lane) {
    return arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, rowBase, col),
                                 cidx(b, loc, lane));
  }

  Value load(Value col) {
    if (!pro)
      return loadVec(in, arith::AddIOp::create(b, loc, rowBase, col));
    DenseMap<Value, Value> vectors;
    SmallVector<Value> xs;
    for (int64_t l = 0; l < vec; ++l) {
      auto values = inputLanes(*pro, col, l, Value(), vectors);
      xs.push_back(emitChainScalar(b, loc, *pro, values, flatIndex(col, l), nullptr, 0));
    }
    return vector::FromElementsOp::create(b, loc, vecType, xs);
  }
  void store(Value v, Value col) {
    Value at = arith::AddIOp::create(b, loc, rowBase, col);
    if (epi) {
      DenseMap<Value, Value> vectors;
      SmallVector<Value> ys;
      for (int64_t l = 0; l < vec; ++l) {
        auto values = inputLanes(*epi, col, l, epi->inputs[0], vectors);
        values[epi->inputs[0]] = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l});
        ys.push_back(emitChainScalar(b, loc, *epi, values, flatIndex(col, l), nullptr, 0));
      }
      v = vector::FromElementsOp::create(b, loc, vecType, ys);
    }
    vector::StoreOp::create(b, loc, v, out, ValueRange{at}, false,
                            llvm::MaybeAlign(vec * 4));
  }
  SmallVector<Value> lanes(Value v) {
    SmallVector<Value> r;
    for (int64_t i = 0; i < vec; ++i)
      r.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i}));
    return r;
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  Value maxf(Value x, Value y) { return arith::MaximumFOp::create(b, loc, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value colOf(Value chunkStart) {
    return arith::AddIOp::create(
        b, loc, chunkStart, arith::MulIOp::create(b, loc, tid, cidx(b, loc, vec)));
  }
  Value lt(Value x, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x,
                                 cidx(b, loc, bound));
  }
};

void buildRegisters(SoftmaxContext &c, Value scratchMax, Value scratchSum) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  int64_t chunks = llvm::divideCeil(c.n, span);
  float negInf = -std::numeric_limits<float>::infinity();

  // All loads first: they are independent, so they are all in flight at once.
  SmallVector<Value> vals, cols;
  SmallVector<bool> partial;
  for (int64_t k = 0; k < chunks; ++k) {
    Value col = c.colOf(cidx(b, loc, k * span));
    bool isPartial = (k + 1) * span > c.n;
    Value v;
    if (!isPartial) {
      v = c.load(col);
    } else {
      auto ifIn = scf::IfOp::create(b, loc, TypeRange{c.vecType}, c.lt(col, c.n), true);
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
  for (auto &lane : xs)
    for (Value &x : lane) {
      x = c.exp(c.subf(x, rowMax)); // padding: exp(-inf) = 0
      s = c.addf(s, x);
    }
  Value rowSum = emitBlockReduce(b, loc, s, gpu::AllReduceOperation::ADD,
                                 c.threads, scratchSum);
  Value inv = arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum);
  for (auto [k, lane] : llvm::enumerate(xs)) {
    SmallVector<Value> ys;
    for (Value e : lane)
      ys.push_back(c.mulf(e, inv));
    Value y = vector::FromElementsOp::create(b, loc, c.vecType, ys);
    if (!partial[k]) {
      c.store(y, cols[k]);
      continue;
    }
    auto ifIn = scf::IfOp::create(b, loc, c.lt(cols[k], c.n), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    c.store(y, cols[k]);
  }
}

void buildOnline(SoftmaxContext &c, Value scratchMax, Value scratchSum) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  float negInf = -std::numeric_limits<float>::infinity();
  Value lb = cidx(b, loc, 0), ub = cidx(b, loc, c.n), step = cidx(b, loc, span);

  // Pass 1: running max m and running sum s of exp(x - m).
  auto loop1 = scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{cf32(b, loc, negInf), cf32(b, loc, 0.0f)});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop1.getBody());
    Value m = loop1.getRegionIterArgs()[0], s = loop1.getRegionIterArgs()[1];
    Value col = c.colOf(loop1.getInductionVar());
    auto ifIn = scf::IfOp::create(b, loc, TypeRange{b.getF32Type(), b.getF32Type()},
                                  c.lt(col, c.n), true);
    b.setInsertionPointToStart(ifIn.thenBlock());
    auto xs = c.lanes(c.load(col));
    Value mv = xs[0];
    for (Value x : ArrayRef<Value>(xs).drop_front())
      mv = c.maxf(mv, x);
    Value mNew = c.maxf(m, mv);
    Value sNew = c.mulf(s, c.exp(c.subf(m, mNew)));
    for (Value x : xs)
      sNew = c.addf(sNew, c.exp(c.subf(x, mNew)));
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
  Value inv = arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum);

  // Pass 2: read again, write exp(x - max) / sum.
  auto loop2 = scf::ForOp::create(b, loc, lb, ub, step);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop2.getBody());
  Value col = c.colOf(loop2.getInductionVar());
  auto ifIn = scf::IfOp::create(b, loc, c.lt(col, c.n), false);
  b.setInsertionPointToStart(ifIn.thenBlock());
  SmallVector<Value> ys;
  for (Value x : c.lanes(c.load(col)))
    ys.push_back(c.mulf(c.exp(c.subf(x, rowMax)), inv));
  c.store(vector::FromElementsOp::create(b, loc, c.vecType, ys), col);
}

} // namespace

LogicalResult mlir::kb::buildSoftmaxKernel(const KernelRequest &req,
                                           LaunchInfo &info) {
  Operation *op = req.op;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t n = type.getShape().back();
  int64_t rows = type.getNumElements() / n;
  int64_t threads = req.config.getThreads();
  int64_t vec = std::max<int64_t>(req.config.getVector(), 1);
  StringRef strategy = req.config.getStrategy();
  if (n % vec)
    return op->emitOpError() << "vector width " << vec
                             << " does not divide the row length " << n;
  if (rows > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << "has " << rows << " rows, more than a grid holds";
  info.grid = {rows, 1, 1};
  info.block = {threads, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto scratchType = MemRefType::get({32}, Float32Type::get(ctx), nullptr, wg);
  Value scratchMax = func.addWorkgroupAttribution(scratchType, loc);
  Value scratchSum = func.addWorkgroupAttribution(scratchType, loc);

  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  auto args = func.getArguments();
  auto kargs = args.take_front(func.getNumArguments());
  SoftmaxContext c{b, loc, n, threads, vec, Value(), flatten(b, loc, kargs.back()),
                   Value(), Value(), VectorType::get({vec}, b.getF32Type())};
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Block &body = fusion.getBody().front();
    auto sm = cast<SoftmaxOp>(getFusionAnchor(fusion));
    ElementwiseChain pro;
    for (Operation &inner : body.without_terminator()) {
      if (&inner == sm.getOperation())
        break;
      pro.ops.push_back(&inner);
    }
    if (!pro.ops.empty()) {
      pro.inputs.assign(body.getArguments().begin(), body.getArguments().end());
      pro.result = sm.getInput();
      c.pro = pro;
    } else if (auto ba = dyn_cast<BlockArgument>(sm.getInput())) {
      c.in = flatten(b, loc, kargs[ba.getArgNumber()]);
    }
    ElementwiseChain epi = ElementwiseChain::after(fusion, sm);
    if (!epi.ops.empty())
      c.epi = epi;
    for (BlockArgument ba : body.getArguments()) {
      auto t = cast<RankedTensorType>(ba.getType());
      bool bias = t.getRank() == 1 && t.getDimSize(0) == n && type.getRank() > 1;
      if (t != type && !bias)
        return op->emitOpError() << "fused softmax input of type " << t
                                 << " neither matches " << type
                                 << " nor broadcasts along its last axis";
      c.memOf[ba] = flatten(b, loc, kargs[ba.getArgNumber()]);
      if (bias)
        c.isBias.insert(ba);
    }
    for (auto *chain : {&c.pro, &c.epi})
      if (*chain)
        for (Operation *inner : (*chain)->ops)
          if (!isa<ElementwiseOpInterface>(inner) || inner->getResult(0).getType() != type)
            return inner->emitOpError() << "cannot be fused around a softmax of " << type;
  } else {
    c.in = flatten(b, loc, kargs[0]);
  }
  Value row = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  c.rowBase = arith::MulIOp::create(b, loc, row, cidx(b, loc, n));
  c.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (strategy == "registers")
    buildRegisters(c, scratchMax, scratchSum);
  else if (strategy == "online")
    buildOnline(c, scratchMax, scratchSum);
  else
    return op->emitOpError() << "unknown softmax strategy '" << strategy << "'";
  return success();
}
