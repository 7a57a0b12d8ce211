//===- Pad.cpp - the kb.pad kernel ----------------------------------------===//
//
// A copy that lengthens every row (the last axis) from C to C' floats, C' a
// multiple of 4 (of 32 as kb-select-mma makes it), with zeros after the
// input's C. Each thread stores kPadChunksPerThread 16-byte chunks of the
// output (4 floats of one row, since C' is a multiple of 4), the chunks of a
// warp consecutive, so a warp's store is 512 contiguous, aligned bytes. Its
// loads are four 4-byte loads per chunk: the input's rows start wherever
// C * 4 puts them (C is not a multiple of 4 where kb pads), so a 16-byte
// load would be misaligned; a warp's four loads of a chunk touch the same
// lines, which the L1 serves after the first. A column past C loads the
// row's last element instead (a clamped index) and the select makes it
// zero: no branch per element, as in the FFMA kernel's edges. A thread
// loads all its chunks before it stores any; when the chunks do not divide
// evenly, a chunk past the end loads the last one and skips its store.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

using namespace mlir;
using namespace mlir::kb;

/// 16-byte chunks each thread stores: four keep 16 loads of 4 bytes in
/// flight per thread, 64 KB per SM at 1024 resident threads.
static constexpr int64_t kPadChunksPerThread = 4;

LogicalResult mlir::kb::buildPadKernel(const KernelRequest &req,
                                       LaunchInfo &info) {
  auto op = cast<PadOp>(req.op);
  auto inType = op.getInput().getType();
  int64_t cols = inType.getShape().back();
  int64_t outCols = op.getResult().getType().getShape().back();
  int64_t rows = inType.getNumElements() / cols;
  int64_t threads = req.config.getThreads();
  if (outCols % 4 || outCols < cols)
    return op.emitOpError() << "pad kernel stores 16-byte chunks: the padded "
                               "rows must be a multiple of 4 floats, got "
                            << outCols;
  if (threads < 32 || threads % 32)
    return op.emitOpError()
           << "pad kernel needs whole warps, got " << threads << " threads";
  int64_t chunks = rows * (outCols / 4);
  int64_t perBlock = threads * kPadChunksPerThread;
  int64_t blocks = llvm::divideCeil(chunks, perBlock);
  if (blocks > std::numeric_limits<int32_t>::max())
    return op.emitOpError()
           << "needs " << blocks << " blocks, more than a grid holds";
  info.grid = {blocks, 1, 1};
  info.block = {threads, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = op.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  Value in = flatten(b, loc, func.getArgument(0));
  Value out = flatten(b, loc, func.getArgument(1));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  auto c = [&](int64_t v) { return cidx(b, loc, v); };
  auto add = [&](Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y).getResult();
  };
  auto mul = [&](Value x, int64_t k) {
    return arith::MulIOp::create(b, loc, x, c(k)).getResult();
  };
  Value first = add(mul(bid, perBlock), tid);
  Value zero = cf32(b, loc, 0.0f);
  auto vecType = VectorType::get({4}, b.getF32Type());
  bool ragged = chunks % perBlock != 0;
  // Every chunk's loads first, then the stores: the 16 loads of a thread in
  // flight at once. An empty asm statement that takes the values (it emits
  // no instruction) keeps LLVM from sinking the loads of a guarded chunk
  // into its store's branch; a guarded chunk loads from a clamped index.
  SmallVector<Value> offsets, oks, vecs, all;
  for (int64_t u = 0; u < kPadChunksPerThread; ++u) {
    Value chunk = add(first, c(u * threads));
    if (ragged) {
      oks.push_back(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          chunk, c(chunks)));
      chunk = arith::MinUIOp::create(b, loc, chunk, c(chunks - 1));
    }
    Value o = mul(chunk, 4);
    Value row = arith::DivUIOp::create(b, loc, o, c(outCols));
    Value col = arith::RemUIOp::create(b, loc, o, c(outCols));
    Value rowBase = mul(row, cols);
    SmallVector<Value> vals;
    for (int64_t l = 0; l < 4; ++l) {
      Value j = add(col, c(l));
      if (outCols - 4 + l < cols) {
        // Every chunk's column l lies inside the input row.
        vals.push_back(
            memref::LoadOp::create(b, loc, in, ValueRange{add(rowBase, j)}));
        continue;
      }
      Value inside =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, c(cols));
      Value clamped = arith::MinUIOp::create(b, loc, j, c(cols - 1));
      Value v =
          memref::LoadOp::create(b, loc, in, ValueRange{add(rowBase, clamped)});
      vals.push_back(arith::SelectOp::create(b, loc, inside, v, zero));
    }
    all.append(vals);
    offsets.push_back(o);
    vecs.push_back(vector::FromElementsOp::create(b, loc, vecType, vals));
  }
  pinValues(b, loc, all);
  for (int64_t u = 0; u < kPadChunksPerThread; ++u) {
    OpBuilder::InsertionGuard g(b);
    if (ragged) {
      auto ifOp = scf::IfOp::create(b, loc, oks[u], false);
      b.setInsertionPointToStart(ifOp.thenBlock());
    }
    vector::StoreOp::create(b, loc, vecs[u], out, ValueRange{offsets[u]},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
  return success();
}
