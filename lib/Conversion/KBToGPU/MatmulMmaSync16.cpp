//===- MatmulMmaSync16.cpp - the mma.sync.m16n8k16 f16 / bf16 inner tile --===//
//
// The 16-bit matmul on sm_80 and sm_90 without wgmma (mma = "mma_sync_f16",
// "mma_sync_bf16"). Each warp owns a WM x WN tile of the block's output:
// (WM / 16) x (WN / 8) m16n8k16 fragments whose f32 accumulators stay in
// registers for the whole k loop. The operand tiles come by cp.async in
// 16-byte chunks of 8 elements into `stages` buffers of padded shared
// memory (rows of BK + padA and BN + padB elements; past M, N or K the
// chunks are zero-filled). Per k16 step a warp loads each A fragment with
// one ldmatrix.x4 and the B fragments of two n8 fragments with another:
// from B^T's [BN][BK + pad] rows as A's, from a row-major B's [BK][BN +
// pad] rows with ldmatrix.x4.trans, so both forms of B are read as they are
// (no transpose kernel). The epilogue is the tf32 kernel's: f32 values
// through the fused chain, rounded once at C's store.
//
//===----------------------------------------------------------------------===//

#include "MatmulGen.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

LogicalResult mlir::kb::buildMmaSync16(MatmulEmitter &e, LaunchInfo &info) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  ConfigAttr cfg = e.config;
  Type elem = cast<MemRefType>(e.a.getType()).getElementType();
  NVVM::MMATypes type = mmaSyncType(elem);
  bool bf16 = cfg.getMma() == MmaUnit::mma_sync_bf16;
  if (elem.isF32() || (bf16 != elem.isBF16()))
    return e.op->emitOpError()
           << "mma = \"" << nameOf(cfg.getMma()) << "\" computes "
           << (bf16 ? "bf16" : "f16") << " operands, not " << elem;
  if (cfg.getWarp().size() != 2)
    return e.op->emitOpError() << "mma.sync needs warp = [WM, WN]: run kb-tile";
  int64_t wm = cfg.getWarp()[0], wn = cfg.getWarp()[1];
  int64_t bm = e.bm, bn = e.bn, bk = e.bk;
  // B's fragments come two n8 fragments (16 columns) an ldmatrix.x4, A's
  // 16 rows; a k step is 16 (kb-tile checks these too).
  if (wm % 16 || wn % 16 || bk % 16)
    return e.op->emitOpError()
           << "16-bit mma.sync tiles need WM, WN and BK multiples of 16; got "
              "block = ["
           << bm << ", " << bn << ", " << bk << "], warp = [" << wm << ", "
           << wn << "]: run kb-tile";
  int64_t padA = cfg.getPad().size() == 2 ? cfg.getPad()[0] : 0;
  int64_t padB = cfg.getPad().size() == 2 ? cfg.getPad()[1] : 0;
  int64_t stages = cfg.getStages();
  bool transB = e.shape.transB;
  if (cfg.getCopy() != CopyKind::cp_async || stages < 2 ||
      !mmaSyncCopiesFit(e.shape.n, e.shape.k, transB, bm, bn, bk, e.threads,
                        /*elemBytes=*/2))
    return e.op->emitOpError()
           << "16-bit mma.sync kernel runs copy = \"cp_async\" with at least "
              "2 stages, K (and N with a row-major B) a multiple of 8 and "
              "16-byte chunks that split evenly among the threads; got copy = "
              "\""
           << nameOf(cfg.getCopy()) << "\", stages = " << stages
           << ": run kb-select-mma and kb-promote-shared-memory";
  // ldmatrix reads 16-byte rows: their starts must be 16-byte aligned.
  if (padA % 8 || padB % 8)
    return e.op->emitOpError()
           << "16-bit mma.sync tiles need pad = [padA, padB] multiples of 8 "
              "elements (ldmatrix reads 16-byte rows); got ["
           << padA << ", " << padB << "]";
  int64_t lda = bk + padA, ldb = bn + padB;
  int64_t fragM = wm / 16, fragN = wn / 8, warpsN = bn / wn;
  // A [BM][BK + padA]; B^T [BN][BK + padA] or B [BK][BN + padB].
  int64_t bRows = transB ? bn : bk, bCols = transB ? lda : ldb;
  int64_t stageBytes = (bm * lda + bRows * bCols) * 2;
  if (failed(e.setSharedBytes(info, stages * stageBytes)))
    return failure();

  Value smem = e.dynamicSharedMemory();
  auto stageViews = [&](Value stage) {
    return e.stageViews(smem, stage, stageBytes, bm, lda, bRows, bCols, elem);
  };
  MatmulEmitter::BlockTile tile = e.blockTile();
  Value bz = tile.batch, row0 = tile.row0, col0 = tile.col0;
  Value warp = e.div(e.tid, 32), lane = e.rem(e.tid, 32);
  Value warpRow = e.mul(e.div(warp, warpsN), wm);
  Value warpCol = e.mul(e.rem(warp, warpsN), wn);

  int64_t nAcc = fragM * fragN * 4;
  SmallVector<Value> init(nAcc, cf32(b, loc, 0.0f));
  int64_t kTiles = e.kTilesPerBlock();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  // Prologue: the first stages - 1 tiles in flight.
  Value lastGroup;
  for (int64_t s = 0; s < stages - 1; ++s) {
    if (s < kTiles) {
      auto [va, vb] = stageViews(cidx(b, loc, s));
      issueMmaSyncTileCopies(e, bz, row0, col0, e.kAt(cidx(b, loc, s)), va, vb);
    }
    lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                        ValueRange{});
  }
  // ldmatrix lane addresses (lane L: row L % 8 of matrix L / 8). A's four
  // matrices: rows +0 / +8 (matrix bit 0) by k +0 / +8 (bit 1), which are
  // a0..a3. B^T's: k +0 / +8 (bit 0) by n +0 / +8 (bit 1), b0 b1 of two n8
  // fragments; a row-major B's the same, its rows k and its columns n,
  // read transposed.
  Value l8 = e.rem(lane, 8), lm = e.div(lane, 8);
  Value bit0 = e.mul(e.rem(lm, 2), 8), bit1 = e.mul(e.div(lm, 2), 8);
  Value aRow = e.add(e.add(warpRow, l8), bit0);

  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, kTiles),
                                 cidx(b, loc, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    // Tile kt has landed once at most stages - 2 newer groups are pending;
    // the barrier also frees the stage of the previous iteration.
    e.pipelineStep(kt, lastGroup, stages - 2, stages - 1, kTiles,
                   /*fenceAsyncProxy=*/false, [&](Value next) {
                     auto [va, vb] = stageViews(e.rem(next, stages));
                     issueMmaSyncTileCopies(e, bz, row0, col0, e.kAt(next), va,
                                            vb);
                   });
    auto [as, bs] = stageViews(e.rem(kt, stages));
    SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                           loop.getRegionIterArgs().end());
    auto operands = [&](SmallVector<Value> regs) {
      for (Value &r : regs)
        r = mmaPairOperand(b, loc, r);
      return regs;
    };
    for (int64_t kk = 0; kk < bk; kk += 16) {
      SmallVector<SmallVector<Value>> af, bf;
      for (int64_t i = 0; i < fragM; ++i)
        af.push_back(operands(
            ldmatrixX4(b, loc, as, e.add(aRow, i * 16), e.add(bit1, kk))));
      for (int64_t j = 0; j < fragN; j += 2) {
        Value n = e.add(warpCol, j * 8);
        SmallVector<Value> b4 =
            transB ? ldmatrixX4(b, loc, bs, e.add(e.add(n, l8), bit1),
                                e.add(bit0, kk))
                   : ldmatrixX4(b, loc, bs, e.add(e.add(l8, bit0), kk),
                                e.add(n, bit1), /*transpose=*/true);
        b4 = operands(b4);
        bf.push_back({b4[0], b4[1]});
        bf.push_back({b4[2], b4[3]});
      }
      for (int64_t i = 0; i < fragM; ++i)
        for (int64_t j = 0; j < fragN; ++j) {
          ArrayRef<Value> cur(acc.data() + (i * fragN + j) * 4, 4);
          SmallVector<Value> r = mmaSyncF32(b, loc, type, af[i], bf[j], cur);
          for (int q = 0; q < 4; ++q)
            acc[(i * fragN + j) * 4 + q] = r[q];
        }
    }
    scf::YieldOp::create(b, loc, acc);
  }
  storeMmaSyncTile(e, bz, row0, col0, warpRow, warpCol, fragM, fragN,
                   loop.getResults());
  return success();
}
