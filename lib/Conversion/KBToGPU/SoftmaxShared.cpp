//===- SoftmaxShared.cpp - a row's part staged in shared memory ----------===//
//
// The split_shared strategy, which split_global shares: each block's part of
// the row is copied into its shared memory by cp.async, reduced as the
// copies land and normalised from there; with a persistent grid the next
// part's copies go out as this part's slots free up. Docs in SoftmaxGen.h.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

void mlir::kb::softmax::buildSplitShared(
    SoftmaxContext &c, Value scratchMax, Value scratchSum, Value part,
    bool unaligned, int64_t total, int64_t rows, bool clusterSync,
    function_ref<Value(Value m, Value s, int64_t row)> combine,
    PersistentHooks *persistent) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  float negInf = -std::numeric_limits<float>::infinity();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Value mine = arith::MulIOp::create(b, loc, c.tid, cidx(b, loc, c.vec));
  int64_t len = c.partLen + (unaligned ? 4 : 0);
  int64_t vectors = llvm::divideCeil(len, span);
  Value firstRowBase = c.rowBase;

  // Row i's part in the flat buffer, [lo, hi), and the aligned address
  // `base` that shared-memory offset 0 holds for it.
  struct RowPart {
    Value rowBase, lo, hi, base;
  };
  auto partOf = [&](Value rowBase, Value partStart, Value partEnd) {
    RowPart r;
    r.rowBase = rowBase;
    r.lo = arith::AddIOp::create(b, loc, r.rowBase, partStart);
    r.hi = arith::AddIOp::create(b, loc, r.rowBase, partEnd);
    r.base = unaligned
                 ? arith::SubIOp::create(
                       b, loc, r.lo,
                       arith::RemUIOp::create(b, loc, r.lo, cidx(b, loc, 4)))
                 : r.lo;
    return r;
  };
  auto rowPart = [&](int64_t i) {
    return partOf(
        arith::AddIOp::create(b, loc, firstRowBase, cidx(b, loc, i * c.n)),
        c.partStart, c.partEnd);
  };
  auto loadPart = [&](Value local) {
    return vector::LoadOp::create(b, loc, c.vecType, part, ValueRange{local},
                                  false, llvm::MaybeAlign(c.vec * 4));
  };
  // The copy of one chunk of row r into part[local] (guarded by the caller).
  auto copyChunk = [&](const RowPart &r, Value local, Value flat) {
    auto copy = [&] {
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, tokenType, part, ValueRange{local}, c.in, ValueRange{flat},
          b.getIndexAttr(c.vec), Value(),
          c.vec == 4 ? b.getUnitAttr() : UnitAttr());
    };
    if (!(unaligned && total % 4)) {
      copy();
      return;
    }
    // The chunk that runs past the end of the buffer is copied lane by lane
    // through registers (a zero-filling cp.async with fewer source bytes
    // still drew memcheck errors, run 17); the thread reads back only its
    // own stores.
    Value fits = c.ule(arith::AddIOp::create(b, loc, flat, cidx(b, loc, 4)),
                       cidx(b, loc, total));
    auto ifFits = scf::IfOp::create(b, loc, fits, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifFits.thenBlock()->getTerminator());
    copy();
    b.setInsertionPoint(ifFits.elseBlock()->getTerminator());
    vector::StoreOp::create(b, loc, c.loadChunkClamped(flat, total), part,
                            ValueRange{local}, false, llvm::MaybeAlign(16));
  };

  // Pass 0: the first row's part into shared memory, every copy in flight at
  // once, one cp.async group per vector of each thread.
  RowPart cur = rowPart(0);
  SmallVector<Value> locals;
  Value lastGroup =
      persistent && persistent->copied ? persistent->group : Value();
  for (int64_t k = 0; k < vectors; ++k) {
    Value local = arith::AddIOp::create(b, loc, cidx(b, loc, k * span), mine);
    locals.push_back(local);
    if ((c.pro && !c.stagedInput) || (persistent && persistent->copied))
      continue;
    Value flat = arith::AddIOp::create(b, loc, cur.base, local);
    Value in = c.lt(flat, cur.hi);
    if (persistent && persistent->valid)
      in = arith::AndIOp::create(b, loc, persistent->valid, in);
    auto ifIn = scf::IfOp::create(b, loc, in, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(ifIn.thenBlock()->getTerminator());
      copyChunk(cur, local, flat);
    }
    lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                        ValueRange{});
  }
  if (persistent && persistent->copiesOnly) {
    persistent->group = lastGroup;
    return;
  }

  auto f32 = b.getF32Type();
  for (int64_t i = 0; i < rows; ++i) {
    c.rowBase = cur.rowBase;
    // A staged input's prologue: its other inputs (a bias, at columns
    // clamped into the row) for every chunk, loaded before the first wait so
    // that they are in flight together with the copies.
    auto chunkCol = [&](int64_t k) {
      Value flat = arith::AddIOp::create(b, loc, cur.base, locals[k]);
      return arith::MinUIOp::create(
                 b, loc, arith::SubIOp::create(b, loc, flat, cur.rowBase),
                 cidx(b, loc, c.n - c.vec))
          .getResult();
    };
    SmallVector<DenseMap<Value, Value>> others(vectors);
    if (c.pro && c.stagedInput)
      for (int64_t k = 0; k < vectors; ++k)
        c.preloadPrologue(chunkCol(k), others[k]);
    // Pass 1 runs as the groups land: each thread reads back only what it
    // copied itself (no barrier needed) and keeps a running max m and a
    // rescaled running sum s of exp(x - m). So the max and the sum cost no
    // pass of their own over shared memory (run 15 had three passes: 71% of
    // copy at 1024x400000). With a prologue the values go through registers
    // instead, and feed (m, s) directly.
    Value m = cf32(b, loc, negInf), s = cf32(b, loc, 0.0f);
    for (int64_t k = 0; k < vectors; ++k) {
      bool copied = !c.pro || c.stagedInput;
      if (copied)
        nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                         b.getI32IntegerAttr(vectors - 1 - k));
      Value flat = arith::AddIOp::create(b, loc, cur.base, locals[k]);
      auto ifIn =
          scf::IfOp::create(b, loc, TypeRange{f32, f32}, c.lt(flat, cur.hi),
                            /*withElse=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifIn.thenBlock());
      Value v;
      if (c.pro) {
        // The softmax's input, kept in the slot for pass 2. A staged
        // input's prologue reads the chunk back under the guard (its other
        // inputs were loaded above, for every chunk): the last chunk's lanes
        // can lie past the part, which holds `len` floats while the chunks
        // cover `vectors * span`, and past the dynamic shared memory
        // (repros split_global_prologue_odd_width_{a,b}).
        v = copied
                ? c.applyPrologue(loadPart(locals[k]), chunkCol(k), others[k])
                : c.load(arith::SubIOp::create(b, loc, flat, cur.rowBase));
        vector::StoreOp::create(b, loc, v, part, ValueRange{locals[k]}, false,
                                llvm::MaybeAlign(c.vec * 4));
      } else {
        v = loadPart(locals[k]);
      }
      SmallVector<Value> xs = c.lanes(v);
      if (unaligned)
        xs = c.maskChunk(xs, flat, cur.lo, cur.hi, negInf);
      // Every chunk under the guard has at least one lane in the part (the
      // first chunk holds `lo`), so the new max is finite here.
      auto [mNew, sNew] = c.onlineUpdate(m, s, xs);
      scf::YieldOp::create(b, loc, ValueRange{mNew, sNew});
      b.setInsertionPointToStart(ifIn.elseBlock());
      scf::YieldOp::create(b, loc, ValueRange{m, s});
      b.setInsertionPointAfter(ifIn);
      m = ifIn.getResult(0);
      s = ifIn.getResult(1);
    }
    Value partMax = emitBlockReduce(
        b, loc, m, gpu::AllReduceOperation::MAXIMUMF, c.threads, scratchMax);
    // A thread that saw nothing has s = 0 and m = -inf: 0 * exp(-inf) = 0.
    Value partSum =
        emitBlockReduce(b, loc, c.mulf(s, c.exp(c.subf(m, partMax))),
                        gpu::AllReduceOperation::ADD, c.threads, scratchSum);
    // The previous row's exchange must be over (every block has read our
    // pair) before the pair is overwritten.
    if (i > 0 && clusterSync)
      NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    Value factor = combine(partMax, partSum, i);

    // Pass 2: normalise and write; unaligned parts store whole chunks with
    // one 16-byte store and their two edge chunks lane by lane. With a next
    // row, each slot is refilled right after it is read.
    bool more = i + 1 < rows;
    RowPart next = more ? rowPart(i + 1) : RowPart();
    // A persistent block's next part (known after the exchange): its
    // copies go out under a uniform guard; the groups are committed either
    // way (empty when there is no next part, and then no wait follows).
    Value nextValid;
    if (persistent && persistent->next && (!c.pro || c.stagedInput)) {
      NextPart np = persistent->next();
      next = partOf(np.rowBase, np.partStart, np.partEnd);
      nextValid = np.valid;
      more = true;
    }
    auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, len),
                                   cidx(b, loc, span));
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPoint(loop.getBody()->getTerminator());
      Value local = arith::AddIOp::create(b, loc, loop.getInductionVar(), mine);
      Value flat = arith::AddIOp::create(b, loc, cur.base, local);
      auto ifIn =
          scf::IfOp::create(b, loc, c.lt(flat, cur.hi), /*withElse=*/false);
      {
        OpBuilder::InsertionGuard g1(b);
        b.setInsertionPoint(ifIn.thenBlock()->getTerminator());
        SmallVector<Value> ys;
        for (Value x : c.lanes(loadPart(local)))
          ys.push_back(c.mulf(c.exp(c.subf(x, partMax)), factor));
        if (unaligned)
          c.storeChunk(ys, flat, cur.lo, cur.hi);
        else
          c.store(vector::FromElementsOp::create(b, loc, c.vecType, ys),
                  arith::SubIOp::create(b, loc, flat, cur.rowBase));
      }
      if (more) {
        Value nextFlat = arith::AddIOp::create(b, loc, next.base, local);
        Value inNext = c.lt(nextFlat, next.hi);
        if (nextValid)
          inNext = arith::AndIOp::create(b, loc, nextValid, inNext);
        auto ifNext = scf::IfOp::create(b, loc, inNext, /*withElse=*/false);
        {
          OpBuilder::InsertionGuard g1(b);
          b.setInsertionPoint(ifNext.thenBlock()->getTerminator());
          copyChunk(next, local, nextFlat);
        }
        // The waits of the next row use pass 0's token: only their group
        // counts matter.
        nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                ValueRange{});
      }
    }
    if (more && !nextValid)
      cur = next;
  }
  if (persistent)
    persistent->group = lastGroup;
  if (clusterSync)
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
}
