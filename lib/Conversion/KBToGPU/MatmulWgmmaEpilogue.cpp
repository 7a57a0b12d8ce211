//===- MatmulWgmmaEpilogue.cpp - the wgmma kernel's accumulators into C --===//
//
// The wgmma kernel's epilogue: each consumer thread's accumulators (m64nN's
// fragment layout, or C^T's for an f32 row-major B) through the fused
// elementwise chain into C, by one of three stores: direct 8-byte pairs
// (storeC2), staged through shared memory as whole 16-byte chunks a lane
// (wgmmaStagingBytes), or by TMA store from swizzled boxes in shared
// memory (store = "tma").
//
//===----------------------------------------------------------------------===//

#include "MatmulWgmmaKernel.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::wgmma;

// store = "tma": the TMA-store epilogue. Warpgroup w stages its 64 rows
// of the tile 32 columns at a time (64 for a 16-bit C: 128-byte rows either
// way; its pairs rounded once, 4 bytes each): box c (columns [32c, 32c + 32)) goes
// into slot c % 2 of the warpgroup's two 8 KB boxes (after the mbarriers,
// on the next 1024 bytes: wgmmaTmaStoreBytes), 64 rows of 128 bytes in the
// same 128-byte swizzle as the operand tiles and as C's tensor map (box
// 64 x 32, CU_TENSOR_MAP_SWIZZLE_128B): the 16-byte chunk k of row r at
// chunk k ^ (r % 8). A warp's 8-byte stores of one (j, q) then cover each
// chunk twice (rows g and g ^ 1 of a pair of chunks): two wavefronts for
// 256 bytes, the least there is. Per box:
//   every thread: its 16 values through the fused epilogue, st.shared
//   every thread: fence.proxy.async.shared::cta (its generic-proxy writes
//                 before the async proxy's reads)
//   thread 0 of the warpgroup: cp.async.bulk.wait_group.read 0 (the
//                 previous box's store has read its slot, the one the
//                 next box writes)
//   bar.sync 1 + w, 128 (the warpgroup's named barrier)
//   thread 0 of the warpgroup: cp.async.bulk.tensor.2d.global.shared::cta
//                 of the box at (row0 + 64w, col0 + 32c); commit_group
//                 (.3d at (.., batch) for a batched C: C's map is 3-D)
// With a persistent grid, each tile's epilogue starts with thread 0's
// wait_group.read 0 and the barrier (the previous tile's last box read,
// long since, during the k loop); at the end thread 0 waits for all its
// stores to complete (wait_group 0) before the kernel exits. TMA clips
// the rows past M and the columns past N: no guards.
Value WgmmaKernel::tmaStoreSync(bool waitFirst) {
  Value wgTid = e.rem(e.tid, 128);
  Value elected = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, wgTid,
                                        cidx(b, loc, 0));
  if (waitFirst) {
    auto ifOp = scf::IfOp::create(b, loc, elected, false);
    OpBuilder::InsertionGuard gd(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, kWgmmaStoreSlots - 2,
                                         b.getUnitAttr());
  }
  Value barId =
      arith::IndexCastUIOp::create(b, loc, b.getI32Type(), e.add(warpgroup, 1));
  NVVM::BarrierOp::create(
      b, loc, Type(), barId,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 128), nullptr,
      Value());
  return elected;
}

std::array<Value, 2> WgmmaKernel::accumulatorPair(Value result, int64_t i,
                                                  Value bz, Value row,
                                                  Value col) {
  if (e.pairEpilogue()) {
    Value v0 = LLVM::ExtractValueOp::create(b, loc, result, i);
    Value v1 = LLVM::ExtractValueOp::create(b, loc, result, i + 1);
    return e.epilogue2(v0, v1, bz, row, col);
  }
  // The order the IR had before kb.rotary (byte-identical PTX).
  Value x0 =
      e.epilogue(LLVM::ExtractValueOp::create(b, loc, result, i), bz, row, col);
  Value x1 = e.epilogue(LLVM::ExtractValueOp::create(b, loc, result, i + 1),
                        bz, row, e.add(col, 1));
  return {x0, x1};
}

void WgmmaKernel::tmaStoreEpilogue(Value result, Value row0, Value col0,
                                   Value bz, Value warpInGroup, Value g,
                                   Value t) {
  Type f32 = b.getF32Type();
  if (persistent)
    tmaStoreSync(true);
  auto v2 = VectorType::get({2}, f32);
  Value wgRow0 = e.add(row0, e.mul(warpgroup, 64));
  Value mapC = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 0),
      toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, e.tmapC)));
  // A 16-bit C (`cHalf`): boxes of 64 columns, 8 to a 16-byte chunk; a
  // thread's pair, rounded once, is 4 bytes (stored as one f32 word of the
  // f32 view).
  Type cType = e.cElem();
  bool cHalf = !cType.isF32();
  int64_t boxCols = wgmmaStoreBoxCols(cHalf ? 2 : 4);
  int64_t perChunk = 16 / (cHalf ? 2 : 4);
  auto v1 = VectorType::get({1}, f32);
  auto h2 = VectorType::get({2}, cType);
  for (int64_t c = 0; c < bn / boxCols; ++c) {
    int64_t slot = c % kWgmmaStoreSlots;
    int64_t boxBytes = kWgmmaStoreBoxRows * 128;
    // The box's byte offset from `aligned`.
    Value boxOff = e.add(e.mul(warpgroup, kWgmmaStoreSlots * boxBytes),
                         cBufBytes + slot * boxBytes);
    for (int64_t jj = 0; jj < boxCols / 8; ++jj) {
      int64_t j = boxCols / 8 * c + jj;
      for (int q = 0; q < 4; q += 2) {
        Value r = e.add(e.add(e.mul(warpInGroup, 16), g), q >= 2 ? 8 : 0);
        Value cl = e.add(e.mul(t, 2), 8 * jj);
        Value row = e.add(wgRow0, r);
        Value col = e.add(col0, e.add(cl, boxCols * c));
        auto [x0, x1] = accumulatorPair(result, 4 * j + q, bz, row, col);
        Value pair =
            vector::FromElementsOp::create(b, loc, v2, ValueRange{x0, x1});
        Value chunk =
            arith::XOrIOp::create(b, loc, e.div(cl, perChunk), e.rem(r, 8));
        if (cHalf) {
          // Element cl % 8 of the chunk: f32 word (cl % 8) / 2 (cl is even).
          Value idx = e.add(e.div(boxOff, 4),
                            e.add(e.mul(r, 32),
                                  e.add(e.mul(chunk, 4),
                                        e.div(e.rem(cl, perChunk), 2))));
          Value word = vector::BitCastOp::create(
              b, loc, v1, arith::TruncFOp::create(b, loc, h2, pair));
          vector::StoreOp::create(b, loc, word, flat, ValueRange{idx},
                                  /*nontemporal=*/false, llvm::MaybeAlign(4));
          continue;
        }
        Value idx = e.add(e.div(boxOff, 4),
                          e.add(e.mul(r, kWgmmaStoreBoxCols),
                                e.add(e.mul(chunk, 4), e.rem(cl, 4))));
        // 8-byte aligned: the view starts on 1024 bytes, boxes on 1024
        // bytes, cl is even.
        vector::StoreOp::create(b, loc, pair, flat, ValueRange{idx},
                                /*nontemporal=*/false, llvm::MaybeAlign(8));
      }
    }
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    Value elected = tmaStoreSync(true);
    auto ifOp = scf::IfOp::create(b, loc, elected, false);
    OpBuilder::InsertionGuard gd(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value src =
        LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 3),
                                 toI64(e.add(aligned, boxOff)));
    Value colI = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                              e.add(col0, boxCols * c));
    Value rowI = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), wgRow0);
    // A batched C: a 3-D map (column, row, batch), boxes of one batch, so
    // that TMA clips rows past M in each batch, not in the next one.
    SmallVector<Value, 3> coords{colI, rowI};
    if (e.shape.batched)
      coords.push_back(
          arith::IndexCastUIOp::create(b, loc, b.getI32Type(), bz));
    NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
        b, loc, mapC, src, coords, Value(), NVVM::TMAStoreMode::TILE,
        Value());
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  }
}

// The end of the TMA-store epilogue: thread 0 of each warpgroup waits
// for its stores to complete before the kernel exits.
void WgmmaKernel::tmaStoreFinish() {
  if (!tmaStore)
    return;
  Value elected = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        e.rem(e.tid, 128), cidx(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, elected, false);
  OpBuilder::InsertionGuard gd(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, nullptr);
}

// The epilogue: the accumulators `result` of the tile at (row0, col0) of
// batch or split bz, through the fused epilogue into C.
void WgmmaKernel::epilogue(Value result, Value row0, Value col0, Value bz) {
  // Accumulator layout of m64nNk8, per warp i of the warpgroup and lane
  // (g = lane / 4, t = lane % 4), for each 8-column block j:
  // d[4j] (16i + g, 8j + 2t), d[4j+1] (.., +1), d[4j+2] (16i + g + 8, 8j +
  // 2t), d[4j+3] (.., +1) -- mma.sync's m16n8 C fragment, side by side.
  Value warpInGroup = e.rem(e.div(e.tid, 32), 4), lane = e.rem(e.tid, 32);
  Value g = e.div(lane, 4), t = e.rem(lane, 4);
  Value rowBase = e.add(e.add(row0, e.mul(warpgroup, 64)),
                        e.add(e.mul(warpInGroup, 16), g));
  Value colBase = e.add(col0, e.mul(t, 2));
  if (rowB) {
    // The accumulators hold C^T: d[4j + q] is column (64w + 16i + g + 8 (q /
    // 2)) of the tile, row 8j + 2t + q % 2.
    Value tileCol = e.add(e.add(col0, e.mul(warpgroup, 64)),
                          e.add(e.mul(warpInGroup, 16), g));
    Value tileRow = e.add(row0, e.mul(t, 2));
    // operands = "ba" with a 16-bit C: lanes g and g ^ 1 (lane ^ 4) hold
    // adjacent columns, each two adjacent rows; after the fused epilogue
    // (per element, at its own row and column) one shuffle swaps a value
    // of each, so that an even g holds row 2t's pair (its column, g + 1's)
    // and an odd g row 2t + 1's (g - 1's, its own): one 4-byte store of
    // two 16-bit columns for each two accumulators, as the B^T kernel
    // stores, where one 2-byte store each took twice the instructions.
    if (swapped && !e.cElem().isF32()) {
      Value odd = e.rem(g, 2);
      Value isOdd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, odd,
                                          cidx(b, loc, 0));
      for (int64_t j = 0; j < bm / 8; ++j)
        for (int q = 0; q < 4; q += 2) {
          Value row = e.add(tileRow, 8 * j);
          Value col = e.add(tileCol, q >= 2 ? 8 : 0);
          Value x0 = e.epilogue(
              LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q), bz, row,
              col);
          Value x1 = e.epilogue(
              LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q + 1), bz,
              e.add(row, 1), col);
          Value send = arith::SelectOp::create(b, loc, isOdd, x0, x1);
          Value got =
              gpu::ShuffleOp::create(b, loc, send, 4, 32, gpu::ShuffleMode::XOR)
                  .getShuffleResult();
          Value lo = arith::SelectOp::create(b, loc, isOdd, got, x0);
          Value hi = arith::SelectOp::create(b, loc, isOdd, x1, got);
          e.storeVector(bz, e.add(row, odd),
                        arith::SubIOp::create(b, loc, col, odd), {lo, hi});
        }
      e.flushStores();
      return;
    }
    for (int64_t j = 0; j < bm / 8; ++j)
      for (int q = 0; q < 4; ++q) {
        Value v = LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q);
        e.storeC(bz, e.add(tileRow, 8 * j + q % 2),
                 e.add(tileCol, q >= 2 ? 8 : 0), v);
      }
    e.flushStores();
    return;
  }
  if (tmaStore) {
    tmaStoreEpilogue(result, row0, col0, bz, warpInGroup, g, t);
    return;
  }
  if (staging) {
    epilogueStaged(result, row0, col0, bz, warpInGroup, lane, g, t);
    return;
  }
  for (int64_t j = 0; j < bn / 8; ++j)
    for (int q = 0; q < 4; q += 2) {
      Value row = e.add(rowBase, q >= 2 ? 8 : 0);
      Value col = e.add(colBase, j * 8);
      Value v0 = LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q);
      Value v1 = LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q + 1);
      e.storeC2(bz, row, col, v0, v1);
    }
  e.flushStores();
}

// Staged through shared memory (wgmmaStagingBytes): the warp's 16
// rows, 32 columns at a time. Each thread writes its 8-byte pairs
// (through the fused epilogue) into the warp's 2 KB, 16-byte chunk
// c of row r at chunk c ^ (r % 8); after a warp barrier lane l reads
// row 4i + l / 8, chunk l % 8, and stores it as one 16-byte vector:
// a warp's store is four whole 128-byte lines of C, where the direct
// stores write 8 rows x 32 bytes (B^T's 65536 x 2048 x 32 stalled on
// the store queue, lg_throttle, run 10).
void WgmmaKernel::epilogueStaged(Value result, Value row0, Value col0, Value bz,
                                 Value warpInGroup, Value lane, Value g,
                                 Value t) {
  Type f32 = b.getF32Type();
  Value warpIdx = e.div(e.tid, 32);
  Value bufBase = e.add(cidx(b, loc, (stages * stageBytes + 16 * stages) / 4),
                        e.mul(warpIdx, 512));
  Value warpRow0 =
      e.add(e.add(row0, e.mul(warpgroup, 64)), e.mul(warpInGroup, 16));
  Value full32 = arith::ConstantIntOp::create(b, loc, b.getI32Type(), -1);
  auto slot = [&](Value r, Value chunk, Value within) {
    Value sc = arith::XOrIOp::create(b, loc, chunk, e.rem(r, 8));
    return e.add(bufBase, e.add(e.mul(r, 32), e.add(e.mul(sc, 4), within)));
  };
  auto v2 = VectorType::get({2}, f32), v4 = VectorType::get({4}, f32);
  for (int64_t c = 0; c < bn / 32; ++c) {
    for (int64_t jj = 0; jj < 4; ++jj) {
      int64_t j = 4 * c + jj;
      for (int q = 0; q < 4; q += 2) {
        Value rl = e.add(g, q >= 2 ? 8 : 0);
        Value cl = e.add(e.mul(t, 2), 8 * jj);
        Value row = e.add(warpRow0, rl);
        Value col = e.add(col0, e.add(cl, 32 * c));
        auto [x0, x1] = accumulatorPair(result, 4 * j + q, bz, row, col);
        Value pair =
            vector::FromElementsOp::create(b, loc, v2, ValueRange{x0, x1});
        // 8-byte aligned: the view starts on 1024 bytes, bufBase is a
        // multiple of 4 floats (a stage, 16 bytes of mbarriers a stage,
        // 2 KB a warp) and cl is even.
        vector::StoreOp::create(
            b, loc, pair, flat,
            ValueRange{slot(rl, e.div(cl, 4), e.rem(cl, 4))},
            /*nontemporal=*/false, llvm::MaybeAlign(8));
      }
    }
    NVVM::SyncWarpOp::create(b, loc, full32);
    for (int64_t i = 0; i < 4; ++i) {
      Value rl = e.add(e.div(lane, 8), 4 * i), chunk = e.rem(lane, 8);
      // A whole 16-byte chunk: 16-byte aligned (above).
      Value x = vector::LoadOp::create(
          b, loc, v4, flat, ValueRange{slot(rl, chunk, cidx(b, loc, 0))},
          /*nontemporal=*/false, llvm::MaybeAlign(16));
      Value row = e.add(warpRow0, rl);
      Value col = e.add(col0, e.add(e.mul(chunk, 4), 32 * c));
      e.inOutputRange(row, col, [&] {
        vector::StoreOp::create(b, loc, x, e.c, e.cIndex(bz, row, col), false,
                                llvm::MaybeAlign(16));
      });
    }
    NVVM::SyncWarpOp::create(b, loc, full32);
  }
}
