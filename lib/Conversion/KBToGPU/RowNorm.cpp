//===- RowNorm.cpp - layer_norm, rms_norm and reduce: one block a row -----===//
//
// The row kernels: one block per row (or with #kb.config block = [R], R
// rows a block, one warp a row; with grid = G too, a persistent grid whose
// warps load their next row before they reduce and store this one), the
// row in registers (each thread loads its vectors of the row once, all
// loads issued before the first use; a bf16 row read as it is stays packed,
// RowValues::raw), block-wide reductions with emitBlockReduce, f32
// arithmetic, and 16-bit loads and stores where the tensors are f16 or bf16.
// - kb.layer_norm: the sum gives the mean; the deviations d = x - mean are
//   formed in registers and their squares summed (two passes over the
//   registers, one read of memory), then y = d * rsqrt(var + eps) * w + b.
// - kb.rms_norm: the sum of squares, then y = x * rsqrt(ms + eps) * w.
// - kb.reduce: sum, mean, max or min; thread 0 stores the row's value.
// A kb.fusion around a norm applies its elementwise prologue as the row is
// loaded and its epilogue at each store (SoftmaxContext, SoftmaxGen.h, does
// both, as for a fused softmax). Rows too wide for one block's registers
// take strategy "cluster" (sm_90: the row split over the registers of a
// cluster of 2, 4 or 8 blocks, each block's partial sum, sum of squares or
// maximum exchanged through distributed shared memory and combined in rank
// order, combineInRankOrder in SoftmaxExchange.cpp: still one read; a
// layer_norm exchanges once, each block's part's mean and squared
// deviations from it, merged as Chan et al.'s parallel variance,
// combineMomentsInRankOrder) or,
// wider still or without clusters, "online" (RowNormOnline.cpp: the row
// read in loops).
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

namespace {

/// The most values of a row a thread holds (SelectConfig.cpp's forced-config
/// limit for the registers softmax).
constexpr int64_t kMaxRowValuesPerThread = 64;
/// The largest cluster a row is split over (portable cluster sizes).
constexpr int64_t kMaxRowCluster = 8;

/// The row's values in registers: chunk k holds columns [k span, (k+1) span)
/// of the block's part (the row, or with a cluster columns [c.partStart,
/// c.partEnd)) of which this thread's vector starts at cols[k]; valid[k] is
/// set for the chunks that may lie past the part's end (null where they
/// cannot).
/// A bf16 row read as it is (no prologue) keeps `raw`, the chunks as
/// loaded (eight values in four registers), which later passes re-widen
/// (relanes): half the registers of the row in f32.
struct RowValues {
  SmallVector<SmallVector<Value>> xs;
  SmallVector<Value> raw, cols, valid;
};

/// Whether loadRow keeps the row packed (RowValues::raw).
bool keepsPacked(const SoftmaxContext &c) {
  return !c.pro && c.in && SoftmaxContext::elemOf(c.in).isBF16();
}

/// Chunk k's f32 lanes for pass `form` (1 or 2) after the first, from the
/// packed chunk (else the first pass's): lane 2i is word i << 16, lane
/// 2i + 1 word i & 0xffff0000, by shifts and masks (form 1) or prmt (form
/// 2), forms LLVM does not merge with extf or each other (merged, every
/// lane would live in f32 across the reductions between the passes).
SmallVector<Value> relanes(SoftmaxContext &c, const RowValues &r, int64_t k,
                           int form) {
  if (r.raw.empty())
    return r.xs[k];
  OpBuilder &b = c.b;
  Location loc = c.loc;
  auto i32 = b.getI32Type();
  Value words = vector::BitCastOp::create(
      b, loc, VectorType::get({c.vec / 2}, i32), r.raw[k]);
  auto ci32 = [&](uint32_t v) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  SmallVector<Value> lanes;
  for (int64_t l = 0; l < c.vec; ++l) {
    Value w = vector::ExtractOp::create(b, loc, words,
                                        ArrayRef<int64_t>{l / 2});
    Value bits;
    if (form == 1)
      bits = l % 2 == 0 ? arith::ShLIOp::create(b, loc, w, ci32(16)).getResult()
                        : arith::AndIOp::create(b, loc, w, ci32(0xffff0000u))
                              .getResult();
    else
      // prmt: result byte j takes byte sel[4j+3:4j] of {0 (bytes 4-7), w}.
      bits = NVVM::PermuteOp::create(b, loc, i32, w, ci32(0),
                                     ci32(l % 2 == 0 ? 0x1044 : 0x3244),
                                     NVVM::PermuteMode::DEFAULT);
    lanes.push_back(arith::BitcastOp::create(b, loc, b.getF32Type(), bits));
  }
  return lanes;
}

/// The columns of this thread's chunks of the part and their guards (the
/// same for every row).
void rowChunks(SoftmaxContext &c, RowValues &r) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  int64_t chunks = llvm::divideCeil(c.partLen, span);
  for (int64_t k = 0; k < chunks; ++k) {
    Value start = cidx(b, loc, k * span);
    if (c.partStart)
      start = arith::AddIOp::create(b, loc, c.partStart, start);
    Value col = c.colOf(start);
    Value ok;
    if ((k + 1) * span > c.partLen)
      ok = c.partEnd ? c.lt(col, c.partEnd) : c.lt(col, c.n);
    r.cols.push_back(col);
    r.valid.push_back(ok);
  }
}

/// The type of a chunk as loadChunks returns it.
VectorType chunkType(SoftmaxContext &c) {
  return keepsPacked(c) ? VectorType::get({c.vec}, c.b.getBF16Type())
                        : c.vecType;
}

/// Issues the loads of the row at c.rowBase: each chunk as loaded (bf16,
/// where the row is kept packed) or widened (c.load); a chunk past the
/// part's end holds `fill`.
SmallVector<Value> loadChunks(SoftmaxContext &c, const RowValues &r,
                              float fill) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  bool packed = keepsPacked(c);
  VectorType t = chunkType(c);
  SmallVector<Value> vals;
  for (auto [col, ok] : llvm::zip(r.cols, r.valid)) {
    auto loadOne = [&, col = col]() -> Value {
      if (!packed)
        return c.load(col);
      return vector::LoadOp::create(
          b, loc, t, c.in,
          ValueRange{arith::AddIOp::create(b, loc, c.rowBase, col)}, false,
          llvm::MaybeAlign(c.vec * 2));
    };
    if (!ok) {
      vals.push_back(loadOne());
      continue;
    }
    auto ifIn = scf::IfOp::create(b, loc, TypeRange{t}, ok, true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    scf::YieldOp::create(b, loc, loadOne());
    b.setInsertionPointToStart(ifIn.elseBlock());
    Attribute fillAttr =
        packed ? Attribute(b.getFloatAttr(b.getBF16Type(), fill))
               : Attribute(b.getF32FloatAttr(fill));
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(t, fillAttr))
            .getResult());
    vals.push_back(ifIn.getResult(0));
  }
  return vals;
}

/// Takes the loaded chunks `vals` as the row's values: the first pass's
/// f32 lanes, and the packed chunks where the row is kept packed.
void takeChunks(SoftmaxContext &c, RowValues &r, ValueRange vals) {
  bool packed = keepsPacked(c);
  for (Value v : vals) {
    if (packed)
      r.raw.push_back(v);
    r.xs.push_back(c.lanes(packed ? c.widen(v) : v));
  }
}

RowValues loadRow(SoftmaxContext &c, float fill) {
  RowValues r;
  rowChunks(c, r);
  takeChunks(c, r, loadChunks(c, r, fill));
  return r;
}

/// Stores chunk k's lanes, computed by `lanesOf(k)` inside the guard of a
/// chunk that may lie past the row's end (so the weight and bias loads it
/// makes are guarded too).
void storeRow(SoftmaxContext &c, const RowValues &r,
              function_ref<SmallVector<Value>(int64_t k)> lanesOf) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  for (int64_t k = 0; k < static_cast<int64_t>(r.cols.size()); ++k) {
    OpBuilder::InsertionGuard g(b);
    if (r.valid[k]) {
      auto ifIn = scf::IfOp::create(b, loc, r.valid[k], false);
      b.setInsertionPointToStart(ifIn.thenBlock());
    }
    SmallVector<Value> ys = lanesOf(k);
    c.store(vector::FromElementsOp::create(b, loc, c.vecType, ys), r.cols[k]);
  }
}

/// `xs` with every lane of a chunk past the row's end replaced by `fill`.
Value masked(SoftmaxContext &c, const RowValues &r, int64_t k, Value x,
             float fill) {
  if (!r.valid[k])
    return x;
  return arith::SelectOp::create(c.b, c.loc, r.valid[k], x,
                                 cf32(c.b, c.loc, fill));
}

Value sumOf(SoftmaxContext &c, const RowValues &r,
            function_ref<Value(int64_t k, Value x)> term) {
  Value s = cf32(c.b, c.loc, 0.0f);
  for (auto [k, lanes] : llvm::enumerate(r.xs))
    for (Value x : lanes)
      s = c.addf(s, term(k, x));
  return s;
}

} // namespace

LogicalResult mlir::kb::buildRowReduceKernel(const KernelRequest &req,
                                             LaunchInfo &info) {
  Operation *op = req.op;
  if (auto red = dyn_cast<ReduceOp>(op)) {
    if (red.getAll())
      return buildWholeReduceKernel(req, info);
    if (red.isColumnReduction())
      return buildColumnReduceKernel(req, info);
  }
  auto fusion = dyn_cast<FusionOp>(op);
  Operation *anchor = fusion ? getFusionAnchor(fusion) : op;
  if (!anchor)
    return op->emitOpError() << "has no row reduction to build";
  Value x = anchor->getOperand(0);
  auto inType = cast<RankedTensorType>(x.getType());
  int64_t n = inType.getShape().back();
  int64_t rows = inType.getNumElements() / n;
  int64_t threads = req.config.getThreads();
  int64_t vec = std::max<int64_t>(req.config.getVector(), 1);
  if (n % vec != 0)
    return op->emitOpError() << "vector width " << vec
                             << " does not divide the row length " << n;
  if (rows > std::numeric_limits<int32_t>::max())
    return op->emitOpError()
           << "has " << rows << " rows, more than a grid holds";
  bool online = req.config.getStrategy() == SoftmaxStrategy::online;
  bool split = req.config.getStrategy() == SoftmaxStrategy::cluster;
  if (req.config.getStrategy() && !online && !split)
    return op->emitOpError()
           << "row kernels take strategy \"online\" (rows read in loops), "
              "\"cluster\" (a row over a cluster's registers) or none (the "
              "row in registers), not \""
           << nameOf(req.config.getStrategy()) << "\"";
  int64_t cluster = split ? req.config.getCluster() : 1;
  if (split &&
      (!llvm::is_contained({2, 4, 8}, cluster) || n % (cluster * vec) != 0))
    return op->emitOpError()
           << "strategy \"cluster\" splits a row over 2, 4 or 8 blocks whose "
              "parts are whole vectors; cluster = "
           << cluster << " with vector " << vec << " does not divide the row "
           << "length " << n;
  if (rows * cluster > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << "has " << rows << " rows of " << cluster
                             << " blocks each, more than a grid holds";
  // block = [R]: R rows a block, one warp a row (SelectConfig.cpp's
  // kRowsPerBlockByDefault): each warp's reduction is its shuffles alone.
  int64_t rowsPerBlock = req.config.getBlock().empty()
                             ? 1
                             : req.config.getBlock()[0];
  if (!req.config.getBlock().empty() &&
      (online || split || rowsPerBlock < 1 || rows % rowsPerBlock != 0 ||
       threads != 32 * rowsPerBlock))
    return op->emitOpError()
           << "block = [" << rowsPerBlock
           << "] (rows a block, one warp a row) needs the row in registers "
              "(no strategy), threads = 32 x rows a block and the rows ("
           << rows << ") a multiple of it; got threads = " << threads;
  if (int64_t g = req.config.getGrid();
      g && (online || split || req.config.getBlock().empty() ||
            threads != 32 * rowsPerBlock || g * rowsPerBlock > rows))
    return op->emitOpError()
           << "grid = " << g
           << " (a persistent grid of warp rows) needs block = [rows a "
              "block] with threads = 32 x that, no strategy, and at most "
           << rows << " rows' warps (grid x rows a block)";
  int64_t rowThreads = threads / rowsPerBlock;
  int64_t partLen = n / cluster;
  int64_t perThread = llvm::divideCeil(partLen, rowThreads * vec) * vec;
  if (perThread > kMaxRowValuesPerThread && !online) {
    auto diag = op->emitOpError()
                << "would hold " << perThread
                << " values of each row per thread (row length " << n << ", ";
    if (split)
      diag << cluster << " blocks of ";
    diag << threads << " threads); at most " << kMaxRowValuesPerThread
         << " fit in registers: use strategy \"online\" (the row read "
            "in loops)";
    if (split && cluster < kMaxRowCluster)
      diag << " or a larger cluster";
    return diag;
  }
  info.grid = {req.config.getGrid() ? req.config.getGrid()
                                     : rows * cluster / rowsPerBlock,
               1, 1};
  info.block = {threads, 1, 1};
  info.cluster = {cluster, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto scratchType = MemRefType::get({32}, Float32Type::get(ctx), nullptr, wg);
  // One scratch buffer per block reduction: a thread may still read the
  // first one's partials while another warp writes the second's.
  Value scratch0 = func.addWorkgroupAttribution(scratchType, loc);
  Value scratch1 = func.addWorkgroupAttribution(scratchType, loc);
  // The cluster strategy's partials: one slot per exchange, or a
  // layer_norm's (mean, M2) pair.
  Value clusterPartial;
  if (split)
    clusterPartial = func.addWorkgroupAttribution(
        MemRefType::get({2}, Float32Type::get(ctx), nullptr, wg), loc);

  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  // The kernel's arguments (the entry block also holds the workgroup
  // buffers after them).
  auto kargs = func.getArguments().take_front(func.getNumArguments());
  SoftmaxContext c{b,
                   loc,
                   n,
                   rowThreads,
                   vec,
                   Value(),
                   flatten(b, loc, kargs.back()),
                   Value(),
                   Value(),
                   VectorType::get({vec}, b.getF32Type())};
  // The norm's weight and bias buffers (flattened 1-D), when it has them.
  auto paramMem = [&](Value v) -> Value {
    if (!v)
      return Value();
    if (auto ba = dyn_cast<BlockArgument>(v))
      return flatten(b, loc, kargs[ba.getArgNumber()]);
    return Value();
  };
  Value weight, bias;
  if (fusion) {
    // A norm's input must be a kernel input or its prologue's result.
    if (!isa<BlockArgument>(x) &&
        !(x.getDefiningOp() && x.getDefiningOp()->getBlock() ==
                                   &fusion.getBody().front()))
      return op->emitOpError() << "has a norm whose input is neither a "
                                  "kernel input nor its prologue's result";
    if (failed(softmax::bindFusedChains(c, op, fusion, anchor, x, inType,
                                        kargs, "norm")))
      return failure();
    for (Value p : anchor->getOperands().drop_front())
      if (!isa<BlockArgument>(p))
        return op->emitOpError() << "has a norm whose weight or bias is "
                                    "computed inside the fusion";
  } else {
    c.in = flatten(b, loc, kargs[0]);
  }
  if (auto ln = dyn_cast<LayerNormOp>(anchor)) {
    weight = fusion ? paramMem(ln.getWeight())
                    : (ln.getWeight() ? flatten(b, loc, kargs[1]) : Value());
    bias = fusion ? paramMem(ln.getBias())
                  : (ln.getBias() ? flatten(b, loc, kargs[2]) : Value());
  } else if (auto rn = dyn_cast<RmsNormOp>(anchor)) {
    weight = fusion ? paramMem(rn.getWeight())
                    : (rn.getWeight() ? flatten(b, loc, kargs[1]) : Value());
  }

  Value row = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  c.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  if (rowsPerBlock > 1) {
    // Warp w of block g holds row g R + w; c.tid is its lane.
    Value c32 = cidx(b, loc, 32);
    row = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, row, cidx(b, loc, rowsPerBlock)),
        arith::DivUIOp::create(b, loc, c.tid, c32));
    c.tid = arith::RemUIOp::create(b, loc, c.tid, c32);
  }
  c.partLen = c.minPartLen = partLen;
  Value rank;
  if (split) {
    // Blocks [row * cluster, (row + 1) * cluster) form the row's cluster;
    // block `rank` of it holds columns [rank * partLen, (rank + 1) partLen).
    rank = arith::RemUIOp::create(b, loc, row, cidx(b, loc, cluster));
    row = arith::DivUIOp::create(b, loc, row, cidx(b, loc, cluster));
    c.partStart = arith::MulIOp::create(b, loc, rank, cidx(b, loc, partLen));
    c.partEnd =
        arith::AddIOp::create(b, loc, c.partStart, cidx(b, loc, partLen));
  }
  c.rowBase = arith::MulIOp::create(b, loc, row, cidx(b, loc, n));
  Value nF = cf32(b, loc, static_cast<float>(n));
  auto add = gpu::AllReduceOperation::ADD;
  auto max = gpu::AllReduceOperation::MAXIMUMF;
  if (online) {
    buildRowNormOnline(c, anchor, weight, bias, scratch0, scratch1, row);
    return success();
  }

  // y = d * r (* w[col]) (+ b[col]) for chunk k's lanes.
  auto scaled = [&](const RowValues &r,
                    function_ref<SmallVector<Value>(int64_t k)> dsOf,
                    Value rstd) {
    storeRow(c, r, [&](int64_t k) {
      SmallVector<Value> dk = dsOf(k);
      SmallVector<Value> ys;
      SmallVector<Value> ws, bs;
      if (weight)
        ws = c.lanes(c.loadVec(weight, r.cols[k]));
      if (bias)
        bs = c.lanes(c.loadVec(bias, r.cols[k]));
      for (auto [l, d] : llvm::enumerate(dk)) {
        Value y = c.mulf(d, rstd);
        if (weight)
          y = c.mulf(y, ws[l]);
        if (bias)
          y = c.addf(y, bs[l]);
        ys.push_back(y);
      }
      return ys;
    });
  };
  // A block reduction, then (cluster) the exchange of the blocks' results
  // through word `slot` of the partials; `last`: no exchange follows, so
  // the block arrives on the cluster barrier (done reading the others'
  // shared memory) and waits on it before it exits (waitCluster).
  auto rowReduce = [&](Value v, gpu::AllReduceOperation kind, Value scratch,
                       int64_t slot, bool last) {
    Value r = emitBlockReduce(b, loc, v, kind, rowThreads, scratch);
    if (!split)
      return r;
    r = combineInRankOrder(c, r, clusterPartial, slot, cluster, kind);
    if (last)
      NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
    return r;
  };
  auto waitCluster = [&] {
    if (split)
      NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  };
  auto rsqrtOf = [&](Value meanSquare, FloatAttr eps) {
    Value a = c.addf(meanSquare, arith::ConstantOp::create(b, loc, eps));
    return math::RsqrtOp::create(b, loc, a).getResult();
  };

  // grid = G (with block = [R]): a persistent grid whose warp w takes rows
  // w, w + G R, ..., the next row's loads issued before this row's
  // reductions and stores. Inside its loop `loopVals` holds the current
  // row's chunks, loaded by the previous iteration.
  int64_t persistent = req.config.getGrid();
  ValueRange loopVals;
  auto getRow = [&](float fill) {
    if (loopVals.empty())
      return loadRow(c, fill);
    RowValues r;
    rowChunks(c, r);
    takeChunks(c, r, loopVals);
    return r;
  };
  // The row's computation and stores, at `row` (c.rowBase).
  auto emitRow = [&]() -> LogicalResult {
    if (auto ln = dyn_cast<LayerNormOp>(anchor)) {
      RowValues r = getRow(0.0f);
      Value s = sumOf(c, r, [](int64_t, Value x) { return x; });
      // The centre of the deviations: the row's mean, or with a cluster the
      // block's part's (a block reduction, no exchange).
      Value total = split ? emitBlockReduce(b, loc, s, add, rowThreads, scratch0)
                          : rowReduce(s, add, scratch0, 0, /*last=*/false);
      Value centre = arith::DivFOp::create(
          b, loc, total,
          split ? cf32(b, loc, static_cast<float>(partLen)) : nF);
      // The deviations d = x - m of chunk k, from pass `form`'s lanes.
      auto devs = [&](int64_t k, int form, Value m) {
        SmallVector<Value> d;
        for (Value x : relanes(c, r, k, form))
          d.push_back(masked(c, r, k, c.subf(x, m), 0.0f));
        return d;
      };
      SmallVector<SmallVector<Value>> ds;
      for (int64_t k = 0; k < static_cast<int64_t>(r.xs.size()); ++k)
        ds.push_back(devs(k, 1, centre));
      Value q = cf32(b, loc, 0.0f);
      for (auto &lanes : ds)
        for (Value d : lanes)
          q = c.addf(q, c.mulf(d, d));
      Value mean = centre, var;
      // With a cluster, d + shift = x - mean (the row's).
      Value shift;
      if (split) {
        // One exchange: the parts' (mean, M2) pairs, merged in rank order.
        auto [rowMean, m2] = combineMomentsInRankOrder(
            c, centre,
            emitBlockReduce(b, loc, q, add, rowThreads, scratch1),
            clusterPartial, cluster, partLen);
        NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
        mean = rowMean;
        var = arith::DivFOp::create(b, loc, m2, nF);
        shift = c.subf(centre, mean);
      } else {
        var = arith::DivFOp::create(
            b, loc, rowReduce(q, add, scratch1, 1, /*last=*/true), nF);
      }
      // Packed, the write forms the deviations from the row's mean again
      // from the packed row; else it reuses those held in registers.
      scaled(
          r,
          [&](int64_t k) {
            if (!r.raw.empty())
              return devs(k, 2, mean);
            if (!shift)
              return ds[k];
            SmallVector<Value> d;
            for (Value v : ds[k])
              d.push_back(c.addf(v, shift));
            return d;
          },
          rsqrtOf(var, ln.getEpsAttr()));
      waitCluster();
      return success();
    }
    if (auto rn = dyn_cast<RmsNormOp>(anchor)) {
      RowValues r = getRow(0.0f);
      Value q = sumOf(c, r, [&](int64_t, Value x) { return c.mulf(x, x); });
      Value ms = arith::DivFOp::create(
          b, loc, rowReduce(q, add, scratch0, 0, /*last=*/true), nF);
      scaled(
          r, [&](int64_t k) { return relanes(c, r, k, 1); },
          rsqrtOf(ms, rn.getEpsAttr()));
      waitCluster();
      return success();
    }
    auto red = cast<ReduceOp>(anchor);
    ReductionKind kind = red.getKind();
    Value result;
    if (kind == ReductionKind::sum || kind == ReductionKind::mean) {
      RowValues r = getRow(0.0f);
      Value s = sumOf(c, r, [](int64_t, Value x) { return x; });
      result = rowReduce(s, add, scratch0, 0, /*last=*/true);
      if (kind == ReductionKind::mean)
        result = arith::DivFOp::create(b, loc, result, nF);
    } else {
      // min(x) = -max(-x): emitBlockReduce's identities are for ADD and
      // MAXIMUMF. Lanes past the row's end hold -inf after the negation.
      float negInf = -std::numeric_limits<float>::infinity();
      bool isMin = kind == ReductionKind::min;
      RowValues r = getRow(isMin ? -negInf : negInf);
      Value m = cf32(b, loc, negInf);
      for (auto &lanes : r.xs)
        for (Value v : lanes)
          m = c.maxf(m, isMin ? arith::NegFOp::create(b, loc, v).getResult() : v);
      result = rowReduce(m, max, scratch0, 0, /*last=*/true);
      if (isMin)
        result = arith::NegFOp::create(b, loc, result);
    }
    waitCluster();
    // Thread 0 stores the row's value (with a cluster: block 0's).
    Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                         cidx(b, loc, 0));
    if (split)
      isZero = arith::AndIOp::create(
          b, loc, isZero,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rank,
                                cidx(b, loc, 0)));
    auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
    b.setInsertionPointToStart(ifZero.thenBlock());
    memref::StoreOp::create(b, loc, c.narrow(result, c.out), c.out,
                            ValueRange{row});
    return success();
  };
  if (!persistent)
    return emitRow();
  // The value a chunk past the row's end holds (as emitRow's loads).
  float fill = 0.0f;
  if (auto red = dyn_cast<ReduceOp>(anchor)) {
    float inf = std::numeric_limits<float>::infinity();
    if (red.getKind() == ReductionKind::min)
      fill = inf;
    else if (red.getKind() == ReductionKind::max)
      fill = -inf;
  }
  int64_t stride = persistent * rowsPerBlock;
  RowValues chunks;
  rowChunks(c, chunks);
  SmallVector<Value> first = loadChunks(c, chunks, fill);
  SmallVector<Type> types(first.size(), chunkType(c));
  LogicalResult built = success();
  scf::ForOp::create(
      b, loc, row, cidx(b, loc, rows), cidx(b, loc, stride), first,
      [&](OpBuilder &, Location, Value iv, ValueRange args) {
        Block *body = b.getInsertionBlock();
        Value next = arith::AddIOp::create(b, loc, iv, cidx(b, loc, stride));
        auto ifNext = scf::IfOp::create(b, loc, types, c.lt(next, rows), true);
        {
          OpBuilder::InsertionGuard g(b);
          b.setInsertionPointToStart(ifNext.thenBlock());
          c.rowBase = arith::MulIOp::create(b, loc, next, cidx(b, loc, n));
          scf::YieldOp::create(b, loc, loadChunks(c, chunks, fill));
          b.setInsertionPointToStart(ifNext.elseBlock());
          SmallVector<Value> none;
          for (Type t : types)
            none.push_back(arith::ConstantOp::create(
                b, loc, cast<TypedAttr>(b.getZeroAttr(t))));
          scf::YieldOp::create(b, loc, none);
        }
        row = iv;
        c.rowBase = arith::MulIOp::create(b, loc, iv, cidx(b, loc, n));
        loopVals = args;
        built = emitRow();
        b.setInsertionPointToEnd(body);
        scf::YieldOp::create(b, loc, ifNext.getResults());
      });
  return built;
}
