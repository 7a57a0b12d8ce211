//===- ColumnReduce.cpp - kb.reduce over a non-last axis, read coalesced --===//
//
// A kb.reduce over axis a < rank - 1 views its input as [outer, R, inner]
// (R the reduced axis' length, inner the product of the axes after it) and
// its output as [outer, inner]. Each thread owns `vector` consecutive
// columns of inner, so a warp's load of one row is one contiguous run of
// memory (coalesced). A block of `threads` threads is C = threads / S
// column threads by S slices (`block = [S]` in #kb.config): slice s reduces
// the rows r = s, s + S, s + 2S, ... of its columns, four rows a step with
// every load issued before the first add, in a fixed order. The S partial
// results of a column then meet in shared memory and slice 0 combines them
// in slice order 0, 1, ..., S - 1: the same bits on every run (no atomics,
// no order that depends on scheduling). One block per (outer index, run of
// C * vector columns), a 1-D grid; f32 accumulation, 16-bit loads and
// stores where the tensors are f16 or bf16.
//
// The whole-tensor reduction (kb.reduce `all`) is two stages of these
// kernels' kind, each deterministic: RowNorm.cpp's row kernel over the flat
// input viewed as rows (the partials), then one block over the partials
// (kb-split-reduce writes the two ops; this file is not involved).
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

namespace {

/// Rows a slice loads before it accumulates them.
constexpr int64_t kRowsInFlight = 4;

} // namespace

LogicalResult mlir::kb::buildColumnReduceKernel(const KernelRequest &req,
                                                LaunchInfo &info) {
  auto red = cast<ReduceOp>(req.op);
  auto inType = red.getInput().getType();
  ArrayRef<int64_t> shape = inType.getShape();
  int64_t axis = red.getReducedAxis();
  int64_t outer = 1, inner = 1, rowsR = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < inType.getRank(); ++d)
    inner *= shape[d];
  int64_t threads = req.config.getThreads();
  int64_t vec = std::max<int64_t>(req.config.getVector(), 1);
  int64_t slices = req.config.getBlock().empty() ? 1 : req.config.getBlock()[0];
  if (threads <= 0 || slices <= 0 || threads % slices != 0)
    return red->emitOpError()
           << "column reduction config needs threads (" << threads
           << ") a multiple of block[0], the slices of the reduced axis ("
           << slices << ")";
  if (inner % vec != 0)
    return red->emitOpError()
           << "vector width " << vec << " does not divide the " << inner
           << " columns after the reduced axis";
  int64_t cols = threads / slices; // column threads
  int64_t span = cols * vec;       // columns a block covers
  int64_t colBlocks = llvm::divideCeil(inner, span);
  if (outer * colBlocks > std::numeric_limits<int32_t>::max())
    return red->emitOpError() << "needs " << outer * colBlocks
                              << " blocks, more than a grid holds";
  info.grid = {outer * colBlocks, 1, 1};
  info.block = {threads, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = red->getLoc();
  MLIRContext *ctx = red->getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value scratch = func.addWorkgroupAttribution(
      MemRefType::get({threads * vec}, Float32Type::get(ctx), nullptr, wg),
      loc);
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  auto kargs = func.getArguments().take_front(func.getNumArguments());
  SoftmaxContext c{b,
                   loc,
                   inner,
                   threads,
                   vec,
                   flatten(b, loc, kargs[0]),
                   flatten(b, loc, kargs.back()),
                   Value(),
                   Value(),
                   VectorType::get({vec}, b.getF32Type())};

  ReductionKind kind = red.getKind();
  float identity =
      kind == ReductionKind::max   ? -std::numeric_limits<float>::infinity()
      : kind == ReductionKind::min ? std::numeric_limits<float>::infinity()
                                   : 0.0f;
  auto combine = [&](Value acc, Value x) -> Value {
    switch (kind) {
    case ReductionKind::max:
      return c.maxf(acc, x);
    case ReductionKind::min:
      return arith::MinimumFOp::create(b, loc, acc, x);
    default:
      return c.addf(acc, x);
    }
  };

  Value blk = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value o = arith::DivUIOp::create(b, loc, blk, cidx(b, loc, colBlocks));
  Value cb = arith::RemUIOp::create(b, loc, blk, cidx(b, loc, colBlocks));
  Value cg = arith::RemUIOp::create(b, loc, tid, cidx(b, loc, cols));
  Value slice = arith::DivUIOp::create(b, loc, tid, cidx(b, loc, cols));
  Value col = arith::MulIOp::create(
      b, loc,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, cb, cidx(b, loc, cols)), cg),
      cidx(b, loc, vec));
  Value colOk = c.lt(col, inner);
  // Threads past the last column read the last vector (a valid address,
  // no branch in the loop) and store nothing.
  Value colRead =
      arith::MinUIOp::create(b, loc, col, cidx(b, loc, inner - vec));
  Value base = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, o, cidx(b, loc, rowsR * inner)),
      colRead);
  auto loadRow = [&](Value r) {
    Value at = arith::AddIOp::create(
        b, loc, base, arith::MulIOp::create(b, loc, r, cidx(b, loc, inner)));
    return c.lanes(c.loadVec(c.in, at));
  };

  SmallVector<Value> init(vec, cf32(b, loc, identity));
  // Main loop: kRowsInFlight rows of the slice a step, all loads first.
  int64_t step = slices * kRowsInFlight;
  int64_t full = rowsR / step * step;
  SmallVector<Value> acc = init;
  if (full > 0) {
    auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, full),
                                   cidx(b, loc, step), init);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value r0 = arith::AddIOp::create(b, loc, loop.getInductionVar(), slice);
    SmallVector<SmallVector<Value>> rows;
    for (int64_t u = 0; u < kRowsInFlight; ++u)
      rows.push_back(
          loadRow(arith::AddIOp::create(b, loc, r0, cidx(b, loc, u * slices))));
    auto iterArgs = loop.getRegionIterArgs();
    SmallVector<Value> next(iterArgs.begin(), iterArgs.end());
    for (auto &lanes : rows)
      for (auto [a, x] : llvm::zip(next, lanes))
        a = combine(a, x);
    scf::YieldOp::create(b, loc, next);
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  // Tail: the rows past the last full step, one at a time.
  if (full < rowsR) {
    auto loop = scf::ForOp::create(
        b, loc, arith::AddIOp::create(b, loc, cidx(b, loc, full), slice),
        cidx(b, loc, rowsR), cidx(b, loc, slices), acc);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    auto iterArgs = loop.getRegionIterArgs();
    SmallVector<Value> next(iterArgs.begin(), iterArgs.end());
    for (auto [a, x] : llvm::zip(next, loadRow(loop.getInductionVar())))
      a = combine(a, x);
    scf::YieldOp::create(b, loc, next);
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }

  // The slices' partials meet in shared memory; slice 0 combines them in
  // slice order.
  Value slot = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, slice, cidx(b, loc, span)),
      arith::MulIOp::create(b, loc, cg, cidx(b, loc, vec)));
  if (slices > 1) {
    for (int64_t l = 0; l < vec; ++l)
      memref::StoreOp::create(
          b, loc, acc[l], scratch,
          ValueRange{arith::AddIOp::create(b, loc, slot, cidx(b, loc, l))});
    gpu::BarrierOp::create(b, loc);
  }
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slice,
                                      cidx(b, loc, 0));
  auto ifStore = scf::IfOp::create(
      b, loc, arith::AndIOp::create(b, loc, first, colOk), false);
  b.setInsertionPointToStart(ifStore.thenBlock());
  for (int64_t s = 1; s < slices; ++s)
    for (int64_t l = 0; l < vec; ++l) {
      Value at =
          arith::AddIOp::create(b, loc, slot, cidx(b, loc, s * span + l));
      acc[l] = combine(acc[l],
                       memref::LoadOp::create(b, loc, scratch, ValueRange{at}));
    }
  if (kind == ReductionKind::mean)
    for (Value &a : acc)
      a = arith::DivFOp::create(b, loc, a,
                                cf32(b, loc, static_cast<float>(rowsR)));
  Value outAt = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, o, cidx(b, loc, inner)), col);
  Value y = vector::FromElementsOp::create(b, loc, c.vecType, acc);
  vector::StoreOp::create(
      b, loc, c.narrow(y, c.out), c.out, ValueRange{outAt}, false,
      llvm::MaybeAlign(vec * SoftmaxContext::bytesOf(c.out)));
  return success();
}
