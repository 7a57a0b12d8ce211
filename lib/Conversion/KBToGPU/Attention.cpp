//===- Attention.cpp - the fused attention kernel (kb.attention) ----------===//
//
// buildAttentionKernel: one block per BQ query rows of one (batch, head),
// BQ / 16 warps of 16 rows each. The Q fragments are loaded into registers
// once; the key/value blocks of BKV keys stream through a ring of `stages`
// shared-memory buffers filled by cp.async (AttentionPipeline.cpp). Per key
// block every warp computes S = Q K^T on mma.sync, scales and masks it,
// takes the online softmax step in registers (AttentionSoftmax.cpp) and adds
// P V into its accumulators; the epilogue divides by the row sums and stores
// O (and the log-sum-exp). Causal attention stops the key loop after the
// block's last visible key (fully masked blocks are never loaded) and masks
// only the blocks that straddle the diagonal. docs/design.md, "Fused
// attention".
//
//===----------------------------------------------------------------------===//

#include "AttentionGen.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

AttentionShape AttentionShape::of(AttentionOp op) {
  AttentionShape s;
  auto q = cast<RankedTensorType>(op.getQ().getType()).getShape();
  auto kShape = cast<RankedTensorType>(op.getK().getType()).getShape();
  auto vShape = cast<RankedTensorType>(op.getV().getType()).getShape();
  s.rank = q.size();
  s.bthd = op.getBthd();
  int64_t seq = op.getSeqAxis();
  s.batch = s.rank == 4 ? q[0] : 1;
  s.heads = s.bthd ? q[2] : q[s.rank - 3];
  s.sq = q[seq];
  s.d = q.back();
  s.sk = kShape[seq];
  s.dv = vShape.back();
  s.causal = op.getCausal();
  s.hasMask = static_cast<bool>(op.getMask());
  if (s.hasMask)
    s.maskFull =
        cast<RankedTensorType>(op.getMask().getType()).getRank() == s.rank;
  s.lse = static_cast<bool>(op.getLse());
  s.scale = op.getScale().convertToFloat();
  s.elem = cast<RankedTensorType>(op.getQ().getType()).getElementType();
  return s;
}

Value AttentionEmitter::add(Value x, int64_t c) {
  if (c == 0)
    return x;
  return arith::AddIOp::create(b, loc, x, cidx(b, loc, c));
}
Value AttentionEmitter::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value AttentionEmitter::mul(Value x, int64_t c) {
  return arith::MulIOp::create(b, loc, x, cidx(b, loc, c));
}
Value AttentionEmitter::div(Value x, int64_t c) {
  return arith::DivUIOp::create(b, loc, x, cidx(b, loc, c));
}
Value AttentionEmitter::rem(Value x, int64_t c) {
  return arith::RemUIOp::create(b, loc, x, cidx(b, loc, c));
}
Value AttentionEmitter::minIdx(Value x, int64_t c) {
  return arith::MinUIOp::create(b, loc, x, cidx(b, loc, c));
}

SmallVector<Value> AttentionEmitter::index(Value row, Value col) {
  if (shape.bthd)
    return {bz, row, by, col};
  if (shape.rank == 4)
    return {bz, by, row, col};
  return {by, row, col};
}
SmallVector<Value> AttentionEmitter::maskIndex(Value row, Value col) {
  if (!shape.maskFull)
    return {row, col};
  if (shape.rank == 4)
    return {bz, by, row, col};
  return {by, row, col};
}
SmallVector<Value> AttentionEmitter::lseIndex(Value row) {
  if (shape.rank == 4)
    return {bz, by, row};
  return {by, row};
}
Value AttentionEmitter::queryRow(int64_t half) {
  return add(add(q0, mul(warp, 16)), add(g, half * 8));
}

void AttentionEmitter::setUpThreads() {
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  // The warp index, broadcast from lane 0 so that ptxas keeps what is
  // built from it in uniform registers (as the wgmma matmul does).
  warp = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      gpu::ShuffleOp::create(b, loc,
                             arith::IndexCastUIOp::create(
                                 b, loc, b.getI32Type(), div(tid, 32)),
                             0, 32, gpu::ShuffleMode::IDX)
          .getShuffleResult());
  Value lane = rem(tid, 32);
  g = div(lane, 4);
  t = rem(lane, 4);
  q0 = mul(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x), bq);
  by = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  bz = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
}

Value AttentionEmitter::numKeyBlocks() {
  // All ceil(Sk / BKV), or with causal those up to the block's last query
  // row's last visible key, min(Sk, q0 + BQ) - 1.
  if (!shape.causal)
    return cidx(b, loc, llvm::divideCeil(shape.sk, bkv));
  Value lastKey = minIdx(add(q0, bq), shape.sk);
  return div(add(lastKey, bkv - 1), bkv);
}

LogicalResult mlir::kb::buildAttentionKernel(const KernelRequest &req,
                                             LaunchInfo &info) {
  auto attn = dyn_cast<AttentionOp>(req.op);
  if (!attn)
    return req.op->emitOpError() << "is not an attention kernel";
  ConfigAttr cfg = req.config;
  AttentionShape shape = AttentionShape::of(attn);
  if (shape.isF32() && attn.getPrecision() != Precision::tf32)
    return attn.emitOpError()
           << "precision(" << stringifyPrecision(attn.getPrecision())
           << ") is not built for attention yet: the kernel multiplies on "
              "tf32 tensor cores (precision(tf32))";
  bool wgmma = isAttentionWgmma(cfg);
  MmaUnit wgmmaUnit =
      shape.elem.isBF16() ? MmaUnit::wgmma_bf16 : MmaUnit::wgmma_f16;
  if (wgmma && cfg.getMma() != wgmmaUnit)
    return attn.emitOpError()
           << "#kb.config mma = \"" << stringifyMmaUnit(*cfg.getMma())
           << "\" does not match the operands' type " << shape.elem
           << ": run kb-select-config";
  if (!wgmma && (shape.isF32() ? cfg.getMma() != MmaUnit::mma_sync_tf32
                               : cfg.getMma().has_value()))
    return attn.emitOpError()
           << "#kb.config mma must be "
           << (shape.isF32() ? "\"mma_sync_tf32\"" : "left out (mma.sync in "
                                                     "the operands' type)")
           << " for the attention kernel: run kb-select-config";
  if (std::string why = attentionConfigProblem(cfg, shape.d, shape.dv,
                                               shape.elemBytes(),
                                               shape.hasMask, nullptr);
      !why.empty())
    return attn.emitOpError() << "#kb.config: " << why;

  gpu::GPUFuncOp func = req.func;
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  Location loc = attn.getLoc();
  auto args = func.getArguments();
  // Kernel arguments: q, k, v, [mask], out, [lse] (kb-lower-to-gpu).
  // The wgmma kernel's three tensor maps (q, k, v) follow the inputs.
  size_t expected = 4 + (shape.hasMask ? 1 : 0) + (shape.lse ? 1 : 0) +
                    (wgmma ? 3 : 0);
  if (args.size() != expected)
    return attn.emitOpError() << "internal error: the kernel has "
                              << args.size() << " arguments, expected "
                              << expected;
  AttentionEmitter e{b, loc, attn, shape};
  size_t i = 0;
  e.q = args[i++];
  e.k = args[i++];
  e.v = args[i++];
  if (shape.hasMask)
    e.mask = args[i++];
  SmallVector<Value, 3> maps;
  if (wgmma)
    for (int j = 0; j < 3; ++j)
      maps.push_back(args[i++]);
  e.out = args[i++];
  if (shape.lse)
    e.lse = args[i++];
  e.bq = cfg.getBlock()[0];
  e.bkv = cfg.getBlock()[1];
  e.stages = cfg.getStages();
  e.threads = cfg.getThreads();
  if (wgmma)
    return buildAttentionWgmma(e, cfg, maps, info);
  int64_t pad = attentionRowPad(shape.elemBytes());
  e.ldk = shape.d + pad;
  e.ldv = shape.dv + pad;

  info.grid = {(int64_t)llvm::divideCeil(shape.sq, e.bq), shape.heads,
               shape.batch};
  info.block = {e.threads, 1, 1};
  info.dynamicSharedBytes =
      attentionSharedBytes(cfg, shape.d, shape.dv, shape.elemBytes());
  if (info.dynamicSharedBytes != e.stages * e.stageBytes())
    return attn.emitOpError()
           << "internal error: the kernel lays out "
           << e.stages * e.stageBytes()
           << " bytes of shared memory, its config plans "
           << info.dynamicSharedBytes;

  e.setUpThreads();
  Value numBlocks = e.numKeyBlocks();

  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      gpu::AddressSpaceAttr::get(
                          b.getContext(), gpu::AddressSpace::Workgroup)));
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  auto ult = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y)
        .getResult();
  };
  auto issueIf = [&](Value block) {
    auto ifOp = scf::IfOp::create(b, loc, ult(block, numBlocks), false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [kt, vt] = e.stageViews(smem, e.rem(block, e.stages));
    e.issueTileCopies(block, kt, vt);
  };
  // Prologue: key blocks 0 .. stages - 2 in flight, one group each (empty
  // past the last block, so that the count of pending groups holds).
  Value lastGroup;
  for (int64_t s = 0; s + 1 < e.stages; ++s) {
    issueIf(cidx(b, loc, s));
    lastGroup =
        nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, ValueRange{});
  }
  // Loaded once, kept in registers for the whole loop.
  SmallVector<Frag> qf = e.loadQueryFragments();

  int64_t nAcc = shape.dv / 2; // Dv / 8 fragments of 4
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  SmallVector<Value> init(nAcc, cf32(b, loc, 0.0f));
  init.append({negInf, negInf, cf32(b, loc, 0.0f), cf32(b, loc, 0.0f)});
  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), numBlocks,
                                 cidx(b, loc, 1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kb = loop.getInductionVar();
    // Block kb has landed once at most stages - 2 newer groups are
    // pending; the barrier makes every thread's copies visible and frees
    // the stage the block before was computed from, which the copy of
    // block kb + stages - 1 then refills.
    nvgpu::DeviceAsyncWaitOp::create(b, loc, lastGroup,
                                     b.getI32IntegerAttr(e.stages - 2));
    gpu::BarrierOp::create(b, loc);
    issueIf(e.add(kb, e.stages - 1));
    nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType, ValueRange{});
    auto [kt, vt] = e.stageViews(smem, e.rem(kb, e.stages));

    auto iter = loop.getRegionIterArgs();
    SmallVector<Value> acc(iter.begin(), iter.begin() + nAcc);
    AttentionEmitter::RowState state;
    state.max[0] = iter[nAcc];
    state.max[1] = iter[nAcc + 1];
    state.sum[0] = iter[nAcc + 2];
    state.sum[1] = iter[nAcc + 3];

    SmallVector<Value> s = e.scores(qf, kt);
    SmallVector<Value> x = e.maskScores(s, e.mul(kb, e.bkv));
    Value alpha[2];
    AttentionEmitter::RowState next = e.softmaxStep(x, state, alpha);
    e.rescale(acc, alpha);
    acc = e.accumulate(x, vt, acc);

    SmallVector<Value> yield(acc);
    yield.append({next.max[0], next.max[1], next.sum[0], next.sum[1]});
    scf::YieldOp::create(b, loc, yield);
  }
  // No copy is left in flight (the groups past the last block are empty).
  SmallVector<Value> acc(loop.getResults().begin(),
                         loop.getResults().begin() + nAcc);
  AttentionEmitter::RowState state;
  state.max[0] = loop.getResult(nAcc);
  state.max[1] = loop.getResult(nAcc + 1);
  state.sum[0] = loop.getResult(nAcc + 2);
  state.sum[1] = loop.getResult(nAcc + 3);
  e.storeOutputs(acc, state);
  return success();
}
