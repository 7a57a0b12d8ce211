//===- MatmulGen.h - shared pieces of kb's matmul kernels -------*- C++ -*-===//
//
// The problem shape, and an emitter holding the kernel's operands and tile
// sizes with the index, staging and guarded-store helpers that both inner
// tiles (FFMA and mma.sync) use.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_KBTOGPU_MATMULGEN_H
#define KB_CONVERSION_KBTOGPU_MATMULGEN_H

#include "KernelGen.h"
#include "MmaSync.h"
#include "kb/Transforms/Passes.h"

namespace mlir::kb {

struct MatmulShape {
  bool batched = false, transB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  /// Split-K (a kb.matmul with split_chunk): `splits` partial products, of
  /// K indices [s * chunk, (s + 1) * chunk) each, into C[s]; 1: no split.
  int64_t splits = 1, chunk = 0;
  static MatmulShape of(MatmulOp mm);
};

/// One thread's share of an A and a B tile, loaded into registers, and the
/// shared-memory coordinates of each value.
struct StagedTile {
  SmallVector<Value> a, b;
  SmallVector<std::pair<Value, Value>> aAt, bAt;
};

struct MatmulEmitter {
  OpBuilder &b;
  Location loc;
  Operation *op;
  ConfigAttr config;
  MatmulShape shape;
  Value a, bmem, c, tid;
  int64_t bm, bn, bk, threads;
  /// The fused epilogue (elementwise ops after the matmul in a kb.fusion),
  /// and the kernel argument holding each of its other inputs.
  std::optional<ElementwiseChain> chain{};
  DenseMap<Value, Value> chainInputs{};
  /// The kernel argument holding each kb.rotary table (cos, sin) of the
  /// epilogue, read at the pair's position (epilogue2).
  DenseMap<Value, Value> chainTables{};
  /// copy = "tma": the kernel arguments holding A's and B^T's tensor maps.
  Value tmapA{}, tmapB{}, tmapC{};

  /// C's element type (f32, or f16 / bf16 for a 16-bit matmul's output),
  /// an f32 value (or vector) rounded to it, and an f32 load of a buffer of
  /// any of the three types.
  Type cElem() const;
  Value toC(Value v);
  Value loadF32(Value mem, ValueRange idx);
  Value add(Value x, int64_t c);
  Value add(Value x, Value y);
  Value mul(Value x, int64_t c);
  Value div(Value x, int64_t c);
  Value rem(Value x, int64_t c);
  /// Index list into A, B or C, with the batch index first when batched.
  SmallVector<Value> globalIndex(Value batchIdx, Value i, Value j);
  /// Index list into C: globalIndex, or with split-K the split's index
  /// (block id z, passed as batchIdx) first.
  SmallVector<Value> cIndex(Value batchIdx, Value i, Value j);
  /// K tiles one block iterates: all of them, or one split's.
  int64_t kTilesPerBlock() const;
  /// Whether the k tiles the blocks iterate run past K, so that copies of
  /// them need a K guard: K % BK != 0, or a split whose chunks do not divide
  /// the k tiles (the last chunk's tiles past K).
  bool kPastEnd() const;
  /// Whether some block's rows run past M, so that stores (and the
  /// epilogue's loads) need a row guard: M % BM != 0, or a cluster of C
  /// blocks whose grid rounds the row tiles up to a multiple of C.
  bool rowsPastEnd() const;
  /// The first K index of the block's local k tile `kt`: kt * BK, offset by
  /// the split's first tile with split-K.
  Value kAt(Value kt);
  /// A load that yields 0 where a (value, bound) pair is out of range; null
  /// values are known to be in range.
  Value loadGuarded(Value mem, ValueRange idx,
                    ArrayRef<std::pair<Value, int64_t>> bounds);
  /// One 16-byte cp.async of src[srcIdx..+4) into dst[dstIdx] (+8 for
  /// 16-bit elements): the elements
  /// at columns colStart.. that lie below colBound (none when rowInRange is
  /// false) are copied and the rest of the chunk is zero-filled; no branch.
  /// Without rowInRange and colBound the chunk is known to lie inside the
  /// tensor: a plain copy.
  void asyncCopyChunk(Value src, SmallVector<Value> srcIdx, Value dst,
                      ValueRange dstIdx, Value rowInRange, Value colStart,
                      std::optional<int64_t> colBound);
  /// One 4-byte cp.async of src[srcIdx] into dst[dstIdx]; where a (value,
  /// bound) pair is out of range nothing is copied and the slot is zeroed.
  void asyncCopyElement(Value src, SmallVector<Value> srcIdx, Value dst,
                        ValueRange dstIdx,
                        ArrayRef<std::pair<Value, int64_t>> bounds);
  /// One step of a cp.async pipeline, at the top of k iteration `kt`: wait
  /// until at most `pending` newer copy groups are outstanding (so tile kt
  /// has landed), optionally fence the async proxy (for readers such as
  /// wgmma), barrier, then `issue(next)` for tile next = kt + ahead when it
  /// exists, and commit a group (empty past the last tile, so the count
  /// holds).
  void pipelineStep(Value kt, Value lastGroup, int64_t pending, int64_t ahead,
                    int64_t kTiles, bool fenceAsyncProxy,
                    function_ref<void(Value next)> issue);
  /// Loads the A and B tiles of step k0 into registers.
  StagedTile loadTiles(Value batchIdx, Value row0, Value col0, Value k0,
                       bool aTransposed);
  /// Stores loaded tiles into shared memory.
  void storeTiles(const StagedTile &t, Value as, Value bs);
  /// Copies the A and B tiles of step k0 into shared memory.
  void stageTiles(Value batchIdx, Value row0, Value col0, Value k0, Value as,
                  Value bs, bool aTransposed);
  /// Sets the launch's dynamic shared memory to `bytes`, the kernel's own
  /// layout, after checking that it is what the config plans
  /// (matmulSharedBytes, which kb-promote-shared-memory checked against the
  /// chip): they cannot disagree.
  LogicalResult setSharedBytes(LaunchInfo &info, int64_t bytes);
  /// The block's dynamic shared memory, as bytes.
  Value dynamicSharedMemory();

  /// This block's output tile: its batch index (block id z) and the first
  /// row and column of C it computes (block ids y and x times BM and BN).
  struct BlockTile {
    Value batch, row0, col0;
  };
  BlockTile blockTile();
  /// Output tile `t` of a slice (launch order, before the raster), of
  /// batch or split `z`: a persistent grid's blocks walk these.
  BlockTile tileAt(Value t, Value z);
  /// tileAt over tiles of `rowStep` rows, `tilesM` of them in a column,
  /// in raster groups of `group` rows of tiles (a cluster's pairs).
  BlockTile tileAt(Value t, Value z, int64_t rowStep, int64_t tilesM,
                   int64_t group);
  /// The split index kAt uses; null: block id z.
  Value splitIdx;
  /// reduce = "cluster": shape.splits = 2 chunks of a whole matmul, summed
  /// in the kernel (C is M x N, not a workspace of partials).
  bool clusterReduce = false;
  /// reduce = "stream" (stream-K over a persistent grid): the workspace
  /// (streamKWorkspaceWords): four flags a block, by which a block
  /// announces its partial, then the partials.
  Value streamFlags;
  /// What the epilogue does with a value before the fused chain: nothing;
  /// `store`, a cluster reduction's second block: nothing else either (it
  /// stores its raw partial into C); `add`, the first block: adds the
  /// partial that the second stored at the same place of C.
  enum class Partial { none, store, add };
  Partial partial = Partial::none;
  /// The A and B tile views of pipeline stage `stage` in `smem`: A as
  /// aRows x aCols elements of `elem` (f32 when null) at stage *
  /// stageBytes, B as bRows x bCols after it.
  std::pair<Value, Value> stageViews(Value smem, Value stage,
                                     int64_t stageBytes, int64_t aRows,
                                     int64_t aCols, int64_t bRows,
                                     int64_t bCols, Type elem = {});
  /// Emits `body` under a guard that (row, col) lies inside C, when the
  /// tiles can reach past M or N.
  void inOutputRange(Value row, Value col, function_ref<void()> body);
  /// Whether (row, col) lies inside C; null when the tiles cannot reach
  /// past M or N.
  Value outputInRange(Value row, Value col);
  /// Stores xs (already through the epilogue) at C[row][col..]: a masked
  /// store when there is an epilogue and a guard, else a guarded store.
  void storeVector(Value batchIdx, Value row, Value col, ArrayRef<Value> xs);
  /// Guarded stores of epilogue values held back until every value of the
  /// thread is computed (flushStores emits them).
  struct DeferredStore {
    Value value, inRange;
    SmallVector<Value> index;
  };
  SmallVector<DeferredStore> deferred{};
  void flushStores();
  /// Stores C[row][col] = epilogue(v) where in range.
  void storeC(Value batchIdx, Value row, Value col, Value v);
  /// Stores C[row][col..col+1] = epilogue(v0, v1) for an even `col`: one
  /// 8-byte store when N is even (then col < N implies col + 1 < N), two
  /// guarded scalar stores otherwise.
  void storeC2(Value batchIdx, Value row, Value col, Value v0, Value v1);
  /// The epilogue applied to each accumulator before it is stored (ahead
  /// of the range guard; its loads are clamped into the matrix).
  Value epilogue(Value v, Value batchIdx, Value row, Value col);
  /// The epilogue chain's scalars for one element: `v` (the matmul's
  /// result) and its other inputs loaded at the clamped (lr, lc).
  DenseMap<Value, Value> chainValues(Value v, Value batchIdx, Value lr,
                                     Value lc);
  /// The epilogue of the adjacent pair (v0 at an even `col`, v1 at col +
  /// 1): epilogue() of each, or, with a kb.rotary in the chain, the chain
  /// run over the pair (emitChainPair).
  std::array<Value, 2> epilogue2(Value v0, Value v1, Value batchIdx,
                                 Value row, Value col);
  /// Whether the epilogue runs over pairs (a kb.rotary in the chain).
  bool pairEpilogue() const { return chain && chainHasRotary(*chain); }
};

/// The FFMA kernel (precision ieee): a [TM, TN] register tile per thread
/// (MatmulFfma.cpp).
LogicalResult buildFfma(MatmulEmitter &e, LaunchInfo &info);

/// The gemv kernel (mma = "gemv"): fp32 FMAs streaming the weight of a
/// matmul with at most 16 rows or columns from global memory
/// (MatmulGemv.cpp).
LogicalResult buildGemv(MatmulEmitter &e, LaunchInfo &info);

/// The mma.sync.m16n8k8 TF32 inner tile (tf32x3 splits each operand into a
/// big and a small tf32 part and adds three products).
LogicalResult buildMmaSync(MatmulEmitter &e, LaunchInfo &info, bool split3);

/// The mma.sync.m16n8k16 inner tile for f16 / bf16 operands (mma =
/// "mma_sync_f16", "mma_sync_bf16"), f32 accumulators, cp.async stages and
/// ldmatrix fragment loads (MatmulMmaSync16.cpp).
LogicalResult buildMmaSync16(MatmulEmitter &e, LaunchInfo &info);

//===----------------------------------------------------------------------===//
// The matmul pieces both mma.sync kernels share (MatmulMmaSync.cpp; the
// fragment helpers are in MmaSync.h)
//===----------------------------------------------------------------------===//

/// Issues the cp.async copies of one k tile into one pipeline stage: 16-byte
/// chunks (4 f32 or 8 16-bit elements, the element type of `as`) along each
/// operand's contiguous axis; chunks that run past M, N or K copy fewer (or
/// no) bytes and zero-fill the rest, so no load is guarded by a branch.
/// `as`/`bs` are the stage's views: A as [BM][BK + pad], B as [BK][BN +
/// pad] (or [BN][BK + pad] when B is transposed).
void issueMmaSyncTileCopies(MatmulEmitter &e, Value batchIdx, Value row0,
                            Value col0, Value k0, Value as, Value bs);

/// Stores a warp's accumulators (the loop results `acc`: fragM x fragN
/// fragments of 4 f32, fragment (i, j) at rows warpRow + 16 i, columns
/// warpCol + 8 j of the block's tile at (row0, col0)) through the
/// epilogue: (g, 2t), (g, 2t + 1) and (g + 8, ...) two columns a store.
void storeMmaSyncTile(MatmulEmitter &e, Value batchIdx, Value row0, Value col0,
                      Value warpRow, Value warpCol, int64_t fragM,
                      int64_t fragN, ValueRange acc);

/// reduce = "cluster" (split = 2, blocks z = 0 and 1 of a 1 x 1 x 2
/// cluster): after the k loop, each of the `groups` consumer warpgroups
/// either stores its raw partial into C or, after the cluster barrier, adds
/// the other block's and runs `epilogue` on the sum (MatmulWgmmaReduce.cpp).
/// `epilogue` stores an accumulator struct through e.partial's mode.
void emitClusterReduce(MatmulEmitter &e, Value acc, Value warpgroup,
                       int64_t groups, function_ref<void(Value)> epilogue);

/// Refuses, in one line, a stream-K config (reduce = "stream") the wgmma
/// kernel cannot run: it needs a persistent grid with TMA copies, an
/// unbatched unsplit matmul, no cluster, no TMA store, at most 4 consumer
/// warpgroups (four flags a block) and its workspace.
LogicalResult checkStreamK(MatmulEmitter &e, bool persistent, bool tma,
                           bool tmaStore, int64_t consumerWarpgroups);

/// Block g's chunk of a rest tile (g < rest x chunks) in stream-K's `plan`
/// over a grid of `grid` blocks: tile rounds x grid + g / S, chunk j = g %
/// S, its k tiles [j K / S, (j + 1) K / S).
struct StreamKChunk {
  MatmulEmitter::BlockTile at;
  Value chunk, kBegin, kEnd;
};
StreamKChunk streamKChunk(MatmulEmitter &e, Value g, const StreamKPlan &plan,
                          int64_t grid, int64_t kTiles, int64_t tilesPerSlice);

/// Stream-K's fix-up of a rest tile split in chunks (reduce = "stream",
/// MatmulWgmma.cpp; docs/design.md "Stream-K"), for one consumer
/// warpgroup: chunks 1 .. S - 1 store their accumulators into the
/// workspace and set their flag, chunk 0 waits for the S - 1 flags and adds
/// the partials in chunk order (MatmulWgmmaReduce.cpp). The workspace is
/// e.streamFlags: four flags a block (one a warpgroup), then the slots,
/// value v of consumer thread t at word 4 G + (slot x values + v) x threads
/// + t.
struct StreamKFixup {
  MatmulEmitter &e;
  Value warpgroup;
  int64_t grid, chunks, values, consumerThreads;
  /// Thread 0 of the warpgroup (which spins and signals); built first.
  Value elected;
  StreamKFixup(MatmulEmitter &e, Value warpgroup, int64_t grid,
               int64_t chunks, int64_t values, int64_t consumerThreads);
  /// The slot of chunk j (1 .. S - 1) of rest tile r: r (S - 1) + j - 1.
  Value slot(Value restTile, Value chunk);
  /// Chunk 0 (block g): waits for blocks g + 1 .. g + S - 1 (and resets
  /// their flags for the next launch), then returns `acc` plus their
  /// partials, added in chunk order.
  Value waitAndAdd(Value acc, Value g, Value restTile);
  /// Chunks 1 .. S - 1 (block g): `acc` into `slot`, the warpgroup's
  /// barrier, then thread 0's release of the flag.
  void storeAndSignal(Value acc, Value g, Value slot);

private:
  Value flagPtr(Value block);
  Value word(Value slot, int64_t v);
  void groupBarrier();
  void asmStatement(StringRef text, Value ptr);
};

/// Refuses, in one line, a config the wgmma kernel cannot build (tile
/// sizes, stages, copies, threads, a TMA store's conditions, K % 4;
/// MatmulWgmmaRules.cpp).
LogicalResult checkWgmmaConfig(MatmulEmitter &e);

/// Which operands of a wgmma matmul are read once: an operand whose tiles
/// only one block reads (B where the output has one row of tiles, A where
/// it has one column) and that makes up at least three quarters of the
/// bytes the matmul moves (A, B and C, or with split-K its partial
/// products), up to 256 MiB. Their TMA copies
/// carry an L2 evict-first policy, as the gemv weight's loads do
/// (MatmulGemv.cpp): the lines read once replace each other instead of the
/// dirty lines an earlier kernel (or kb-run's L2 flush) left, whose
/// write-back competes with the reads. Measured (bench/results/
/// 2026-12-03-evict-first, the same programs with and without, L2
/// flushed, 3 interleaved turns): skinny 8/16/128 x 4096 x 4096 B^T and
/// matvec 4096 x 8 x 4096 (64 MB) 10-12% faster, 16 x 11008 x 4096, 32 x
/// 4096 x 11008, 96 x 12288 x 4096 and 64 x 16384 x 4096 (180-275 MB)
/// 2-7% faster; 0.7-1.0% slower where the operand is 55% of the bytes or
/// less (long K 256 x 256 x 262144 and 192 x 160 x 300000 B^T, batched
/// 256 x 256 x 256 x 256 B^T). The 256 MiB cap is the gemv's (its 940 MB
/// and 1 GB weights lost 3-5% with the policy); nothing between 270 MB and
/// 1 GB was measured here.
struct ReadOnce {
  bool a = false, b = false;
};
ReadOnce readOnceOperands(const MatmulShape &s, int64_t bm, int64_t bn);

/// The wgmma TF32 kernel (sm_90a): warpgroups of 128 threads, each
/// accumulating a 64 x BN slice with wgmma.mma_async straight from 128-byte
/// swizzled shared-memory tiles (both operands K-major: B transposed).
LogicalResult buildWgmma(MatmulEmitter &e, LaunchInfo &info);

} // namespace mlir::kb

#endif // KB_CONVERSION_KBTOGPU_MATMULGEN_H
