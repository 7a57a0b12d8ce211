//===- SelectAttentionConfig.cpp - the fused attention kernel's config ----===//
//
// kb-select-config's rule for kb.attention, and the shared-memory formula
// and checks that the lowering (lib/Conversion/KBToGPU/Attention.cpp) reads
// too. The kernel (docs/design.md, "Fused attention") runs BQ / 16 warps of
// 16 query rows each on mma.sync and streams K/V tiles of BKV keys through a
// ring of `stages` cp.async buffers; on sm_90a a 16-bit config may ask for
// the wgmma kernel (AttentionWgmma.cpp: `mma = "wgmma_bf16"` or "wgmma_f16", two
// or three consumer warpgroups and a TMA producer warp), and that kernel may ask for
// `schedule = "pingpong"` (its warpgroups take turns at the tensor cores) or
// "overlap" (each overlaps its softmax with its own P V).
// kb-select-config writes four fields (`block`, `stages`, `threads`, `mma`)
// and checks `schedule`, which only the user sets: no other pass decides
// anything for this kernel.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kb;

bool mlir::kb::isAttentionWgmma(ConfigAttr config) {
  return config && (config.getMma() == MmaUnit::wgmma_bf16 ||
                    config.getMma() == MmaUnit::wgmma_f16);
}

int64_t mlir::kb::attentionSharedBytes(ConfigAttr config, int64_t d,
                                       int64_t dv, int64_t elemBytes) {
  if (!config || config.getBlock().size() != 2)
    return 0;
  int64_t bq = config.getBlock()[0], bkv = config.getBlock()[1];
  int64_t stages = std::max<int64_t>(config.getStages(), 1);
  if (isAttentionWgmma(config))
    return bq * d * elemBytes + stages * bkv * (d + dv) * elemBytes +
           kWgmmaAlignBytes + 8 * (2 * stages + 1);
  int64_t pad = attentionRowPad(elemBytes);
  return stages * bkv * ((d + pad) + (dv + pad)) * elemBytes;
}

namespace {

/// Whether kb-select-config picks the wgmma kernel by itself (16-bit, sm_90a,
/// D, Dv in {64, 128}); while false only an explicit `mma = "wgmma_*"` does.
/// On since its first GPU run (H200, bench/results/2026-12-07-h200-norms-
/// attn-wgmma): correct on every case, 1.8-3.2x the mma.sync kernel.
constexpr bool kAttentionWgmmaByDefault = true;

/// Whether the wgmma kernel takes schedule = "overlap" (each consumer
/// warpgroup's softmax under its own P V; 384 threads, 3 stages) unless the
/// config sets a schedule, 288 threads or fewer than 3 stages. On since its
/// first GPU run (H100, 2026-12-07, same call, against the serial kernel):
/// bf16 16x32x4096 D 64 5.19 -> 5.16 ms, D 64 causal 3.43 -> 2.98, D 128
/// 8.06 -> 7.69, D 128 causal 4.74 -> 4.31.
constexpr bool kAttentionOverlapByDefault = true;

/// Whether a 16-bit attention with D = Dv = 64, no mask and not causal takes
/// block = [192, 128] (three consumer warpgroups, 512 threads, "overlap";
/// where Sq pads little, selectAttentionConfig) unless its config sets block,
/// threads, a schedule other than overlap or fewer than 3 stages. While
/// false only an explicit block = [192, N] (or threads = 512) runs it. Off
/// until the kernel's first GPU run (float64 check, memcheck, synccheck,
/// then timed against block = [128, 128] in one call): written in session
/// 32 without a device, never executed. Its SASS (CUDA 13.0, bf16 D 64 at S 4096,
/// causal or not) has no spill and no serialized wgmma, all 66 ex2 of a
/// step before PV's wait, and the loop of the two-warpgroup kernel (445
/// and 699 instructions a key block a warpgroup), with one K/V tile for
/// 192 query rows instead of 128 (FlashAttention-3's head-dim-64 shape).
constexpr bool kAttentionWgmma192ByDefault = false;

/// Where a config's shared memory (attentionSharedBytes) passes the chip's
/// limit per block: the message naming the config (`what`: more fields for
/// it, e.g. the mma unit), else "".
std::string sharedMemoryProblem(ConfigAttr config, int64_t d, int64_t dv,
                                int64_t elemBytes, const TargetModel *model,
                                const std::string &what) {
  if (!model)
    return "";
  auto str = [](int64_t v) { return std::to_string(v); };
  int64_t bytes = attentionSharedBytes(config, d, dv, elemBytes);
  if (bytes <= model->maxSharedPerBlock)
    return "";
  return "config needs " + str(bytes) +
         " bytes of shared memory per block (block = [" +
         str(config.getBlock()[0]) + ", " + str(config.getBlock()[1]) +
         "], stages = " + str(config.getStages()) + ", D = " + str(d) +
         ", Dv = " + str(dv) + what + "); " + model->chip +
         " allows at most " + str(model->maxSharedPerBlock);
}

/// attentionConfigProblem for the wgmma kernel (AttentionWgmma.cpp).
std::string wgmmaConfigProblem(ConfigAttr config, int64_t d, int64_t dv,
                               int64_t elemBytes, bool hasMask,
                               const TargetModel *model) {
  auto str = [](int64_t v) { return std::to_string(v); };
  int64_t bq = config.getBlock()[0], bkv = config.getBlock()[1];
  int64_t threads = config.getThreads(), stages = config.getStages();
  std::string unit = "mma = \"" + stringifyMmaUnit(*config.getMma()).str() +
                     "\"";
  if (elemBytes != 2)
    return unit + " needs 16-bit (f16 or bf16) operands";
  if (model && !model->hasWgmma)
    return unit + " needs wgmma, which " + model->chip +
           " lacks (sm_90a only; leave mma out for mma.sync)";
  if ((d != 64 && d != 128) || (dv != 64 && dv != 128))
    return unit + " takes head dims D, Dv of 64 or 128, got D = " + str(d) +
           ", Dv = " + str(dv);
  if ((bq != kAttentionWgmmaRows &&
       bq != kAttentionWgmmaGroupRows * kAttentionWgmmaMaxWarpgroups) ||
      bkv < 16 || bkv % 16 || bkv > 176)
    return unit + " with block = [" + str(bq) + ", " + str(bkv) +
           "]: BQ must be 128 or 192 (two or three warpgroups of 64 query "
           "rows) and BKV 16 to 176 keys, a multiple of 16";
  int64_t groups = attentionWgmmaWarpgroups(bq);
  // Three consumer warpgroups (AttentionWgmma.cpp) run the overlap
  // schedule only: ping-pong's turns are between two, and the serial
  // schedule's 416 threads leave ptxas 128 registers a thread (13 warps on
  // 4 schedulers), where it spills. A consumer holds O (Dv / 2), S (BKV / 2)
  // and P (BKV / 4) registers in 160 (setmaxnreg): D = Dv = 64, BKV <= 128,
  // and no additive mask (its loads spilled 76 bytes in the key loop at
  // bf16/f16 D 64, CUDA 13.0's ptxas).
  if (groups == 3 && config.getSchedule() != ScheduleKind::overlap)
    return unit + " with block = [" + str(bq) + ", " + str(bkv) +
           "]: three consumer warpgroups run schedule = \"overlap\" only "
           "(ping-pong takes turns between two; the serial schedule's 416 "
           "threads leave 128 registers a thread)";
  if (groups == 3 && (d != 64 || dv != 64 || bkv > 128 || hasMask))
    return unit + " with block = [" + str(bq) + ", " + str(bkv) +
           "]: three consumer warpgroups keep O, S and P in their 160 "
           "registers only at D = Dv = 64, BKV <= 128 and without a mask, "
           "got D = " + str(d) + ", Dv = " + str(dv) +
           (hasMask ? " with a mask" : "");
  std::string groupWord = groups == 3 ? "three" : "two";
  if (threads != attentionWgmmaThreads(config.getSchedule(), bq))
    return unit + " with threads = " + str(threads) + ": the kernel runs " +
           str(attentionWgmmaThreads(config.getSchedule(), bq)) +
           " threads" +
           (config.getSchedule() == ScheduleKind::overlap
                ? " with schedule = \"overlap\" (" + groupWord +
                      " consumer warpgroups and a producer warpgroup)"
                : " (" + groupWord +
                      " consumer warpgroups and a producer warp)");
  if (stages < 2 || stages > 4)
    return "stages = " + str(stages) + ": the K/V ring holds 2 to 4 tiles";
  // AttentionWgmma.cpp's buildOverlap: a warpgroup waits on block j + 1
  // before it releases block j - 1.
  if (config.getSchedule() == ScheduleKind::overlap && stages < 3)
    return "stages = " + str(stages) +
           " with schedule = \"overlap\": a warpgroup holds two key blocks "
           "while it waits on a third, so the ring needs 3 or 4 tiles";
  if (std::string why =
          sharedMemoryProblem(config, d, dv, elemBytes, model, ", " + unit);
      !why.empty())
    return why;
  return "";
}

} // namespace

std::string mlir::kb::attentionConfigProblem(ConfigAttr config, int64_t d,
                                             int64_t dv, int64_t elemBytes,
                                             bool hasMask,
                                             const TargetModel *model) {
  auto str = [](int64_t v) { return std::to_string(v); };
  if (!config || config.getBlock().size() != 2)
    return "needs block = [BQ, BKV] in its #kb.config: run kb-select-config";
  if (isAttentionWgmma(config))
    return wgmmaConfigProblem(config, d, dv, elemBytes, hasMask, model);
  if (auto sched = config.getSchedule(); sched && *sched != ScheduleKind::serial)
    return "schedule = \"" + stringifyScheduleKind(*sched).str() + "\" " +
           (*sched == ScheduleKind::pingpong
                ? "takes turns between the wgmma kernel's two consumer "
                  "warpgroups"
                : "overlaps a wgmma warpgroup's softmax with its own P V") +
           ": it needs mma = \"wgmma_bf16\" or \"wgmma_f16\" (16-bit, "
           "sm_90a, D and Dv of 64 or 128)";
  int64_t bq = config.getBlock()[0], bkv = config.getBlock()[1];
  int64_t threads = config.getThreads(), stages = config.getStages();
  if (bq < 16 || bq % 16 || bq > 128)
    return "block = [" + str(bq) + ", " + str(bkv) +
           "]: BQ must be 16 to 128 query rows, a multiple of 16 (16 a warp)";
  if (bkv < 16 || bkv % 16 || bkv > 128)
    return "block = [" + str(bq) + ", " + str(bkv) +
           "]: BKV must be 16 to 128 keys, a multiple of 16";
  if (threads != bq * 2)
    return "threads = " + str(threads) + " with BQ = " + str(bq) +
           ": the kernel runs one warp per 16 query rows, " + str(bq * 2) +
           " threads";
  if (stages < 2 || stages > 4)
    return "stages = " + str(stages) +
           ": the K/V ring holds 2 to 4 tiles (one in use, the next in "
           "flight)";
  if (d % 16 || dv % 16 || d > 128 || dv > 128)
    return "head dims D = " + str(d) + ", Dv = " + str(dv) +
           ": the kernel takes multiples of 16 up to 128 (registers hold "
           "the Q fragments and the 16 x Dv accumulators of a warp)";
  // Every thread issues the same number of 16-byte chunks of each tile.
  int64_t perChunk = 16 / elemBytes;
  if ((bkv * d / perChunk) % threads || (bkv * dv / perChunk) % threads)
    return "block = [" + str(bq) + ", " + str(bkv) + "]: the " +
           str(bkv * d / perChunk) + " and " + str(bkv * dv / perChunk) +
           " 16-byte chunks of a K and a V tile do not split evenly among " +
           str(threads) + " threads";
  if (std::string why = sharedMemoryProblem(config, d, dv, elemBytes, model, "");
      !why.empty())
    return why;
  return "";
}

LogicalResult mlir::kb::selectAttentionConfig(Operation *op, ConfigFields &f,
                                              const TargetModel &model) {
  auto attn = cast<AttentionOp>(op);
  auto qType = cast<RankedTensorType>(attn.getQ().getType());
  auto vType = cast<RankedTensorType>(attn.getV().getType());
  Type elem = qType.getElementType();
  int64_t d = qType.getShape().back(), dv = vType.getShape().back();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  bool f32 = elem.isF32(), hasMask = static_cast<bool>(attn.getMask());
  Precision precision = attn.getPrecision();
  if (f32 && precision != Precision::tf32)
    return op->emitOpError()
           << "precision(" << stringifyPrecision(precision)
           << ") is not built for attention yet: the fused kernel multiplies "
              "on tf32 tensor cores (precision(tf32)); compute it unfused "
              "(kb-compile fuse=false) for ieee";
  // The unit: on sm_90a, 16-bit with head dims of 64 or 128 runs the wgmma
  // kernel unless the config's block or threads are mma.sync's; otherwise
  // mma.sync in the operands' type (tf32 for f32; f16 and bf16 have no
  // MmaUnit case of their own, so 16-bit leaves `mma` unset).
  MmaUnit wgmmaUnit =
      elem.isBF16() ? MmaUnit::wgmma_bf16 : MmaUnit::wgmma_f16;
  bool wgmmaAsked = f.mma && (*f.mma == MmaUnit::wgmma_bf16 ||
                              *f.mma == MmaUnit::wgmma_f16);
  if (wgmmaAsked && (f32 || *f.mma != wgmmaUnit))
    return op->emitOpError()
           << "config asks for mma = \"" << stringifyMmaUnit(*f.mma)
           << "\" for " << elem << " operands; the wgmma attention kernel "
           << (f32 ? "takes only 16-bit operands (f32 runs on mma.sync: "
                     "mma = \"mma_sync_tf32\" or leave it out)"
                   : "multiplies in the operands' type: mma = \"" +
                         stringifyMmaUnit(wgmmaUnit).str() + "\"");
  if (f.mma && !wgmmaAsked && !(f32 && *f.mma == MmaUnit::mma_sync_tf32))
    return op->emitOpError()
           << "config asks for mma = \"" << stringifyMmaUnit(*f.mma)
           << "\"; the attention kernel runs on mma.sync or wgmma: "
           << (f32 ? "mma = \"mma_sync_tf32\" (or leave it out)"
                   : "leave mma out (or \"" +
                         stringifyMmaUnit(wgmmaUnit).str() + "\" on sm_90a)");
  // The default for 16-bit on sm_90a where D, Dv and a hand-set block or
  // threads allow it (block = [64, N] or threads = 128 keep mma.sync).
  // The schedule the wgmma kernel would run: the config's, else overlap
  // where its threads and stages allow (kAttentionOverlapByDefault).
  // The block's query rows: the config's, else those its threads name (512:
  // three warpgroups), else 192 where D = Dv = 64, not causal, without a
  // mask, the schedule may be overlap (kAttentionWgmma192ByDefault) and
  // 192-row blocks pad Sq to at most 1/16 more rows than 128-row ones (S
  // 1024 and 1000: 1152 rows against 1024, 12.5% more work, keep 128; S
  // 4096: 4224 against 4096, 3%; S 8192: 0.8%), else 128. Causal stays at
  // 128: every warpgroup of a block runs the key blocks of its last row, so
  // at S 4096 three warpgroups run 1152 warpgroup-key-block steps against
  // two's 1056 (9% more; not causal 3%).
  int64_t bq = kAttentionWgmmaRows, bq3 = 3 * kAttentionWgmmaGroupRows;
  int64_t sq = qType.getShape()[attn.getSeqAxis()];
  bool fewPadded = llvm::alignTo(sq, bq3) * 16 <=
                   llvm::alignTo(sq, kAttentionWgmmaRows) * 17;
  bool mayOverlap = (!f.schedule || *f.schedule == ScheduleKind::overlap) &&
                    (!f.stages || f.stages >= 3);
  if (!f.block.empty())
    bq = f.block[0];
  else if (f.threads)
    bq = f.threads == attentionWgmmaThreads(ScheduleKind::overlap, bq3)
             ? bq3
             : kAttentionWgmmaRows;
  else if (kAttentionWgmma192ByDefault && d == 64 && dv == 64 && !hasMask &&
           !attn.getCausal() && mayOverlap && fewPadded)
    bq = bq3;
  std::optional<ScheduleKind> schedule = f.schedule;
  if (!schedule && kAttentionOverlapByDefault &&
      (!f.threads ||
       f.threads == attentionWgmmaThreads(ScheduleKind::overlap, bq)) &&
      (!f.stages || f.stages >= 3))
    schedule = ScheduleKind::overlap;
  bool wgmmaFits = kAttentionWgmmaByDefault && !f32 && model.hasWgmma && (d == 64 || d == 128) &&
                   (dv == 64 || dv == 128) &&
                   (bq == kAttentionWgmmaRows || bq == bq3) &&
                   (!f.threads || f.threads == attentionWgmmaThreads(schedule, bq));
  if (wgmmaAsked || (!f.mma && wgmmaFits)) {
    f.mma = wgmmaUnit;
    f.schedule = schedule;
    // BQ = 128 (or 192, above); BKV = 128 keys; stages: 3 for D = 64
    // (112 KB; BQ = 192: 120 KB), 2 for D = 128 (160 KB): one block an SM
    // either way (its registers). With schedule = "overlap" a warpgroup
    // holds blocks j - 1 and j while it waits on j + 1: 3 (D = 128: 225 KB
    // of the 227).
    if (f.block.empty())
      f.block = {bq, 0};
    if (f.block[1] == 0)
      f.block[1] = 128;
    if (!f.threads)
      f.threads = attentionWgmmaThreads(f.schedule, f.block[0]);
    if (!f.stages)
      f.stages = std::max(d, dv) > 64 && f.schedule != ScheduleKind::overlap
                     ? 2
                     : 3;
    std::string why = attentionConfigProblem(f.get(op->getContext()), d, dv,
                                             elemBytes, hasMask, &model);
    if (!why.empty())
      return op->emitOpError() << why;
    return success();
  }
  if (f32)
    f.mma = MmaUnit::mma_sync_tf32;
  // BQ = 64 (four warps of 16 query rows), unless threads or block says.
  if (f.block.empty()) {
    int64_t bq = f.threads ? f.threads / 2 : 64;
    f.block = {bq, 0};
  }
  if (!f.threads)
    f.threads = f.block[0] * 2;
  // BKV and stages: the first of (64, 3), (64, 2), (32, 3), (32, 2) with
  // which two blocks fit in an SM's shared memory (the loads of one block
  // overlap the other's softmax), else the first that fits one block.
  // Measured nowhere yet (no GPU in the session that wrote it).
  if (f.block[1] == 0 || !f.stages) {
    SmallVector<std::pair<int64_t, int64_t>> tries;
    for (int64_t bkv : {int64_t(64), int64_t(32)})
      for (int64_t st : {int64_t(3), int64_t(2)})
        if ((f.block[1] == 0 || f.block[1] == bkv) && (!f.stages || f.stages == st))
          tries.push_back({bkv, st});
    if (tries.empty())
      tries.push_back({f.block[1] ? f.block[1] : 64, f.stages ? f.stages : 2});
    std::optional<std::pair<int64_t, int64_t>> one, two;
    for (auto [bkv, st] : tries) {
      ConfigFields c = f;
      c.block = {f.block[0], bkv};
      c.stages = st;
      int64_t bytes = attentionSharedBytes(c.get(op->getContext()), d, dv,
                                           elemBytes);
      int64_t perBlock = bytes + model.reservedSharedPerBlock;
      if (bytes > model.maxSharedPerBlock)
        continue;
      if (!one)
        one = {bkv, st};
      if (!two && 2 * perBlock <= model.sharedPerSM)
        two = {bkv, st};
    }
    auto pick = two ? *two : one ? *one : tries.front();
    f.block[1] = pick.first;
    f.stages = pick.second;
  }
  std::string why = attentionConfigProblem(f.get(op->getContext()), d, dv,
                                           elemBytes, hasMask, &model);
  if (!why.empty())
    return op->emitOpError() << why;
  return success();
}
