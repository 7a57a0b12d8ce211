//===- MatmulWgmmaKernel.h - the wgmma kernel's pieces ----------*- C++ -*-===//
//
// The wgmma kernel (buildWgmma, MatmulWgmma.cpp) is built by the pieces
// declared here, one file a job:
//   MatmulWgmma.cpp          the driver: the config's decisions, shared
//                            memory, the cp.async pipeline, and which of
//                            the others run
//   MatmulWgmmaSchedule.cpp  the persistent grid's walk over output tiles
//                            (pairs of a cluster, stream-K's chunks)
//   MatmulWgmmaMma.cpp       the matrix descriptors and one k tile's wgmma
//                            (from shared memory, or B^T's fragments from
//                            registers for a row-major B)
//   MatmulWgmmaEpilogue.cpp  the accumulators into C: direct, staged
//                            through shared memory, or by TMA store
//   MatmulWgmmaProducer.cpp  the TMA pipeline's mbarriers and its producer
//                            warp's tensor copies
//   MatmulWgmmaConsumer.cpp  the TMA pipeline's consumer warpgroups: the k
//                            loops, stage releases and the stream-K fix-up
// WgmmaKernel holds what every piece reads (decided once, in the driver);
// WgmmaTma what the TMA pipeline's producer and consumers share.
// Private to lib/Conversion/KBToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_KBTOGPU_MATMULWGMMAKERNEL_H
#define KB_CONVERSION_KBTOGPU_MATMULWGMMAKERNEL_H

#include "MatmulGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::kb::wgmma {

/// Bytes of one swizzled row (BK f32) and of one 8-row core-matrix group
/// (the swizzle's period, to which the kernel aligns its shared memory).
constexpr int64_t kRowBytes = 128, kGroupBytes = 8 * kRowBytes;
static_assert(kGroupBytes == kWgmmaAlignBytes, "wgmmaSharedBytes' slack");

/// The wgmma matrix descriptor of a tile at shared address `addr`, `kk` k
/// steps along it (MatmulWgmmaMma.cpp); `mnMajor`: a 16-bit row-major B's
/// boxes of `boxBytes`, rows of `rowBytes` (128, 64 or 32) swizzled by as
/// many bytes.
Value descriptor(OpBuilder &b, Location loc, Value addr, int64_t kk = 0,
                 bool mnMajor = false, int64_t boxBytes = 0,
                 int64_t rowBytes = kRowBytes);

/// The state of one wgmma kernel being built: the config's decisions and
/// the values that every piece reads. Members are set by the driver in the
/// order their ops are built.
struct WgmmaKernel {
  MatmulEmitter &e;
  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  int64_t bm, bn, bk, stages;
  /// half: 16-bit operands; mnB: a 16-bit row-major B read MN-major; rowB:
  /// the kernel computes C^T (an f32 row-major B, or `swapped`: 16-bit
  /// operands = "ba", B's tile as wgmma's A operand).
  bool half = false, mnB = false, rowB = false, swapped = false, tma = false;
  bool persistent = false, tmaStore = false, pairs = false, kEdge = false;
  int64_t bytesA = 0, stageBytes = 0, elemBytes = 4, kStep = 8, staging = 0;
  /// mnB: B's boxes of mnBoxCols columns (wgmmaMnBoxCols), rows of
  /// mnRowBytes (their swizzle).
  int64_t mnBoxCols = 64, mnRowBytes = kRowBytes;
  NVVM::WGMMATypes opType = NVVM::WGMMATypes::tf32;
  /// The dynamic shared memory's 1024-byte aligned address and its f32 view.
  Value aligned, flat;
  int64_t tilesM = 0, tilesN = 0, totalTiles = 0, persistentGrid = 0;
  /// One block a tile: the block's tile (null values with a persistent
  /// grid).
  MatmulEmitter::BlockTile tile;
  Value bz, row0, col0;
  int64_t kTiles = 0;
  ReadOnce once;
  StreamKPlan plan;
  int64_t streamChunks = 0;
  /// Accumulators: nAcc f32 a thread, in accType; zero; the warpgroup index.
  int64_t nAcc = 0;
  LLVM::LLVMStructType accType;
  Value zero, warpgroup;
  /// Byte offset of the TMA store's boxes from `aligned`.
  int64_t cBufBytes = 0;

  WgmmaKernel(MatmulEmitter &e);

  Value toI64(Value v);
  Value i32(int64_t v);

  // The persistent grid's tile walk (MatmulWgmmaSchedule.cpp).
  /// Tile i of a persistent block.
  MatmulEmitter::BlockTile persistentTile(Value i);
  /// The count of tiles of a persistent block.
  Value persistentCount();
  /// Block g's stream-K chunk of a rest tile.
  StreamKChunk streamChunk(Value g);
  /// The block's count of k tiles before chunk k tile kt (the rounds').
  Value streamCount(const StreamKChunk &ch, Value kt);

  // cp.async copies (MatmulWgmma.cpp).
  Value swizzled(Value tileBase, Value r, Value c);
  Value inRange(Value v, int64_t bound, bool needed);
  void issueCopies(Value kt, Value stage, bool edge);
  void issueTile(Value next);

  // One k tile's wgmma (MatmulWgmmaMma.cpp).
  SmallVector<Value> loadFragments(Value kt, int64_t kk);
  Value wgmmaRegA(Value acc, ArrayRef<Value> aRegs, Value descB);
  Value mmaStepRowB(Value kt, Value acc);
  Value mmaStepSwapped(Value kt, Value acc);
  Value mmaStep(Value kt, Value acc);

  // The epilogue (MatmulWgmmaEpilogue.cpp).
  Value tmaStoreSync(bool waitFirst);
  /// Accumulators i and i + 1 (a thread's two adjacent columns at `row`,
  /// `col`) through the epilogue: as a pair where it holds a kb.rotary
  /// (MatmulEmitter::epilogue2), else one element at a time.
  std::array<Value, 2> accumulatorPair(Value result, int64_t i, Value bz,
                                       Value row, Value col);
  void tmaStoreEpilogue(Value result, Value row0, Value col0, Value bz,
                        Value warpInGroup, Value g, Value t);
  void tmaStoreFinish();
  /// The accumulators `result` of the tile at (row0, col0) of batch or
  /// split bz, through the fused epilogue into C.
  void epilogue(Value result, Value row0, Value col0, Value bz);
  void epilogueStaged(Value result, Value row0, Value col0, Value bz,
                      Value warpInGroup, Value lane, Value g, Value t);
};

/// The TMA pipeline: a producer warp issuing every tensor copy onto the
/// stages' `full` mbarriers, consumer warpgroups releasing stages on their
/// `empty` ones (MatmulWgmmaProducer.cpp, MatmulWgmmaConsumer.cpp).
/// It copies the kernel's state (read-only from here on).
struct WgmmaTma : WgmmaKernel {
  int64_t consumerThreads = 0;
  /// The cluster size (1 without one), the block's rank in it and the
  /// multicast mask of all its blocks.
  int64_t cl = 1;
  Value barBase, mapA, mapB, laneZero, rank, multicastMask;

  WgmmaTma(const WgmmaKernel &k);
  /// The mbarriers' addresses, tensor maps and cluster rank, then the
  /// mbarriers' initialisation and the barrier after it.
  LogicalResult setUp();

  Value ptrTo(Value byteAddr, unsigned space);
  Value full(Value stage);
  Value empty(Value stage);
  Value globalPtr(Value mem);
  Value cmp(arith::CmpIPredicate pred, Value v, int64_t c);
  Value both(Value x, Value y);
  void when(Value cond, function_ref<void()> body);
  Value toI32(Value v);
  Value parityOf(Value kt);

  // The producer (MatmulWgmmaProducer.cpp).
  /// Local k tile kt of output tile `at`, the block's k tile c: its copies.
  void issueTma(Value c, Value kt, const MatmulEmitter::BlockTile &at);
  /// The producer warpgroup's branch; `moveRegisters`: it gives registers
  /// down to `producerRegs`.
  void buildProducer(bool moveRegisters, int64_t producerRegs);

  // The consumers (MatmulWgmmaConsumer.cpp).
  void releaseStage(Value cPrev, Value cond);
  scf::ForOp consumeTile(Value c0, Value trips = Value());
  void consumeTiles(Value count);
  /// The consumer warpgroups' branch (the builder stays inside it). Returns
  /// the k loop whose accumulators the driver's epilogue stores, or null
  /// where the consumers ran their epilogues themselves (a persistent grid,
  /// stream-K).
  scf::ForOp buildConsumers(bool moveRegisters, int64_t consumerRegs);
};

/// The register count the consumer warpgroups can take with setmaxnreg.inc
/// after the producer warpgroup gave theirs down to `producerRegs`
/// (MatmulWgmmaProducer.cpp).
int64_t setmaxnregConsumerCount(int64_t threads, int64_t consumerThreads,
                                int64_t producerRegs);

} // namespace mlir::kb::wgmma

#endif // KB_CONVERSION_KBTOGPU_MATMULWGMMAKERNEL_H
