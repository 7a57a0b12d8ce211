//===- Pad.cpp - the kb.pad kernel ----------------------------------------===//
//
// A copy that lengthens every row (the last axis) from C to C' elements, C'
// a multiple of E = 16 bytes / element size (4 floats or 8 16-bit values;
// of 32 floats or 64 16-bit values as kb-select-mma makes it), with zeros
// after the input's C. Each thread stores kPadChunksPerThread 16-byte chunks
// of the output (E elements of one row, since C' is a multiple of E), the
// chunks of a
// warp consecutive, so a warp's store is 512 contiguous, aligned bytes. Its
// loads are E element loads per chunk: the input's rows start wherever
// C x the element size puts them (C is not a multiple of E where kb pads),
// so a 16-byte
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

/// 16-byte chunks each thread stores: four keep 16 loads of 4 bytes (32 of
/// 2) in flight per thread, 64 KB per SM at 1024 resident threads.
static constexpr int64_t kPadChunksPerThread = 4;

LogicalResult mlir::kb::buildPadKernel(const KernelRequest &req,
                                       LaunchInfo &info) {
  auto op = cast<PadOp>(req.op);
  auto inType = op.getInput().getType();
  int64_t cols = inType.getShape().back();
  int64_t outCols = op.getResult().getType().getShape().back();
  int64_t rows = inType.getNumElements() / cols;
  int64_t threads = req.config.getThreads();
  Type et = inType.getElementType();
  // Elements of a 16-byte chunk.
  const int64_t e = 16 / (et.getIntOrFloatBitWidth() / 8);
  if (outCols % e || outCols < cols)
    return op.emitOpError() << "pad kernel stores 16-byte chunks: the padded "
                               "rows must be a multiple of "
                            << e << " elements, got " << outCols;
  if (threads < 32 || threads % 32)
    return op.emitOpError()
           << "pad kernel needs whole warps, got " << threads << " threads";
  int64_t chunks = rows * (outCols / e);
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
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(et, 0.0));
  auto vecType = VectorType::get({e}, et);
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
    Value o = mul(chunk, e);
    Value row = arith::DivUIOp::create(b, loc, o, c(outCols));
    Value col = arith::RemUIOp::create(b, loc, o, c(outCols));
    Value rowBase = mul(row, cols);
    SmallVector<Value> vals;
    for (int64_t l = 0; l < e; ++l) {
      Value j = add(col, c(l));
      if (outCols - e + l < cols) {
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
