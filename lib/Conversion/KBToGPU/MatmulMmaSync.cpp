//===- MatmulMmaSync.cpp - the mma.sync.m16n8k8 TF32 inner tile -----------===//
//
// Also the pieces the 16-bit kernel (MatmulMmaSync16.cpp) shares with it:
// the cp.async copies of a k tile into a stage (issueMmaSyncTileCopies) and
// the accumulators' store through the epilogue (storeMmaSyncTile).
// Each warp owns a WM x WN tile of the block's output: (WM/16) x (WN/8)
// m16n8k8 fragments whose accumulators stay in registers (loop-carried values)
// for the whole k loop. Per k8 step a warp reads its A fragments (rows
// g = lane/4, columns t = lane%4, +8 rows, +4 columns) and B fragments
// (k = t, t+4; column g) from the padded shared-memory tiles, rounds them to
// tf32 (half-ulp add, see roundToTf32Bits) and issues one nvvm.mma.sync per
// fragment pair.
// tf32x3 splits each operand x into big = tf32(x) and small = tf32(x - big)
// and accumulates small*big + big*small + big*big, for near-fp32 accuracy.
//
//===----------------------------------------------------------------------===//

#include "MatmulGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

namespace {

/// An operand element rounded to tf32: the i32 register the mma reads, and
/// (for tf32x3) the rounded-off remainder as a second tf32 register.
struct Tf32Parts {
  Value big, small;
};

/// Rounds an f32 to tf32 by adding half a tf32 ulp (0x1000) to its bits; the
/// tensor core then ignores the low 13 bits. One integer add, where
/// cvt.rna.tf32.f32 costs about four SASS instructions on sm_90 (an FSETP,
/// integer ops and a select: 96 FSETP per k tile in the first TF32 kernel).
/// Rounds half away from zero in magnitude, like cvt.rna, for finite values
/// below the largest tf32; an infinite input becomes NaN.
Value roundToTf32Bits(OpBuilder &b, Location loc, Value x) {
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  return arith::AddIOp::create(b, loc, bits, ci32(b, loc, 0x1000));
}

Tf32Parts toTf32(OpBuilder &b, Location loc, Value x, bool split) {
  Tf32Parts p;
  p.big = roundToTf32Bits(b, loc, x);
  if (split) {
    // The value the tensor core sees for `big`: the rounded bits, truncated.
    Value bigBits =
        arith::AndIOp::create(b, loc, p.big, ci32(b, loc, 0xFFFFE000u));
    Value bigF = arith::BitcastOp::create(b, loc, b.getF32Type(), bigBits);
    Value rest = arith::SubFOp::create(b, loc, x, bigF);
    p.small = roundToTf32Bits(b, loc, rest);
  }
  return p;
}

} // namespace

/// Issues the cp.async copies of one k tile into one pipeline stage: 16-byte
/// chunks along each operand's contiguous axis; chunks that run past M, N or
/// K copy fewer (or no) bytes and zero-fill the rest, so no load is guarded
/// by a branch. `as`/`bs` are the stage's views: A as [BM][BK + pad], B as
/// [BK][BN + pad] (or [BN][BK + pad] when B is transposed).
void mlir::kb::issueMmaSyncTileCopies(MatmulEmitter &e, Value batchIdx,
                                      Value row0, Value col0, Value k0,
                                      Value as, Value bs) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  auto copy = [&](Value src, SmallVector<Value> srcIdx, Value dst,
                  ValueRange dstIdx, Value rowInRange, Value colStart,
                  int64_t colBound) {
    e.asyncCopyChunk(src, std::move(srcIdx), dst, dstIdx, rowInRange, colStart,
                     colBound);
  };
  int64_t threads = e.threads, bm = e.bm, bn = e.bn, bk = e.bk;
  // Elements of a 16-byte chunk: 4 f32 or 8 16-bit ones.
  int64_t ch = 128 / cast<MemRefType>(as.getType()).getElementTypeBitWidth();
  auto inRange = [&](Value v, int64_t bound, bool needed) -> Value {
    if (!needed)
      return Value();
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                 cidx(b, loc, bound));
  };
  // A: BM rows of BK / ch chunks.
  for (int64_t i = 0; i < bm * bk / ch / threads; ++i) {
    Value c = e.add(e.tid, i * threads);
    Value r = e.div(c, bk / ch), kc = e.mul(e.rem(c, bk / ch), ch);
    Value gr = e.add(row0, r), gk = e.add(k0, kc);
    copy(e.a, e.globalIndex(batchIdx, gr, gk), as, ValueRange{r, kc},
         inRange(gr, e.shape.m, e.shape.m % bm != 0), gk, e.shape.k);
  }
  // B: BK rows of BN / ch chunks, or (transposed) BN rows of BK / ch.
  for (int64_t i = 0; i < bk * bn / ch / threads; ++i) {
    Value c = e.add(e.tid, i * threads);
    if (!e.shape.transB) {
      Value r = e.div(c, bn / ch), nc = e.mul(e.rem(c, bn / ch), ch);
      Value gk = e.add(k0, r), gn = e.add(col0, nc);
      copy(e.bmem, e.globalIndex(batchIdx, gk, gn), bs, ValueRange{r, nc},
           inRange(gk, e.shape.k, e.kPastEnd()), gn, e.shape.n);
    } else {
      Value r = e.div(c, bk / ch), kc = e.mul(e.rem(c, bk / ch), ch);
      Value gn = e.add(col0, r), gk = e.add(k0, kc);
      copy(e.bmem, e.globalIndex(batchIdx, gn, gk), bs, ValueRange{r, kc},
           inRange(gn, e.shape.n, e.shape.n % bn != 0), gk, e.shape.k);
    }
  }
}

void mlir::kb::storeMmaSyncTile(MatmulEmitter &e, Value bz, Value row0,
                                Value col0, Value warpRow, Value warpCol,
                                int64_t fragM, int64_t fragN, ValueRange acc) {
  Value lane = e.rem(e.tid, 32);
  Value g = e.div(lane, 4), t = e.rem(lane, 4);
  // c0: (g, 2t), c1: (g, 2t+1), c2: (g+8, 2t), c3: (g+8, 2t+1): two
  // consecutive columns per 8-byte store (as in the wgmma kernel, where
  // that was 3.9% of the whole kernel).
  for (int64_t i = 0; i < fragM; ++i)
    for (int64_t j = 0; j < fragN; ++j)
      for (int q = 0; q < 4; q += 2) {
        Value row =
            e.add(e.add(row0, warpRow), e.add(g, i * 16 + (q >= 2 ? 8 : 0)));
        Value col = e.add(e.add(col0, warpCol), e.add(e.mul(t, 2), j * 8));
        Value v0 = acc[(i * fragN + j) * 4 + q];
        Value v1 = acc[(i * fragN + j) * 4 + q + 1];
        e.storeC2(bz, row, col, v0, v1);
      }
  e.flushStores();
}

LogicalResult mlir::kb::buildMmaSync(MatmulEmitter &e, LaunchInfo &info,
                                     bool split3) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  ConfigAttr cfg = e.config;
  if (cfg.getWarp().size() != 2)
    return e.op->emitOpError() << "mma.sync needs warp = [WM, WN]: run kb-tile";
  int64_t wm = cfg.getWarp()[0], wn = cfg.getWarp()[1];
  int64_t padA = cfg.getPad().size() == 2 ? cfg.getPad()[0] : 0;
  int64_t padB = cfg.getPad().size() == 2 ? cfg.getPad()[1] : 0;
  int64_t bm = e.bm, bn = e.bn, bk = e.bk;
  int64_t lda = bk + padA, ldb = bn + padB;
  int64_t fragM = wm / 16, fragN = wn / 8, warpsN = bn / wn;
  int64_t stages = std::max<int64_t>(cfg.getStages(), 1);
  // cp.async moves 16-byte chunks: rows must be 16-byte aligned in global
  // memory (contiguous dimension a multiple of 4) and tiles split evenly.
  // Otherwise the tiles are staged through registers, one stage. Both
  // chosen by kb-promote-shared-memory.
  bool asyncCopy = cfg.getCopy() == CopyKind::cp_async;
  bool asyncFits = mmaSyncCopiesFit(e.shape.n, e.shape.k, e.shape.transB, bm,
                                    bn, bk, e.threads);
  if (asyncCopy ? stages < 2 || !asyncFits : stages != 1)
    return e.op->emitOpError()
           << "mma.sync kernel cannot run copy = \"" << nameOf(cfg.getCopy())
           << "\" with stages = " << stages << ": run kb-promote-shared-memory";
  // Row strides: A [BM][BK + padA]; B [BK][BN + padB], or [BN][BK + padA]
  // when B is transposed and copied as is (its fragments then read like A's).
  bool transB = e.shape.transB && asyncCopy;
  int64_t bRows = transB ? bn : bk, ldbT = transB ? lda : ldb;
  int64_t bytesA = bm * lda * 4, bytesB = bRows * ldbT * 4;
  int64_t stageBytes = bytesA + bytesB;
  if (failed(e.setSharedBytes(info, stages * stageBytes)))
    return failure();

  Value smem = e.dynamicSharedMemory();
  auto stageViews = [&](Value stage) {
    return e.stageViews(smem, stage, stageBytes, bm, lda, bRows, ldbT);
  };

  MatmulEmitter::BlockTile tile = e.blockTile();
  Value bz = tile.batch, row0 = tile.row0, col0 = tile.col0;
  Value warp = e.div(e.tid, 32), lane = e.rem(e.tid, 32);
  Value g = e.div(lane, 4), t = e.rem(lane, 4);
  Value warpRow = e.mul(e.div(warp, warpsN), wm);
  Value warpCol = e.mul(e.rem(warp, warpsN), wn);

  int64_t nAcc = fragM * fragN * 4;
  SmallVector<Value> init(nAcc, cf32(b, loc, 0.0f));
  int64_t kTiles = e.kTilesPerBlock();
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Value lastGroup;
  if (asyncCopy) {
    // Prologue: the first stages - 1 tiles in flight.
    for (int64_t s = 0; s < stages - 1; ++s) {
      if (s < kTiles) {
        auto [va, vb] = stageViews(cidx(b, loc, s));
        issueMmaSyncTileCopies(e, bz, row0, col0, e.kAt(cidx(b, loc, s)), va,
                               vb);
      }
      lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                          ValueRange{});
    }
  }
  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, kTiles),
                                 cidx(b, loc, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value as, bs;
    if (asyncCopy) {
      // Tile kt has landed once at most stages - 2 newer groups are pending;
      // the barrier makes every thread's copies visible and frees the stage
      // computed in the previous iteration for the next copy.
      e.pipelineStep(kt, lastGroup, stages - 2, stages - 1, kTiles,
                     /*fenceAsyncProxy=*/false, [&](Value next) {
                       auto [va, vb] = stageViews(e.rem(next, stages));
                       issueMmaSyncTileCopies(e, bz, row0, col0, e.kAt(next),
                                              va, vb);
                     });
      std::tie(as, bs) = stageViews(e.rem(kt, stages));
    } else {
      std::tie(as, bs) = stageViews(cidx(b, loc, 0));
      e.stageTiles(bz, row0, col0, e.kAt(kt), as, bs,
                   /*aTransposed=*/false);
      gpu::BarrierOp::create(b, loc);
    }
    SmallVector<Value> acc(loop.getRegionIterArgs().begin(),
                           loop.getRegionIterArgs().end());
    auto ld = [&](Value mem, Value r, Value c) {
      return memref::LoadOp::create(b, loc, mem, ValueRange{r, c}).getResult();
    };
    // tf32x3 adds each k tile's products into fresh accumulators and those
    // into the running sum with ordinary (round-to-nearest) fp32 adds: the
    // tensor core's own accumulation over the whole of K loses about 1e-5.
    SmallVector<Value> total;
    if (split3) {
      total = acc;
      acc.assign(nAcc, cf32(b, loc, 0.0f));
    }
    // ldmatrix lane addresses: A matrices are (rows +0/+8) x (cols +0/+4),
    // lane L points at row L % 8 of matrix L / 8.
    Value l8 = e.rem(lane, 8), lm = e.div(lane, 8);
    Value aRowOff = e.add(l8, e.mul(e.rem(lm, 2), 8)),
          aColOff = e.mul(e.div(lm, 2), 4);
    Value bRowOff = e.add(l8, e.mul(e.div(lm, 2), 8)),
          bColOff = e.mul(e.rem(lm, 2), 4);
    for (int64_t kk = 0; kk < bk; kk += 8) {
      Value ka = e.add(t, kk), kb4 = e.add(t, kk + 4);
      SmallVector<std::array<Tf32Parts, 4>> af;
      for (int64_t i = 0; i < fragM; ++i) {
        auto a4 = ldmatrixX4(b, loc, as, e.add(e.add(warpRow, aRowOff), i * 16),
                             e.add(aColOff, kk));
        af.push_back(
            {toTf32(b, loc, a4[0], split3), toTf32(b, loc, a4[1], split3),
             toTf32(b, loc, a4[2], split3), toTf32(b, loc, a4[3], split3)});
      }
      SmallVector<std::array<Tf32Parts, 2>> bf;
      for (int64_t j = 0; j < fragN; ++j) {
        Value c = e.add(warpCol, e.add(g, j * 8));
        if (transB && j % 2 == 0 && j + 1 < fragN) {
          // Two n-fragments' b0/b1 with one ldmatrix.x4 from [BN][BK + pad].
          auto b4 =
              ldmatrixX4(b, loc, bs, e.add(e.add(warpCol, bRowOff), j * 8),
                         e.add(bColOff, kk));
          bf.push_back(
              {toTf32(b, loc, b4[0], split3), toTf32(b, loc, b4[1], split3)});
          bf.push_back(
              {toTf32(b, loc, b4[2], split3), toTf32(b, loc, b4[3], split3)});
          ++j;
        } else if (transB) {
          bf.push_back({toTf32(b, loc, ld(bs, c, ka), split3),
                        toTf32(b, loc, ld(bs, c, kb4), split3)});
        } else {
          bf.push_back({toTf32(b, loc, ld(bs, ka, c), split3),
                        toTf32(b, loc, ld(bs, kb4, c), split3)});
        }
      }
      for (int64_t i = 0; i < fragM; ++i)
        for (int64_t j = 0; j < fragN; ++j) {
          auto big = [](auto &parts) {
            SmallVector<Value> v;
            for (auto &p : parts)
              v.push_back(p.big);
            return v;
          };
          auto small = [](auto &parts) {
            SmallVector<Value> v;
            for (auto &p : parts)
              v.push_back(p.small);
            return v;
          };
          ArrayRef<Value> cur(acc.data() + (i * fragN + j) * 4, 4);
          SmallVector<Value> r(cur.begin(), cur.end());
          if (split3) {
            r = mmaSyncF32(b, loc, NVVM::MMATypes::tf32, small(af[i]),
                           big(bf[j]), r);
            r = mmaSyncF32(b, loc, NVVM::MMATypes::tf32, big(af[i]),
                           small(bf[j]), r);
          }
          r = mmaSyncF32(b, loc, NVVM::MMATypes::tf32, big(af[i]), big(bf[j]),
                         r);
          for (int q = 0; q < 4; ++q)
            acc[(i * fragN + j) * 4 + q] = r[q];
        }
    }
    if (split3)
      for (int64_t i = 0; i < nAcc; ++i)
        acc[i] = arith::AddFOp::create(b, loc, total[i], acc[i]);
    if (!asyncCopy)
      gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }
  storeMmaSyncTile(e, bz, row0, col0, warpRow, warpCol, fragM, fragN,
                   loop.getResults());
  return success();
}
