//===- Transpose.cpp - the kb.transpose kernel ----------------------------===//
//
// A block moves one 32 x 32 tile of each (batch) matrix: its warps read the
// tile's rows (32 consecutive floats per warp: one 128-byte line), write them
// into a 32 x 33 shared-memory tile (the extra column puts the column reads
// of the second half in distinct banks), and after a barrier read columns of
// it and write them as rows of the output, again 128 bytes per warp. One read
// and one write of every element: memory-bound, like a copy.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/KBToGPU/KernelGen.h"

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
  int64_t threads = req.config.getThreads();
  constexpr int64_t kTile = 32;
  if (threads % 32 || kTile % (threads / 32))
    return op.emitOpError() << "transpose kernel needs whole warps dividing "
                               "32 rows; got "
                            << threads << " threads";
  info.grid = {(int64_t)llvm::divideCeil(cols, kTile),
               (int64_t)llvm::divideCeil(rows, kTile), batch};
  info.block = {threads, 1, 1};
  if (info.grid[1] > 65535 || info.grid[2] > 65535)
    return op.emitOpError() << "needs a grid of " << info.grid[1] << " x "
                            << info.grid[2] << " in y and z; at most 65535 each";

  gpu::GPUFuncOp func = req.func;
  Location loc = op.getLoc();
  auto wg = gpu::AddressSpaceAttr::get(func.getContext(), gpu::AddressSpace::Workgroup);
  Value tile = func.addWorkgroupAttribution(
      MemRefType::get({kTile, kTile + 1}, Float32Type::get(func.getContext()),
                      nullptr, wg),
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
  Value lane = arith::RemUIOp::create(b, loc, tid, cidx(b, loc, 32));
  Value warp = arith::DivUIOp::create(b, loc, tid, cidx(b, loc, 32));
  Value row0 = mul(by, kTile), col0 = mul(bx, kTile);
  int64_t warps = threads / 32;
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
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i, cidx(b, loc, iBound)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, cidx(b, loc, jBound)));
    auto ifOp = scf::IfOp::create(b, loc, ok, false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  };
  bool edge = rows % kTile || cols % kTile;
  // Read: warp w takes tile rows w, w + warps, ...; lane = column.
  for (int64_t i = 0; i < kTile; i += warps) {
    Value tr = add(warp, cidx(b, loc, i));
    Value gi = add(row0, tr), gj = add(col0, lane);
    guarded(edge, gi, rows, gj, cols, [&] {
      Value v = memref::LoadOp::create(b, loc, in, index(gi, gj));
      memref::StoreOp::create(b, loc, v, tile, ValueRange{tr, lane});
    });
  }
  gpu::BarrierOp::create(b, loc);
  // Write: output row = input column col0 + w + i, output column = input
  // row row0 + lane.
  for (int64_t i = 0; i < kTile; i += warps) {
    Value tc = add(warp, cidx(b, loc, i));
    Value oi = add(col0, tc), oj = add(row0, lane);
    guarded(edge, oi, cols, oj, rows, [&] {
      Value v = memref::LoadOp::create(b, loc, tile, ValueRange{lane, tc});
      memref::StoreOp::create(b, loc, v, out, index(oi, oj));
    });
  }
  return success();
}
