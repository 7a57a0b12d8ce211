//===- MatmulWgmma.cpp - the wgmma kernel (sm_90a): the driver ------------===//
//
// A block of BM/64 warpgroups computes a BM x BN tile of C; warpgroup w owns
// rows [64w, 64w + 64) and accumulates them with wgmma.mma_async.m64nBNk8
// (tf32 in, f32 accumulators in registers for the whole k loop). wgmma reads
// both operands straight from shared memory through matrix descriptors, so
// there are no fragment loads and no rounding instructions (the tensor core
// ignores the low 13 mantissa bits of each fp32 operand).
//
// That is the kernel for a K-major B (transpose_b). For a row-major B the
// kernel computes the tile transposed (C^T = B^T A^T): BN/64 warpgroups
// each own 64 columns, B^T's fragments come from shared memory into
// registers, and the A tile is wgmma's B operand; see "Row-major B" below
// and docs/design.md. 16-bit operands read a row-major B as it is
// (MN-major) in the B^T kernel, or with operands = "ba" in the C^T one,
// B's tile as wgmma's A operand straight from shared memory
// (MatmulWgmmaMma.cpp).
//
// Shared memory: `stages` buffers, each an A tile (BM rows) and a B tile (BN
// rows of B^T: tf32 wgmma takes both operands K-major, so B comes
// transposed, see kb-select-mma), every row BK = 32 floats = 128 bytes of
// K, in wgmma's 128-byte swizzle: the 16-byte chunk c of row r sits at
// chunk c ^ (r % 8), so the eight rows of a core-matrix group hit distinct
// banks.
// The swizzle is a function of the address, so every tile starts on a
// 1024-byte boundary (the kernel aligns the dynamic shared memory itself).
//
// Copies: TMA (copy = "tma", the default; the pipeline is described where
// it is built, below) or cp.async (copy = "cp_async").
//
// cp.async pipeline, per k tile kt (loads run stages - 2 tiles ahead):
//   cp.async.wait_group   tile kt has landed (this thread's copies)
//   fence.proxy.async     cp.async wrote through the generic proxy; wgmma
//                         reads through the async proxy
//   bar.sync              everyone's copies are visible, and every warpgroup
//                         has retired the wgmma of tile kt - 2
//   cp.async of tile kt + stages - 2 into that tile's buffer (kt - 2's)
//   wgmma.fence; 4 x wgmma (k8 each); commit; wait_group 1 (tile kt - 1 done)
// so the wgmma of tile kt runs while the next iteration waits and copies.
// The epilogue stores two consecutive columns per 8-byte store (storeC2).
//

#include "MatmulWgmmaKernel.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::wgmma;

WgmmaKernel::WgmmaKernel(MatmulEmitter &e)
    : e(e), b(e.b), loc(e.loc), ctx(e.b.getContext()), bm(e.bm), bn(e.bn),
      bk(e.bk), stages(e.config.getStages()) {}

Value WgmmaKernel::toI64(Value v) {
  return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), v).getResult();
}
Value WgmmaKernel::i32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult();
}
// Element index of (row r, 16-byte chunk c) of a swizzled tile at element
// `tileBase`.
Value WgmmaKernel::swizzled(Value tileBase, Value r, Value c) {
  Value sc = arith::XOrIOp::create(b, loc, c, e.rem(r, 8));
  return e.add(tileBase, e.add(e.mul(r, kRowBytes / 4), e.mul(sc, 4)));
}

Value WgmmaKernel::inRange(Value v, int64_t bound, bool needed) {
  if (!needed)
    return Value();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                               cidx(b, loc, bound));
}

// The cp.async copies of k tile `kt` into buffer `stage` (index values);
// `edge`: the tile may run past K (the last one, or with an uneven split
// the last chunk's last ones), so each chunk copies only the elements
// before K.
void WgmmaKernel::issueCopies(Value kt, Value stage, bool edge) {
  Value k0 = e.kAt(kt);
  Value aBase = e.mul(stage, stageBytes / 4), bBase = e.add(aBase, bytesA / 4);
  auto operand = [&](Value mem, Value tileBase, int64_t rows, Value r0,
                     int64_t bound) {
    for (int64_t i = 0; i < rows * 8 / e.threads; ++i) {
      Value c = e.add(e.tid, i * e.threads);
      Value r = e.div(c, 8), kc = e.rem(c, 8);
      Value gr = e.add(r0, r), gk = e.add(k0, e.mul(kc, 4));
      e.asyncCopyChunk(mem, e.globalIndex(bz, gr, gk), flat,
                       ValueRange{swizzled(tileBase, r, kc)},
                       inRange(gr, bound, bound % rows != 0), gk,
                       edge ? std::optional<int64_t>(e.shape.k) : std::nullopt);
    }
  };
  operand(e.a, aBase, bm, row0, e.shape.m);
  operand(e.bmem, bBase, bn, col0, e.shape.n);
}

// When K is not a multiple of BK only the last k tile needs the K guard:
// the loop issues the others without it, behind a uniform branch.
// 2026-11-30 run 12: the guard on every tile cost 6% (1024x768x1512
// against 1024x768x1504, both with 32-byte-aligned rows).
void WgmmaKernel::issueTile(Value next) {
  Value stage = e.rem(next, stages);
  if (!kEdge) {
    issueCopies(next, stage, false);
    return;
  }
  // The tile runs past K: the last one, or with an uneven split any
  // whose first K index + BK is past K.
  Value last = e.shape.splits > 1
                   ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                           e.add(e.kAt(next), bk),
                                           cidx(b, loc, e.shape.k))
                   : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           next, cidx(b, loc, kTiles - 1));
  auto ifLast = scf::IfOp::create(b, loc, last, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifLast.thenBlock());
  issueCopies(next, stage, true);
  b.setInsertionPointToStart(ifLast.elseBlock());
  issueCopies(next, stage, false);
}

LogicalResult mlir::kb::buildWgmma(MatmulEmitter &e, LaunchInfo &info) {
  WgmmaKernel k(e);
  OpBuilder &b = e.b;
  Location loc = e.loc;
  MLIRContext *ctx = b.getContext();
  int64_t bm = e.bm, bn = e.bn, bk = e.bk;
  int64_t stages = e.config.getStages();
  if (failed(checkWgmmaConfig(e)))
    return failure();
  // A row-major B: wgmma computes the tile transposed, C^T = B^T A^T, with
  // B^T as its A operand from registers (MatmulWgmmaMma.cpp).
  // 16-bit operands (below) read a row-major B as it is instead (mnB):
  // the same kernel as for B^T, B's tile MN-major (descriptor).
  // operands = "ba" (swapped): 16-bit operands computing C^T as an f32
  // row-major B does (rowB: one warpgroup per 64 columns, the accumulators
  // C^T's), B's tile in boxes of 64 columns (mnB) as wgmma's A operand,
  // read MN-major through its transpose bit (MatmulWgmmaMma.cpp).
  k.half = isWgmma16(e.config.getMma());
  k.mnB = k.half && !e.shape.transB;
  if (k.mnB) {
    k.mnBoxCols = wgmmaMnBoxCols(bn);
    k.mnRowBytes = k.mnBoxCols * 2;
  }
  k.swapped = k.half && e.config.getOperands() == OperandOrder::ba;
  k.rowB = (!e.shape.transB && !k.half) || k.swapped;
  k.tma = e.config.getCopy() == CopyKind::tma;
  bool half = k.half, rowB = k.rowB, tma = k.tma;
  k.bytesA = bm * kRowBytes;
  k.stageBytes = (bm + bn) * kRowBytes;
  int64_t stageBytes = k.stageBytes;
  k.persistent = e.config.getGrid() > 0;
  bool persistent = k.persistent;
  // store = "tma": the TMA-store epilogue (MatmulWgmmaEpilogue.cpp).
  k.tmaStore = e.config.getStore() == StoreKind::tma;
  // 16-bit operands (wgmma_f16, wgmma_bf16): BK = 64 a 128-byte row, four
  // m64nNk16 a k tile where tf32 has four m64nNk8: every descriptor step
  // is 32 bytes of K either way, so the tiles, swizzle and pipeline are the
  // same bytes.
  k.elemBytes = half ? 2 : 4;
  k.kStep = half ? 16 : 8;
  k.opType = !half ? NVVM::WGMMATypes::tf32
                   : (e.config.getMma() == MmaUnit::wgmma_bf16
                          ? NVVM::WGMMATypes::bf16
                          : NVVM::WGMMATypes::f16);
  k.staging =
      wgmmaStagingBytes(bm, bn, bk, stages, e.shape.transB, tma, persistent,
                        e.shape.n, k.tmaStore, k.elemBytes, e.cElem().isF32());
  if (failed(e.setSharedBytes(info, wgmmaSharedBytes(bm, bn, bk, stages, tma,
                                                     k.staging, k.elemBytes))))
    return failure();

  // The dynamic shared memory, realigned to 1024 bytes, as one f32 array.
  Value smem = e.dynamicSharedMemory();
  Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  k.aligned = arith::AndIOp::create(b, loc, e.add(raw, kGroupBytes - 1),
                                    cidx(b, loc, ~(kGroupBytes - 1)));
  Value shift = arith::SubIOp::create(b, loc, k.aligned, raw);
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  k.flat = memref::ViewOp::create(
      b, loc,
      MemRefType::get(
          {(stages * stageBytes + (tma ? 16 * stages : 0) + k.staging) / 4},
          b.getF32Type(), nullptr, wg),
      smem, shift, ValueRange{});

  // A persistent grid (`grid = G`, TMA only): G blocks, block g taking the
  // output tiles g, g + G, g + 2G, ... (launch order over every batch or
  // split), its producer running ahead across tile boundaries, so that the
  // next tile's copies overlap this tile's epilogue
  // (MatmulWgmmaSchedule.cpp). Without it, one block a tile (blockTile).
  k.tilesM = llvm::divideCeil(e.shape.m, bm);
  k.tilesN = llvm::divideCeil(e.shape.n, bn);
  int64_t slices = e.shape.splits > 1 ? e.shape.splits : e.shape.batch;
  k.totalTiles = k.tilesM * k.tilesN * slices;
  if (persistent && !tma)
    return e.op->emitOpError()
           << "wgmma_tf32 with grid = " << e.config.getGrid()
           << " (a persistent grid) needs copy = \"tma\"";
  k.persistentGrid = std::min(e.config.getGrid(), k.totalTiles);
  // A persistent grid of clusters of two (cluster = 2): the pairs of blocks
  // (2p, 2p + 1) walk the tiles of 2 BM rows (the pair's), each block its
  // half; G even, at most the pairs' tiles times two.
  if (persistent && e.config.getCluster() > 2)
    return e.op->emitOpError()
           << "wgmma_tf32 with grid = " << e.config.getGrid()
           << " (a persistent grid) takes cluster = 2 at most, got cluster = "
           << e.config.getCluster();
  k.pairs = persistent && e.config.getCluster() == 2;
  if (k.pairs && e.config.getGrid() % 2)
    return e.op->emitOpError()
           << "wgmma_tf32 with grid = " << e.config.getGrid()
           << " and cluster = 2 needs an even grid (whole clusters of two)";
  if (persistent)
    info.grid = {k.persistentGrid, 1, 1};
  if (k.pairs)
    info.cluster = {2, 1, 1};
  k.tile = persistent ? MatmulEmitter::BlockTile{} : e.blockTile();
  k.bz = k.tile.batch;
  k.row0 = k.tile.row0;
  k.col0 = k.tile.col0;
  k.kTiles = e.kTilesPerBlock();
  int64_t kTiles = k.kTiles;
  // The operands only one block reads, copied evict-first (TMA).
  k.once = readOnceOperands(e.shape, bm, bn);

  // reduce = "stream": stream-K over a persistent grid of G blocks
  // (streamKPlan): the whole rounds of G tiles as a persistent grid runs
  // them, the tiles left over split in chunks of their k tiles, one a
  // block, fixed up through the workspace (MatmulWgmmaReduce.cpp).
  if (e.config.getReduce() == ReduceKind::stream) {
    if (failed(checkStreamK(e, persistent, tma, k.tmaStore,
                            (rowB ? bn : bm) / 64)))
      return failure();
    // Every block of the grid, even past the tiles (the rest's chunks).
    k.persistentGrid = e.config.getGrid();
    k.plan = streamKPlan(k.totalTiles, kTiles, k.persistentGrid);
    info.grid = {k.persistentGrid, 1, 1};
  }
  k.streamChunks = k.plan.chunks >= 2 ? k.plan.chunks : 0;

  if (!tma && ((bm * 8) % e.threads || (bn * 8) % e.threads))
    return e.op->emitOpError() << "wgmma_tf32 tiles must split evenly into "
                                  "16-byte chunks among the threads";
  k.kEdge = e.kPastEnd();

  Type f32 = b.getF32Type();
  // 64 x BN accumulators over 128 threads (64 x BM with a row-major B).
  k.nAcc = (rowB ? bm : bn) / 2;
  k.accType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(k.nAcc, f32));
  k.zero = LLVM::ZeroOp::create(b, loc, k.accType);
  // The warpgroup index, broadcast from lane 0 (as CUTLASS's
  // canonical_warp_group_idx does) so that ptxas knows it is the same in
  // every lane and keeps the addresses and descriptors built from it in
  // uniform registers.
  k.warpgroup = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      gpu::ShuffleOp::create(b, loc,
                             arith::IndexCastUIOp::create(
                                 b, loc, b.getI32Type(), e.div(e.tid, 128)),
                             0, 32, gpu::ShuffleMode::IDX)
          .getShuffleResult());
  k.cBufBytes = stages * stageBytes + kWgmmaAlignBytes;

  scf::ForOp loop;
  if (tma) {
    // TMA with a producer warp (MatmulWgmmaProducer.cpp) and the consumer
    // warpgroups (MatmulWgmmaConsumer.cpp).
    WgmmaTma pipe(k);
    if (failed(pipe.setUp()))
      return failure();
    // A producer warpgroup (a row-major B; B^T with two consumer
    // warpgroups where the config asks for 384 threads) gives most of
    // its registers to the consumers: 40 for the producer, the rest shared by
    // the consumers in steps of 8. A block starts with the registers of its
    // launch (ptxas gives every thread the same count, 65536 / threads in
    // steps of 8: 168 at 384 threads, 96 at 640), and setmaxnreg.inc takes
    // only what the block's own warps released with setmaxnreg.dec: the
    // consumers' count is the launch count plus their share of the
    // producer's 128 x (launch - 40) (232 for two warpgroups, 104 for four).
    // A larger one waits for registers that never come (run 5: a block of
    // 640 threads with the old count, 112, hung). Each setmaxnreg opens the
    // branch whose code it sizes, so that ptxas allocates the consumers'
    // code to the larger count.
    int64_t consumerThreads = pipe.consumerThreads;
    bool moveRegisters =
        e.threads - consumerThreads == 128 && consumerThreads >= 256;
    // With B^T the producer keeps 72 (consumers 216): at 40 ptxas spilled
    // 8 bytes in the producer of 128 x 256 kernels + bias + swish (its tile
    // walk), and over 504 fused nn.Linear programs at 40 / 56 / 72, 102 /
    // 82 / 8 kernels spilled (the 8: GELU with an edge in N, N = 5000).
    int64_t producerRegs = rowB ? 40 : 72;
    int64_t consumerRegs = setmaxnregConsumerCount(
        consumerThreads + 128, consumerThreads, producerRegs);
    pipe.buildProducer(moveRegisters, producerRegs);
    loop = pipe.buildConsumers(moveRegisters, consumerRegs);
    if (!loop)
      return success();
  } else {
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
    Value lastGroup;
    for (int64_t s = 0; s < stages - 2; ++s) {
      if (s < kTiles)
        k.issueCopies(cidx(b, loc, s), cidx(b, loc, s),
                      k.kEdge && (e.shape.splits > 1 || s == kTiles - 1));
      lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                          ValueRange{});
    }
    loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, kTiles),
                              cidx(b, loc, 1), ValueRange{k.zero});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    e.pipelineStep(kt, lastGroup, stages - 3, stages - 2, kTiles,
                   /*fenceAsyncProxy=*/true,
                   [&](Value next) { k.issueTile(next); });
    scf::YieldOp::create(b, loc, k.mmaStep(kt, loop.getRegionIterArgs()[0]));
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

  if (e.clusterReduce) {
    // reduce = "cluster": the two chunks summed by the cluster's two blocks
    // (MatmulWgmmaReduce.cpp).
    emitClusterReduce(
        e, loop.getResult(0), k.warpgroup, (rowB ? bn : bm) / 64,
        [&](Value acc) { k.epilogue(acc, k.row0, k.col0, cidx(b, loc, 0)); });
    return success();
  }
  k.epilogue(loop.getResult(0), k.row0, k.col0, k.bz);
  k.tmaStoreFinish();
  return success();
}
