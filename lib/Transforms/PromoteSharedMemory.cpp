//===- PromoteSharedMemory.cpp - stage matmul tiles in shared memory ------===//
//
// kb-promote-shared-memory: each block stages its A and B operand tiles in
// shared memory, `stages` deep, each row padded by `pad` words so that the
// fragment loads of a warp fall in distinct banks, and moved there by
// `copy` (registers, cp.async or TMA); the threads follow (TMA adds a
// producer warp). These fields are decided here and only here: the
// emitters read them and never change them. The total is checked
// against the chip's per-block limit: a tile that needs more shared memory
// than the device has is an error here, not a launch failure on the GPU.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBPROMOTESHAREDMEMORY
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// What the wgmma TMA-store epilogue (store = "tma", MatmulWgmma.cpp) needs
/// that `mm` with config `f` lacks, as the words after "needs"; empty where
/// it applies. kb-promote-shared-memory refuses a hand-set store = "tma"
/// with it and gives the store by default only where it is empty.
std::string tmaStoreNeeds(MatmulOp mm, const ConfigFields &f) {
  auto cType = mm.getResult().getType();
  // A 16-bit C: boxes of 64 columns (128-byte rows, as f32's 32).
  int64_t cBytes = cType.getElementTypeBitWidth() / 8;
  int64_t boxCols = wgmmaStoreBoxCols(cBytes);
  int64_t n = cType.getShape().back(), bn = f.block[1];
  if (f.copy != CopyKind::tma)
    return "copy = \"tma\"";
  if (!mm.getTransposeB() && !isWgmma16(f.mma))
    return "B transposed (transpose_b)";
  if (f.split > 1)
    return "no split";
  if (n % (16 / cBytes))
    return "N a multiple of " + std::to_string(16 / cBytes) +
           " (16-byte rows of C); N = " + std::to_string(n);
  if (bn % boxCols)
    return "BN a multiple of " + std::to_string(boxCols) +
           " (boxes of 128-byte rows); BN = " + std::to_string(bn);
  return "";
}

/// Threads of the tiles alone (without a TMA producer warp): one per FFMA
/// register tile, a warp per mma.sync warp tile, a warpgroup per 64 rows of
/// a wgmma tile (64 columns with a row-major B).
int64_t tileThreads(const ConfigFields &f, bool transposeB) {
  int64_t bm = f.block[0], bn = f.block[1];
  // A 16-bit wgmma tile is B^T's with either form of B (C^T's, one
  // warpgroup per 64 columns, with operands = "ba").
  if (isWgmma(f.mma))
    return wgmmaThreads(bm, bn, wgmmaSplitsRows(transposeB, f.mma, f.operands),
                        /*tma=*/false);
  // gemv: a warp per warp tile (its lanes split K), or a thread per
  // thread tile (a row-major B).
  if (isMmaSync(f.mma) || (f.mma == MmaUnit::gemv && !f.warp.empty()))
    return f.warp.size() == 2 ? (bm / f.warp[0]) * (bn / f.warp[1]) * 32 : 0;
  // gemv over a row-major B: a thread per TN columns, times BK / R k
  // groups with thread = [M, TN, R].
  if (f.mma == MmaUnit::gemv)
    return gemvColumnThreads(bn, f.block[2], f.thread);
  return f.thread.size() == 2 ? (bm / f.thread[0]) * (bn / f.thread[1]) : 0;
}

struct PromoteSharedMemoryPass
    : public kb::impl::KBPromoteSharedMemoryBase<PromoteSharedMemoryPass> {
  using Base::Base;

  /// Decides (or checks) copy, pad, stages and threads of one matmul.
  LogicalResult promote(Operation &op, ConfigFields &f,
                        const TargetModel &model) {
    MatmulOp mm = getKernelMatmul(&op);
    bool transposeB = mm.getTransposeB();
    if (f.block.size() != 3)
      return op.emitOpError()
             << "kb-promote-shared-memory needs block tiles: run "
                "kb-tile first";
    if (!f.mma)
      return op.emitOpError() << "kb-promote-shared-memory needs the mma unit: "
                                 "run kb-select-mma first";
    bool tensorCores = isMmaSync(f.mma);
    bool wgmma = isWgmma(f.mma);
    int64_t bm = f.block[0], bn = f.block[1], bk = f.block[2];
    int64_t k = mm.getLhs().getType().getShape().back();
    int64_t n = mm.getResult().getType().getShape().back();
    int64_t threads = tileThreads(f, transposeB);
    if (threads <= 0)
      return op.emitOpError() << "kb-promote-shared-memory needs the warp or "
                                 "thread tile: run kb-tile first";
    if (f.store == StoreKind::tma && !wgmma)
      return op.emitOpError()
             << "store = \"tma\" is only for mma = \"wgmma_tf32\", not \""
             << nameOf(f.mma) << "\"";
    if (f.copy == CopyKind::tma && !wgmma)
      return op.emitOpError()
             << "copy = \"tma\" is only for mma = \"wgmma_tf32\" "
                "(sm_90a, precision(tf32)), not \""
             << nameOf(f.mma) << "\"";
    if (f.mma == MmaUnit::gemv) {
      // Nothing staged: the weight streams from global memory into
      // registers, the few rows come from L1. `stages` is the depth of its
      // register pipeline: 2 issues tile kt + 1's weight loads before tile
      // kt's FMAs, 1 does not (default: gemvDefaultStages).
      if (f.copy || !f.pad.empty())
        return op.emitOpError()
               << "mma = \"gemv\" reads its operands from global memory, "
                  "not through shared memory: copy and pad do not apply";
      if (f.stages > 2)
        return op.emitOpError()
               << "mma = \"gemv\" keeps 1 or 2 k tiles of weight loads in "
                  "flight in registers: stages = "
               << f.stages << " does not apply";
      if (!f.stages) {
        auto c = mm.getResult().getType().getShape();
        std::optional<GemvForm> form =
            c.size() == 2 ? gemvForm(c[0], c[1], transposeB) : std::nullopt;
        f.stages = gemvDefaultStages(form ? gemvFew(*form, c[0], c[1])
                                          : kGemvMaxFew);
      }
      if (f.threads && f.threads != threads)
        return op.emitOpError() << "config asks for " << f.threads
                                << " threads, but its tiles take " << threads;
      f.threads = threads;
      return success();
    }
    auto sharedBytes = [&](int64_t stages) {
      ConfigFields g = f;
      g.stages = stages;
      return matmulSharedBytes(
          g.get(&getContext()), transposeB, n,
          mm.getResult().getType().getElementType().isF32());
    };
    if (wgmma) {
      // wgmma reads 128-byte swizzled rows: no padding. Four stages (the
      // copies run two tiles ahead while one wgmma group is in flight),
      // three when four do not fit, five where the fifth costs no block an
      // SM the grid would use (wgmmaDefaultStages, TargetModel.cpp).
      if (!f.pad.empty() && (f.pad[0] || f.pad[1]))
        return op.emitOpError()
               << "wgmma tiles are swizzled, not padded: pad must "
                  "be [0, 0]";
      f.pad = {0, 0};
      // TMA unless the config asks for cp.async: a producer warp after
      // the consumer warpgroups issues each tile's copy (MatmulWgmma.cpp),
      // the tensor map swizzles it and zero-fills what lies past M, N or K
      // (K % 4 == 0, which wgmma_tf32 already needs, makes every row pitch
      // the multiple of 16 bytes a tensor map needs).
      if (!f.copy)
        f.copy = CopyKind::tma;
      if (f.copy == CopyKind::registers)
        return op.emitOpError() << "copy = \"registers\" is not for mma = \""
                                << nameOf(f.mma)
                                << "\", which reads its tiles from "
                                   "swizzled shared memory written by "
                                   "\"cp_async\" or \"tma\"";
      bool half = isWgmma16(f.mma);
      if (half) {
        std::string why;
        if (f.copy != CopyKind::tma)
          why = "copy = \"tma\"";
        else if (!transposeB && n % 8)
          why = "N % 8 == 0 with a row-major B (16-byte rows)";
        if (!why.empty())
          return op.emitOpError() << "mma = \"" << nameOf(f.mma)
                                  << "\" needs " << why << " so far";
      }
      // A row-major B is read by TMA only (boxes of 32 columns; the
      // kernel loads its fragments from them, MatmulWgmma.cpp).
      if (!transposeB && !half && f.copy != CopyKind::tma)
        return op.emitOpError()
               << "mma = \"wgmma_tf32\" with a row-major B needs copy = "
                  "\"tma\", got \""
               << nameOf(f.copy) << "\"";
      if (!transposeB && !isWgmma16(f.mma) && n % 4)
        return op.emitOpError()
               << "mma = \"wgmma_tf32\" with a row-major B needs N % 4 == 0 "
                  "(TMA copies 16-byte aligned rows); N = "
               << n;
      // The 16-bit kernel (wgmma_f16, wgmma_bf16) so far: by TMA, a
      // row-major B with 16-byte rows read as it is, C stored directly.
      if (f.copy == CopyKind::tma)
        threads =
            wgmmaThreads(bm, bn, wgmmaSplitsRows(transposeB, f.mma, f.operands),
                         /*tma=*/true);
      // store = "tma" (MatmulWgmma.cpp, the TMA-store epilogue): the
      // warpgroups' 64 x 32 boxes of C through C's tensor map. The default
      // for a 16-bit C of the 16-bit kernel where the epilogue applies:
      // bf16 4096^3 0.1961 -> 0.1772 ms, 8192^3 1.4528 -> 1.3887, A.B^T
      // 0.1958 -> 0.1805 and 1.5007 -> 1.3868 (H100, one call,
      // bench/results/2026-12-07-h100-pingpong-clusters-tmastore), each a
      // persistent grid of 128 x 256 tiles; neither an f32 C nor a grid
      // of a block a tile has been measured with it, so neither gets it by
      // default. store = "direct" opts out.
      if (!f.store && half && f.grid > 0 &&
          !mm.getResult().getType().getElementType().isF32() &&
          f.reduce != ReduceKind::stream && tmaStoreNeeds(mm, f).empty())
        f.store = StoreKind::tma;
      if (f.store == StoreKind::tma) {
        std::string why = tmaStoreNeeds(mm, f);
        if (!why.empty())
          return op.emitOpError()
                 << "store = \"tma\" (the wgmma TMA-store epilogue) needs "
                 << why;
      }
      if (!f.stages) {
        // Four, three where four do not fit, five where the fifth costs
        // no block an SM the grid would use (wgmmaDefaultStages, which
        // kb-tile's few-tiles model asks too).
        auto shape = mm.getResult().getType().getShape();
        int64_t m = shape[shape.size() - 2];
        int64_t batch = shape.size() == 3 ? shape[0] : 1;
        int64_t blocks = f.grid > 0 ? f.grid
                                    : llvm::divideCeil(m, bm) *
                                          llvm::divideCeil(n, bn) * batch *
                                          std::max<int64_t>(f.split, 1);
        // A 16-bit row of BK = 64 has the bytes of a tf32 row of 32.
        f.stages =
            wgmmaDefaultStages(bm, bn, isWgmma16(f.mma) ? bk / 2 : bk,
                               wgmmaSplitsRows(transposeB, f.mma, f.operands),
                               f.copy == CopyKind::tma, f.grid > 0, n, blocks,
                               model, f.store == StoreKind::tma);
      }
      if (f.stages < 3)
        return op.emitOpError()
               << "wgmma needs at least 3 stages (copies two tiles "
                  "ahead of the one in flight); got "
               << f.stages;
    } else if (tensorCores && isMmaSync16(f.mma)) {
      // The 16-bit kernel (MatmulMmaSync16.cpp): cp.async only (kb-select-
      // mma pads K and transposes B so that every row is 16-byte pitched),
      // ldmatrix rows of 16 bytes. Rows padded by 8 elements (16 bytes):
      // BK + 8 = 40 elements (80 bytes) put the eight 16-byte rows an
      // ldmatrix matrix reads in distinct banks, as BN + 8 (mod 128 bytes:
      // 16) does for a row-major B.
      if (f.pad.empty())
        f.pad = {8, 8};
      if (f.pad.size() != 2 || f.pad[0] % 8 || f.pad[1] % 8)
        return op.emitOpError()
               << "mma = \"" << nameOf(f.mma)
               << "\" needs pad = [padA, padB] in multiples of 8 elements "
                  "(ldmatrix reads 16-byte rows)";
      if (f.copy && f.copy != CopyKind::cp_async)
        return op.emitOpError() << "mma = \"" << nameOf(f.mma)
                                << "\" copies its tiles by cp.async only, not "
                                   "copy = \""
                                << nameOf(f.copy) << "\"";
      if (!mmaSyncCopiesFit(n, k, transposeB, bm, bn, bk, threads,
                            /*elemBytes=*/2))
        return op.emitOpError()
               << "mma = \"" << nameOf(f.mma)
               << "\" needs K (and N with a row-major B) a multiple of 8 "
                  "(kb-select-mma pads or transposes otherwise) and the "
                  "tiles' 16-byte chunks split evenly among the "
               << threads << " threads; K = " << k << ", N = " << n;
      f.copy = CopyKind::cp_async;
      // As for tf32: 3 stages where they fit in half of the SM's shared
      // memory (two blocks an SM), else 2. Not measured for 16 bits.
      if (!f.stages)
        f.stages = sharedBytes(3) <= model.sharedPerSM / 2 ? 3 : 2;
      if (f.stages < 2)
        return op.emitOpError() << "copy = \"cp_async\" pipelines the mma.sync "
                                   "tiles: stages must be at least 2, got "
                                << f.stages;
    } else if (tensorCores) {
      // Row strides of BK + 4 and BN + 8 words (mod 32: 4 and 8) spread
      // the m16n8k8 fragment loads of a warp (rows g = lane / 4, columns
      // t = lane % 4) over all 32 banks.
      if (f.pad.empty())
        f.pad = {4, 8};
      // cp.async moves 16-byte chunks: rows must be 16-byte aligned in
      // global memory (contiguous dimension a multiple of 4) and the tiles'
      // chunks must split evenly among the threads. Otherwise the tiles are
      // staged through registers, one stage.
      bool asyncFits = mmaSyncCopiesFit(n, k, transposeB, bm, bn, bk, threads);
      if (!f.copy)
        f.copy = asyncFits && f.stages != 1 ? CopyKind::cp_async
                                            : CopyKind::registers;
      if (f.copy == CopyKind::cp_async && !asyncFits)
        return op.emitOpError()
               << "copy = \"cp_async\" needs K (and N unless B is transposed) "
                  "a "
                  "multiple of 4, BK a multiple of 4 and the tiles' 16-byte "
                  "chunks split evenly among the "
               << threads << " threads";
      if (f.copy == CopyKind::registers) {
        if (!f.stages)
          f.stages = 1;
        if (f.stages != 1)
          return op.emitOpError()
                 << "copy = \"registers\" stages the mma.sync tiles "
                    "in one buffer: stages must be 1, got "
                 << f.stages;
      }
      // cp.async stages, as many (3 at most, 2 at least) as fit in half of
      // the SM's shared memory, so that two blocks can share an SM when
      // registers allow (128x256x32 tiles: 2 stages, 104 KB; 3 would take
      // 156 KB).
      if (!f.stages)
        f.stages = sharedBytes(3) <= model.sharedPerSM / 2 ? 3 : 2;
      if (f.copy == CopyKind::cp_async && f.stages < 2)
        return op.emitOpError() << "copy = \"cp_async\" pipelines the mma.sync "
                                   "tiles: stages must be at least 2, got "
                                << f.stages;
    } else {
      // A is stored transposed (As[k][m]); 4 words of padding put the
      // k-columns that a warp's transposing stores touch in distinct banks.
      // B rows are read as 16-byte vectors and need none.
      if (f.pad.empty())
        f.pad = {4, 0};
      // Two stages through registers: the next tile's global loads are
      // issued before this tile's FFMAs and stored after them. Three or more
      // stages: cp.async copies (A transposed by 4-byte copies, B in
      // 16-byte chunks), which need the tiles to split evenly among the
      // threads.
      bool asyncFits = ffmaCopiesFit(bm, bn, bk, threads);
      if (!f.stages && f.copy != CopyKind::registers) {
        // Four cp.async stages when B is row-major and they fit in half of
        // the SM's shared memory: 0.92-0.94x cuBLAS at 4096^3 against 0.85x
        // for the register-prefetched double buffer, whose loads ptxas sank
        // to the end of the loop (2026-11-30 runs 2-3); 3 where 4 do not
        // fit (BK = 32: 100 KB for 3). A transposed B would need 4-byte
        // copies for B too (batched 512x384x256: 11% slower): there, two
        // buffers through registers, unless the config asks for cp.async.
        if (!transposeB || f.copy == CopyKind::cp_async)
          for (int64_t s : {4, 3})
            if (sharedBytes(s) <= model.sharedPerSM / 2) {
              f.stages = s;
              break;
            }
        if (!f.stages && f.copy == CopyKind::cp_async)
          f.stages = 3;
      }
      if (!f.stages)
        f.stages = 2;
      if (!f.copy)
        f.copy = f.stages >= 3 ? CopyKind::cp_async : CopyKind::registers;
      if (f.copy == CopyKind::cp_async && f.stages < 3)
        return op.emitOpError()
               << "copy = \"cp_async\" pipelines the FFMA tiles "
                  "at least 3 stages deep; got stages = "
               << f.stages << " (use copy = \"registers\")";
      if (f.copy == CopyKind::registers && f.stages > 2)
        return op.emitOpError()
               << "copy = \"registers\" double-buffers the FFMA "
                  "tiles: stages must be 1 or 2, got "
               << f.stages << " (use copy = \"cp_async\")";
      if (f.copy == CopyKind::cp_async && !asyncFits)
        return op.emitOpError()
               << "copy = \"cp_async\" needs the A and B tiles to "
                  "split evenly among the "
               << threads << " threads";
    }
    // A wgmma block of 128 B^T rows with TMA may also run its producer as
    // a warpgroup (wgmmaThreadsAllowed).
    bool otherWgmma = isWgmma(f.mma) && f.threads &&
                      wgmmaThreadsAllowed(bm, bn, transposeB,
                                          f.copy == CopyKind::tma, f.threads);
    if (f.threads && f.threads != threads && !otherWgmma)
      return op.emitOpError()
             << "config asks for " << f.threads << " threads, but its tiles"
             << (f.copy != CopyKind::tma ? ""
                 : transposeB && threads % 128 ? " and TMA's producer warp"
                                               : " and TMA's producer warpgroup")
             << " take " << threads;
    if (!otherWgmma)
      f.threads = threads;
    int64_t bytes = sharedBytes(f.stages);
    if (bytes > model.maxSharedPerBlock)
      return op.emitOpError()
             << "config needs " << bytes
             << " bytes of shared memory per block (block = [" << bm << ", "
             << bn << ", " << bk << "], stages = " << f.stages << "); "
             << model.chip << " allows at most " << model.maxSharedPerBlock;
    return success();
  }

  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError()
          << "kb-promote-shared-memory: unknown chip '" << chip << "'";
      return signalPassFailure();
    }
    for (Operation &op : getOperation().getBody().getOps()) {
      if (getKernelKind(&op) != KernelKind::Matmul)
        continue;
      ConfigFields f = ConfigFields::from(getConfig(&op));
      if (failed(promote(op, f, *model)))
        return signalPassFailure();
      setConfig(&op, f.get(&getContext()));
    }
  }
};

} // namespace
