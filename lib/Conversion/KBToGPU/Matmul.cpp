//===- Matmul.cpp - tiled matmul kernels ----------------------------------===//
//
// One block computes a BM x BN tile of C, looping over K in steps of BK. The
// A and B tiles of each step are staged in dynamic shared memory (rows padded
// as kb-promote-shared-memory decided); the accumulators stay in registers
// (loop-carried values of the k loop) and are written to C once, at the end.
// The inner tile is FFMA on a [TM, TN] register tile per thread
// (precision ieee), or mma.sync.m16n8k8 TF32 fragments per warp
// (MatmulMma.cpp). Edge tiles are guarded, so M, N and K need not be tile
// multiples.
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
  s.m = c[r - 2];
  s.n = c[r - 1];
  s.k = a[r - 1];
  s.transB = mm.getTransposeB();
  return s;
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

SmallVector<Value> MatmulEmitter::globalIndex(Value batchIdx, Value i, Value j) {
  SmallVector<Value> idx;
  if (shape.batched)
    idx.push_back(batchIdx);
  idx.append({i, j});
  return idx;
}

Value MatmulEmitter::add(Value x, int64_t c) {
  return c == 0 ? x : arith::AddIOp::create(b, loc, x, cidx(b, loc, c)).getResult();
}
Value MatmulEmitter::add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
Value MatmulEmitter::mul(Value x, int64_t c) {
  return c == 1 ? x : arith::MulIOp::create(b, loc, x, cidx(b, loc, c)).getResult();
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
  if (shape.m % bm)
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
void MatmulEmitter::storeVector(Value batchIdx, Value row, Value col,
                                ArrayRef<Value> xs) {
  auto vt = VectorType::get({(int64_t)xs.size()}, b.getF32Type());
  Value vec = xs.size() == 1
                  ? vector::BroadcastOp::create(b, loc, vt, xs[0]).getResult()
                  : vector::FromElementsOp::create(b, loc, vt, xs).getResult();
  SmallVector<Value> idx = globalIndex(batchIdx, row, col);
  Value in = outputInRange(row, col);
  if (chain && in) {
    deferred.push_back({vec, in, idx});
    return;
  }
  inOutputRange(row, col, [&] {
    vector::StoreOp::create(b, loc, vec, c, idx, false,
                            llvm::MaybeAlign(4 * xs.size()));
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
      elems.push_back(vector::ExtractOp::create(b, loc, d.value, ArrayRef<int64_t>{i}));
    std::string constraints;
    for (size_t i = 0; i < elems.size(); ++i)
      constraints += i ? ",f" : "f";
    LLVM::InlineAsmOp::create(b, loc, TypeRange{}, elems, "", constraints,
                              /*has_side_effects=*/true, /*is_align_stack=*/false,
                              LLVM::tailcallkind::TailCallKind::None,
                              LLVM::AsmDialectAttr(), ArrayAttr());
  }
  for (DeferredStore &d : deferred) {
    auto ifOp = scf::IfOp::create(b, loc, d.inRange, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto vt = cast<VectorType>(d.value.getType());
    vector::StoreOp::create(b, loc, d.value, c, d.index, false,
                            llvm::MaybeAlign(4 * vt.getNumElements()));
  }
  deferred.clear();
}

void MatmulEmitter::storeC(Value batchIdx, Value row, Value col, Value v) {
  if (!chain) {
    inOutputRange(row, col, [&] {
      memref::StoreOp::create(b, loc, v, c, globalIndex(batchIdx, row, col));
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
  storeVector(batchIdx, row, col,
              {epilogue(v0, batchIdx, row, col),
               epilogue(v1, batchIdx, row, add(col, 1))});
}

void MatmulEmitter::asyncCopyChunk(Value src, SmallVector<Value> srcIdx,
                                   Value dst, ValueRange dstIdx,
                                   Value rowInRange, Value colStart,
                                   std::optional<int64_t> colBound) {
  auto token = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  if (!rowInRange && !colBound) {
    // The whole chunk lies inside the tensor: a plain 16-byte copy.
    nvgpu::DeviceAsyncCopyOp::create(b, loc, token, dst, dstIdx, src, srcIdx,
                                     b.getIndexAttr(4), Value(), b.getUnitAttr());
    return;
  }
  // Elements of this chunk that exist: clamp(colBound - colStart, 0, 4),
  // and none when the row is out of range.
  Value n = cidx(b, loc, 4);
  if (colBound) {
    Value bound = cidx(b, loc, *colBound);
    Value left = arith::SubIOp::create(b, loc, bound,
                                       arith::MinUIOp::create(b, loc, colStart, bound));
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
      srcIdx[d] = arith::SelectOp::create(b, loc, none, cidx(b, loc, 0), srcIdx[d]);
  // .cg: skip L1. Tried .ca for rows that are not whole 32-byte sectors
  // (so that a sector shared by two k tiles stays in L1): 1000x700x1500 got
  // 30% slower on wgmma, 21% on mma.sync (2026-11-30 run 2).
  nvgpu::DeviceAsyncCopyOp::create(b, loc, token, dst, dstIdx, src, srcIdx,
                                   b.getIndexAttr(4), n, b.getUnitAttr());
}

void MatmulEmitter::asyncCopyElement(Value src, SmallVector<Value> srcIdx,
                                     Value dst, ValueRange dstIdx,
                                     ArrayRef<std::pair<Value, int64_t>> bounds) {
  // In range: copy the 4 bytes; outside: copy none (the slot is zero-filled)
  // from an address inside the tensor. Selects, no branch.
  SmallVector<Value> conds;
  for (auto [v, bound] : bounds)
    if (v)
      conds.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                            cidx(b, loc, bound)));
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
  nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup, b.getI32IntegerAttr(pending));
  if (fenceAsyncProxy)
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(), NVVM::SharedSpace::shared_cta));
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
  bool guardM = shape.m % bm, guardN = shape.n % bn, guardK = shape.k % bk;
  // A: BM x BK elements, consecutive threads along k.
  for (int64_t i = 0; i < bm * bk / threads; ++i) {
    Value e = add(tid, i * threads);
    Value r = div(e, bk), cc = rem(e, bk);
    Value gr = add(row0, r), gc = add(k0, cc);
    t.a.push_back(loadGuarded(a, globalIndex(batchIdx, gr, gc),
                              {{guardM ? gr : Value(), shape.m},
                               {guardK ? gc : Value(), shape.k}}));
    t.aAt.push_back(aTransposed ? std::make_pair(cc, r) : std::make_pair(r, cc));
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
  int64_t planned = matmulSharedBytes(config, shape.transB);
  if (bytes != planned)
    return op->emitOpError() << "internal error: the kernel lays out " << bytes
                             << " bytes of shared memory, its #kb.config "
                             << planned;
  info.dynamicSharedBytes = bytes;
  return success();
}

Value MatmulEmitter::dynamicSharedMemory() {
  return gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      gpu::AddressSpaceAttr::get(b.getContext(),
                                                 gpu::AddressSpace::Workgroup)));
}

MatmulEmitter::BlockTile MatmulEmitter::blockTile() {
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  return {bz, mul(by, bm), mul(bx, bn)};
}

std::pair<Value, Value>
MatmulEmitter::stageViews(Value smem, Value stage, int64_t stageBytes,
                          int64_t aRows, int64_t aCols, int64_t bRows,
                          int64_t bCols) {
  auto wg = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value base = mul(stage, stageBytes);
  Value va = memref::ViewOp::create(
      b, loc, MemRefType::get({aRows, aCols}, b.getF32Type(), nullptr, wg), smem,
      base, ValueRange{});
  Value vb = memref::ViewOp::create(
      b, loc, MemRefType::get({bRows, bCols}, b.getF32Type(), nullptr, wg), smem,
      add(base, aRows * aCols * 4), ValueRange{});
  return {va, vb};
}

static LogicalResult buildFfma(MatmulEmitter &e, LaunchInfo &info) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  auto cfg = e.config;
  int64_t tm = cfg.getThread()[0], tn = cfg.getThread()[1];
  int64_t padA = cfg.getPad().size() == 2 ? cfg.getPad()[0] : 0;
  int64_t padB = cfg.getPad().size() == 2 ? cfg.getPad()[1] : 0;
  int64_t bm = e.bm, bn = e.bn, bk = e.bk;
  int64_t lda = bm + padA, ldb = bn + padB;
  if (lda % 4 || ldb % 4)
    return e.op->emitOpError() << "FFMA kernel needs padded rows that are a "
                                  "multiple of 4 words for 16-byte loads";
  int64_t bytesA = bk * lda * 4, stageBytes = bytesA + bk * ldb * 4;
  // Two stages: the next tile's global loads are issued into registers
  // before this tile's FFMAs, and stored to the other buffer after them, so
  // their latency hides behind the arithmetic; one barrier per tile. ptxas
  // sinks those loads to just before the stores, though (run 1 of
  // 2026-11-30: the 16 LDGs of a tile sit 80% into the loop body), so the
  // stores wait for them. Three or more stages: cp.async copies (no
  // registers, nothing for ptxas to move) issued stages - 1 tiles ahead;
  // A is transposed on the way in by 4-byte copies, B (row-major, N a
  // multiple of 4) moves in 16-byte chunks.
  // Both chosen by kb-promote-shared-memory (copy = "registers": 1 or 2
  // stages; "cp_async": 3 or more, the tiles split evenly among the threads).
  int64_t stages = std::max<int64_t>(cfg.getStages(), 1);
  bool asyncCopy = cfg.getCopy() == CopyKind::cp_async;
  if (asyncCopy ? stages < 3 || (bm * bk) % e.threads || (bk * bn) % e.threads
                : stages > 2)
    return e.op->emitOpError() << "FFMA kernel cannot run copy = \""
                               << nameOf(cfg.getCopy()) << "\" with stages = "
                               << stages << ": run kb-promote-shared-memory";
  bool bChunks = asyncCopy && !e.shape.transB && e.shape.n % 4 == 0 &&
                 (bk * bn / 4) % e.threads == 0;
  if (failed(e.setSharedBytes(info, stages * stageBytes)))
    return failure();

  Value smem = e.dynamicSharedMemory();
  auto views = [&](Value stage) {
    return e.stageViews(smem, stage, stageBytes, bk, lda, bk, ldb);
  };

  MatmulEmitter::BlockTile tile = e.blockTile();
  Value bz = tile.batch, row0 = tile.row0, col0 = tile.col0;
  // The thread grid is (BM / TM) x (BN / TN). By default a warp takes
  // whole rows of it; with warp = [WM, WN] it takes a WM/TM x WN/TN block
  // (fewer distinct B vectors per warp load: one 128-byte wavefront).
  Value tx, ty;
  if (cfg.getWarp().size() == 2) {
    int64_t lanesX = cfg.getWarp()[1] / tn, lanesY = 32 / lanesX;
    int64_t warpsX = (bn / tn) / lanesX;
    Value warp = e.div(e.tid, 32), lane = e.rem(e.tid, 32);
    tx = e.add(e.mul(e.rem(warp, warpsX), lanesX), e.rem(lane, lanesX));
    ty = e.add(e.mul(e.div(warp, warpsX), lanesY), e.div(lane, lanesX));
  } else {
    tx = e.rem(e.tid, bn / tn);
    ty = e.div(e.tid, bn / tn);
  }

  // A thread's tn columns of B (and C) are tn / 4 groups of 4, the groups
  // bn / (tn / 4) apart: the 16 threads of a half-warp then read 16
  // consecutive 16-byte vectors of a B row. With the tn columns side by side
  // (the first version) they read every other 16-byte slot: a 2-way bank
  // conflict on every B load.
  int64_t groupStride = bn / (tn / 4);
  auto bColumn = [&](int64_t j) {
    return e.add(e.mul(tx, 4), (j / 4) * groupStride + j % 4);
  };
  SmallVector<Value> init(tm * tn, cf32(b, loc, 0.0f));
  int64_t kTiles = llvm::divideCeil(e.shape.k, bk);
  bool guardM = e.shape.m % bm, guardN = e.shape.n % bn, guardK = e.shape.k % bk;
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // cp.async copies of the A and B tiles at k0 into one stage.
  auto issueCopies = [&](Value k0, Value as, Value bs) {
    // A warp copies whole 128-byte rows of A (BK = 32): its 32 writes of
    // the transposed tile fall in 8 banks, but that is cheaper than the
    // alternative tried (8 k of 4 rows per warp: 32 banks, but four lines
    // per request): 0.870x cuBLAS at 4096^3 against 0.943x (2026-11-30
    // run 9).
    for (int64_t i = 0; i < bm * bk / e.threads; ++i) {
      Value el = e.add(e.tid, i * e.threads);
      Value r = e.div(el, bk), kc = e.rem(el, bk);
      Value gr = e.add(row0, r), gk = e.add(k0, kc);
      e.asyncCopyElement(e.a, e.globalIndex(bz, gr, gk), as, ValueRange{kc, r},
                         {{guardM ? gr : Value(), e.shape.m},
                          {guardK ? gk : Value(), e.shape.k}});
    }
    if (bChunks) {
      for (int64_t i = 0; i < bk * bn / 4 / e.threads; ++i) {
        Value ch = e.add(e.tid, i * e.threads);
        Value kr = e.div(ch, bn / 4), nc = e.mul(e.rem(ch, bn / 4), 4);
        Value gk = e.add(k0, kr), gn = e.add(col0, nc);
        Value kIn = guardK ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                                   gk, cidx(b, loc, e.shape.k))
                                 .getResult()
                           : Value();
        e.asyncCopyChunk(e.bmem, e.globalIndex(bz, gk, gn), bs, ValueRange{kr, nc},
                         kIn, gn, guardN ? std::optional<int64_t>(e.shape.n) : std::nullopt);
      }
      return;
    }
    for (int64_t i = 0; i < bk * bn / e.threads; ++i) {
      Value el = e.add(e.tid, i * e.threads);
      Value kr, nc;
      if (e.shape.transB) {
        kr = e.rem(el, bk);
        nc = e.div(el, bk);
      } else {
        kr = e.div(el, bn);
        nc = e.rem(el, bn);
      }
      Value gk = e.add(k0, kr), gn = e.add(col0, nc);
      SmallVector<std::pair<Value, int64_t>> bounds = {
          {guardK ? gk : Value(), e.shape.k}, {guardN ? gn : Value(), e.shape.n}};
      e.asyncCopyElement(e.bmem,
                         e.shape.transB ? e.globalIndex(bz, gn, gk)
                                        : e.globalIndex(bz, gk, gn),
                         bs, ValueRange{kr, nc}, bounds);
    }
  };
  Value lastGroup;
  if (asyncCopy) {
    // Prologue: the first stages - 1 tiles in flight.
    for (int64_t s = 0; s < stages - 1; ++s) {
      if (s < kTiles) {
        auto [va, vb] = views(cidx(b, loc, s));
        issueCopies(cidx(b, loc, s * bk), va, vb);
      }
      lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, ValueRange{});
    }
  } else if (stages == 2) {
    auto [va, vb] = views(cidx(b, loc, 0));
    e.stageTiles(bz, row0, col0, cidx(b, loc, 0), va, vb, /*aTransposed=*/true);
    gpu::BarrierOp::create(b, loc);
  }
  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, kTiles),
                                 cidx(b, loc, 1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value as, bs;
    StagedTile next;
    if (asyncCopy) {
      // Tile kt has landed once at most stages - 2 newer groups are
      // pending; the barrier also frees the stage read in the previous
      // iteration, which the copies of tile kt + stages - 1 then refill.
      e.pipelineStep(kt, lastGroup, stages - 2, stages - 1, kTiles,
                     /*fenceAsyncProxy=*/false, [&](Value nextKt) {
                       auto [na, nb] = views(e.rem(nextKt, stages));
                       issueCopies(e.mul(nextKt, bk), na, nb);
                     });
      std::tie(as, bs) = views(e.rem(kt, stages));
    } else if (stages == 2) {
      std::tie(as, bs) = views(e.rem(kt, 2));
      // Prefetch the next tile into registers. The last iteration reloads
      // the last tile (clamped index) into the idle buffer instead of
      // branching: one redundant tile per block, no divergent control flow.
      Value nextKt = arith::MinUIOp::create(b, loc, e.add(kt, 1),
                                            cidx(b, loc, kTiles - 1));
      next = e.loadTiles(bz, row0, col0, e.mul(nextKt, bk), /*aTransposed=*/true);
    } else {
      std::tie(as, bs) = views(cidx(b, loc, 0));
      e.stageTiles(bz, row0, col0, e.mul(kt, bk), as, bs, /*aTransposed=*/true);
      gpu::BarrierOp::create(b, loc);
    }
    SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                           loop.getRegionIterArgs().end());
    auto v4 = VectorType::get({4}, b.getF32Type());
    Value aCol = e.mul(ty, tm);
    for (int64_t kk = 0; kk < bk; ++kk) {
      Value kkv = cidx(b, loc, kk);
      SmallVector<Value> av, bv;
      for (int64_t q = 0; q < tm; q += 4) {
        Value v = vector::LoadOp::create(b, loc, v4, as, ValueRange{kkv, e.add(aCol, q)},
                                         false, llvm::MaybeAlign(16));
        for (int64_t l = 0; l < 4; ++l)
          av.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l}));
      }
      for (int64_t q = 0; q < tn; q += 4) {
        Value v = vector::LoadOp::create(b, loc, v4, bs, ValueRange{kkv, bColumn(q)},
                                         false, llvm::MaybeAlign(16));
        for (int64_t l = 0; l < 4; ++l)
          bv.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l}));
      }
      // Row by row, every other row backwards: consecutive FMAs share
      // av[i] and, at each row change, bv[j] as well (operand reuse).
      for (int64_t i = 0; i < tm; ++i)
        for (int64_t jj = 0; jj < tn; ++jj) {
          int64_t j = i % 2 ? tn - 1 - jj : jj;
          acc[i * tn + j] = math::FmaOp::create(b, loc, av[i], bv[j], acc[i * tn + j]);
        }
    }
    if (stages == 2) {
      // The other buffer was last read in the previous iteration, before
      // its closing barrier: safe to overwrite now.
      auto [na, nb] = views(e.rem(e.add(kt, 1), 2));
      e.storeTiles(next, na, nb);
    }
    if (!asyncCopy)
      gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  // One scalar store per value: 16-byte stores of each group of 4
  // consecutive columns (bColumn) were tried (2026-11-30): ptxas -v went
  // from 127 registers to 128 and a 4-byte spill at 4096^3, and from 126 to
  // 153 at 4000^3 (one block per SM instead of two), so they were not kept.
  for (int64_t i = 0; i < tm; ++i) {
    Value row = e.add(e.add(row0, e.mul(ty, tm)), i);
    for (int64_t j = 0; j < tn; ++j) {
      Value col = e.add(col0, bColumn(j));
      e.storeC(bz, row, col, loop.getResult(i * tn + j));
    }
  }
  e.flushStores();
  return success();
}

Value MatmulEmitter::epilogue(Value v, Value batchIdx, Value row, Value col) {
  if (!chain)
    return v;
  DenseMap<Value, Value> values;
  values[chain->inputs[0]] = v; // the matmul's result
  auto resultType = cast<RankedTensorType>(chain->result.getType());
  // Runs ahead of the store's range guard: load indices clamped into C.
  Value lr = row, lc = col;
  if (shape.m % bm)
    lr = arith::MinUIOp::create(b, loc, row, cidx(b, loc, shape.m - 1));
  if (shape.n % bn)
    lc = arith::MinUIOp::create(b, loc, col, cidx(b, loc, shape.n - 1));
  for (Operation *op : chain->ops)
    for (Value in : op->getOperands()) {
      Value mem = chainInputs.lookup(in);
      if (!mem || values.count(in))
        continue;
      auto t = cast<RankedTensorType>(in.getType());
      SmallVector<Value> idx = t == resultType ? globalIndex(batchIdx, lr, lc)
                                               : SmallVector<Value>{lc};
      values[in] = memref::LoadOp::create(b, loc, mem, idx);
    }
  // Row-major index of the element, for dropout's counter.
  Value flat = add(mul(add(mul(batchIdx, shape.m), row), shape.n), col);
  // The epilogue runs once per output element of a compute-bound kernel:
  // fast exp and division (kb-run checks the result against float64).
  return emitChainScalar(b, loc, *chain, values, flat, nullptr, 0, /*fast=*/true);
}

LogicalResult mlir::kb::buildMatmulKernel(const KernelRequest &req,
                                          LaunchInfo &info) {
  Operation *op = req.op;
  MatmulOp mm = dyn_cast<MatmulOp>(op);
  auto fusion = dyn_cast<FusionOp>(op);
  if (fusion)
    mm = dyn_cast_or_null<MatmulOp>(getFusionAnchor(fusion));
  if (!mm)
    return op->emitOpError() << "is not a matmul kernel";
  ConfigAttr cfg = req.config;
  if (cfg.getBlock().size() != 3)
    return op->emitOpError() << "has no block tile: run kb-tile first";
  gpu::GPUFuncOp func = req.func;
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  auto args = func.getArguments().take_front(func.getNumArguments());
  // Kernel arguments: the op's operands (a fusion's inputs), then C.
  auto argFor = [&](Value v) -> Value {
    if (auto ba = dyn_cast<BlockArgument>(v))
      return args[ba.getArgNumber()];
    return Value();
  };
  if (fusion && (!argFor(mm.getLhs()) || !argFor(mm.getRhs())))
    return mm.emitOpError() << "in a kb.fusion must take the fusion's inputs "
                               "directly (elementwise prologues are not lowered)";
  MatmulEmitter e{b, op->getLoc(), op, cfg, MatmulShape::of(mm),
                  fusion ? argFor(mm.getLhs()) : args[0],
                  fusion ? argFor(mm.getRhs()) : args[1], args.back(), Value(),
                  cfg.getBlock()[0], cfg.getBlock()[1], cfg.getBlock()[2],
                  cfg.getThreads()};
  // copy = "tma": the two tensor maps come just before C (kb-lower-to-gpu).
  if (cfg.getCopy() == CopyKind::tma) {
    if (args.size() < 3)
      return op->emitOpError() << "internal error: no tensor-map arguments";
    e.tmapA = args[args.size() - 3];
    e.tmapB = args[args.size() - 2];
  }
  if (fusion) {
    e.chain = ElementwiseChain::after(fusion, mm);
    auto resultType = mm.getResult().getType();
    for (Operation *inner : e.chain->ops) {
      if (!isa<ElementwiseOpInterface>(inner) ||
          inner->getResult(0).getType() != resultType)
        return inner->emitOpError()
               << "cannot be part of a matmul epilogue producing " << resultType;
      for (Value in : inner->getOperands()) {
        auto ba = dyn_cast<BlockArgument>(in);
        if (!ba)
          continue;
        auto t = cast<RankedTensorType>(in.getType());
        bool bias = t.getRank() == 1 && t.getDimSize(0) == resultType.getShape().back();
        if (t != resultType && !bias)
          return inner->emitOpError()
                 << "epilogue input of type " << t << " neither matches the result "
                 << resultType << " nor broadcasts along its last axis";
        e.chainInputs[in] = args[ba.getArgNumber()];
      }
    }
  }
  e.tid = gpu::ThreadIdOp::create(b, e.loc, gpu::Dimension::x);
  info.grid = {(int64_t)llvm::divideCeil(e.shape.n, e.bn), (int64_t)llvm::divideCeil(e.shape.m, e.bm),
               e.shape.batch};
  info.block = {e.threads, 1, 1};
  if (info.grid[1] > 65535 || info.grid[2] > 65535)
    return op->emitOpError() << "needs a grid of " << info.grid[1] << " x "
                             << info.grid[2]
                             << " in y and z; at most 65535 each";
  if (!cfg.getMma())
    return op->emitOpError() << "has no mma unit in its #kb.config: run "
                                "kb-select-mma first";
  switch (*cfg.getMma()) {
  case MmaUnit::ffma:
    return buildFfma(e, info);
  case MmaUnit::mma_sync_tf32:
  case MmaUnit::mma_sync_tf32x3:
    return buildMmaSync(e, info, *cfg.getMma() == MmaUnit::mma_sync_tf32x3);
  case MmaUnit::wgmma_tf32:
    return buildWgmma(e, info);
  }
  llvm_unreachable("unknown mma unit");
}
