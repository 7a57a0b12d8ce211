//===- SoftmaxGen.h - shared pieces of kb's softmax kernels -----*- C++ -*-===//
//
// The softmax kernel (Softmax.cpp, buildSoftmaxKernel) picks a strategy from
// its #kb.config and builds it from these pieces:
// - SoftmaxContext: the row being computed, its fused prologue and epilogue,
//   and the per-element helpers every strategy uses;
// - the strategies: SoftmaxRegisters.cpp (registers, split, online),
//   SoftmaxShared.cpp (split_shared, and split_global's staging);
// - the exchanges of partial (max, sum) pairs between the blocks of a row:
//   SoftmaxExchange.cpp (a cluster's distributed shared memory, or a
//   workspace in global memory).
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_KBTOGPU_SOFTMAXGEN_H
#define KB_CONVERSION_KBTOGPU_SOFTMAXGEN_H

#include "KernelGen.h"

#include <functional>
#include <optional>

namespace mlir::kb::softmax {

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
  /// A kb.log_softmax: each element is written as (x - max) - log(sum)
  /// instead of exp(x - max) / sum (registers and online strategies).
  bool log = false;

  /// A buffer's element type (f32, f16 or bf16: 16-bit data is loaded and
  /// stored in 16 bits, the arithmetic is f32) and its size in bytes.
  static Type elemOf(Value mem) {
    return cast<MemRefType>(mem.getType()).getElementType();
  }
  static int64_t bytesOf(Value mem) {
    return elemOf(mem).getIntOrFloatBitWidth() / 8;
  }
  /// A 16-bit value or vector widened to f32 (f32 as it is).
  Value widen(Value v) {
    Type e = getElementTypeOrSelf(v.getType());
    if (e.isF32())
      return v;
    Type to = isa<VectorType>(v.getType()) ? Type(vecType) : b.getF32Type();
    return arith::ExtFOp::create(b, loc, to, v);
  }
  /// An f32 value or vector rounded to `mem`'s element type.
  Value narrow(Value v, Value mem) {
    Type e = elemOf(mem);
    if (e.isF32())
      return v;
    Type to = isa<VectorType>(v.getType())
                  ? Type(VectorType::get({vec}, e))
                  : e;
    return arith::TruncFOp::create(b, loc, to, v);
  }
  Value loadVec(Value mem, Value at) {
    return widen(vector::LoadOp::create(
        b, loc, VectorType::get({vec}, elemOf(mem)), mem, ValueRange{at}, false,
        llvm::MaybeAlign(vec * bytesOf(mem))));
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
        Value at = isBias.contains(inV)
                       ? col
                       : arith::AddIOp::create(b, loc, rowBase, col);
        vectors[inV] = loadVec(memOf.lookup(inV), at);
      }
      values[inV] = vector::ExtractOp::create(b, loc, vectors[inV],
                                              ArrayRef<int64_t>{lane});
    }
    return values;
  }
  Value flatIndex(Value col, int64_t lane) {
    return arith::AddIOp::create(b, loc,
                                 arith::AddIOp::create(b, loc, rowBase, col),
                                 cidx(b, loc, lane));
  }

  Value load(Value col) {
    if (!pro)
      return loadVec(in, arith::AddIOp::create(b, loc, rowBase, col));
    DenseMap<Value, Value> vectors;
    SmallVector<Value> xs;
    for (int64_t l = 0; l < vec; ++l) {
      auto values = inputLanes(*pro, col, l, Value(), vectors);
      xs.push_back(
          emitChainScalar(b, loc, *pro, values, flatIndex(col, l), nullptr, 0));
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
      values[stagedInput] =
          vector::ExtractOp::create(b, loc, raw, ArrayRef<int64_t>{l});
      xs.push_back(
          emitChainScalar(b, loc, *pro, values, flatIndex(col, l), nullptr, 0));
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
        values[epi->inputs[0]] =
            vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l});
        ys.push_back(emitChainScalar(b, loc, *epi, values, flatIndex(col, l),
                                     nullptr, 0));
      }
      v = vector::FromElementsOp::create(b, loc, vecType, ys);
    }
    vector::StoreOp::create(b, loc, narrow(v, out), out, ValueRange{at},
                            false, llvm::MaybeAlign(vec * bytesOf(out)));
  }
  SmallVector<Value> lanes(Value v) {
    SmallVector<Value> r;
    for (int64_t i = 0; i < vec; ++i)
      r.push_back(vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i}));
    return r;
  }
  Value exp(Value x) { return math::ExpOp::create(b, loc, x); }
  /// The natural logarithm (libdevice's __nv_logf, 1 ulp, as kb.log).
  Value logf(Value x) { return math::LogOp::create(b, loc, x); }
  /// The value written for an element: exp(x - max) / sum given `e` =
  /// exp(x - max) and `inv` = 1 / sum, or for a log-softmax `d` = x - max
  /// minus `logSum` = log(sum).
  Value finalValue(Value e, Value d, Value inv, Value logSum) {
    return log ? subf(d, logSum) : mulf(e, inv);
  }
  Value maxf(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value colOf(Value chunkStart) {
    return arith::AddIOp::create(
        b, loc, chunkStart,
        arith::MulIOp::create(b, loc, tid, cidx(b, loc, vec)));
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
  SmallVector<Value> maskChunk(SmallVector<Value> xs, Value flat, Value lo,
                               Value hi, float fill) {
    for (int64_t l = 0; l < 4; ++l) {
      Value at = arith::AddIOp::create(b, loc, flat, cidx(b, loc, l));
      xs[l] = arith::SelectOp::create(b, loc, within(at, lo, hi), xs[l],
                                      cf32(b, loc, fill));
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
          b, loc, arith::AddIOp::create(b, loc, flat, cidx(b, loc, l)),
          cidx(b, loc, total - 1));
      lanes.push_back(
          widen(memref::LoadOp::create(b, loc, in, ValueRange{at})));
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
    vector::StoreOp::create(
        b, loc,
        narrow(vector::FromElementsOp::create(b, loc, vecType, ys), out), out,
        ValueRange{flat}, false, llvm::MaybeAlign(4 * bytesOf(out)));
    b.setInsertionPoint(ifWhole.elseBlock()->getTerminator());
    for (int64_t l = 0; l < 4; ++l) {
      Value at = arith::AddIOp::create(b, loc, flat, cidx(b, loc, l));
      auto ifIn =
          scf::IfOp::create(b, loc, within(at, lo, hi), /*withElse=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPoint(ifIn.thenBlock()->getTerminator());
      memref::StoreOp::create(b, loc, narrow(ys[l], out), out,
                              ValueRange{at});
    }
  }
};

//===----------------------------------------------------------------------===//
// Exchanges between the blocks of a row (SoftmaxExchange.cpp)
//===----------------------------------------------------------------------===//

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
                         int64_t cluster);

/// The address of `partial` (a workgroup memref) in the shared memory of
/// block `rank` (index) of the cluster: mapa, a shared::cluster pointer.
Value mapToClusterRank(OpBuilder &b, Location loc, Value partial, Value rank);
/// The f32 word `index` after the shared::cluster pointer `remote`
/// (ld.shared::cluster).
Value loadClusterWord(OpBuilder &b, Location loc, Value remote, int64_t index);

/// The row kernels' cluster strategy: combines this block's partial `v`
/// (a sum, or a maximum with MAXIMUMF) with those of the other `cluster`
/// blocks of its row. Thread 0 stores `v` in word `slot` of `partial` (a
/// workgroup memref<2xf32>: one slot per exchange, so that a second
/// exchange's stores never meet the first one's reads); after a cluster
/// barrier lane k of every warp reads block k's word through distributed
/// shared memory, and every lane combines the `cluster` words in rank order
/// (shuffles from lanes 0, 1, ...): the same bits in every block. The caller
/// arrives on the cluster barrier once its last exchange has read, and
/// waits before exiting.
Value combineInRankOrder(SoftmaxContext &c, Value v, Value partial,
                         int64_t slot, int64_t cluster,
                         gpu::AllReduceOperation op);

/// The row kernels' cluster strategy for a layer_norm, one exchange: this
/// block's part (partLen values, the same for every block) has mean `mean`
/// and sum of squared deviations from it `m2`. Thread 0 stores the pair in
/// words 0 and 1 of `partial`; after a cluster barrier lane k of every warp
/// reads block k's pair and every lane merges the `cluster` pairs in rank
/// order (Chan et al.'s parallel merge for equal parts: the row's mean is
/// sum m_k / cluster, its M2 = sum M2_k + partLen sum (m_k - mean)^2): the
/// same bits in every block. Returns (the row's mean, its M2). The caller
/// arrives on the cluster barrier after it and waits before exiting.
std::pair<Value, Value> combineMomentsInRankOrder(SoftmaxContext &c, Value mean,
                                                  Value m2, Value partial,
                                                  int64_t cluster,
                                                  int64_t partLen);

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
    return arith::AddIOp::create(
        b, loc, cidx(b, loc, 2),
        arith::MulIOp::create(b, loc, row, cidx(b, loc, 2)));
  }
  Value partialAt(OpBuilder &b, Location loc, Value row, Value part) const {
    Value slot = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, row, cidx(b, loc, blocksPerRow)),
        part);
    return arith::AddIOp::create(
        b, loc, cidx(b, loc, 2 + 2 * rows),
        arith::MulIOp::create(b, loc, slot, cidx(b, loc, 2)));
  }
  /// The generic address of word `at`.
  Value wordPtr(OpBuilder &b, Location loc, Value at) const {
    MLIRContext *ctx = b.getContext();
    Value base = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem));
    Value p =
        LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), base);
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), at);
    return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                               b.getI32Type(), p, ValueRange{i});
  }
};

/// An atomic add of `v` to the i32 word mem[at]; returns the old value.
Value atomicAdd(OpBuilder &b, Location loc, Value mem, Value at, uint32_t v);

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
/// may use every multiprocessor (on sm_90 clusters of 8 leave 12 idle).
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
                        TicketDraw *draw = nullptr);

//===----------------------------------------------------------------------===//
// Strategies (SoftmaxRegisters.cpp, SoftmaxShared.cpp)
//===----------------------------------------------------------------------===//

/// The registers strategy, and (with `partial` and `cluster`) the split one:
/// this block's part of the row in registers.
void buildRegisters(SoftmaxContext &c, Value scratchMax, Value scratchSum,
                    Value clusterPartial = Value(), int64_t cluster = 1);

/// The registers strategy for rows whose length is not a multiple of 4 (so
/// rows start at any word): the row is covered by the 16-byte-aligned chunks
/// of the flat buffer that overlap it, one chunk per thread per pass. Each
/// chunk is one 16-byte load (four clamped scalar loads for a chunk that
/// runs past the end of the buffer); lanes outside the row count as -inf;
/// chunks wholly inside the row are stored with one 16-byte store, the two
/// edge chunks lane by lane. Unfused softmax only.
void buildRegistersUnaligned(SoftmaxContext &c, Value scratchMax,
                             Value scratchSum, int64_t total);

/// The online strategy: a loop keeps a running max and a rescaled running
/// sum, then a second loop reads the row again to write it. Two reads, one
/// write.
void buildOnline(SoftmaxContext &c, Value scratchMax, Value scratchSum);

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
void buildSplitShared(
    SoftmaxContext &c, Value scratchMax, Value scratchSum, Value part,
    bool unaligned, int64_t total, int64_t rows, bool clusterSync,
    function_ref<Value(Value m, Value s, int64_t row)> combine,
    PersistentHooks *persistent = nullptr);

/// The row kernels' `online` strategy (RowNormOnline.cpp) for kb.reduce,
/// kb.layer_norm and kb.rms_norm rows too wide for one block's registers:
/// the row read in loops (reduce: once; rms_norm: twice; layer_norm: three
/// times). `c` is set up as for the registers strategy (RowNorm.cpp);
/// `weight` and `bias` are the norm's flattened parameters or null; `row`
/// is the block's row (a reduce's output index).
void buildRowNormOnline(SoftmaxContext &c, Operation *anchor, Value weight,
                        Value bias, Value scratch0, Value scratch1, Value row);

/// The fused chains around a row kernel's anchor (a softmax or a norm,
/// `what` in the messages) in `fusion`: the ops before it become `c.pro`
/// (or, with none, `c.in` is the anchor's input buffer), those after it
/// `c.epi`; every fusion input is bound to its kernel argument, full-shaped
/// (of `type`'s shape: its element type may differ, a kb.convert in the
/// chain reads it as its type) or a bias vector along the last axis. An
/// epilogue that reads a prologue value (which the kernel does not keep) or
/// an op of another shape is refused. `anchorInput` is the anchor's row
/// input.
inline LogicalResult bindFusedChains(SoftmaxContext &c, Operation *op,
                                     FusionOp fusion, Operation *anchor,
                                     Value anchorInput, RankedTensorType type,
                                     ValueRange kargs, StringRef what) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Block &body = fusion.getBody().front();
  ElementwiseChain pro;
  for (Operation &inner : body.without_terminator()) {
    if (&inner == anchor)
      break;
    pro.ops.push_back(&inner);
  }
  if (!pro.ops.empty()) {
    pro.inputs.assign(body.getArguments().begin(), body.getArguments().end());
    pro.result = anchorInput;
    c.pro = pro;
  } else if (auto ba = dyn_cast<BlockArgument>(anchorInput)) {
    c.in = flatten(b, loc, kargs[ba.getArgNumber()]);
  }
  ElementwiseChain epi = ElementwiseChain::after(fusion, anchor);
  if (!epi.ops.empty())
    c.epi = epi;
  // The epilogue sees the anchor's result and the fusion's inputs; a
  // prologue value is gone by then (kb-fuse-elementwise keeps such a value
  // out of the prologue; a hand-written fusion is refused).
  llvm::SmallPtrSet<Operation *, 8> proOps(pro.ops.begin(), pro.ops.end());
  for (Operation *inner : epi.ops)
    for (Value v : inner->getOperands())
      if (Operation *d = v.getDefiningOp(); d && proOps.contains(d))
        return inner->emitOpError()
               << "reads a value of the " << what << "'s prologue ('"
               << d->getName().getStringRef() << "'), which a fused " << what
               << " does not keep for its epilogue: compute it outside the "
                  "fusion";
  int64_t n = type.getShape().back();
  for (BlockArgument ba : body.getArguments()) {
    auto t = cast<RankedTensorType>(ba.getType());
    bool bias = t.getRank() == 1 && t.getDimSize(0) == n && type.getRank() > 1;
    if (t.getShape() != type.getShape() && !bias)
      return op->emitOpError()
             << "fused " << what << " input of type " << t
             << " neither matches " << type
             << " nor broadcasts along its last axis";
    c.memOf[ba] = flatten(b, loc, kargs[ba.getArgNumber()]);
    if (bias)
      c.isBias.insert(ba);
  }
  for (auto *chain : {&c.pro, &c.epi})
    if (*chain)
      for (Operation *inner : (*chain)->ops)
        if (!isa<ElementwiseOpInterface>(inner) ||
            cast<ShapedType>(inner->getResult(0).getType()).getShape() !=
                type.getShape())
          return inner->emitOpError()
                 << "cannot be fused around a " << what << " of " << type;
  return success();
}

} // namespace mlir::kb::softmax

#endif // KB_CONVERSION_KBTOGPU_SOFTMAXGEN_H
