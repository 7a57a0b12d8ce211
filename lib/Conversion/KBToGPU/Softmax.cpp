//===- Softmax.cpp - softmax kernels, one block per row -------------------===//
//
// Elementwise work fused before the softmax (its prologue) is computed from
// the kernel's inputs as each element is loaded; work fused after it (its
// epilogue) is applied just before each store. Four strategies, picked by
// kb-select-config and recorded in #kb.config:
// - registers: each thread loads its slice of the row into registers (16-byte
//   loads, all issued before the first use), the block reduces the max and
//   the sum of exponentials, and each element is written once. One read, one
//   write: the bandwidth floor.
// - split: for rows too wide for one block's registers; the row is split
//   over the blocks of a thread-block cluster, each block holds its part in
//   registers as above and reduces it to a partial (max, sum); the partials
//   are exchanged through distributed shared memory (mapa + ld.shared::cluster
//   between two cluster barriers) and each block rescales its part. Still one
//   read, one write.
// - split_shared: the same split, each block's part staged in (dynamic)
//   shared memory by cp.async instead of registers, so that a part may be as
//   large as a block's shared memory. The running max and sum are kept as
//   the copies land; one more pass over shared memory normalises. A cluster
//   may take several consecutive rows, copying the next while it stores the
//   current. Still one read and one write of global memory.
// - online: for rows too wide even for that; a loop keeps a running max and
//   a rescaled running sum, then a second loop reads the row again to write
//   it. Two reads, one write.
// Rows that are not a multiple of 4 long are read as the 16-byte-aligned
// chunks of the flat buffer that overlap them, lanes outside the row masked
// (registers and split_shared, unfused softmax).
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
  /// With a prologue: the full-shaped chain input that split_shared and
  /// split_global copy into shared memory by cp.async like an unfused
  /// input (`in` is then its buffer); the prologue is applied as each
  /// chunk is read back, the other chain inputs loaded from global memory.
  Value stagedInput{};
  /// The part of the row this block handles: all of it, or (split) columns
  /// [partStart, partEnd) of length partLen (minPartLen for the shortest).
  Value partStart{}, partEnd{}, rank{};
  int64_t partLen = 0, minPartLen = 0;

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
  /// The prologue at `col` with the staged input's values given (`raw`,
  /// read back from shared memory).
  /// `vectors` may hold the other inputs' vectors at `col` already
  /// (preloadPrologue), else they are loaded here.
  Value applyPrologue(Value raw, Value col, DenseMap<Value, Value> &vectors) {
    SmallVector<Value> xs;
    for (int64_t l = 0; l < vec; ++l) {
      auto values = inputLanes(*pro, col, l, stagedInput, vectors);
      values[stagedInput] = vector::ExtractOp::create(b, loc, raw, ArrayRef<int64_t>{l});
      xs.push_back(emitChainScalar(b, loc, *pro, values, flatIndex(col, l), nullptr, 0));
    }
    return vector::FromElementsOp::create(b, loc, vecType, xs);
  }
  /// Loads the prologue's inputs other than the staged one at `col`.
  void preloadPrologue(Value col, DenseMap<Value, Value> &vectors) {
    (void)inputLanes(*pro, col, 0, stagedInput, vectors);
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
  Value lt(Value x, int64_t bound) { return lt(x, cidx(b, loc, bound)); }
  Value lt(Value x, Value bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, bound);
  }
  Value ule(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, x, y);
  }
  /// Whether flat index `at` lies in [lo, hi).
  Value within(Value at, Value lo, Value hi) {
    return arith::AndIOp::create(b, loc, ule(lo, at), lt(at, hi));
  }
  /// One step of the running (max m, sum s of exp(x - m)) over `xs`.
  std::pair<Value, Value> onlineUpdate(Value m, Value s, ArrayRef<Value> xs) {
    Value mv = xs[0];
    for (Value x : xs.drop_front())
      mv = maxf(mv, x);
    Value mNew = maxf(m, mv);
    Value sNew = mulf(s, exp(subf(m, mNew)));
    for (Value x : xs)
      sNew = addf(sNew, exp(subf(x, mNew)));
    return {mNew, sNew};
  }
  /// Lanes of the 16-byte chunk at flat index `flat` outside [lo, hi) become
  /// `fill` (rows that are not a multiple of 4 long, read as aligned chunks).
  SmallVector<Value> maskChunk(SmallVector<Value> xs, Value flat, Value lo, Value hi,
                               float fill) {
    for (int64_t l = 0; l < 4; ++l) {
      Value at = arith::AddIOp::create(b, loc, flat, cidx(b, loc, l));
      xs[l] = arith::SelectOp::create(b, loc, within(at, lo, hi), xs[l], cf32(b, loc, fill));
    }
    return xs;
  }
  /// The 4 elements of `in` at flat indices flat..flat+3, each index clamped
  /// to the buffer's `total` elements: for the one chunk that runs past the
  /// end of a buffer whose size is not a multiple of 4.
  Value loadChunkClamped(Value flat, int64_t total) {
    SmallVector<Value> lanes;
    for (int64_t l = 0; l < 4; ++l) {
      Value at = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, flat, cidx(b, loc, l)), cidx(b, loc, total - 1));
      lanes.push_back(memref::LoadOp::create(b, loc, in, ValueRange{at}));
    }
    return vector::FromElementsOp::create(b, loc, vecType, lanes);
  }
  /// Stores the aligned chunk `ys` at flat index `flat` to the output: one
  /// 16-byte store when it lies in [lo, hi), else only its lanes inside.
  void storeChunk(ArrayRef<Value> ys, Value flat, Value lo, Value hi) {
    Value flat4 = arith::AddIOp::create(b, loc, flat, cidx(b, loc, 4));
    Value whole = arith::AndIOp::create(b, loc, ule(lo, flat), ule(flat4, hi));
    auto ifWhole = scf::IfOp::create(b, loc, whole, /*withElse=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(ifWhole.thenBlock()->getTerminator());
    vector::StoreOp::create(b, loc, vector::FromElementsOp::create(b, loc, vecType, ys), out,
                            ValueRange{flat}, false, llvm::MaybeAlign(16));
    b.setInsertionPoint(ifWhole.elseBlock()->getTerminator());
    for (int64_t l = 0; l < 4; ++l) {
      Value at = arith::AddIOp::create(b, loc, flat, cidx(b, loc, l));
      auto ifIn = scf::IfOp::create(b, loc, within(at, lo, hi), /*withElse=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPoint(ifIn.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, ys[l], out, ValueRange{at});
    }
  }
};

/// Split strategy: combines this block's partial (max m, sum s of exp(x - m))
/// with those of the other `cluster` blocks of its row and returns the
/// factor exp(m - M) / S that turns its exp(x - m) into the softmax (M, S:
/// the row's max and sum). Thread 0 publishes (m, s) in `partial`, a
/// workgroup memref<2xf32>; after a cluster barrier lane i of every warp
/// reads block i's pair through distributed shared memory, and each warp
/// reduces the pairs with shuffles. Ends with a cluster arrive: the caller
/// must wait on the cluster barrier before exiting, so that no block's shared
/// memory goes away while another still reads it.
Value combineOverCluster(SoftmaxContext &c, Value m, Value s, Value partial,
                         int64_t cluster) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  MLIRContext *ctx = b.getContext();
  float negInf = -std::numeric_limits<float>::infinity();
  auto isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                      cidx(b, loc, 0));
  auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifZero.thenBlock());
    memref::StoreOp::create(b, loc, m, partial, ValueRange{cidx(b, loc, 0)});
    memref::StoreOp::create(b, loc, s, partial, ValueRange{cidx(b, loc, 1)});
  }
  // arrive (release) + wait (acquire): every block's pair is visible, and
  // every block of the cluster has started.
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());

  Value lane = arith::RemUIOp::create(b, loc, c.tid, cidx(b, loc, 32));
  auto f32 = b.getF32Type();
  auto ifIn = scf::IfOp::create(b, loc, TypeRange{f32, f32}, c.lt(lane, cluster),
                                /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, partial);
    Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
    auto sharedPtr = LLVM::LLVMPointerType::get(ctx, /*shared=*/3);
    auto clusterPtr = LLVM::LLVMPointerType::get(ctx, /*shared::cluster=*/7);
    Value local = LLVM::IntToPtrOp::create(b, loc, sharedPtr, addr64);
    Value rank = arith::IndexCastOp::create(b, loc, b.getI32Type(), lane);
    Value remote = NVVM::MapaOp::create(b, loc, clusterPtr, local, rank);
    Value remoteSum = LLVM::GEPOp::create(b, loc, clusterPtr, f32, remote,
                                          ArrayRef<LLVM::GEPArg>{1});
    Value mi = LLVM::LoadOp::create(b, loc, f32, remote);
    Value si = LLVM::LoadOp::create(b, loc, f32, remoteSum);
    scf::YieldOp::create(b, loc, ValueRange{mi, si});
    b.setInsertionPointToStart(ifIn.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{cf32(b, loc, negInf), cf32(b, loc, 0.0f)});
  }
  Value mi = ifIn.getResult(0), si = ifIn.getResult(1);
  Value rowMax = gpu::SubgroupReduceOp::create(
      b, loc, mi, gpu::AllReduceOperation::MAXIMUMF, /*uniform=*/true);
  // Lanes without a block: 0 * exp(-inf) = 0. A block whose part is empty
  // has m = -inf, s = 0 and adds 0 in the same way.
  Value scaled = c.mulf(si, c.exp(c.subf(mi, rowMax)));
  Value rowSum = gpu::SubgroupReduceOp::create(
      b, loc, scaled, gpu::AllReduceOperation::ADD, /*uniform=*/true);
  // Done with the other blocks' shared memory.
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  return arith::DivFOp::create(b, loc, c.exp(c.subf(m, rowMax)), rowSum);
}

/// The workspace of a split_global softmax (splitGlobalWorkspaceWords i32
/// words, zero before the launch and left zero after it): [0] the block
/// ticket, [1] unused; per row r, [2 + 2r] the number of its blocks that
/// published their partial and [3 + 2r] the number that have read all of
/// them; then per (row, part) the partial (max, sum) as one 8-byte word
/// (the two f32 bit patterns, max in the low half), 8-byte aligned.
struct GlobalWorkspace {
  Value mem;
  int64_t rows, blocksPerRow;
  Value arrivedAt(OpBuilder &b, Location loc, Value row) const {
    return arith::AddIOp::create(b, loc, cidx(b, loc, 2),
                                 arith::MulIOp::create(b, loc, row, cidx(b, loc, 2)));
  }
  Value partialAt(OpBuilder &b, Location loc, Value row, Value part) const {
    Value slot = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, cidx(b, loc, blocksPerRow)), part);
    return arith::AddIOp::create(b, loc, cidx(b, loc, 2 + 2 * rows),
                                 arith::MulIOp::create(b, loc, slot, cidx(b, loc, 2)));
  }
  /// The generic address of word `at`.
  Value wordPtr(OpBuilder &b, Location loc, Value at) const {
    MLIRContext *ctx = b.getContext();
    Value base = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem));
    Value p = LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), base);
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), at);
    return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), b.getI32Type(), p,
                               ValueRange{i});
  }
};

Value atomicAdd(OpBuilder &b, Location loc, Value mem, Value at, uint32_t v) {
  return memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                     ci32(b, loc, v), mem, ValueRange{at});
}

/// A persistent block's next ticket, drawn by thread 0 once its row's count
/// is complete (so a block waiting at a row never holds a ticket of a later
/// one), in flight together with the partial reads, and handed to every
/// thread through `slot` (shared memory) with the row's (M, S). The draw
/// that returns `draws - 1`, the last of the launch (every block draws until
/// it gets no part), resets the ticket counter.
struct TicketDraw {
  Value slot;
  int64_t draws;
  Value next; // set by combineOverGlobal: the next ticket (i32)
};

/// split_global: the blocks of a row are ordinary blocks, not a cluster, so
/// a row may be split over more blocks than a cluster holds and the grid
/// may use every multiprocessor (clusters of 8 fit 120 of the 132).
///
/// Thread 0 publishes the block's partial (m, s) as one relaxed 8-byte
/// store and counts itself in with `atom.acq_rel.gpu.add` (inline PTX: the
/// NVPTX backend emits a relaxed `atom` whatever ordering an atomicrmw
/// asks for). The release half makes the partial visible before the count;
/// the acquire half lets the block that brings the count to g read every
/// other partial at once. The others spin on an `ld.acquire.gpu` of the
/// count. The partials are then read with relaxed gpu-scope loads (at L2,
/// never a stale L1 line), combined into the row's (M, S) and handed to the
/// block through `partial` (shared memory). The last arriver waits for one
/// round trip to L2 before it reads, instead of a fence, an add, a poll and
/// a second fence. After the block barrier, off the block's critical path,
/// thread 0 counts itself out; the last block to do so sets the row's two
/// counters back to zero for the next launch. With `draw` (a persistent
/// grid) thread 0 also draws the block's next ticket (TicketDraw). Returns
/// exp(m - M) / S.
Value combineOverGlobal(SoftmaxContext &c, Value m, Value s, Value partial,
                        const GlobalWorkspace &ws, Value row, Value rank,
                        TicketDraw *draw = nullptr) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  StringRef gpuScope = "device";
  int64_t g = ws.blocksPerRow;
  Value arrived = ws.arrivedAt(b, loc, row);
  Value done = arith::AddIOp::create(b, loc, arrived, cidx(b, loc, 1));
  auto threadZero = [&] {
    return scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid, cidx(b, loc, 0)),
        /*withElse=*/false);
  };
  auto pack = [&](Value lo, Value hi) {
    Value l = arith::ExtUIOp::create(b, loc, i64, arith::BitcastOp::create(b, loc, i32, lo));
    Value h = arith::ExtUIOp::create(b, loc, i64, arith::BitcastOp::create(b, loc, i32, hi));
    return arith::OrIOp::create(
        b, loc, l, arith::ShLIOp::create(b, loc, h, arith::ConstantIntOp::create(b, loc, i64, 32)));
  };
  auto half = [&](Value w, bool high) -> Value {
    if (high)
      w = arith::ShRUIOp::create(b, loc, w, arith::ConstantIntOp::create(b, loc, i64, 32));
    return arith::BitcastOp::create(b, loc, f32, arith::TruncIOp::create(b, loc, i32, w));
  };
  auto ifZero = threadZero();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifZero.thenBlock());
    LLVM::StoreOp::create(b, loc, pack(m, s), ws.wordPtr(b, loc, ws.partialAt(b, loc, row, rank)),
                          /*alignment=*/8, false, false, false, LLVM::AtomicOrdering::monotonic,
                          gpuScope);
    Value arrivedPtr = ws.wordPtr(b, loc, arrived);
    Value before = LLVM::InlineAsmOp::create(
                       b, loc, i32, ValueRange{arrivedPtr},
                       "atom.acq_rel.gpu.add.u32 $0, [$1], 1;", "=r,l,~{memory}",
                       /*has_side_effects=*/true, /*is_align_stack=*/false,
                       LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
                       ArrayAttr())
                       .getResult(0);
    auto notLast = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, before, ci32(b, loc, g - 1)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(notLast.thenBlock());
      // Spin until all g blocks of the row have counted themselves in.
      auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
      Block *cond = b.createBlock(&spin.getBefore());
      b.setInsertionPointToStart(cond);
      Value now = LLVM::LoadOp::create(b, loc, i32, arrivedPtr, /*alignment=*/4, false, false,
                                       false, false, LLVM::AtomicOrdering::acquire, gpuScope);
      Value waiting = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, now,
                                            ci32(b, loc, g));
      scf::ConditionOp::create(b, loc, waiting, ValueRange{});
      Block *body = b.createBlock(&spin.getAfter());
      b.setInsertionPointToStart(body);
      NVVM::NanosleepOp::create(b, loc, ci32(b, loc, 32));
      scf::YieldOp::create(b, loc);
    }
    if (draw) {
      Value t = atomicAdd(b, loc, ws.mem, cidx(b, loc, 0), 1);
      auto ifLast = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                ci32(b, loc, draw->draws - 1)),
          /*withElse=*/false);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(ifLast.thenBlock());
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, ci32(b, loc, 0),
                                    ws.mem, ValueRange{cidx(b, loc, 0)});
      }
      memref::StoreOp::create(b, loc, t, draw->slot, ValueRange{cidx(b, loc, 0)});
    }
    float negInf = -std::numeric_limits<float>::infinity();
    SmallVector<Value> ms, ss;
    Value rowMax = cf32(b, loc, negInf);
    for (int64_t k = 0; k < g; ++k) {
      Value w = LLVM::LoadOp::create(
          b, loc, i64, ws.wordPtr(b, loc, ws.partialAt(b, loc, row, cidx(b, loc, k))),
          /*alignment=*/8, false, false, false, false, LLVM::AtomicOrdering::monotonic,
          gpuScope);
      ms.push_back(half(w, false));
      ss.push_back(half(w, true));
      rowMax = c.maxf(rowMax, ms.back());
    }
    // A block whose part is empty has m = -inf, s = 0: it adds 0.
    Value rowSum = cf32(b, loc, 0.0f);
    for (int64_t k = 0; k < g; ++k)
      rowSum = c.addf(rowSum, c.mulf(ss[k], c.exp(c.subf(ms[k], rowMax))));
    memref::StoreOp::create(b, loc, rowMax, partial, ValueRange{cidx(b, loc, 0)});
    memref::StoreOp::create(b, loc, rowSum, partial, ValueRange{cidx(b, loc, 1)});
  }
  gpu::BarrierOp::create(b, loc);
  Value rowMax = memref::LoadOp::create(b, loc, partial, ValueRange{cidx(b, loc, 0)});
  Value rowSum = memref::LoadOp::create(b, loc, partial, ValueRange{cidx(b, loc, 1)});
  if (draw)
    draw->next = memref::LoadOp::create(b, loc, draw->slot, ValueRange{cidx(b, loc, 0)});
  auto countOut = threadZero();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(countOut.thenBlock());
    // Thread 0's loads above (the acquire in the spin, or the acq_rel add)
    // come before this add in its program order, so the row's counters are
    // reset only after every block has seen the count complete.
    Value before = atomicAdd(b, loc, ws.mem, done, 1);
    auto ifLast = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before, ci32(b, loc, g - 1)),
        /*withElse=*/false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, ci32(b, loc, 0),
                                ws.mem, ValueRange{arrived});
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, ci32(b, loc, 0),
                                ws.mem, ValueRange{done});
  }
  return arith::DivFOp::create(b, loc, c.exp(c.subf(m, rowMax)), rowSum);
}

/// The registers strategy, and (with `partial` and `cluster`) the split one:
/// this block's part of the row in registers.
void buildRegisters(SoftmaxContext &c, Value scratchMax, Value scratchSum,
                    Value clusterPartial = Value(), int64_t cluster = 1) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  int64_t span = c.threads * c.vec;
  int64_t chunks = llvm::divideCeil(c.partLen, span);
  float negInf = -std::numeric_limits<float>::infinity();

  // All loads first: they are independent, so they are all in flight at once.
  SmallVector<Value> vals, cols;
  SmallVector<bool> partial;
  for (int64_t k = 0; k < chunks; ++k) {
    Value col = c.colOf(arith::AddIOp::create(b, loc, c.partStart, cidx(b, loc, k * span)));
    bool isPartial = (k + 1) * span > c.minPartLen;
    Value v;
    if (!isPartial) {
      v = c.load(col);
    } else {
      auto ifIn = scf::IfOp::create(b, loc, TypeRange{c.vecType}, c.lt(col, c.partEnd), true);
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
  Value inv = clusterPartial
                  ? combineOverCluster(c, rowMax, rowSum, clusterPartial, cluster)
                      : arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum);
  for (auto [k, lane] : llvm::enumerate(xs)) {
    SmallVector<Value> ys;
    for (Value e : lane)
      ys.push_back(c.mulf(e, inv));
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

/// The registers strategy for rows whose length is not a multiple of 4 (so
/// rows start at any word): the row is covered by the 16-byte-aligned chunks
/// of the flat buffer that overlap it, one chunk per thread per pass. Each
/// chunk is one 16-byte load (four clamped scalar loads for a chunk that
/// runs past the end of the buffer); lanes outside the row count as -inf;
/// chunks wholly inside the row are stored with one 16-byte store, the two
/// edge chunks lane by lane. Unfused softmax only.
void buildRegistersUnaligned(SoftmaxContext &c, Value scratchMax, Value scratchSum,
                             int64_t total) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  float negInf = -std::numeric_limits<float>::infinity();
  Value negInfVec = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(c.vecType, b.getF32FloatAttr(negInf)));
  Value rowStart = c.rowBase;
  Value rowEnd = arith::AddIOp::create(b, loc, rowStart, cidx(b, loc, c.n));
  Value base = arith::SubIOp::create(
      b, loc, rowStart, arith::RemUIOp::create(b, loc, rowStart, cidx(b, loc, 4)));
  int64_t chunks = llvm::divideCeil(c.n + 3, 4);
  int64_t passes = llvm::divideCeil(chunks, c.threads);

  SmallVector<Value> flats;
  SmallVector<SmallVector<Value>> xs;
  Value m = cf32(b, loc, negInf);
  for (int64_t k = 0; k < passes; ++k) {
    Value chunk = arith::AddIOp::create(b, loc, c.tid, cidx(b, loc, k * c.threads));
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
    Value v = arith::SelectOp::create(b, loc, c.lt(flat, rowEnd), ifWhole.getResult(0),
                                      negInfVec);
    SmallVector<Value> lanes = c.maskChunk(c.lanes(v), flat, rowStart, rowEnd, negInf);
    for (Value x : lanes)
      m = c.maxf(m, x);
    flats.push_back(flat);
    xs.push_back(lanes);
  }
  Value rowMax = emitBlockReduce(b, loc, m, gpu::AllReduceOperation::MAXIMUMF,
                                 c.threads, scratchMax);
  Value s = cf32(b, loc, 0.0f);
  for (auto &lanes : xs)
    for (Value &x : lanes) {
      x = c.exp(c.subf(x, rowMax)); // outside the row: exp(-inf) = 0
      s = c.addf(s, x);
    }
  Value rowSum = emitBlockReduce(b, loc, s, gpu::AllReduceOperation::ADD,
                                 c.threads, scratchSum);
  Value inv = arith::DivFOp::create(b, loc, cf32(b, loc, 1.0f), rowSum);
  for (auto [flat, lanes] : llvm::zip(flats, xs)) {
    SmallVector<Value> ys;
    for (Value e : lanes)
      ys.push_back(c.mulf(e, inv));
    c.storeChunk(ys, flat, rowStart, rowEnd);
  }
}

/// What a persistent split_global block needs from buildSplitShared: the
/// part it handles now may have been copied already (by the previous part's
/// pass 2, or before the loop), and after the exchange it knows its next
/// part, whose copies pass 2 issues slot by slot as it frees them.
struct NextPart {
  Value valid, rowBase, partStart, partEnd;
};
struct PersistentHooks {
  /// Pass 0 only: issue this part's copies (only if `valid`) and return
  /// (`group` is set).
  bool copiesOnly = false;
  Value valid;
  /// The copies of this part are in flight already, under `group`.
  bool copied = false;
  Value group;
  /// After the exchange: the next part (`valid` false: none).
  std::function<NextPart()> next;
};

/// The split_shared strategy: this block's part of the row copied into
/// `part` (workgroup memref), reduced and normalised from there. A prologue
/// is applied on the way in (through registers), an epilogue on the way out.
/// With `unaligned` (rows not a multiple of 4 long, unfused softmax only) the
/// part is covered by the 16-byte-aligned chunks of the flat buffer that
/// overlap it, lanes outside it masked, as in buildRegistersUnaligned.
/// With `rows` > 1 (unfused only) the cluster handles that many consecutive
/// rows, starting at c.rowBase: while a thread stores its chunk of row i it
/// issues the copy of row i + 1 into the same shared-memory slot (only it
/// reads that slot), so the next row's reads overlap this row's writes.
/// With `persistent` (a persistent split_global block, one row per part)
/// the same overlap runs from this part to the block's next one
/// (PersistentHooks).
void buildSplitShared(SoftmaxContext &c, Value scratchMax, Value scratchSum,
                      Value part, bool unaligned, int64_t total, int64_t rows,
                      bool clusterSync,
                      function_ref<Value(Value m, Value s, int64_t row)> combine,
                      PersistentHooks *persistent = nullptr) {
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
    r.base = unaligned ? arith::SubIOp::create(
                             b, loc, r.lo, arith::RemUIOp::create(b, loc, r.lo, cidx(b, loc, 4)))
                       : r.lo;
    return r;
  };
  auto rowPart = [&](int64_t i) {
    return partOf(arith::AddIOp::create(b, loc, firstRowBase, cidx(b, loc, i * c.n)),
                  c.partStart, c.partEnd);
  };
  auto loadPart = [&](Value local) {
    return vector::LoadOp::create(b, loc, c.vecType, part, ValueRange{local}, false,
                                  llvm::MaybeAlign(c.vec * 4));
  };
  // The copy of one chunk of row r into part[local] (guarded by the caller).
  auto copyChunk = [&](const RowPart &r, Value local, Value flat) {
    auto copy = [&] {
      nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, part, ValueRange{local}, c.in,
                                       ValueRange{flat}, b.getIndexAttr(c.vec), Value(),
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
    vector::StoreOp::create(b, loc, c.loadChunkClamped(flat, total), part, ValueRange{local},
                            false, llvm::MaybeAlign(16));
  };

  // Pass 0: the first row's part into shared memory, every copy in flight at
  // once, one cp.async group per vector of each thread.
  RowPart cur = rowPart(0);
  SmallVector<Value> locals;
  Value lastGroup = persistent && persistent->copied ? persistent->group : Value();
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
    lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, ValueRange{});
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
      return arith::MinUIOp::create(b, loc, arith::SubIOp::create(b, loc, flat, cur.rowBase),
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
      // A staged input's prologue, ahead of the guard (its loads were
      // issued above, for every chunk).
      Value staged;
      if (c.pro && copied)
        staged = c.applyPrologue(loadPart(locals[k]), chunkCol(k), others[k]);
      auto ifIn = scf::IfOp::create(b, loc, TypeRange{f32, f32}, c.lt(flat, cur.hi),
                                    /*withElse=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifIn.thenBlock());
      Value v;
      if (c.pro) {
        // The softmax's input, kept in the slot for pass 2.
        v = staged ? staged : c.load(arith::SubIOp::create(b, loc, flat, cur.rowBase));
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
    Value partMax = emitBlockReduce(b, loc, m, gpu::AllReduceOperation::MAXIMUMF,
                                    c.threads, scratchMax);
    // A thread that saw nothing has s = 0 and m = -inf: 0 * exp(-inf) = 0.
    Value partSum = emitBlockReduce(b, loc, c.mulf(s, c.exp(c.subf(m, partMax))),
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
      auto ifIn = scf::IfOp::create(b, loc, c.lt(flat, cur.hi), /*withElse=*/false);
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
        nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, ValueRange{});
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
  // Rows that are not a multiple of the vector: aligned chunks with masked
  // edges (registers strategy, unfused softmax only).
  bool unaligned = n % vec != 0;
  bool global = strategy == "split_global";
  bool staged = strategy == "split_shared" || global;
  if (unaligned && (vec != 4 || isa<FusionOp>(op) ||
                    (strategy != "registers" && !staged)))
    return op->emitOpError() << "vector width " << vec
                             << " does not divide the row length " << n
                             << " (allowed only for vector 4 with strategy "
                                "\"registers\", \"split_shared\" or "
                                "\"split_global\" on an unfused softmax)";
  if (rows > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << "has " << rows << " rows, more than a grid holds";
  bool split = strategy == "split" || staged;
  int64_t cluster = split ? std::max<int64_t>(req.config.getCluster(), 1) : 1;
  if (rows * cluster > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << "has " << rows << " rows of " << cluster
                             << " blocks each, more than a grid holds";
  // split_shared / split_global: `block = [k]` rows per cluster (group of
  // blocks), one after the other.
  int64_t rowsPerCluster = 1;
  if (staged && !req.config.getBlock().empty())
    rowsPerCluster = req.config.getBlock()[0];
  if (rowsPerCluster > 1 && (rows % rowsPerCluster || isa<FusionOp>(op)))
    return op->emitOpError() << strategy << " with " << rowsPerCluster
                             << " rows per cluster needs an unfused softmax whose "
                             << rows << " rows it divides";
  info.grid = {rows / rowsPerCluster * cluster, 1, 1};
  info.block = {threads, 1, 1};
  // split_global: `cluster` blocks per row, but no hardware cluster.
  info.cluster = {global ? 1 : cluster, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto scratchType = MemRefType::get({32}, Float32Type::get(ctx), nullptr, wg);
  auto partialType = MemRefType::get({2}, Float32Type::get(ctx), nullptr, wg);
  // Shared memory: static workgroup buffers, or (split_shared) everything
  // carved out of the dynamic shared memory. Not both: the NVPTX backend
  // demotes MLIR's dynamic-shared-memory global to a one-byte static
  // variable, which the other static buffers then overlap.
  Value scratchMax, scratchSum, partial, part, ticketSlot;
  int64_t partBytes = 0;
  if (staged) {
    OpBuilder ab = OpBuilder::atBlockEnd(&func.getBody().front());
    int64_t clusterBlocks = std::max<int64_t>(req.config.getCluster(), 1);
    partBytes = splitSharedPartBytes(n, clusterBlocks, vec);
    info.dynamicSharedBytes = splitSharedBytes(n, clusterBlocks, vec);
    Value bytes = gpu::DynamicSharedMemoryOp::create(
        ab, loc, MemRefType::get({ShapedType::kDynamic}, ab.getI8Type(), nullptr, wg));
    auto view = [&](MemRefType t, int64_t at) -> Value {
      return memref::ViewOp::create(ab, loc, t, bytes, cidx(ab, loc, at), ValueRange{});
    };
    part = view(MemRefType::get({partBytes / 4}, ab.getF32Type(), nullptr, wg), 0);
    scratchMax = view(scratchType, partBytes);
    scratchSum = view(scratchType, partBytes + 128);
    partial = view(partialType, partBytes + 256);
    if (global)
      ticketSlot = view(MemRefType::get({1}, ab.getI32Type(), nullptr, wg), partBytes + 264);
  } else {
    scratchMax = func.addWorkgroupAttribution(scratchType, loc);
    scratchSum = func.addWorkgroupAttribution(scratchType, loc);
    if (strategy == "split")
      partial = func.addWorkgroupAttribution(partialType, loc);
  }

  // At the end: after the shared-memory views made above.
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
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
    // split_shared / split_global stage the prologue's first full-shaped
    // input through shared memory by cp.async (one read, in flight all at
    // once); before 2026-11-30 the prologue's loads went through registers
    // one chunk at a time (attention softmax 256x200000: 49% of copy).
    if (c.pro && staged)
      for (Value inV : c.pro->inputs)
        if (c.memOf.count(inV) && !c.isBias.contains(inV)) {
          c.stagedInput = inV;
          c.in = c.memOf.lookup(inV);
          break;
        }
    for (auto *chain : {&c.pro, &c.epi})
      if (*chain)
        for (Operation *inner : (*chain)->ops)
          if (!isa<ElementwiseOpInterface>(inner) || inner->getResult(0).getType() != type)
            return inner->emitOpError() << "cannot be fused around a softmax of " << type;
  } else {
    c.in = flatten(b, loc, kargs[0]);
  }
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  c.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  GlobalWorkspace ws{Value(), rows, cluster};
  // split_global with a persistent grid: `grid` blocks, each taking parts
  // from tickets until none is left (one draw per part, plus one empty draw
  // per block).
  int64_t parts = info.grid[0];
  int64_t persistentGrid = global ? req.config.getGrid() : 0;
  if (persistentGrid >= parts)
    persistentGrid = 0;
  // A row's blocks wait for each other: a grid smaller than one row would
  // wait forever.
  if (persistentGrid && persistentGrid < cluster)
    return op->emitOpError() << "a persistent split_global grid of " << persistentGrid
                             << " blocks cannot hold the " << cluster
                             << " blocks of one row, which wait for each other";
  if (persistentGrid && rowsPerCluster > 1)
    return op->emitOpError() << "a persistent split_global grid takes one row per "
                                "group of blocks (block = [1]), not "
                             << rowsPerCluster;
  // A persistent block with `stages = 2` copies its next part while it
  // stores this one (slot by slot); otherwise it copies each part at the
  // start of its turn.
  bool prefetch = persistentGrid && req.config.getStages() == 2;
  if (global && req.config.getStages() > 2)
    return op->emitOpError() << "split_global takes stages = 1 or 2 (2: a persistent "
                                "block copies its next part while it stores this one), not "
                             << req.config.getStages();
  if (persistentGrid)
    info.grid[0] = persistentGrid;
  int64_t draws = persistentGrid ? parts + persistentGrid : parts;
  Value ticket; // i32
  if (global) {
    // Blocks take their (row, part) from a ticket, in the order they start,
    // not from their block index: a block only ever waits for blocks that
    // hold tickets of its own row, and the rows of the lowest tickets are
    // always complete among the blocks already running, so the grid cannot
    // deadlock however the hardware orders blocks. The last draw sets the
    // counter back to zero for the next launch.
    ws.mem = kargs[kargs.size() - 2];
    auto isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                        cidx(b, loc, 0));
    auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifZero.thenBlock());
      Value t = atomicAdd(b, loc, ws.mem, cidx(b, loc, 0), 1);
      Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                         ci32(b, loc, draws - 1));
      auto ifLast = scf::IfOp::create(b, loc, last, /*withElse=*/false);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(ifLast.thenBlock());
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign, ci32(b, loc, 0),
                                    ws.mem, ValueRange{cidx(b, loc, 0)});
      }
      memref::StoreOp::create(b, loc, t, ticketSlot, ValueRange{cidx(b, loc, 0)});
    }
    gpu::BarrierOp::create(b, loc);
    ticket = memref::LoadOp::create(b, loc, ticketSlot, ValueRange{cidx(b, loc, 0)});
    block = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), ticket);
  }
  c.partStart = cidx(b, loc, 0);
  c.partEnd = cidx(b, loc, n);
  c.partLen = c.minPartLen = n;
  int64_t len = split ? splitPartLength(n, cluster, vec) : n;
  if (split) {
    c.partLen = len;
    c.minPartLen = std::max<int64_t>(0, n - (cluster - 1) * len);
  }
  // Blocks [row * cluster, (row + 1) * cluster) form the row's cluster;
  // block `rank` of it handles columns [rank * len, (rank + 1) * len).
  struct Part {
    Value row, rank, start, end, rowBase;
  };
  auto partOf = [&](Value blk) {
    Part p;
    p.rank = arith::RemUIOp::create(b, loc, blk, cidx(b, loc, cluster));
    p.row = arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, blk, cidx(b, loc, cluster)),
                                  cidx(b, loc, rowsPerCluster));
    p.start = arith::MulIOp::create(b, loc, p.rank, cidx(b, loc, len));
    p.end = arith::MinUIOp::create(b, loc, cidx(b, loc, n),
                                   arith::AddIOp::create(b, loc, p.start, cidx(b, loc, len)));
    p.rowBase = arith::MulIOp::create(b, loc, p.row, cidx(b, loc, n));
    return p;
  };
  auto usePart = [&](const Part &p) {
    c.rank = p.rank;
    c.partStart = p.start;
    c.partEnd = p.end;
    c.rowBase = p.rowBase;
  };
  if (persistentGrid) {
    // Ticket t is part t % cluster of row t / cluster. With two stages the
    // first part's copies go out before the loop (none for a block whose
    // first ticket is past the end) and each part's pass 2 issues the next
    // part's, at addresses computed from the ticket clamped into range; with
    // one, each part is copied at the start of its turn.
    auto clamp = [&](Value t) {
      return arith::MinUIOp::create(b, loc, t, cidx(b, loc, parts - 1)).getResult();
    };
    PersistentHooks first;
    if (prefetch) {
      usePart(partOf(clamp(block)));
      first.copiesOnly = true;
      first.valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, ticket,
                                          ci32(b, loc, parts));
      auto noCombine = [&](Value, Value, int64_t) -> Value { return Value(); };
      buildSplitShared(c, scratchMax, scratchSum, part, unaligned, rows * n, 1,
                       /*clusterSync=*/false, noCombine, &first);
    }
    // The loop carries the ticket as an i32: an index block argument of
    // scf.while came out of the LLVM conversion as i64 in kernels lowered
    // with 32-bit indices (an unresolved cast).
    auto i32 = b.getI32Type();
    auto loop = scf::WhileOp::create(b, loc, TypeRange{i32}, ValueRange{ticket});
    {
      OpBuilder::InsertionGuard guard(b);
      Block *cond = b.createBlock(&loop.getBefore(), {}, {i32}, {loc});
      Value t = cond->getArgument(0);
      scf::ConditionOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, t, ci32(b, loc, parts)),
          ValueRange{t});
      Block *body = b.createBlock(&loop.getAfter(), {}, {i32}, {loc});
      Part cur = partOf(
          arith::IndexCastUIOp::create(b, loc, b.getIndexType(), body->getArgument(0)));
      usePart(cur);
      TicketDraw draw{ticketSlot, draws, Value()};
      PersistentHooks hooks;
      hooks.copied = prefetch;
      hooks.group = first.group;
      if (prefetch)
        hooks.next = [&]() {
          Part p = partOf(
              clamp(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), draw.next)));
          return NextPart{arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, draw.next,
                                                ci32(b, loc, parts)),
                          p.rowBase, p.start, p.end};
        };
      buildSplitShared(c, scratchMax, scratchSum, part, unaligned, rows * n, 1,
                       /*clusterSync=*/false,
                       [&](Value m, Value s, int64_t) {
                         return combineOverGlobal(c, m, s, partial, ws, cur.row, c.rank, &draw);
                       },
                       &hooks);
      scf::YieldOp::create(b, loc, ValueRange{draw.next});
    }
    // No copy may be left in flight when the block exits.
    if (prefetch && (!c.pro || c.stagedInput))
      nvgpu::DeviceAsyncWaitOp::create(b, loc, first.group, b.getI32IntegerAttr(0));
    return success();
  }
  Value row = block;
  if (split) {
    Part p = partOf(block);
    usePart(p);
    row = p.row;
  } else {
    c.rowBase = arith::MulIOp::create(b, loc, row, cidx(b, loc, n));
  }
  if (strategy == "registers" && unaligned)
    buildRegistersUnaligned(c, scratchMax, scratchSum, rows * n);
  else if (strategy == "registers")
    buildRegisters(c, scratchMax, scratchSum);
  else if (strategy == "split")
    buildRegisters(c, scratchMax, scratchSum, partial, cluster);
  else if (strategy == "split_shared")
    buildSplitShared(c, scratchMax, scratchSum, part, unaligned, rows * n,
                     rowsPerCluster, /*clusterSync=*/true,
                     [&](Value m, Value s, int64_t) {
                       return combineOverCluster(c, m, s, partial, cluster);
                     });
  else if (global)
    buildSplitShared(c, scratchMax, scratchSum, part, unaligned, rows * n,
                     rowsPerCluster, /*clusterSync=*/false,
                     [&](Value m, Value s, int64_t i) {
                       Value r = arith::AddIOp::create(b, loc, row, cidx(b, loc, i));
                       return combineOverGlobal(c, m, s, partial, ws, r, c.rank);
                     });
  else if (strategy == "online")
    buildOnline(c, scratchMax, scratchSum);
  else
    return op->emitOpError() << "unknown softmax strategy '" << strategy << "'";
  return success();
}
