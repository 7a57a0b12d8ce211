//===- Transpose.cpp - the kb.transpose kernel ----------------------------===//
//
// A block moves one T x T tile (T = 32 or 64, config block = [T, T]) of each
// (batch) matrix: its threads read the tile's rows (each warp 32 consecutive
// floats: one 128-byte line), write them into a T x (T + 1) shared-memory
// tile (the extra column puts a warp's column reads in distinct banks), and
// after a barrier read columns of it and write them as rows of the output,
// again 128 bytes per warp. One read and one write of every element:
// memory-bound, like a copy. 64 x 64 tiles keep 16 KB per block in flight
// against 4 KB with 32 x 32: run 32 measured 84.2% of the copy bandwidth
// against 81.1% in the same call (4096 x 4096). With `pad` the output's
// rows are longer than the input's column count (rounded up to a multiple
// of the pad): the blocks of the last tile column also write the zeros
// between.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

using namespace mlir;
using namespace mlir::kb;

LogicalResult mlir::kb::buildTransposeKernel(const KernelRequest &req,
                                             LaunchInfo &info) {
  auto op = cast<TransposeOp>(req.op);
  auto inType = op.getInput().getType();
  auto shape = inType.getShape();
  size_t r = shape.size();
  int64_t rows = shape[r - 2], cols = shape[r - 1];
  int64_t batch = r == 3 ? shape[0] : 1;
  // The output's row length: `rows`, or rounded up to the pad.
  int64_t outRows = op.getResult().getType().getShape().back();
  int64_t threads = req.config.getThreads();
  auto blockCfg = req.config.getBlock();
  int64_t kTile = blockCfg.empty() ? 32 : blockCfg[0];
  if ((kTile != 32 && kTile != 64) || threads % kTile ||
      kTile % (threads / kTile))
    return op.emitOpError()
           << "transpose kernel needs a 32 or 64 tile and "
              "threads that split it into whole rows; got tile "
           << kTile << ", " << threads << " threads";
  info.grid = {(int64_t)llvm::divideCeil(cols, kTile),
               (int64_t)llvm::divideCeil(outRows, kTile), batch};
  info.block = {threads, 1, 1};
  if (info.grid[1] > 65535 || info.grid[2] > 65535)
    return op.emitOpError()
           << "needs a grid of " << info.grid[1] << " x " << info.grid[2]
           << " in y and z; at most 65535 each";

  gpu::GPUFuncOp func = req.func;
  Location loc = op.getLoc();
  auto wg = gpu::AddressSpaceAttr::get(func.getContext(),
                                       gpu::AddressSpace::Workgroup);
  Value tile = func.addWorkgroupAttribution(
      MemRefType::get({kTile, kTile + 1},
                      op.getInput().getType().getElementType(), nullptr, wg),
      loc);
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  Value in = func.getArgument(0), out = func.getArgument(1);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  auto mul = [&](Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, cidx(b, loc, c)).getResult();
  };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  // Thread t takes column t % T of rows t / T, t / T + T', ... (T' = threads /
  // T).
  Value lane = arith::RemUIOp::create(b, loc, tid, cidx(b, loc, kTile));
  Value group = arith::DivUIOp::create(b, loc, tid, cidx(b, loc, kTile));
  Value row0 = mul(by, kTile), col0 = mul(bx, kTile);
  int64_t groups = threads / kTile;
  auto index = [&](Value i, Value j) {
    SmallVector<Value> idx;
    if (r == 3)
      idx.push_back(bz);
    idx.append({i, j});
    return idx;
  };
  // Runs `body` under `cond` (when the tile can cross the matrix's edge).
  auto guarded = [&](bool needed, Value i, int64_t iBound, Value j,
                     int64_t jBound, function_ref<void()> body) {
    if (!needed) {
      body();
      return;
    }
    Value ok = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                              cidx(b, loc, iBound)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j,
                              cidx(b, loc, jBound)));
    auto ifOp = scf::IfOp::create(b, loc, ok, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  bool edge = rows % kTile || cols % kTile || outRows % kTile;
  bool padded = outRows != rows;
  // Read: row group w takes tile rows w, w + groups, ...; lane = column.
  for (int64_t i = 0; i < kTile; i += groups) {
    Value tr = add(group, cidx(b, loc, i));
    Value gi = add(row0, tr), gj = add(col0, lane);
    guarded(edge, gi, rows, gj, cols, [&] {
      Value v = memref::LoadOp::create(b, loc, in, index(gi, gj));
      memref::StoreOp::create(b, loc, v, tile, ValueRange{tr, lane});
    });
  }
  gpu::BarrierOp::create(b, loc);
  // Write: output row = input column col0 + w + i, output column = input
  // row row0 + lane (zero past the input's last row, up to the padding).
  for (int64_t i = 0; i < kTile; i += groups) {
    Value tc = add(group, cidx(b, loc, i));
    Value oi = add(col0, tc), oj = add(row0, lane);
    guarded(edge, oi, cols, oj, outRows, [&] {
      Value v = memref::LoadOp::create(b, loc, tile, ValueRange{lane, tc});
      if (padded)
        v = arith::SelectOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, oj,
                                  cidx(b, loc, rows)),
            v,
            arith::ConstantOp::create(
                b, loc,
                b.getFloatAttr(op.getInput().getType().getElementType(), 0.0)));
      memref::StoreOp::create(b, loc, v, out, index(oi, oj));
    });
  }
  return success();
}
