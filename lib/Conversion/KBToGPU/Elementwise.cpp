//===- Elementwise.cpp - one kernel for an elementwise chain --------------===//
//
// A grid over all elements: each thread owns `vector` consecutive elements,
// loads each input once with one 16-byte (or 8-byte) access, runs the whole
// chain in registers and stores once. Bias vectors are read at the element's
// last-axis index. Dropout draws one Philox4x32-10 call per group of four
// elements (one a vector of 4, two a vector of 8), keyed by (seed, element
// index / 4), so the mask never depends on the launch shape or the vector. The last, partial vector is guarded.
// A chain with a kb.rotary runs a pair of adjacent elements at a time (an
// even vector holds whole pairs), its cos and sin tables read as scalars at
// the pair's position and column.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"

using namespace mlir;
using namespace mlir::kb;

LogicalResult mlir::kb::buildElementwiseKernel(const KernelRequest &req,
                                               LaunchInfo &info) {
  Operation *op = req.op;
  ElementwiseChain chain = ElementwiseChain::of(op);
  auto resultType = cast<RankedTensorType>(chain.result.getType());
  int64_t total = resultType.getNumElements();
  int64_t lastDim = resultType.getShape().back();
  int64_t threads = req.config.getThreads();
  int64_t vec = std::max<int64_t>(req.config.getVector(), 1);
  if (lastDim % vec)
    return op->emitOpError()
           << "vector width " << vec << " does not divide the last dimension "
           << lastDim;

  // Inputs are either full tensors of the result's shape or vectors of the
  // last dimension's length, broadcast along it.
  // A split-K matmul's partials (S x the result's shape) are read by the
  // chain's kb.split_sum only: S loads per element, added in order.
  SmallVector<bool> isBias, isTable;
  SmallVector<int64_t> splitsOf;
  for (Value in : chain.inputs) {
    auto t = cast<RankedTensorType>(in.getType());
    // A kb.rotary's cos or sin table: read at the pair's position and
    // column, one scalar a pair (emitChainPair), never as a vector.
    // (Only the chain's own uses count: a lone op's operands are the
    // function's values, which other kernels may read too.)
    bool asTable = false, asValue = false;
    for (Operation *inner : chain.ops)
      for (OpOperand &u : inner->getOpOperands())
        if (u.get() == in)
          (isa<RotaryOp>(inner) && u.getOperandNumber() > 0 ? asTable
                                                              : asValue) = true;
    bool table = asTable && !asValue;
    isTable.push_back(table);
    if (table) {
      isBias.push_back(false);
      splitsOf.push_back(0);
      continue;
    }
    bool partials = t.getRank() == resultType.getRank() + 1 &&
                    t.getShape().drop_front() == resultType.getShape() &&
                    llvm::all_of(in.getUsers(), [](Operation *u) {
                      return isa<SplitSumOp>(u);
                    });
    splitsOf.push_back(partials ? t.getDimSize(0) : 0);
    if (t.getShape() == resultType.getShape() || partials)
      isBias.push_back(false);
    else if (t.getRank() == 1 && t.getDimSize(0) == lastDim)
      isBias.push_back(true);
    else
      return op->emitOpError()
             << "input of type " << t << " neither matches the result "
             << resultType << " nor broadcasts along its last axis";
  }
  // Every op of the chain produces the result's shape (its element type may
  // differ: a kb.convert changes it, and the chain runs in f32 registers).
  for (Operation *inner : chain.ops)
    if (!isa<ElementwiseOpInterface, RotaryOp>(inner) ||
        (cast<ShapedType>(inner->getResult(0).getType()).getShape() !=
         resultType.getShape()))
      return inner->emitOpError()
             << "cannot be part of an elementwise kernel producing "
             << resultType;

  bool rotary = chainHasRotary(chain);
  if (rotary && vec % 2)
    return op->emitOpError() << "vector width " << vec
                             << " splits the pairs kb.rotary rotates: it "
                                "needs an even one";

  int64_t perBlock = threads * vec;
  int64_t blocks = llvm::divideCeil(total, perBlock);
  if (blocks > std::numeric_limits<int32_t>::max())
    return op->emitOpError()
           << "needs " << blocks << " blocks, more than a grid holds";
  info.grid = {blocks, 1, 1};
  info.block = {threads, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = op->getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  auto args = func.getArguments();
  SmallVector<Value> inputs;
  for (auto [i, in] : llvm::enumerate(chain.inputs))
    inputs.push_back(flatten(b, loc, args[i]));
  Value out = flatten(b, loc, args.back());

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value gid = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, cidx(b, loc, threads)), tid);
  Value base = arith::MulIOp::create(b, loc, gid, cidx(b, loc, vec));
  // total is a multiple of vec (vec divides the last dimension), so a vector
  // is either wholly in range or wholly out.
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, base,
                                        cidx(b, loc, total));
  auto ifIn = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  b.setInsertionPointToStart(ifIn.thenBlock());

  // Each buffer is loaded (stored) in its own element type, f32 or 16-bit,
  // with one vector access of vec elements; the chain runs in f32.
  auto f32 = b.getF32Type();
  auto vecF32 = VectorType::get({vec}, f32);
  auto elemOf = [](Value v) { return cast<ShapedType>(v.getType()).getElementType(); };
  auto alignOf = [&](Type e) { return vec * (e.getIntOrFloatBitWidth() / 8); };
  Value col;
  if (llvm::is_contained(isBias, true))
    col = arith::RemUIOp::create(b, loc, base, cidx(b, loc, lastDim));
  SmallVector<Value> loaded;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    if (isTable[i]) {
      loaded.push_back(Value());
      continue;
    }
    Value at = isBias[i] ? col : base, in = input;
    Type et = elemOf(in);
    auto load = [&](Value idx) -> Value {
      Value v;
      if (vec == 1)
        v = memref::LoadOp::create(b, loc, in, ValueRange{idx});
      else
        v = vector::LoadOp::create(b, loc, VectorType::get({vec}, et), in,
                                   ValueRange{idx},
                                   /*nontemporal=*/false,
                                   llvm::MaybeAlign(alignOf(et)));
      if (!et.isF32())
        v = arith::ExtFOp::create(b, loc, vec == 1 ? Type(f32) : Type(vecF32),
                                  v);
      return v;
    };
    Value v = load(at);
    // kb.split_sum: partial 0 + partial 1 + ... in this order, every run.
    for (int64_t sIdx = 1; sIdx < splitsOf[i]; ++sIdx)
      v = arith::AddFOp::create(
          b, loc, v,
          load(arith::AddIOp::create(b, loc, at, cidx(b, loc, sIdx * total))));
    loaded.push_back(v);
  }

  // One Philox call for each group of four elements of this vector (one
  // at vector = 4, two at 8: a 16-bit chain's 16-byte access); the vector
  // starts on a whole group (base % vec == 0).
  std::array<Value, 4> words[2];
  bool groupPhilox = chainHasDropout(chain) && (vec == 4 || vec == 8);
  if (groupPhilox) {
    // Each dropout op has its own seed: draw per op inside the chain when
    // several differ. One seed (the common case) draws once here.
    SmallVector<uint64_t> seeds;
    for (Operation *inner : chain.ops)
      if (auto d = dyn_cast<DropoutOp>(inner))
        seeds.push_back(d.getSeed());
    groupPhilox = llvm::all_equal(seeds);
    Value i64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), base);
    Value first = arith::ShRUIOp::create(
        b, loc, i64, arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(2)));
    for (int64_t g = 0; groupPhilox && g < vec / 4; ++g) {
      Value group = g == 0 ? first
                           : arith::AddIOp::create(
                                 b, loc, first,
                                 arith::ConstantOp::create(
                                     b, loc, b.getI64IntegerAttr(g)));
      Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), group);
      Value hi = arith::TruncIOp::create(
          b, loc, b.getI32Type(),
          arith::ShRUIOp::create(
              b, loc, group,
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
      words[g] = emitPhilox(b, loc, lo, hi, seeds.front());
    }
  }

  SmallVector<Value> results;
  auto laneValues = [&](int64_t lane) {
    DenseMap<Value, Value> values;
    for (auto [i, in] : llvm::enumerate(chain.inputs)) {
      Value v = loaded[i];
      if (!v)
        continue;
      if (vec > 1)
        v = vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{lane});
      values[in] = v;
    }
    return values;
  };
  // With a kb.rotary: a pair at a time (the vector starts on an even
  // element, the last axis is even), its tables at the pair's row and
  // column of the flattened [rows, C] view.
  for (int64_t lane = 0; rotary && lane < vec; lane += 2) {
    Value index = arith::AddIOp::create(b, loc, base, cidx(b, loc, lane));
    Value row = arith::DivUIOp::create(b, loc, index, cidx(b, loc, lastDim));
    Value c = arith::RemUIOp::create(b, loc, index, cidx(b, loc, lastDim));
    auto table = [&](RotaryOp rot, Value t) -> Value {
      auto [pos, tc] = rotaryTableIndex(b, loc, rot, row, c);
      unsigned i = llvm::find(chain.inputs, t) - chain.inputs.begin();
      Value v = memref::LoadOp::create(b, loc, args[i], ValueRange{pos, tc});
      if (!v.getType().isF32())
        v = arith::ExtFOp::create(b, loc, f32, v);
      return v;
    };
    auto pair = emitChainPair(
        b, loc, chain, {laneValues(lane), laneValues(lane + 1)},
        {index, arith::AddIOp::create(b, loc, index, cidx(b, loc, 1))}, table);
    results.push_back(pair[0]);
    results.push_back(pair[1]);
  }
  for (int64_t lane = 0; !rotary && lane < vec; ++lane) {
    DenseMap<Value, Value> values = laneValues(lane);
    Value index = arith::AddIOp::create(b, loc, base, cidx(b, loc, lane));
    results.push_back(emitChainScalar(b, loc, chain, values, index,
                                      groupPhilox ? &words[lane / 4] : nullptr,
                                      lane % 4));
  }
  Type outType = elemOf(out);
  if (vec == 1) {
    Value v = results[0];
    if (!outType.isF32())
      v = arith::TruncFOp::create(b, loc, outType, v);
    memref::StoreOp::create(b, loc, v, out, ValueRange{base});
  } else {
    Value v = vector::FromElementsOp::create(b, loc, vecF32, results);
    if (!outType.isF32())
      v = arith::TruncFOp::create(b, loc, VectorType::get({vec}, outType), v);
    vector::StoreOp::create(b, loc, v, out, ValueRange{base},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(alignOf(outType)));
  }
  return success();
}
