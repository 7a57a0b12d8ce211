//===- MatmulEmitter.cpp - the pieces every matmul kernel shares ----------===//
//
// MatmulEmitter: index arithmetic, guarded loads, cp.async copies and the
// pipeline step, register staging of A and B tiles, the shared-memory stage
// views and the guarded stores of C through the fused epilogue. The FFMA,
// mma.sync and wgmma kernels (MatmulFfma.cpp, MatmulMmaSync.cpp,
// MatmulWgmma.cpp) build on it; it calls none of them.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"
#include "MatmulGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

MatmulShape MatmulShape::of(MatmulOp mm) {
  MatmulShape s;
  auto a = mm.getLhs().getType().getShape();
  auto c = mm.getResult().getType().getShape();
  size_t r = a.size();
  s.batched = r == 3;
  s.batch = s.batched ? a[0] : 1;
  // (A split-K result is S x M x N: M and N are its last two dimensions.)
  s.m = c[c.size() - 2];
  s.n = c[c.size() - 1];
  s.k = a[r - 1];
  s.transB = mm.getTransposeB();
  if (std::optional<int64_t> chunk = mm.getSplitChunk()) {
    s.splits = c[0];
    s.chunk = *chunk;
  }
  return s;
}

SmallVector<Value> MatmulEmitter::cIndex(Value batchIdx, Value i, Value j) {
  if (shape.splits > 1 && !clusterReduce)
    return {batchIdx, i, j};
  return globalIndex(batchIdx, i, j);
}

int64_t MatmulEmitter::kTilesPerBlock() const {
  return shape.splits > 1 ? shape.chunk / bk : llvm::divideCeil(shape.k, bk);
}

bool MatmulEmitter::kPastEnd() const {
  return kTilesPerBlock() * bk * std::max<int64_t>(shape.splits, 1) > shape.k;
}

bool MatmulEmitter::rowsPastEnd() const {
  int64_t cl = config.getCluster();
  return shape.m % bm ||
         (cl > 1 && config.getGrid() == 0 &&
          llvm::divideCeil(shape.m, bm) % cl != 0);
}

Value MatmulEmitter::kAt(Value kt) {
  if (shape.splits == 1)
    return mul(kt, bk);
  Value split = splitIdx ? splitIdx
                         : gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  return mul(add(mul(split, kTilesPerBlock()), kt), bk);
}

Value MatmulEmitter::loadGuarded(Value mem, ValueRange idx,
                                 ArrayRef<std::pair<Value, int64_t>> bounds) {
  // Branch-free: each guarded index is clamped into the matrix, the load is
  // unconditional and a select zeroes what lies outside. A branch around
  // every load (the first version) kept the loads of the next tile from
  // being issued ahead of the current tile's FFMAs: 4000^3 reached 0.61 of
  // 4096^3's throughput (run 14).
  SmallVector<Value> conds;
  SmallVector<Value> at(idx.begin(), idx.end());
  for (auto [v, bound] : bounds) {
    if (!v)
      continue;
    conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                          cidx(b, loc, bound)));
    for (Value &i : at)
      if (i == v)
        i = arith::MinUIOp::create(b, loc, v, cidx(b, loc, bound - 1));
  }
  Value x = memref::LoadOp::create(b, loc, mem, at);
  if (conds.empty())
    return x;
  Value cond = conds[0];
  for (Value c : ArrayRef<Value>(conds).drop_front())
    cond = arith::AndIOp::create(b, loc, cond, c);
  return arith::SelectOp::create(b, loc, cond, x, cf32(b, loc, 0.0f));
}

SmallVector<Value> MatmulEmitter::globalIndex(Value batchIdx, Value i,
                                              Value j) {
  SmallVector<Value> idx;
  if (shape.batched)
    idx.push_back(batchIdx);
  idx.append({i, j});
  return idx;
}

Value MatmulEmitter::add(Value x, int64_t c) {
  return c == 0 ? x
                : arith::AddIOp::create(b, loc, x, cidx(b, loc, c)).getResult();
}
Value MatmulEmitter::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value MatmulEmitter::mul(Value x, int64_t c) {
  return c == 1 ? x
                : arith::MulIOp::create(b, loc, x, cidx(b, loc, c)).getResult();
}
Value MatmulEmitter::div(Value x, int64_t c) {
  return arith::DivUIOp::create(b, loc, x, cidx(b, loc, c));
}
Value MatmulEmitter::rem(Value x, int64_t c) {
  return arith::RemUIOp::create(b, loc, x, cidx(b, loc, c));
}

void MatmulEmitter::inOutputRange(Value row, Value col,
                                  function_ref<void()> body) {
  Value cond = outputInRange(row, col);
  if (!cond) {
    body();
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, cond, false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}

Value MatmulEmitter::outputInRange(Value row, Value col) {
  Value cond;
  auto both = [&](Value c2) {
    cond = cond ? arith::AndIOp::create(b, loc, cond, c2).getResult() : c2;
  };
  if (rowsPastEnd())
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                               cidx(b, loc, shape.m)));
  if (shape.n % bn)
    both(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                               cidx(b, loc, shape.n)));
  return cond;
}

// With a fused epilogue and edge tiles, the values are computed
// unconditionally (the epilogue's loads clamped into the matrix) and their
// guarded stores are held back until every value of the thread exists
// (flushStores): with the epilogue inside each store's guard (the first
// version), ptxas ran one pair after the other -- load, GELU, store -- and
// the fused 1000x700x1500 kernels paid 5-7% for an epilogue of 32 elements
// per thread. Without an epilogue a branch around each store is as good.
Type MatmulEmitter::cElem() const {
  return cast<MemRefType>(c.getType()).getElementType();
}

Value MatmulEmitter::toC(Value v) {
  Type e = cElem();
  if (e.isF32())
    return v;
  if (auto vt = dyn_cast<VectorType>(v.getType()))
    return arith::TruncFOp::create(b, loc, VectorType::get(vt.getShape(), e),
                                   v);
  return arith::TruncFOp::create(b, loc, e, v);
}

Value MatmulEmitter::loadF32(Value mem, ValueRange idx) {
  Value v = memref::LoadOp::create(b, loc, mem, idx);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return v;
}

void MatmulEmitter::storeVector(Value batchIdx, Value row, Value col,
                                ArrayRef<Value> xs) {
  auto vt = VectorType::get({(int64_t)xs.size()}, b.getF32Type());
  Value vec = xs.size() == 1
                  ? vector::BroadcastOp::create(b, loc, vt, xs[0]).getResult()
                  : vector::FromElementsOp::create(b, loc, vt, xs).getResult();
  SmallVector<Value> idx = cIndex(batchIdx, row, col);
  Value in = outputInRange(row, col);
  if ((chain || partial == Partial::add) && in) {
    deferred.push_back({vec, in, idx});
    return;
  }
  // f32 computed, rounded once to C's type at the store.
  int64_t cBytes = cElem().getIntOrFloatBitWidth() / 8;
  inOutputRange(row, col, [&] {
    vector::StoreOp::create(b, loc, toC(vec), c, idx, false,
                            llvm::MaybeAlign(cBytes * xs.size()));
  });
}

void MatmulEmitter::flushStores() {
  // Every value is computed here, in one basic block, ahead of the first
  // guard; an empty asm statement that takes the values (it emits no
  // instruction) keeps LLVM from sinking each epilogue computation into the
  // branch of its store, where ptxas would again run them one at a time.
  for (DeferredStore &d : deferred) {
    auto vt = cast<VectorType>(d.value.getType());
    SmallVector<Value> elems;
    for (int64_t i = 0; i < vt.getNumElements(); ++i)
      elems.push_back(
          vector::ExtractOp::create(b, loc, d.value, ArrayRef<int64_t>{i}));
    pinValues(b, loc, elems);
  }
  for (DeferredStore &d : deferred) {
    auto ifOp = scf::IfOp::create(b, loc, d.inRange, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto vt = cast<VectorType>(d.value.getType());
    int64_t cBytes = cElem().getIntOrFloatBitWidth() / 8;
    vector::StoreOp::create(b, loc, toC(d.value), c, d.index, false,
                            llvm::MaybeAlign(cBytes * vt.getNumElements()));
  }
  deferred.clear();
}

void MatmulEmitter::storeC(Value batchIdx, Value row, Value col, Value v) {
  if (!chain && partial != Partial::add) {
    inOutputRange(row, col, [&] {
      memref::StoreOp::create(b, loc, toC(v), c, cIndex(batchIdx, row, col));
    });
    return;
  }
  storeVector(batchIdx, row, col, {epilogue(v, batchIdx, row, col)});
}

void MatmulEmitter::storeC2(Value batchIdx, Value row, Value col, Value v0,
                            Value v1) {
  if (shape.n % 2) {
    storeC(batchIdx, row, col, v0);
    storeC(batchIdx, row, add(col, 1), v1);
    return;
  }
  auto [x0, x1] = epilogue2(v0, v1, batchIdx, row, col);
  storeVector(batchIdx, row, col, {x0, x1});
}

void MatmulEmitter::asyncCopyChunk(Value src, SmallVector<Value> srcIdx,
                                   Value dst, ValueRange dstIdx,
                                   Value rowInRange, Value colStart,
                                   std::optional<int64_t> colBound) {
  auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // 16 bytes: 4 f32 or 8 16-bit elements.
  int64_t chunk =
      128 / cast<MemRefType>(dst.getType()).getElementTypeBitWidth();
  if (!rowInRange && !colBound) {
    // The whole chunk lies inside the tensor: a plain 16-byte copy.
    nvgpu::DeviceAsyncCopyOp::create(b, loc, token, dst, dstIdx, src, srcIdx,
                                     b.getIndexAttr(chunk), Value(),
                                     b.getUnitAttr());
    return;
  }
  // Elements of this chunk that exist: clamp(colBound - colStart, 0,
  // chunk), and none when the row is out of range.
  Value n = cidx(b, loc, chunk);
  if (colBound) {
    Value bound = cidx(b, loc, *colBound);
    Value left = arith::SubIOp::create(
        b, loc, bound, arith::MinUIOp::create(b, loc, colStart, bound));
    n = arith::MinUIOp::create(b, loc, left, n);
  }
  if (rowInRange)
    n = arith::SelectOp::create(b, loc, rowInRange, n, cidx(b, loc, 0));
  // A chunk that copies nothing still needs an address inside the tensor.
  // Without a column bound the column is inside, and only the row (and
  // batch) indices move to 0: they do not change along k, so the address
  // stays a loop-invariant base plus k.
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, n,
                                     cidx(b, loc, 0));
  for (size_t d = 0; d < srcIdx.size(); ++d)
    if (colBound || d + 1 < srcIdx.size())
      srcIdx[d] =
          arith::SelectOp::create(b, loc, none, cidx(b, loc, 0), srcIdx[d]);
  // .cg: skip L1. Tried .ca for rows that are not whole 32-byte sectors
  // (so that a sector shared by two k tiles stays in L1): 1000x700x1500 got
  // 30% slower on wgmma, 21% on mma.sync (2026-11-30 run 2).
  nvgpu::DeviceAsyncCopyOp::create(b, loc, token, dst, dstIdx, src, srcIdx,
                                   b.getIndexAttr(chunk), n, b.getUnitAttr());
}

void MatmulEmitter::asyncCopyElement(
    Value src, SmallVector<Value> srcIdx, Value dst, ValueRange dstIdx,
    ArrayRef<std::pair<Value, int64_t>> bounds) {
  // In range: copy the 4 bytes; outside: copy none (the slot is zero-filled)
  // from an address inside the tensor. Selects, no branch.
  SmallVector<Value> conds;
  for (auto [v, bound] : bounds)
    if (v)
      conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            v, cidx(b, loc, bound)));
  Value n;
  if (!conds.empty()) {
    Value in = conds[0];
    for (Value c : ArrayRef<Value>(conds).drop_front())
      in = arith::AndIOp::create(b, loc, in, c);
    n = arith::SelectOp::create(b, loc, in, cidx(b, loc, 1), cidx(b, loc, 0));
    for (Value &i : srcIdx)
      i = arith::SelectOp::create(b, loc, in, i, cidx(b, loc, 0));
  }
  nvgpu::DeviceAsyncCopyOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), dst, dstIdx,
      src, srcIdx, b.getIndexAttr(1), n, UnitAttr()); // 4 bytes: .ca only
}

void MatmulEmitter::pipelineStep(Value kt, Value lastGroup, int64_t pending,
                                 int64_t ahead, int64_t kTiles,
                                 bool fenceAsyncProxy,
                                 function_ref<void(Value next)> issue) {
  nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                   b.getI32IntegerAttr(pending));
  if (fenceAsyncProxy)
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  gpu::BarrierOp::create(b, loc);
  Value next = add(kt, ahead);
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, next,
                                     cidx(b, loc, kTiles));
  auto ifMore = scf::IfOp::create(b, loc, more, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifMore.thenBlock());
    issue(next);
  }
  nvgpu::DeviceAsyncCreateGroupOp::create(
      b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), ValueRange{});
}

/// Loads this thread's share of the A tile (rows row0.., columns k0..) and
/// the B tile into registers (zero outside the matrices), with the shared-
/// memory coordinates each value goes to.
StagedTile MatmulEmitter::loadTiles(Value batchIdx, Value row0, Value col0,
                                    Value k0, bool aTransposed) {
  StagedTile t;
  bool guardM = rowsPastEnd(), guardN = shape.n % bn, guardK = kPastEnd();
  // A: BM x BK elements, consecutive threads along k.
  for (int64_t i = 0; i < bm * bk / threads; ++i) {
    Value e = add(tid, i * threads);
    Value r = div(e, bk), cc = rem(e, bk);
    Value gr = add(row0, r), gc = add(k0, cc);
    t.a.push_back(loadGuarded(
        a, globalIndex(batchIdx, gr, gc),
        {{guardM ? gr : Value(), shape.m}, {guardK ? gc : Value(), shape.k}}));
    t.aAt.push_back(aTransposed ? std::make_pair(cc, r)
                                : std::make_pair(r, cc));
  }
  // B: BK x BN elements, consecutive threads along B's contiguous axis.
  for (int64_t i = 0; i < bk * bn / threads; ++i) {
    Value e = add(tid, i * threads);
    Value kr, nc;
    if (!shape.transB) {
      kr = div(e, bn);
      nc = rem(e, bn);
    } else {
      kr = rem(e, bk);
      nc = div(e, bk);
    }
    Value gk = add(k0, kr), gn = add(col0, nc);
    t.b.push_back(shape.transB
                      ? loadGuarded(bmem, globalIndex(batchIdx, gn, gk),
                                    {{guardN ? gn : Value(), shape.n},
                                     {guardK ? gk : Value(), shape.k}})
                      : loadGuarded(bmem, globalIndex(batchIdx, gk, gn),
                                    {{guardK ? gk : Value(), shape.k},
                                     {guardN ? gn : Value(), shape.n}}));
    t.bAt.push_back({kr, nc});
  }
  return t;
}

void MatmulEmitter::storeTiles(const StagedTile &t, Value as, Value bs) {
  for (auto [v, at] : llvm::zip(t.a, t.aAt))
    memref::StoreOp::create(b, loc, v, as, ValueRange{at.first, at.second});
  for (auto [v, at] : llvm::zip(t.b, t.bAt))
    memref::StoreOp::create(b, loc, v, bs, ValueRange{at.first, at.second});
}

void MatmulEmitter::stageTiles(Value batchIdx, Value row0, Value col0, Value k0,
                               Value as, Value bs, bool aTransposed) {
  storeTiles(loadTiles(batchIdx, row0, col0, k0, aTransposed), as, bs);
}

LogicalResult MatmulEmitter::setSharedBytes(LaunchInfo &info, int64_t bytes) {
  int64_t planned =
      matmulSharedBytes(config, shape.transB, shape.n, cElem().isF32());
  if (bytes != planned)
    return op->emitOpError()
           << "internal error: the kernel lays out " << bytes
           << " bytes of shared memory, its #kb.config " << planned;
  info.dynamicSharedBytes = bytes;
  return success();
}

Value MatmulEmitter::dynamicSharedMemory() {
  return gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      gpu::AddressSpaceAttr::get(
                          b.getContext(), gpu::AddressSpace::Workgroup)));
}

MatmulEmitter::BlockTile MatmulEmitter::blockTile() {
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  int64_t group = config.getRaster();
  int64_t tilesM = llvm::divideCeil(shape.m, bm),
          tilesN = llvm::divideCeil(shape.n, bn);
  if (int64_t cl = config.getCluster(); cl > 1) {
    // A cluster of C blocks (by = Ci .. Ci + C - 1) takes rows Ci .. Ci + C
    // - 1 of one column of tiles: the cluster walks the order of tiles of C
    // BM rows (raster groups of G / C of them), each block its C-th; the
    // last cluster's rows may pass M (the grid is rounded up to whole
    // clusters, Matmul.cpp).
    BlockTile whole = tileAt(add(mul(div(by, cl), tilesN), bx), bz, cl * bm,
                             llvm::divideCeil(tilesM, cl),
                             std::max<int64_t>(group / cl, 1));
    whole.row0 = add(whole.row0, mul(rem(by, cl), bm));
    return whole;
  }
  if (group <= 1 || tilesM <= 1)
    return {bz, mul(by, bm), mul(bx, bn)};
  return tileAt(add(mul(by, tilesN), bx), bz);
}

MatmulEmitter::BlockTile MatmulEmitter::tileAt(Value t, Value z) {
  return tileAt(t, z, bm, llvm::divideCeil(shape.m, bm), config.getRaster());
}

MatmulEmitter::BlockTile MatmulEmitter::tileAt(Value t, Value z,
                                               int64_t rowStep, int64_t tilesM,
                                               int64_t group) {
  int64_t bm = rowStep;
  int64_t tilesN = llvm::divideCeil(shape.n, bn);
  if (group <= 1 || tilesM <= 1)
    return {z, mul(div(t, tilesN), bm), mul(rem(t, tilesN), bn)};
  // raster = G: tile t (launch order: block id by * tilesN + bx) walks
  // groups of G block rows, the row fastest within a group: row = first +
  // t % rows, column = (t % (G * tilesN)) / rows, where the last group may
  // hold fewer rows.
  group = std::min(group, tilesM);
  Value groupIdx = div(t, group * tilesN);
  Value inGroup = rem(t, group * tilesN);
  Value first = mul(groupIdx, group);
  // Rows in this group: G, or what is left for the last group.
  Value rows = arith::MinUIOp::create(
      b, loc, arith::ConstantIndexOp::create(b, loc, group),
      arith::SubIOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, tilesM), first));
  Value row = arith::AddIOp::create(
      b, loc, first, arith::RemUIOp::create(b, loc, inGroup, rows));
  Value col = arith::DivUIOp::create(b, loc, inGroup, rows);
  return {z, mul(row, bm), mul(col, bn)};
}

std::pair<Value, Value> MatmulEmitter::stageViews(Value smem, Value stage,
                                                  int64_t stageBytes,
                                                  int64_t aRows, int64_t aCols,
                                                  int64_t bRows, int64_t bCols,
                                                  Type elem) {
  auto wg =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  if (!elem)
    elem = b.getF32Type();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  Value base = mul(stage, stageBytes);
  Value va = memref::ViewOp::create(
      b, loc, MemRefType::get({aRows, aCols}, elem, nullptr, wg), smem, base,
      ValueRange{});
  Value vb = memref::ViewOp::create(
      b, loc, MemRefType::get({bRows, bCols}, elem, nullptr, wg), smem,
      add(base, aRows * aCols * elemBytes), ValueRange{});
  return {va, vb};
}

DenseMap<Value, Value> MatmulEmitter::chainValues(Value v, Value batchIdx,
                                                  Value lr, Value lc) {
  DenseMap<Value, Value> values;
  values[chain->inputs[0]] = v; // the matmul's result
  auto resultType = cast<RankedTensorType>(chain->result.getType());
  for (Operation *op : chain->ops)
    for (Value in : op->getOperands()) {
      Value mem = chainInputs.lookup(in);
      if (!mem || values.count(in))
        continue;
      auto t = cast<RankedTensorType>(in.getType());
      SmallVector<Value> idx = t.getShape() == resultType.getShape()
                                   ? globalIndex(batchIdx, lr, lc)
                                   : SmallVector<Value>{lc};
      values[in] = loadF32(mem, idx);
    }
  return values;
}

Value MatmulEmitter::epilogue(Value v, Value batchIdx, Value row, Value col) {
  if (partial == Partial::store || (!chain && partial == Partial::none))
    return v;
  // Runs ahead of the store's range guard: load indices clamped into C.
  Value lr = row, lc = col;
  if (rowsPastEnd())
    lr = arith::MinUIOp::create(b, loc, row, cidx(b, loc, shape.m - 1));
  if (shape.n % bn)
    lc = arith::MinUIOp::create(b, loc, col, cidx(b, loc, shape.n - 1));
  // The other chunk's partial, added in the order kb.split_sum adds them
  // (chunk 0's + chunk 1's).
  if (partial == Partial::add)
    v = arith::AddFOp::create(b, loc, v,
                              loadF32(c, globalIndex(batchIdx, lr, lc)));
  if (!chain)
    return v;
  DenseMap<Value, Value> values = chainValues(v, batchIdx, lr, lc);
  // Row-major index of the element, for dropout's counter.
  Value flat = add(mul(add(mul(batchIdx, shape.m), row), shape.n), col);
  // The epilogue runs once per output element of a compute-bound kernel:
  // fast exp and division (kb-run checks the result against float64).
  return emitChainScalar(b, loc, *chain, values, flat, nullptr, 0,
                         /*fast=*/true);
}

std::array<Value, 2> MatmulEmitter::epilogue2(Value v0, Value v1,
                                              Value batchIdx, Value row,
                                              Value col) {
  if (!pairEpilogue()) {
    Value x0 = epilogue(v0, batchIdx, row, col);
    return {x0, epilogue(v1, batchIdx, row, add(col, 1))};
  }
  // As epilogue(), for both elements of the pair: loads clamped into C
  // (N is even, so col < N implies col + 1 < N), the other chunk's partial
  // added first.
  Value lr = row, lc = col;
  if (rowsPastEnd())
    lr = arith::MinUIOp::create(b, loc, row, cidx(b, loc, shape.m - 1));
  if (shape.n % bn)
    lc = arith::MinUIOp::create(b, loc, col, cidx(b, loc, shape.n - 2));
  std::array<Value, 2> cols{lc, add(lc, 1)}, vs{v0, v1};
  if (partial == Partial::add)
    for (int l = 0; l < 2; ++l)
      vs[l] = arith::AddFOp::create(
          b, loc, vs[l], loadF32(c, globalIndex(batchIdx, lr, cols[l])));
  std::array<DenseMap<Value, Value>, 2> values = {
      chainValues(vs[0], batchIdx, lr, cols[0]),
      chainValues(vs[1], batchIdx, lr, cols[1])};
  // The tables at the pair's position: row b * M + row of the flattened
  // [B * M, N] view, mod P (clamped rows are never stored).
  Value flatRow = add(mul(batchIdx, shape.m), lr);
  auto table = [&](RotaryOp rot, Value t) {
    auto [pos, tc] = rotaryTableIndex(b, loc, rot, flatRow, lc);
    return loadF32(chainTables.lookup(t), ValueRange{pos, tc});
  };
  Value flat = add(mul(add(mul(batchIdx, shape.m), row), shape.n), col);
  return emitChainPair(b, loc, *chain, values, {flat, add(flat, 1)}, table,
                       /*fast=*/true);
}
