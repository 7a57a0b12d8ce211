//===- MatmulFfma.cpp - the FFMA matmul kernel (precision ieee) -----------===//
//
// One block computes a BM x BN tile of C, looping over K in steps of BK. The
// A (transposed) and B tiles of each step are staged in dynamic shared
// memory as kb-promote-shared-memory decided (copy = "registers": one or two
// buffers filled through registers; "cp_async": a pipeline `stages` deep);
// each thread accumulates a [TM, TN] register tile with fp32 FMAs, written to
// C once, at the end. Edge tiles are guarded, so M, N and K need not be tile
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

LogicalResult mlir::kb::buildFfma(MatmulEmitter &e, LaunchInfo &info) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  auto cfg = e.config;
  if (cfg.getThread().size() != 2)
    return e.op->emitOpError() << "the FFMA kernel needs thread = [TM, TN]: "
                                  "run kb-tile";
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
  if (asyncCopy ? stages < 3 || !ffmaCopiesFit(bm, bn, bk, e.threads)
                : stages > 2)
    return e.op->emitOpError()
           << "FFMA kernel cannot run copy = \"" << nameOf(cfg.getCopy())
           << "\" with stages = " << stages << ": run kb-promote-shared-memory";
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
  int64_t kTiles = e.kTilesPerBlock();
  bool guardM = e.shape.m % bm, guardN = e.shape.n % bn,
       guardK = e.kPastEnd();
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
        Value kIn =
            guardK ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           gk, cidx(b, loc, e.shape.k))
                         .getResult()
                   : Value();
        e.asyncCopyChunk(
            e.bmem, e.globalIndex(bz, gk, gn), bs, ValueRange{kr, nc}, kIn, gn,
            guardN ? std::optional<int64_t>(e.shape.n) : std::nullopt);
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
          {guardK ? gk : Value(), e.shape.k},
          {guardN ? gn : Value(), e.shape.n}};
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
        issueCopies(e.kAt(cidx(b, loc, s)), va, vb);
      }
      lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                          ValueRange{});
    }
  } else if (stages == 2) {
    auto [va, vb] = views(cidx(b, loc, 0));
    e.stageTiles(bz, row0, col0, e.kAt(cidx(b, loc, 0)), va, vb,
                 /*aTransposed=*/true);
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
                       issueCopies(e.kAt(nextKt), na, nb);
                     });
      std::tie(as, bs) = views(e.rem(kt, stages));
    } else if (stages == 2) {
      std::tie(as, bs) = views(e.rem(kt, 2));
      // Prefetch the next tile into registers. The last iteration reloads
      // the last tile (clamped index) into the idle buffer instead of
      // branching: one redundant tile per block, no divergent control flow.
      Value nextKt = arith::MinUIOp::create(b, loc, e.add(kt, 1),
                                            cidx(b, loc, kTiles - 1));
      next = e.loadTiles(bz, row0, col0, e.kAt(nextKt), /*aTransposed=*/true);
    } else {
      std::tie(as, bs) = views(cidx(b, loc, 0));
      e.stageTiles(bz, row0, col0, e.kAt(kt), as, bs, /*aTransposed=*/true);
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
        Value v = vector::LoadOp::create(b, loc, v4, as,
                                         ValueRange{kkv, e.add(aCol, q)}, false,
                                         llvm::MaybeAlign(16));
        for (int64_t l = 0; l < 4; ++l)
          av.push_back(
              vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l}));
      }
      for (int64_t q = 0; q < tn; q += 4) {
        Value v =
            vector::LoadOp::create(b, loc, v4, bs, ValueRange{kkv, bColumn(q)},
                                   false, llvm::MaybeAlign(16));
        for (int64_t l = 0; l < 4; ++l)
          bv.push_back(
              vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{l}));
      }
      // Row by row, every other row backwards: consecutive FMAs share
      // av[i] and, at each row change, bv[j] as well (operand reuse).
      for (int64_t i = 0; i < tm; ++i)
        for (int64_t jj = 0; jj < tn; ++jj) {
          int64_t j = i % 2 ? tn - 1 - jj : jj;
          acc[i * tn + j] =
              math::FmaOp::create(b, loc, av[i], bv[j], acc[i * tn + j]);
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
