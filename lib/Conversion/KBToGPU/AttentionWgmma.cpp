//===- AttentionWgmma.cpp - the 16-bit fused attention kernel on wgmma ----===//
//
// buildAttentionWgmma (sm_90a, f16/bf16, head dims 64 or 128; config
// `mma = "wgmma_bf16"` or "wgmma_f16", block = [64 W, BKV], 128 W + 32
// threads, or 128 (W + 1) with "overlap"): one block per 64 W query rows
// of one (batch, head): W = 2 (BQ = 128) or 3 (BQ = 192; overlap, D = Dv =
// 64 and no mask only: registers, kb-select-config's wgmmaConfigProblem)
// consumer warpgroups of 64 rows (warp w of the block owns rows 16w .. 16w +
// 15, as in the mma.sync kernel) and one producer warp (warp 4 W), whose
// lane 0 issues every TMA copy:
//   the Q tile once (D / 64 boxes of BQ rows x 64 columns) onto `qbar`;
//   key block j into ring stage j % S (D / 64 K boxes and Dv / 64 V boxes
//   of BKV rows x 64 columns) onto full[j % S], after waiting (j >= S) on
//   empty[j % S] for the release of block j - S (4 W arrivals, lane 0 of
//   each consumer warp).
// Three warpgroups let one K/V tile feed 192 query rows instead of 128
// (FlashAttention-3's head-dim-64 shape): a third less TMA and L2 traffic
// and producer work per FLOP, and more independent wgmma and softmax work
// for the schedulers. The causal cut (numKeyBlocks) is the block's: its
// last row's last visible key; the diagonal is masked per warp.
// The tensor maps swizzle each 128-byte row (the wgmma descriptors' 128-byte
// swizzle, wgmma::descriptor) and zero-fill rows past Sq and Sk.
// A consumer warpgroup, per key block j:
//   wait full[j % S];
//   S = Q K^T: wgmma m64nBKVk16, A = its 64 Q rows, B = the K tile (K-major,
//     the natural [keys, D] layout), f32 accumulators from zero;
//   the mask, the online softmax step and the rescale of O in registers
//     (AttentionSoftmax.cpp: wgmma's m64nN accumulator gives each warp 16
//     rows with mma.sync's m16n8 layout per 8 columns, so its row logic
//     applies as it is);
//   O += P V: wgmma m64nDvk16 with A = P from registers (the S accumulators
//     rounded to the operand type: the same pairs as mma.sync's A
//     fragment; inline PTX, as MatmulWgmmaMma.cpp's wgmmaRegA) and B = the
//     V tile read MN-major (transposed B; 16-bit wgmma allows it);
//   wait_group 0, then lane 0 of each warp arrives on empty[j % S].
// The epilogue is the mma.sync kernel's (storeOutputs).
//
// With `schedule = "pingpong"` (FlashAttention-3's inter-warpgroup
// schedule; W = 2 only) the two warpgroups take turns at the tensor cores through two
// named barriers, turn[w] (ids kPingpongBarrier + w; bar 0 is setUp's
// gpu.barrier, the only other one), each completed by 256 threads: 128 of
// warpgroup w waiting (bar.sync) and 128 of the other arriving (bar.arrive).
// A warpgroup's GEMM sections are [S_0], [PV_0, S_1], ..., [PV_{n-2},
// S_{n-1}], [PV_{n-1}]: it waits on turn[w] before each (before the loop, and
// before each P V) and arrives on turn[1 - w] once the section's last wgmma
// is issued (after each S-GEMM's commit, before its wait; after the loop).
// Warpgroup 1 arrives on turn[0] once first, and skips its arrival after
// the loop. So warpgroup 0's softmax of block j runs while warpgroup 1's
// [PV_{j-1}, S_j] does and the other way round. The order of operations
// inside a warpgroup, hence the numerics, is the serial schedule's. See
// buildConsumers for why it cannot deadlock.
//
// With `schedule = "overlap"` (FlashAttention-3's intra-warpgroup overlap;
// 128 (W + 1) threads: a producer warpgroup keeps 40 registers by
// setmaxnreg and the consumers take 232, as ptxas caps 288 threads at 168;
// with W = 3, 512 threads, 24 and 160) a warpgroup
// runs S_0 and its softmax, then per key block j >= 1: S_j and PV_{j-1}
// issued as two groups; wait_group 1 (S_j); mask and softmax of S_j into
// P_j (packed) while PV_{j-1} runs; the wait on full[j + 1]; wait_group 0;
// release of block j - 1; O *= alpha_j; and the last PV after the loop.
// The softmax touches neither O nor P_{j-1} (wgmma's in-flight registers)
// before the wait; ptxas keeps them apart (no write to them in the window,
// checked on the SASS of CUDA 13.0). The wait on full[j + 1] is a branch
// before wait_group 0 (ptxas moves a wgmma wait to the top of its basic
// block), and its condition also reads the rows' new sums through a test
// that is always true (sum >= 0 or NaN): so all 66 ex2 of a step (BKV = 128)
// precede PV_{j-1}'s wait; without it ptxas sank the last 15, with the
// sums' adds, below that wait (bf16 D 64 and 128; CUDA 13.0's SASS). What
// stays after the wait is what must: O *= alpha and P_j's packing into the
// registers P_{j-1} held (ptxas gives P_j those registers, the loop's, as
// it would any copy). See buildOverlap on deadlock.
//
//===----------------------------------------------------------------------===//

#include "AttentionGen.h"
#include "MatmulWgmmaKernel.h"

using namespace mlir;
using namespace mlir::kb;

namespace {

/// The registers the overlap kernel's producer warpgroup keeps: 40 with two
/// consumer warpgroups (384 threads; consumers 232), 24 with three (512
/// threads launch at 128; consumers (65536 - 128 x 24) / 384 = 162, 160
/// in steps of 8; 40 would leave them 152). Its one thread runs the TMA
/// loop; ptxas reports no spill at 24 (CUDA 13.0).
int64_t attentionProducerRegs(int64_t groups) { return groups == 3 ? 24 : 40; }

struct WgmmaAttention {
  AttentionEmitter &e;
  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  Value mapQ, mapK, mapV;
  int64_t qBytes = 0, kBytes = 0, stageBytes = 0;
  NVVM::WGMMATypes opType = NVVM::WGMMATypes::bf16;
  /// The 1024-byte aligned shared address of the Q tile, of the ring and of
  /// the mbarriers.
  Value aligned, ring, barBase;
  /// The consumer warpgroup (0 .. groups - 1).
  Value warpgroup;
  /// The consumer warpgroups, BQ / 64 (2 or 3).
  int64_t groups = 2;
  /// The consumers' threads, and the first producer thread.
  int64_t consumerThreads() const { return 128 * groups; }

  WgmmaAttention(AttentionEmitter &e)
      : e(e), b(e.b), loc(e.loc), ctx(e.b.getContext()) {}

  Value i32(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v);
  }
  Value toI32(Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v);
  }
  Value ptrTo(Value byteAddr, unsigned space) {
    Value a64 =
        arith::IndexCastUIOp::create(b, loc, b.getI64Type(), byteAddr);
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, space), a64);
  }
  Value bar(int64_t slot, Value stage = Value()) {
    Value off = cidx(b, loc, 8 * slot);
    if (stage)
      off = e.add(off, e.mul(stage, 8));
    return ptrTo(e.add(barBase, off), 3);
  }
  Value full(Value stage) { return bar(0, stage); }
  Value empty(Value stage) { return bar(e.stages, stage); }
  Value qBar() { return bar(2 * e.stages); }
  Value cmp(arith::CmpIPredicate pred, Value v, int64_t c) {
    return arith::CmpIOp::create(b, loc, pred, v, cidx(b, loc, c));
  }
  void when(Value cond, function_ref<void()> body) {
    auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    body();
  }
  void wait(Value barrier, Value parity) {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, barrier, parity,
                                          i32(0x989680));
  }
  /// Coordinates of a tensor map (innermost first): column, row, then the
  /// head (and batch); with bthd column, head, row, batch (the map's box is
  /// [1, rows, 1, 64]: the same rows x 128 bytes in shared memory).
  SmallVector<Value> coords(int64_t col, Value row) {
    if (e.shape.bthd)
      return {i32(col), toI32(e.by), toI32(row), toI32(e.bz)};
    SmallVector<Value> c{i32(col), toI32(row), toI32(e.by)};
    if (e.shape.rank == 4)
      c.push_back(toI32(e.bz));
    return c;
  }
  void tma(Value map, Value dstAddr, ArrayRef<Value> at, Value barrier) {
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7), ptrTo(dstAddr, 3));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, map, at, barrier, ValueRange{}, Value(), Value(),
        NVVM::TMALoadMode::TILE, false, nullptr, Value());
  }

  void setUp();
  void buildProducer(Value numBlocks);
  Value stageAddr(Value j) {
    return e.add(ring, e.mul(e.rem(j, e.stages), stageBytes));
  }
  void waitFull(Value j) {
    wait(full(e.rem(j, e.stages)), toI32(e.rem(e.div(j, e.stages), 2)));
  }
  /// Lane 0 of each warp arrives on empty[j % S]: both tiles of block j
  /// are read.
  void release(Value j);
  Value issueScores(Value stageAddr);
  SmallVector<Value> scores(Value stageAddr,
                            function_ref<void()> afterIssue);
  SmallVector<Value> packP(ArrayRef<Value> p);
  SmallVector<Value> issueAccumulate(ArrayRef<Value> packed, Value vAddr,
                                     ArrayRef<Value> acc);
  SmallVector<Value> accumulate(ArrayRef<Value> p, Value vAddr,
                                ArrayRef<Value> acc);
  Value wgmmaRegA(ArrayRef<Value> acc, ArrayRef<Value> aRegs, Value descB);
  SmallVector<Value> waitGroup(int64_t pending, ArrayRef<Value> live);
  void buildConsumers(Value numBlocks);
  void buildOverlap(Value numBlocks);
  SmallVector<Value> overlapStep(Value j, ValueRange st, Value numBlocks);
  /// The wait on full[j] where j < numBlocks. `nonNegative` (values >= 0
  /// or NaN) join the branch's condition, each as `v >= 0 or unordered`:
  /// always true, it makes them operands of the branch, so ptxas computes
  /// them (and what they depend on) before it.
  void waitFullIf(Value j, Value numBlocks,
                  ArrayRef<Value> nonNegative = {}) {
    Value cond =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, numBlocks);
    for (Value v : nonNegative)
      cond = arith::AndIOp::create(
          b, loc, cond,
          arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE, v,
                                cf32(b, loc, 0.0f)));
    when(cond, [&] { waitFull(j); });
  }
  /// The key loop's carried state: O's accumulators, then the rows' max
  /// and sum.
  SmallVector<Value> initState();
  static AttentionEmitter::RowState rowState(ValueRange v, int64_t nAcc) {
    return {{v[nAcc], v[nAcc + 1]}, {v[nAcc + 2], v[nAcc + 3]}};
  }

  /// schedule = "overlap": S_j's wgmma in flight with PV_{j-1}'s.
  bool overlap = false;
  /// schedule = "pingpong": turn[w]'s named barriers (see the banner).
  bool pingpong = false;
  void turnWait(Value wg) {
    NVVM::BarrierOp::create(b, loc, TypeRange{}, barrierId(wg),
                            i32(kPingpongThreads), NVVM::BarrierReductionAttr(),
                            Value());
  }
  void turnArrive(Value wg) {
    NVVM::BarrierArriveOp::create(b, loc, barrierId(wg),
                                  i32(kPingpongThreads));
  }
  Value barrierId(Value wg) { return e.add(i32(kPingpongBarrier), toI32(wg)); }
  Value other() {
    return arith::SubIOp::create(b, loc, cidx(b, loc, 1), warpgroup);
  }
  /// The first named-barrier id of turn[0], turn[1] (bar 0 is gpu.barrier's).
  static constexpr int64_t kPingpongBarrier = 1;
  /// Both consumer warpgroups.
  static constexpr int64_t kPingpongThreads = 256;
};

} // namespace

// The aligned shared memory, the mbarriers' initialisation (thread 0) and
// the barrier after it.
void WgmmaAttention::setUp() {
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc,
      MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), nullptr,
                      gpu::AddressSpaceAttr::get(
                          ctx, gpu::AddressSpace::Workgroup)));
  Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  aligned = arith::AndIOp::create(b, loc, e.add(raw, kWgmmaAlignBytes - 1),
                                  cidx(b, loc, ~(kWgmmaAlignBytes - 1)));
  ring = e.add(aligned, qBytes);
  barBase = e.add(ring, e.stages * stageBytes);
  auto globalPtr = [&](Value mem) {
    return ptrTo(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem),
                 0);
  };
  mapQ = globalPtr(mapQ);
  mapK = globalPtr(mapK);
  mapV = globalPtr(mapV);
  when(cmp(arith::CmpIPredicate::eq, e.tid, 0), [&] {
    for (int64_t s = 0; s < e.stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, full(cidx(b, loc, s)), i32(1),
                                   Value());
      // Lane 0 of each of the 4 x groups consumer warps releases a stage.
      NVVM::MBarrierInitOp::create(b, loc, empty(cidx(b, loc, s)),
                                   i32(4 * groups), Value());
    }
    NVVM::MBarrierInitOp::create(b, loc, qBar(), i32(1), Value());
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

// Lane 0 of the producer warp (warp 4 x groups): Q once, then the key
// blocks.
void WgmmaAttention::buildProducer(Value numBlocks) {
  const AttentionShape &s = e.shape;
  when(cmp(arith::CmpIPredicate::eq, e.tid, consumerThreads()), [&] {
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), qBar(),
                                           i32(qBytes), NVVM::MemScopeKind::CTA,
                                           false, Value());
    for (int64_t c = 0; c < s.d / 64; ++c)
      tma(mapQ, e.add(aligned, c * e.bq * wgmma::kRowBytes),
          coords(64 * c, e.q0), qBar());
    auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), numBlocks,
                                   cidx(b, loc, 1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value stage = e.rem(j, e.stages);
    // Block j - S's release completes empty's phase j / S - 1.
    when(cmp(arith::CmpIPredicate::uge, j, e.stages), [&] {
      wait(empty(stage), toI32(e.rem(e.add(e.div(j, e.stages), 1), 2)));
    });
    Value f = full(stage);
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), f, i32(stageBytes),
                                           NVVM::MemScopeKind::CTA, false,
                                           Value());
    Value stageAddr = e.add(ring, e.mul(stage, stageBytes));
    Value kv0 = e.mul(j, e.bkv);
    int64_t box = e.bkv * wgmma::kRowBytes;
    for (int64_t c = 0; c < s.d / 64; ++c)
      tma(mapK, e.add(stageAddr, c * box), coords(64 * c, kv0), f);
    for (int64_t c = 0; c < s.dv / 64; ++c)
      tma(mapV, e.add(stageAddr, kBytes + c * box), coords(64 * c, kv0), f);
  });
}

// S = Q K^T of the warpgroup's 64 rows and the stage's BKV keys: BKV / 2
// f32 a thread, in mma.sync's fragment order (8 keys a fragment of 4).
// afterIssue runs once the wgmma are committed, before they are waited on.
// issueScores issues the wgmma (not fenced, not committed) and returns their
// accumulator struct.
Value WgmmaAttention::issueScores(Value stageAddr) {
  int64_t nAcc = e.bkv / 2;
  Type f32 = b.getF32Type();
  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(nAcc, f32));
  Value acc = LLVM::PoisonOp::create(b, loc, accType);
  Value zero = cf32(b, loc, 0.0f);
  for (int64_t i = 0; i < nAcc; ++i)
    acc = LLVM::InsertValueOp::create(b, loc, acc, zero, i);
  Value qAddr = e.add(aligned, e.mul(warpgroup, 64 * wgmma::kRowBytes));
  for (int64_t kk = 0; kk < e.shape.d / 16; ++kk) {
    // k step kk: 64-column box kk / 4, 32 bytes kk % 4 along its rows.
    Value a = wgmma::descriptor(
        b, loc, e.add(qAddr, (kk / 4) * e.bq * wgmma::kRowBytes), kk % 4);
    Value bd = wgmma::descriptor(
        b, loc, e.add(stageAddr, (kk / 4) * e.bkv * wgmma::kRowBytes),
        kk % 4);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, accType, acc, a, bd,
        NVVM::MMAShapeAttr::get(ctx, 64, e.bkv, 16), opType, opType,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, nullptr);
  }
  return acc;
}

SmallVector<Value> WgmmaAttention::scores(Value stageAddr,
                                          function_ref<void()> afterIssue) {
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value acc = issueScores(stageAddr);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  afterIssue();
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  SmallVector<Value> out;
  for (int64_t i = 0; i < e.bkv / 2; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  return out;
}

// One wgmma m64nDvk16 with A from registers (upstream's NVVM op has none):
// inline PTX, the outputs tied to the accumulators' inputs, B transposed
// (MN-major V).
Value WgmmaAttention::wgmmaRegA(ArrayRef<Value> acc, ArrayRef<Value> aRegs,
                                Value descB) {
  StringRef types = opType == NVVM::WGMMATypes::bf16 ? "bf16.bf16" : "f16.f16";
  return wgmmaRegAAsm(b, loc, acc, aRegs, descB, types, 16, /*transB=*/1);
}

// wgmma.wait_group `pending` as inline PTX through which `live` (results of
// wgmma in flight, and the A registers of those the wait retires) pass: LLVM
// knows nothing of wgmma's asynchrony, and this orders every read of them
// after the wait (as Triton's warp_group_dot_wait does).
SmallVector<Value> WgmmaAttention::waitGroup(int64_t pending,
                                             ArrayRef<Value> live) {
  SmallVector<Type> types;
  std::string constraints;
  llvm::raw_string_ostream cs(constraints);
  for (auto [i, v] : llvm::enumerate(live)) {
    types.push_back(v.getType());
    cs << (i ? "," : "") << (v.getType().isF32() ? "=f" : "=r");
  }
  for (size_t i = 0; i < live.size(); ++i)
    cs << "," << i;
  Value r = LLVM::InlineAsmOp::create(
                b, loc, LLVM::LLVMStructType::getLiteral(ctx, types), live,
                "wgmma.wait_group.sync.aligned " + std::to_string(pending) +
                    ";",
                constraints, /*has_side_effects=*/true,
                /*is_align_stack=*/false,
                LLVM::tailcallkind::TailCallKind::None,
                LLVM::AsmDialectAttr(), ArrayAttr())
                .getResult(0);
  SmallVector<Value> out;
  for (size_t i = 0; i < live.size(); ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, r, i));
  return out;
}

// P as wgmma's A operand: k16 step s takes the probabilities of keys 16s ..
// 16s + 15 (S fragments 2s and 2s + 1, rounded in pairs), four 32-bit
// registers a step, BKV / 4 in all.
SmallVector<Value> WgmmaAttention::packP(ArrayRef<Value> p) {
  Type elem = e.shape.elem;
  auto pack = [&](Value x0, Value x1) {
    Value h0 = arith::TruncFOp::create(b, loc, elem, x0);
    Value h1 = arith::TruncFOp::create(b, loc, elem, x1);
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, elem), ValueRange{h0, h1});
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pair);
    return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0})
        .getResult();
  };
  SmallVector<Value> regs;
  for (int64_t s = 0; s < e.bkv / 16; ++s) {
    const Value *f0 = p.data() + (2 * s) * 4, *f1 = p.data() + (2 * s + 1) * 4;
    regs.append({pack(f0[0], f0[1]), pack(f0[2], f0[3]), pack(f1[0], f1[1]),
                 pack(f1[2], f1[3])});
  }
  return regs;
}

// O += P V, issued (not fenced, not committed): step s takes `packed`'s
// registers 4s .. 4s + 3 and rows 16s .. of the V tile (MN-major: Dv / 64
// boxes of BKV rows x 128 bytes, 2048 bytes a step).
SmallVector<Value> WgmmaAttention::issueAccumulate(ArrayRef<Value> packed,
                                                   Value vAddr,
                                                   ArrayRef<Value> accIn) {
  SmallVector<Value> acc(accIn);
  for (int64_t s = 0; s < e.bkv / 16; ++s) {
    Value desc = wgmma::descriptor(b, loc, vAddr, s, /*mnMajor=*/true,
                                   e.bkv * wgmma::kRowBytes);
    Value r = wgmmaRegA(acc, packed.slice(4 * s, 4), desc);
    for (auto [i, a] : llvm::enumerate(acc))
      a = LLVM::ExtractValueOp::create(b, loc, r, i);
  }
  return acc;
}

SmallVector<Value> WgmmaAttention::accumulate(ArrayRef<Value> p, Value vAddr,
                                              ArrayRef<Value> accIn) {
  SmallVector<Value> packed = packP(p);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  SmallVector<Value> acc = issueAccumulate(packed, vAddr, accIn);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // Retired before the stage is released and before ptxas may reuse the A
  // registers (MatmulWgmmaMma.cpp: a wgmma reads them asynchronously).
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return acc;
}

// The consumer warpgroups (threads 0 .. 128 W - 1): the key loop and the
// epilogue.
//
// Ping-pong cannot deadlock: both warpgroups run the same n key blocks
// (numKeyBlocks is the block's: the causal cut is per 128-row block, the
// mask per row is applied inside), with no early exit, so each does n + 1
// bar.sync on its turn[w], and the other n + 1 bar.arrive on it (warpgroup
// 1: the first one plus one a block; warpgroup 0: one a block plus the one
// after the loop): the counts match, and no barrier is left half-arrived at
// exit. The k-th completion of turn[0] needs warpgroup 0's k-th section
// start and warpgroup 1's (k-1)-th section issued (k = 1: its first
// arrive); the k-th of turn[1] needs warpgroup 0's k-th section issued. So
// the sections run in the one order 0:[S_0], 1:[S_0], 0:[PV_0 S_1], 1:[PV_0
// S_1], ..., 0:[PV_{n-1}], 1:[PV_{n-1}], in which each waits only on the one
// before it. Nor can a barrier get arrivals of its next phase early: the
// other warpgroup's (k+1)-th arrival on turn[w] comes after it passed its own
// turn, which warpgroup w handed over after its k-th wait on turn[w] had
// completed; so each phase counts 128 threads of either side. Inside a
// section a warpgroup waits on full[(j + 1) % S], whose TMA needs the release
// of block j + 1 - S <= j - 1 by both warpgroups, done after their PV_{j-1},
// which lie in earlier sections (S >= 2).
void WgmmaAttention::release(Value j) {
  when(cmp(arith::CmpIPredicate::eq, e.rem(e.tid, 32), 0), [&] {
    NVVM::MBarrierArriveOp::create(b, loc, Type(), empty(e.rem(j, e.stages)),
                                   Value(), NVVM::MemScopeKindAttr());
  });
}

SmallVector<Value> WgmmaAttention::initState() {
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  SmallVector<Value> init(e.shape.dv / 2, cf32(b, loc, 0.0f));
  init.append({negInf, negInf, cf32(b, loc, 0.0f), cf32(b, loc, 0.0f)});
  return init;
}

void WgmmaAttention::buildConsumers(Value numBlocks) {
  warpgroup = e.div(e.warp, 4);
  wait(qBar(), i32(0));
  if (overlap)
    return buildOverlap(numBlocks);
  Value isWg1;
  if (pingpong) {
    isWg1 = cmp(arith::CmpIPredicate::eq, warpgroup, 1);
    // Warpgroup 0 goes first.
    when(isWg1, [&] { turnArrive(cidx(b, loc, 0)); });
    turnWait(warpgroup);
  }
  int64_t nAcc = e.shape.dv / 2;
  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), numBlocks,
                                 cidx(b, loc, 1), initState());
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    waitFull(j);
    Value at = stageAddr(j);
    auto iter = loop.getRegionIterArgs();
    SmallVector<Value> acc(iter.begin(), iter.begin() + nAcc);
    AttentionEmitter::RowState state = rowState(iter, nAcc);

    SmallVector<Value> sc = scores(at, [&] {
      if (pingpong)
        turnArrive(other());
    });
    SmallVector<Value> x = e.maskScores(sc, e.mul(j, e.bkv));
    Value alpha[2];
    AttentionEmitter::RowState next = e.softmaxStep(x, state, alpha);
    e.rescale(acc, alpha);
    if (pingpong)
      turnWait(warpgroup);
    acc = accumulate(x, e.add(at, kBytes), acc);
    release(j);

    SmallVector<Value> yield(acc);
    yield.append({next.max[0], next.max[1], next.sum[0], next.sum[1]});
    scf::YieldOp::create(b, loc, yield);
  }
  // Warpgroup 0 closes its last section [PV_{n-1}] (warpgroup 1's has no
  // one to hand over to).
  if (pingpong)
    when(arith::XOrIOp::create(b, loc, isWg1,
                               arith::ConstantIntOp::create(
                                   b, loc, b.getI1Type(), 1)),
         [&] { turnArrive(cidx(b, loc, 1)); });
  e.storeOutputs(SmallVector<Value>(loop.getResults().take_front(nAcc)),
                 rowState(loop.getResults(), nAcc));
}

// One key block j >= 1 of the overlap schedule on `st` (O's accumulators,
// the rows' max and sum, P_{j-1} packed): the state after it, with P_j.
SmallVector<Value> WgmmaAttention::overlapStep(Value j, ValueRange st,
                                               Value numBlocks) {
  int64_t nAcc = e.shape.dv / 2;
  SmallVector<Value> acc(st.begin(), st.begin() + nAcc);
  SmallVector<Value> pPrev(st.begin() + nAcc + 4, st.end());
  Value prev = e.add(j, -1);
  // S_j, then PV_{j-1}: two groups; the registers both read (O, P_{j-1})
  // were last written before this fence.
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value sj = issueScores(stageAddr(j));
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  acc = issueAccumulate(pPrev, e.add(stageAddr(prev), kBytes), acc);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  // S_j's group retired; PV_{j-1} runs on under the mask and softmax,
  // which touch neither O nor P_{j-1}.
  SmallVector<Value> sc;
  for (int64_t i = 0; i < e.bkv / 2; ++i)
    sc.push_back(LLVM::ExtractValueOp::create(b, loc, sj, i));
  sc = waitGroup(1, sc);
  SmallVector<Value> x = e.maskScores(sc, e.mul(j, e.bkv));
  Value alpha[2];
  AttentionEmitter::RowState next =
      e.softmaxStep(x, rowState(st, nAcc), alpha);
  SmallVector<Value> pj = packP(x);
  // Block j + 1's wait, a branch between the softmax and PV_{j-1}'s wait:
  // ptxas moves a wgmma wait to the top of its basic block (in the
  // softmax's block it waited before the softmax: no overlap). The branch
  // also reads the rows' new sums, so every ex2 of the step comes before it
  // (without them ptxas sank the last 15 of the 66 ex2 and the sums' adds
  // below PV_{j-1}'s wait: D 64 and 128, not causal; CUDA 13.0). A sum is
  // the old one times an ex2 plus ex2 results (ex2.approx.ftz is never
  // negative): >= 0 or NaN, so the branch is taken exactly when j + 1 <
  // numBlocks, as without them.
  waitFullIf(e.add(j, 1), numBlocks, {next.sum[0], next.sum[1]});
  SmallVector<Value> live(acc);
  llvm::append_range(live, pPrev);
  live = waitGroup(0, live);
  acc.assign(live.begin(), live.begin() + nAcc);
  release(prev);
  e.rescale(acc, alpha);
  SmallVector<Value> out(acc);
  out.append({next.max[0], next.max[1], next.sum[0], next.sum[1]});
  llvm::append_range(out, pj);
  return out;
}

// schedule = "overlap" (see the banner): prologue S_0 and its softmax, key
// blocks 1 .. n - 1 by overlapStep, the last PV.
//
// Deadlock freedom: each warpgroup still waits on full[j] in block order and
// releases every block once, in block order, so empty's phases complete as
// in the serial schedule, only later. Block j + 1 is waited on while block
// j - 1 is still held (released after PV_{j-1}'s wait), so a warpgroup holds
// at most three stages at that wait and two otherwise: full[j + 1]'s TMA
// needs the release of block j + 1 - S by every warpgroup (two or three),
// which each did in step j + 2 - S; with S = 2 that is step j, whose
// release comes after this wait. So S = 2 could deadlock: kb-select-config
// requires stages >= 3 with "overlap". With S >= 3 step j + 2 - S <= j - 1
// is done before step j begins and waits on nothing another warpgroup
// holds, so the producer is never behind a release that waits on it. The
// argument counts no warpgroups: it holds for W = 3 as for 2 (every
// warpgroup runs the block's same n key blocks, with no early exit).
void WgmmaAttention::buildOverlap(Value numBlocks) {
  int64_t nAcc = e.shape.dv / 2;
  // Prologue: S_0 and its softmax (O is 0: nothing to rescale).
  SmallVector<Value> st = initState();
  Value j0 = cidx(b, loc, 0);
  waitFull(j0);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  Value s0 = issueScores(stageAddr(j0));
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  SmallVector<Value> sc;
  for (int64_t i = 0; i < e.bkv / 2; ++i)
    sc.push_back(LLVM::ExtractValueOp::create(b, loc, s0, i));
  sc = waitGroup(0, sc);
  SmallVector<Value> x = e.maskScores(sc, j0);
  Value alpha[2];
  AttentionEmitter::RowState first = e.softmaxStep(x, rowState(st, nAcc), alpha);
  st.resize(nAcc);
  st.append({first.max[0], first.max[1], first.sum[0], first.sum[1]});
  llvm::append_range(st, packP(x));
  waitFullIf(cidx(b, loc, 1), numBlocks);

  // Blocks 1 .. n - 1.
  auto loop = scf::ForOp::create(b, loc, cidx(b, loc, 1), numBlocks,
                                 cidx(b, loc, 1), st);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, loc,
        overlapStep(loop.getInductionVar(), loop.getRegionIterArgs(),
                    numBlocks));
  }
  // Epilogue: the last PV.
  auto res = loop.getResults();
  SmallVector<Value> acc(res.begin(), res.begin() + nAcc);
  SmallVector<Value> pLast(res.begin() + nAcc + 4, res.end());
  Value last = e.add(numBlocks, -1);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  acc = issueAccumulate(pLast, e.add(stageAddr(last), kBytes), acc);
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  SmallVector<Value> live(acc);
  llvm::append_range(live, pLast);
  acc = waitGroup(0, live);
  acc.resize(nAcc);
  release(last);
  e.storeOutputs(acc, rowState(res, nAcc));
}

LogicalResult mlir::kb::buildAttentionWgmma(AttentionEmitter &e,
                                            ConfigAttr cfg,
                                            ArrayRef<Value> maps,
                                            LaunchInfo &info) {
  const AttentionShape &s = e.shape;
  int64_t groups = attentionWgmmaWarpgroups(e.bq);
  if (e.bq % kAttentionWgmmaGroupRows || groups < 2 ||
      groups > kAttentionWgmmaMaxWarpgroups ||
      (groups != 2 && cfg.getSchedule() != ScheduleKind::overlap) ||
      e.threads != attentionWgmmaThreads(cfg.getSchedule(), e.bq) ||
      s.d % 64 || s.dv % 64 || s.elemBytes() != 2 || maps.size() != 3)
    return e.op->emitOpError()
           << "internal error: the wgmma attention kernel got block = ["
           << e.bq << ", " << e.bkv << "], threads = " << e.threads
           << ", D = " << s.d << ", Dv = " << s.dv;
  WgmmaAttention w(e);
  w.groups = groups;
  w.mapQ = maps[0];
  w.mapK = maps[1];
  w.mapV = maps[2];
  w.opType = s.elem.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  w.qBytes = e.bq * s.d * 2;
  w.kBytes = e.bkv * s.d * 2;
  w.stageBytes = w.kBytes + e.bkv * s.dv * 2;
  w.pingpong = cfg.getSchedule() == ScheduleKind::pingpong;
  w.overlap = cfg.getSchedule() == ScheduleKind::overlap;

  info.grid = {(int64_t)llvm::divideCeil(s.sq, e.bq), s.heads, s.batch};
  info.block = {e.threads, 1, 1};
  info.dynamicSharedBytes = attentionSharedBytes(cfg, s.d, s.dv, 2);
  int64_t laidOut = w.qBytes + e.stages * w.stageBytes + kWgmmaAlignBytes +
                    8 * (2 * e.stages + 1);
  if (info.dynamicSharedBytes != laidOut)
    return e.op->emitOpError()
           << "internal error: the kernel lays out " << laidOut
           << " bytes of shared memory, its config plans "
           << info.dynamicSharedBytes;

  e.setUpThreads();
  Value numBlocks = e.numKeyBlocks();
  w.setUp();
  auto producer = scf::IfOp::create(
      e.b, e.loc, w.cmp(arith::CmpIPredicate::uge, e.tid, w.consumerThreads()),
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(e.b);
    // With schedule = "overlap" the producer warpgroup keeps
    // attentionProducerRegs and the consumers take the rest
    // (MatmulWgmma.cpp has the rule): 232 with two, 160 with three.
    int64_t producerRegs = attentionProducerRegs(groups);
    e.b.setInsertionPointToStart(producer.thenBlock());
    if (w.overlap)
      NVVM::SetMaxRegisterOp::create(e.b, e.loc, producerRegs,
                                     NVVM::SetMaxRegisterAction::decrease);
    w.buildProducer(numBlocks);
    e.b.setInsertionPointToStart(producer.elseBlock());
    if (w.overlap)
      NVVM::SetMaxRegisterOp::create(
          e.b, e.loc,
          wgmma::setmaxnregConsumerCount(e.threads, w.consumerThreads(),
                                         producerRegs),
          NVVM::SetMaxRegisterAction::increase);
    w.buildConsumers(numBlocks);
  }
  return success();
}
