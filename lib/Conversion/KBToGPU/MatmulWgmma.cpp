//===- MatmulWgmma.cpp - the wgmma TF32 kernel (sm_90a) -------------------===//
//
// A block of BM/64 warpgroups computes a BM x BN tile of C; warpgroup w owns
// rows [64w, 64w + 64) and accumulates them with wgmma.mma_async.m64nBNk8
// (tf32 in, f32 accumulators in registers for the whole k loop). wgmma reads
// both operands straight from shared memory through matrix descriptors, so
// there are no fragment loads and no rounding instructions (the tensor core
// ignores the low 13 mantissa bits of each fp32 operand).
//
// That is the kernel for a K-major B (transpose_b). For a row-major B the
// kernel computes the tile transposed (C^T = B^T A^T): BN/64 warpgroups
// each own 64 columns, B^T's fragments come from shared memory into
// registers, and the A tile is wgmma's B operand; see "Row-major B" below
// and docs/design.md.
//
// Shared memory: `stages` buffers, each an A tile (BM rows) and a B tile (BN
// rows of B^T: tf32 wgmma takes both operands K-major, so B comes
// transposed, see kb-select-mma), every row BK = 32 floats = 128 bytes of
// K, in wgmma's 128-byte swizzle: the 16-byte chunk c of row r sits at
// chunk c ^ (r % 8), so the eight rows of a core-matrix group hit distinct
// banks.
// The swizzle is a function of the address, so every tile starts on a
// 1024-byte boundary (the kernel aligns the dynamic shared memory itself).
//
// Copies: TMA (copy = "tma", the default; the pipeline is described where
// it is built, below) or cp.async (copy = "cp_async").
//
// cp.async pipeline, per k tile kt (loads run stages - 2 tiles ahead):
//   cp.async.wait_group   tile kt has landed (this thread's copies)
//   fence.proxy.async     cp.async wrote through the generic proxy; wgmma
//                         reads through the async proxy
//   bar.sync              everyone's copies are visible, and every warpgroup
//                         has retired the wgmma of tile kt - 2
//   cp.async of tile kt + stages - 2 into that tile's buffer (kt - 2's)
//   wgmma.fence; 4 x wgmma (k8 each); commit; wait_group 1 (tile kt - 1 done)
// so the wgmma of tile kt runs while the next iteration waits and copies.
// The epilogue stores two consecutive columns per 8-byte store (storeC2).
//
//===----------------------------------------------------------------------===//

#include "MatmulGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

/// The register count the consumer warpgroups of a block of `threads`
/// threads can take with setmaxnreg.inc after the remaining 128 (the
/// producer warpgroup) gave theirs down to `producerRegs`: the launch count
/// (65536 / threads in steps of 8, as ptxas sets it) plus the consumers'
/// share of what the producer released, in steps of 8, at most 256.
static int64_t setmaxnregConsumerCount(int64_t threads, int64_t consumerThreads,
                                       int64_t producerRegs) {
  int64_t launch = std::min<int64_t>(255, 65536 / threads) / 8 * 8;
  int64_t released = 128 * (launch - producerRegs);
  return std::min<int64_t>(256, (launch + released / consumerThreads) / 8 * 8);
}

namespace {

/// Bytes of one swizzled row (BK f32) and of one 8-row core-matrix group
/// (the swizzle's period, to which the kernel aligns its shared memory).
constexpr int64_t kRowBytes = 128, kGroupBytes = 8 * kRowBytes;
static_assert(kGroupBytes == kWgmmaAlignBytes, "wgmmaSharedBytes' slack");

/// The wgmma matrix descriptor of a K-major, 128-byte-swizzled tile starting
/// at shared address `addr` (1024-byte aligned), moved `kk` k8 steps (32
/// bytes) along its rows: start address >> 4 in bits 0-13, leading byte
/// offset (unused for swizzled K-major; 1) in 16-29, stride byte offset (one
/// 8-row group, 1024 bytes) >> 4 in 32-45, swizzle mode 1 (128B) in bits
/// 62-63. The start address is computed in 32 bits (shared addresses are
/// below 2^18) and only then widened: the high word is a constant, so
/// ptxas keeps one 32-bit add per descriptor instead of 64-bit shifts,
/// masks and adds (the 4096^3 kernel's k loop did 8 such 64-bit ops a k
/// tile, 2 SASS instructions each: bench/results/2026-12-02-square-
/// instructions).
/// With `mnMajor` the descriptor of a 16-bit B tile stored as it is in a
/// row-major B (N contiguous: wgmma's "transposed" B, MN-major): BN / 64
/// boxes of BK = 64 k rows x 64 columns (128 bytes, 128-byte swizzled), one
/// after the other. A k16 step is 16 rows (2048 bytes); the leading byte
/// offset is the stride from one 64-column box to the next (BK x 128 bytes),
/// the stride byte offset that from one 8-row group of k to the next (1024).
Value descriptor(OpBuilder &b, Location loc, Value addr, int64_t kk = 0,
                 bool mnMajor = false, int64_t boxBytes = 0) {
  auto i32 = b.getI32Type(), i64 = b.getI64Type();
  Value a32 = arith::IndexCastUIOp::create(b, loc, i32, addr);
  Value start = arith::ShRUIOp::create(
      b, loc,
      arith::AndIOp::create(b, loc, a32,
                            arith::ConstantIntOp::create(b, loc, i32, 0x3FFFF)),
      arith::ConstantIntOp::create(b, loc, i32, 4));
  if (kk)
    start = arith::AddIOp::create(
        b, loc, start,
        arith::ConstantIntOp::create(b, loc, i32, (mnMajor ? 128 : 2) * kk));
  // Low word: the start address and the leading byte offset (1 << 16);
  // high word: the stride byte offset and the swizzle mode. Joined by
  // inline PTX: as a zext and an or, LLVM folds the 32-bit arithmetic back
  // into 64-bit shifts and masks of the 64-bit shared address. Both words
  // are registers ("r"): PTX documents registers in a vector operand.
  uint32_t lowFixed =
      mnMajor ? uint32_t(boxBytes >> 4) << 16 : uint32_t(1) << 16;
  uint32_t high = uint32_t(kGroupBytes >> 4) | (uint32_t(1) << 30);
  Value low = arith::OrIOp::create(
      b, loc, start, arith::ConstantIntOp::create(b, loc, i32, lowFixed));
  return LLVM::InlineAsmOp::create(
             b, loc, i64,
             ValueRange{low, arith::ConstantIntOp::create(b, loc, i32, high)},
             "mov.b64 $0, {$1, $2};", "=l,r,r", /*has_side_effects=*/false,
             /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr(), ArrayAttr())
      .getResult(0);
}

} // namespace

LogicalResult mlir::kb::buildWgmma(MatmulEmitter &e, LaunchInfo &info) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  MLIRContext *ctx = b.getContext();
  int64_t bm = e.bm, bn = e.bn, bk = e.bk;
  int64_t stages = e.config.getStages();
  if (failed(checkWgmmaConfig(e)))
    return failure();
  // A row-major B: wgmma computes the tile transposed, C^T = B^T A^T, with
  // B^T as its A operand from registers (see "Row-major B" below).
  // 16-bit operands (below) read a row-major B as it is instead (mnB):
  // the same kernel as for B^T, B's tile MN-major (descriptor above).
  bool half = isWgmma16(e.config.getMma());
  bool mnB = half && !e.shape.transB;
  bool rowB = !e.shape.transB && !half;
  bool tma = e.config.getCopy() == CopyKind::tma;
  int64_t bytesA = bm * kRowBytes, stageBytes = (bm + bn) * kRowBytes;
  bool persistent = e.config.getGrid() > 0;
  // store = "tma": the TMA-store epilogue (see the epilogue below).
  bool tmaStore = e.config.getStore() == StoreKind::tma;
  // 16-bit operands (wgmma_f16, wgmma_bf16): BK = 64 a 128-byte row, four
  // m64nNk16 a k tile where tf32 has four m64nNk8: every descriptor step
  // is 32 bytes of K either way, so the tiles, swizzle and pipeline are the
  // same bytes.
  int64_t elemBytes = half ? 2 : 4, kStep = half ? 16 : 8;
  NVVM::WGMMATypes opType =
      !half ? NVVM::WGMMATypes::tf32
            : (e.config.getMma() == MmaUnit::wgmma_bf16 ? NVVM::WGMMATypes::bf16
                                                        : NVVM::WGMMATypes::f16);
  int64_t staging = wgmmaStagingBytes(bm, bn, bk, stages, e.shape.transB, tma,
                                      persistent, e.shape.n, tmaStore,
                                      elemBytes, e.cElem().isF32());
  if (failed(e.setSharedBytes(info, wgmmaSharedBytes(bm, bn, bk, stages, tma,
                                                     staging, elemBytes))))
    return failure();

  // The dynamic shared memory, realigned to 1024 bytes, as one f32 array.
  Value smem = e.dynamicSharedMemory();
  Value raw = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  Value aligned = arith::AndIOp::create(b, loc, e.add(raw, kGroupBytes - 1),
                                        cidx(b, loc, ~(kGroupBytes - 1)));
  Value shift = arith::SubIOp::create(b, loc, aligned, raw);
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  Value flat = memref::ViewOp::create(
      b, loc,
      MemRefType::get(
          {(stages * stageBytes + (tma ? 16 * stages : 0) + staging) / 4},
          b.getF32Type(), nullptr, wg),
      smem, shift, ValueRange{});

  // A persistent grid (`grid = G`, TMA only): G blocks, block g taking the
  // output tiles g, g + G, g + 2G, ... (launch order over every batch or
  // split), its producer running ahead across tile boundaries, so that the
  // next tile's copies overlap this tile's epilogue. Without it, one block
  // a tile (blockTile).
  int64_t tilesM = llvm::divideCeil(e.shape.m, bm),
          tilesN = llvm::divideCeil(e.shape.n, bn);
  int64_t slices = e.shape.splits > 1 ? e.shape.splits : e.shape.batch;
  int64_t totalTiles = tilesM * tilesN * slices;
  if (persistent && !tma)
    return e.op->emitOpError()
           << "wgmma_tf32 with grid = " << e.config.getGrid()
           << " (a persistent grid) needs copy = \"tma\"";
  int64_t persistentGrid = std::min(e.config.getGrid(), totalTiles);
  // A persistent grid of clusters of two (cluster = 2): the pairs of blocks
  // (2p, 2p + 1) walk the tiles of 2 BM rows (the pair's), each block its
  // half; G even, at most the pairs' tiles times two.
  if (persistent && e.config.getCluster() > 2)
    return e.op->emitOpError()
           << "wgmma_tf32 with grid = " << e.config.getGrid()
           << " (a persistent grid) takes cluster = 2 at most, got cluster = "
           << e.config.getCluster();
  bool pairs = persistent && e.config.getCluster() == 2;
  if (pairs && e.config.getGrid() % 2)
    return e.op->emitOpError()
           << "wgmma_tf32 with grid = " << e.config.getGrid()
           << " and cluster = 2 needs an even grid (whole clusters of two)";
  if (persistent)
    info.grid = {persistentGrid, 1, 1};
  if (pairs)
    info.cluster = {2, 1, 1};
  MatmulEmitter::BlockTile tile =
      persistent ? MatmulEmitter::BlockTile{} : e.blockTile();
  Value bz = tile.batch, row0 = tile.row0, col0 = tile.col0;
  int64_t kTiles = e.kTilesPerBlock();
  // The operands only one block reads, copied evict-first (TMA).
  ReadOnce once = readOnceOperands(e.shape, bm, bn);
  // Tile i of a persistent block: its output tile t = g + i G, of slice t /
  // (tiles a slice).
  auto persistentTile = [&](Value i) {
    Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    if (pairs) {
      int64_t pairTiles = tilesM / 2 * tilesN;
      Value t = e.add(e.div(g, 2), e.mul(i, persistentGrid / 2));
      MatmulEmitter::BlockTile at =
          e.tileAt(e.rem(t, pairTiles), e.div(t, pairTiles), 2 * bm,
                   tilesM / 2, std::max<int64_t>(e.config.getRaster() / 2, 1));
      at.row0 = e.add(at.row0, e.mul(e.rem(g, 2), bm));
      return at;
    }
    Value t = e.add(g, e.mul(i, persistentGrid));
    return e.tileAt(e.rem(t, tilesM * tilesN), e.div(t, tilesM * tilesN));
  };
  // Tiles of a persistent block: ceil((total - g) / G) (a pair's:
  // ceil((total / 2 - p) / (G / 2)), the same for both blocks).
  auto persistentCount = [&]() {
    Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    if (pairs)
      return e.div(arith::SubIOp::create(
                       b, loc,
                       cidx(b, loc, totalTiles / 2 + persistentGrid / 2 - 1),
                       e.div(g, 2)),
                   persistentGrid / 2);
    return e.div(arith::SubIOp::create(
                     b, loc, cidx(b, loc, totalTiles + persistentGrid - 1), g),
                 persistentGrid);
  };

  // reduce = "stream": stream-K over a persistent grid of G blocks
  // (streamKPlan): the whole rounds of G tiles as a persistent grid runs
  // them, the tiles left over split in chunks of their k tiles, one a
  // block, fixed up through the workspace (MatmulWgmmaReduce.cpp).
  bool streamK = e.config.getReduce() == ReduceKind::stream;
  StreamKPlan plan;
  if (streamK) {
    if (failed(checkStreamK(e, persistent, tma, tmaStore,
                            (rowB ? bn : bm) / 64)))
      return failure();
    // Every block of the grid, even past the tiles (the rest's chunks).
    persistentGrid = e.config.getGrid();
    plan = streamKPlan(totalTiles, kTiles, persistentGrid);
    info.grid = {persistentGrid, 1, 1};
  }
  int64_t streamChunks = plan.chunks >= 2 ? plan.chunks : 0;
  auto streamChunk = [&](Value g) {
    return streamKChunk(e, g, plan, persistentGrid, kTiles, tilesM * tilesN);
  };
  // The block's count of k tiles before chunk k tile kt (the rounds').
  auto streamCount = [&](const StreamKChunk &ch, Value kt) {
    return e.add(arith::SubIOp::create(b, loc, kt, ch.kBegin),
                 plan.rounds * kTiles);
  };

  // Element index of (row r, 16-byte chunk c) of a swizzled tile at element
  // `tileBase`.
  auto swizzled = [&](Value tileBase, Value r, Value c) {
    Value sc = arith::XOrIOp::create(b, loc, c, e.rem(r, 8));
    return e.add(tileBase, e.add(e.mul(r, kRowBytes / 4), e.mul(sc, 4)));
  };
  auto inRange = [&](Value v, int64_t bound, bool needed) -> Value {
    if (!needed)
      return Value();
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, v,
                                 cidx(b, loc, bound));
  };
  // The cp.async copies of k tile `kt` into buffer `stage` (index values);
  // `kEdge`: the tile may run past K (the last one, or with an uneven split
  // the last chunk's last ones), so each chunk copies only the elements
  // before K.
  auto issueCopies = [&](Value kt, Value stage, bool kEdge) {
    Value k0 = e.kAt(kt);
    Value aBase = e.mul(stage, stageBytes / 4),
          bBase = e.add(aBase, bytesA / 4);
    auto operand = [&](Value mem, Value tileBase, int64_t rows, Value r0,
                       int64_t bound) {
      for (int64_t i = 0; i < rows * 8 / e.threads; ++i) {
        Value c = e.add(e.tid, i * e.threads);
        Value r = e.div(c, 8), kc = e.rem(c, 8);
        Value gr = e.add(r0, r), gk = e.add(k0, e.mul(kc, 4));
        e.asyncCopyChunk(mem, e.globalIndex(bz, gr, gk), flat,
                         ValueRange{swizzled(tileBase, r, kc)},
                         inRange(gr, bound, bound % rows != 0), gk,
                         kEdge ? std::optional<int64_t>(e.shape.k)
                               : std::nullopt);
      }
    };
    operand(e.a, aBase, bm, row0, e.shape.m);
    operand(e.bmem, bBase, bn, col0, e.shape.n);
  };
  if (!tma && ((bm * 8) % e.threads || (bn * 8) % e.threads))
    return e.op->emitOpError() << "wgmma_tf32 tiles must split evenly into "
                                  "16-byte chunks among the threads";

  // When K is not a multiple of BK only the last k tile needs the K guard:
  // the loop issues the others without it, behind a uniform branch.
  // 2026-11-30 run 12: the guard on every tile cost 6% (1024x768x1512
  // against 1024x768x1504, both with 32-byte-aligned rows).
  bool kEdge = e.kPastEnd();
  auto issueTile = [&](Value next) {
    Value stage = e.rem(next, stages);
    if (!kEdge) {
      issueCopies(next, stage, false);
      return;
    }
    // The tile runs past K: the last one, or with an uneven split any
    // whose first K index + BK is past K.
    Value last = e.shape.splits > 1
                     ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                             e.add(e.kAt(next), bk),
                                             cidx(b, loc, e.shape.k))
                     : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             next, cidx(b, loc, kTiles - 1));
    auto ifLast = scf::IfOp::create(b, loc, last, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifLast.thenBlock());
    issueCopies(next, stage, true);
    b.setInsertionPointToStart(ifLast.elseBlock());
    issueCopies(next, stage, false);
  };

  Type f32 = b.getF32Type();
  // 64 x BN accumulators over 128 threads (64 x BM with a row-major B).
  int64_t nAcc = (rowB ? bm : bn) / 2;
  auto accType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(nAcc, f32));
  Value zero = LLVM::ZeroOp::create(b, loc, accType);
  // The warpgroup index, broadcast from lane 0 (as CUTLASS's
  // canonical_warp_group_idx does) so that ptxas knows it is the same in
  // every lane and keeps the addresses and descriptors built from it in
  // uniform registers.
  Value warpgroup = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      gpu::ShuffleOp::create(
          b, loc,
          arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                       e.div(e.tid, 128)),
          0, 32, gpu::ShuffleMode::IDX)
          .getShuffleResult());
  auto toI64 = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getI64Type(), v).getResult();
  };
  auto i32 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI32Type(), v).getResult();
  };

  // Row-major B. tf32 wgmma reads only K-major tiles from shared memory,
  // and B's tile (BK rows of BN columns, as TMA copies it) is N-major. The
  // kernel computes C^T = B^T A^T instead: warpgroup w takes columns
  // [64w, 64w + 64) of the tile as wgmma's M, with B^T's fragments loaded
  // into registers (a register operand has no layout requirement), and the
  // A tile, K-major as ever, as wgmma's B operand (N = BM). The B tile lies
  // in BN / 32 boxes of 32 k rows x 32 columns (128 bytes, 128-byte
  // swizzled like the A tile). One fragment (m64k8, per warp i and lane
  // g = lane / 4, t = lane % 4): a0 (16i + g, t), a1 (16i + g + 8, t),
  // a2 (16i + g, t + 4), a3 (16i + g + 8, t + 4), (column of the tile, k).
  // No transpose kernel in front, no second trip of B through memory.
  auto loadFragments = [&](Value kt, int64_t kk) {
    Value stage = e.rem(kt, stages);
    Value bBase = e.add(e.mul(stage, stageBytes / 4), bytesA / 4);
    Value wInGroup = e.rem(e.div(e.tid, 32), 4), ln = e.rem(e.tid, 32);
    Value gg = e.div(ln, 4), tt = e.rem(ln, 4);
    // Column 64w + 16i + g + 8h lies in box 2w + i / 2, at 16 (i % 2) + 8h
    // + g within it: chunk 4 (i % 2) + 2h + g / 4, element g % 4.
    Value box = e.add(e.mul(warpgroup, 2), e.div(wInGroup, 2));
    Value chunk0 = e.add(e.mul(e.rem(wInGroup, 2), 4), e.div(gg, 4));
    SmallVector<Value> regs;
    for (int v = 0; v < 2; ++v)
      for (int h = 0; h < 2; ++h) {
        // k = 8kk + t + 4v: its row in the box, and k % 8 = t + 4v.
        Value kRow = e.add(tt, 8 * kk + 4 * v);
        Value swz = arith::XOrIOp::create(b, loc, e.add(chunk0, 2 * h),
                                          e.add(tt, 4 * v));
        Value idx =
            e.add(e.add(bBase, e.mul(box, 1024)),
                  e.add(e.add(e.mul(kRow, 32), e.mul(swz, 4)), e.rem(gg, 4)));
        Value x = memref::LoadOp::create(b, loc, flat, ValueRange{idx});
        regs.push_back(
            arith::BitcastOp::create(b, loc, b.getI32Type(), x).getResult());
      }
    // Register order a0..a3: (h, v) = (0, 0), (1, 0), (0, 1), (1, 1).
    return regs;
  };
  // wgmma.mma_async with A from registers, which upstream's NVVM op does
  // not have: inline PTX, built as convert-nvvm-to-llvm builds the
  // shared-memory form (outputs tied to the accumulators' inputs).
  auto wgmmaRegA = [&](Value acc, ArrayRef<Value> aRegs, Value descB) {
    SmallVector<Value> operands;
    for (int64_t i = 0; i < nAcc; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    std::string constraints, outs, asmText;
    llvm::raw_string_ostream cs(constraints), os(asmText);
    for (int64_t i = 0; i < nAcc; ++i)
      cs << (i ? "," : "") << "=f";
    for (int64_t i = 0; i < nAcc; ++i)
      cs << "," << i;
    cs << ",r,r,r,r,l";
    llvm::append_range(operands, aRegs);
    operands.push_back(descB);
    os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
       << "wgmma.mma_async.sync.aligned.m64n" << bm << "k8.f32.tf32.tf32 {";
    for (int64_t i = 0; i < nAcc; ++i)
      os << (i ? ", " : "") << "$" << i;
    os << "}, {$" << 2 * nAcc << ", $" << 2 * nAcc + 1 << ", $" << 2 * nAcc + 2
       << ", $" << 2 * nAcc + 3 << "}, $" << 2 * nAcc + 4 << ", p, 1, 1;\n}\n";
    return LLVM::InlineAsmOp::create(
               b, loc, accType, operands, asmText, constraints,
               /*has_side_effects=*/true, /*is_align_stack=*/false,
               LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
               ArrayAttr())
        .getResult(0);
  };
  auto mmaStepRowB = [&](Value kt, Value acc) {
    Value stage = e.rem(kt, stages);
    Value addrA = e.add(aligned, e.mul(stage, stageBytes));
    SmallVector<SmallVector<Value>> frags;
    for (int64_t kk = 0; kk < bk / 8; ++kk)
      frags.push_back(loadFragments(kt, kk));
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kk = 0; kk < bk / 8; ++kk)
      acc = wgmmaRegA(acc, frags[kk], descriptor(b, loc, addrA, kk));
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    // All of this tile's wgmma retire before the next tile's fragments are
    // loaded: a wgmma reads its A registers asynchronously, and ptxas reuses
    // them for the next tile's loads once the asm statement has taken them
    // (with wait_group 1 it did, and results were wrong: 2026-12-01, the
    // first GPU run of this kernel). The other consumer warpgroup keeps the
    // tensor cores busy meanwhile.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    return acc;
  };

  // The wgmma of k tile kt (already in shared memory) onto `acc`.
  auto mmaStep = [&](Value kt, Value acc) {
    if (rowB)
      return mmaStepRowB(kt, acc);
    Value stage = e.rem(kt, stages);
    Value stageAddr = e.add(aligned, e.mul(stage, stageBytes));
    Value aAddr = e.add(stageAddr, e.mul(warpgroup, 64 * kRowBytes));
    Value bAddr = e.add(stageAddr, bytesA);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t kk = 0; kk < bk / kStep; ++kk) {
      acc = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, accType, acc, descriptor(b, loc, aAddr, kk),
          descriptor(b, loc, bAddr, kk, mnB, bk * kRowBytes),
          NVVM::MMAShapeAttr::get(ctx, 64, bn, kStep), opType, opType,
          NVVM::WGMMATypes::f32,
          NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
          NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
          mnB ? NVVM::MMALayout::row : NVVM::MMALayout::col, nullptr);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
    return acc;
  };

  // store = "tma": the TMA-store epilogue. Warpgroup w stages its 64 rows
  // of the tile 32 columns at a time: box c (columns [32c, 32c + 32)) goes
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
  // With a persistent grid, each tile's epilogue starts with thread 0's
  // wait_group.read 0 and the barrier (the previous tile's last box read,
  // long since, during the k loop); at the end thread 0 waits for all its
  // stores to complete (wait_group 0) before the kernel exits. TMA clips
  // the rows past M and the columns past N: no guards.
  int64_t cBufBytes = stages * stageBytes + kWgmmaAlignBytes;
  auto tmaStoreSync = [&](bool waitFirst) {
    Value wgTid = e.rem(e.tid, 128);
    Value elected = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          wgTid, cidx(b, loc, 0));
    if (waitFirst) {
      auto ifOp = scf::IfOp::create(b, loc, elected, false);
      OpBuilder::InsertionGuard gd(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, kWgmmaStoreSlots - 2,
                                           b.getUnitAttr());
    }
    Value barId = arith::IndexCastUIOp::create(b, loc, b.getI32Type(),
                                               e.add(warpgroup, 1));
    NVVM::BarrierOp::create(
        b, loc, Type(), barId,
        arith::ConstantIntOp::create(b, loc, b.getI32Type(), 128), nullptr,
        Value());
    return elected;
  };
  auto tmaStoreEpilogue = [&](Value result, Value row0, Value col0, Value bz,
                              Value warpInGroup, Value g, Value t) {
    if (persistent)
      tmaStoreSync(true);
    auto v2 = VectorType::get({2}, f32);
    Value wgRow0 = e.add(row0, e.mul(warpgroup, 64));
    Value mapC = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 0),
        toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, e.tmapC)));
    for (int64_t c = 0; c < bn / kWgmmaStoreBoxCols; ++c) {
      int64_t slot = c % kWgmmaStoreSlots;
      int64_t boxBytes = kWgmmaStoreBoxRows * kWgmmaStoreBoxCols * 4;
      // The box's byte offset from `aligned`.
      Value boxOff = e.add(e.mul(warpgroup, kWgmmaStoreSlots * boxBytes),
                           cBufBytes + slot * boxBytes);
      for (int64_t jj = 0; jj < 4; ++jj) {
        int64_t j = 4 * c + jj;
        for (int q = 0; q < 4; q += 2) {
          Value r = e.add(e.add(e.mul(warpInGroup, 16), g), q >= 2 ? 8 : 0);
          Value cl = e.add(e.mul(t, 2), 8 * jj);
          Value row = e.add(wgRow0, r);
          Value col = e.add(col0, e.add(cl, 32 * c));
          Value x0 = e.epilogue(
              LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q), bz, row,
              col);
          Value x1 = e.epilogue(
              LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q + 1), bz,
              row, e.add(col, 1));
          Value pair =
              vector::FromElementsOp::create(b, loc, v2, ValueRange{x0, x1});
          Value chunk = arith::XOrIOp::create(b, loc, e.div(cl, 4), e.rem(r, 8));
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
      Value src = LLVM::IntToPtrOp::create(
          b, loc, LLVM::LLVMPointerType::get(ctx, 3),
          toI64(e.add(aligned, boxOff)));
      Value colI = arith::IndexCastUIOp::create(
          b, loc, b.getI32Type(), e.add(col0, 32 * c));
      Value rowI =
          arith::IndexCastUIOp::create(b, loc, b.getI32Type(), wgRow0);
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          b, loc, mapC, src, ValueRange{colI, rowI}, Value(),
          NVVM::TMAStoreMode::TILE, Value());
      NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
    }
  };
  // The end of the TMA-store epilogue: thread 0 of each warpgroup waits
  // for its stores to complete before the kernel exits.
  auto tmaStoreFinish = [&]() {
    if (!tmaStore)
      return;
    Value elected = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          e.rem(e.tid, 128), cidx(b, loc, 0));
    auto ifOp = scf::IfOp::create(b, loc, elected, false);
    OpBuilder::InsertionGuard gd(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, nullptr);
  };

  // The epilogue: the accumulators `result` of the tile at (row0, col0) of
  // batch or split bz, through the fused epilogue into C.
  auto epilogue = [&](Value result, Value row0, Value col0, Value bz) {
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
      // Staged through shared memory (wgmmaStagingBytes): the warp's 16
      // rows, 32 columns at a time. Each thread writes its 8-byte pairs
      // (through the fused epilogue) into the warp's 2 KB, 16-byte chunk
      // c of row r at chunk c ^ (r % 8); after a warp barrier lane l reads
      // row 4i + l / 8, chunk l % 8, and stores it as one 16-byte vector:
      // a warp's store is four whole 128-byte lines of C, where the direct
      // stores write 8 rows x 32 bytes (B^T's 65536 x 2048 x 32 stalled on
      // the store queue, lg_throttle, run 10).
      Value warpIdx = e.div(e.tid, 32);
      Value bufBase =
          e.add(cidx(b, loc, (stages * stageBytes + 16 * stages) / 4),
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
            Value x0 = e.epilogue(
                LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q), bz,
                row, col);
            Value x1 = e.epilogue(
                LLVM::ExtractValueOp::create(b, loc, result, 4 * j + q + 1), bz,
                row, e.add(col, 1));
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
            vector::StoreOp::create(b, loc, x, e.c, e.cIndex(bz, row, col),
                                    false, llvm::MaybeAlign(16));
          });
        }
        NVVM::SyncWarpOp::create(b, loc, full32);
      }
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
  };

  scf::ForOp loop;
  if (tma) {
    // TMA with a producer warp: the block is the consumer warpgroups (one
    // per 64 rows of the tile) plus one warp after them, whose lane 0 issues
    // every tensor copy (one per operand tile). The copies complete their
    // bytes on the stage's `full` mbarrier; the consumers release a stage on
    // its `empty` mbarrier (lane 0 of every consumer warp arrives once its
    // `wgmma.wait_group 1` shows the stage's tile retired). No block barrier
    // after the set-up. The producer, for each k tile kt:
    //   kt >= S: wait on empty of kt's stage (tile kt - S released)
    //   arrive.expect_tx on full of kt's stage + 2 tensor copies of tile kt
    // a consumer, for each k tile kt:
    //   mbarrier.try_wait.parity full   tile kt has landed (parity (kt / S) %
    //   2) wgmma.fence; 4 x wgmma; commit; wait_group 1   (tile kt - 1 retired)
    //   lane 0: arrive on empty of kt - 1's stage
    // The tensor map swizzles each 128-byte row (the same 128-byte swizzle
    // as the descriptors) and zero-fills rows past M or N and columns past
    // K, so no copy needs a guard; the expected bytes are always whole boxes
    // (zero-filled bytes count).
    int64_t consumerThreads = wgmmaThreads(bm, bn, !rowB, /*tma=*/false);
    auto ptrTo = [&](Value byteAddr, unsigned space) {
      return LLVM::IntToPtrOp::create(b, loc,
                                      LLVM::LLVMPointerType::get(ctx, space),
                                      toI64(byteAddr))
          .getResult();
    };
    Value barBase = e.add(aligned, stages * stageBytes);
    auto full = [&](Value stage) {
      return ptrTo(e.add(barBase, e.mul(stage, 8)), 3);
    };
    auto empty = [&](Value stage) {
      return ptrTo(e.add(barBase, e.add(e.mul(stage, 8), stages * 8)), 3);
    };
    auto globalPtr = [&](Value mem) {
      return ptrTo(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem),
                   0);
    };
    Value mapA = globalPtr(e.tmapA), mapB = globalPtr(e.tmapB);
    auto cmp = [&](arith::CmpIPredicate pred, Value v, int64_t c) {
      return arith::CmpIOp::create(b, loc, pred, v, cidx(b, loc, c))
          .getResult();
    };
    auto both = [&](Value x, Value y) {
      return arith::AndIOp::create(b, loc, x, y).getResult();
    };
    Value laneZero = cmp(arith::CmpIPredicate::eq, e.rem(e.tid, 32), 0);
    // cluster = 2 (Matmul.cpp checked TMA, BN % 16 == 0 with B^T or BN %
    // 64 == 0 with a row-major B, an even number of row tiles; an even
    // persistent grid above): the two blocks of a cluster compute rows 2i
    // and 2i + 1 of one column of tiles (blockTile, or persistentTile's
    // pairs), so B's tile is the same for both. Each block's producer
    // copies half of it (its rank's BN / 2 rows of B^T, or half of a
    // row-major B's boxes) and multicasts it into both blocks' shared
    // memory, at the same offsets, completing bytes on both blocks' `full`
    // mbarrier of the stage; its own A tile as before. A stage is then
    // written by both producers, so a producer refills it only once both
    // blocks' consumers released it: every consumer warp arrives on its own
    // block's `empty` and, through mapa, on its peer's (the count doubles),
    // for every k tile; the producer, after its last copy, waits for the
    // releases of the block's last S k tiles (its tail), so that no block
    // exits while its multicast into the peer, or an arrive from the peer,
    // is in flight.
    // A cluster barrier after the mbarrier set-up, so that no copy or
    // arrive reaches a peer's barrier before it is initialised. (An end
    // barrier of every thread instead of the tail measured 7-10% slower
    // than the default where the kernel without either had been 4.5%
    // slower and 1.2% faster: bench/results/2026-12-02-cluster/call5; why
    // was not looked at.)
    // cluster = 4 or 8 (since session 14; not yet run on a GPU): the same
    // with C blocks, each copying a C-th of B's tile into all C (multicast
    // mask 2^C - 1), each consumer warp arriving on its own block's `empty`
    // and on the C - 1 others' (the count is C times the consumer warps).
    int64_t cl = std::max<int64_t>(e.config.getCluster(), 1);
    if (cl > 1 && (!isWgmmaClusterSize(cl) ||
                   bn % wgmmaClusterBnMultiple(!rowB, cl)))
      return e.op->emitOpError()
             << "internal error: cluster = " << cl << " with BN = " << bn;
    Value rank;
    if (cl > 1) {
      // The block's rank in its cluster: block id y % C (clusters of 1 x C
      // x 1), or x % 2 in a persistent grid (2 x 1 x 1).
      Value bid = gpu::BlockIdOp::create(
          b, loc, persistent ? gpu::Dimension::x : gpu::Dimension::y);
      rank = e.rem(bid, cl);
    }
    Value multicastMask;
    if (cl > 1)
      multicastMask = arith::ConstantIntOp::create(b, loc, b.getI16Type(),
                                                   (int64_t(1) << cl) - 1);
    auto when = [&](Value cond, function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      body();
    };
    auto toI32 = [&](Value v) {
      return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v)
          .getResult();
    };
    auto parityOf = [&](Value kt) {
      return toI32(e.rem(e.div(kt, stages), 2));
    };
    when(cmp(arith::CmpIPredicate::eq, e.tid, 0), [&] {
      for (int64_t s = 0; s < stages; ++s) {
        NVVM::MBarrierInitOp::create(b, loc, full(cidx(b, loc, s)), i32(1),
                                     Value());
        NVVM::MBarrierInitOp::create(b, loc, empty(cidx(b, loc, s)),
                                     i32(consumerThreads / 32 * cl), Value());
      }
      NVVM::FenceMbarrierInitOp::create(b, loc);
    });
    if (cl > 1) {
      NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
      NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    } else {
      gpu::BarrierOp::create(b, loc);
    }
    // Local k tile kt of output tile `at`, the block's k tile number c
    // (kt, or with a persistent grid counted over its tiles): its copies
    // into c's stage.
    auto issueTma = [&](Value c, Value kt, const MatmulEmitter::BlockTile &at) {
      Value stage = e.rem(c, stages);
      Value stageAddr = e.add(aligned, e.mul(stage, stageBytes));
      Value bar = full(stage);
      NVVM::MBarrierArriveExpectTxOp::create(
          b, loc, Type(), bar, i32(stageBytes), NVVM::MemScopeKind::CTA, false,
          Value());
      Value savedSplit = e.splitIdx;
      if (persistent)
        e.splitIdx = at.batch;
      Value k0 = toI32(e.kAt(kt));
      e.splitIdx = savedSplit;
      // The operands read once (readOnceOperands): an L2 evict-first
      // policy on their copies (hoisted out of the loop by LLVM).
      Value policy = once.a || once.b ? evictFirstPolicy(b, loc) : Value();
      Value hintA = once.a ? policy : Value();
      Value hintB = once.b ? policy : Value();
      auto copy = [&](Value map, Value dstAddr, Value r0,
                      Value multicast = Value()) {
        Value hint = map == mapA ? hintA : hintB;
        SmallVector<Value> coords{k0, toI32(r0)};
        if (e.shape.batched)
          coords.push_back(toI32(at.batch));
        // The shared::cluster window (address space 7) holds this block's
        // own shared memory at the same offsets, cluster or not.
        Value dst = LLVM::AddrSpaceCastOp::create(
            b, loc, LLVM::LLVMPointerType::get(ctx, 7), ptrTo(dstAddr, 3));
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, dst, map, coords, bar, ValueRange{}, multicast, hint,
            NVVM::TMALoadMode::TILE, false, nullptr, Value());
      };
      copy(mapA, stageAddr, at.row0);
      if (!rowB && cl > 1) {
        // This block's C-th of B^T's tile, into every block of the cluster.
        Value part = e.mul(rank, bn / cl);
        copy(mapB, e.add(stageAddr, e.add(e.mul(part, kRowBytes), bytesA)),
             e.add(at.col0, part), multicastMask);
        return;
      }
      if (!rowB && !mnB) {
        copy(mapB, e.add(stageAddr, bytesA), at.col0);
        return;
      }
      // A row-major B: BN / 32 boxes of BK rows x 32 columns (coordinates
      // innermost first: column, then k). In a cluster, this block's C-th
      // of them (rank r: boxes r BN / 32C .. (r + 1) BN / 32C - 1), into
      // every block of the cluster.
      // 16-bit (mnB): BN / 64 boxes of BK = 64 rows x 64 columns (128
      // bytes), MN-major for wgmma.
      int64_t boxCols = mnB ? 64 : 32;
      int64_t boxes = bn / boxCols, mine = boxes / cl;
      Value first = cl > 1 ? e.mul(rank, mine) : cidx(b, loc, 0);
      Value mask = multicastMask;
      for (int64_t jj = 0; jj < mine; ++jj) {
        Value j = e.add(first, jj);
        SmallVector<Value> coords{toI32(e.add(at.col0, e.mul(j, boxCols))),
                                  k0};
        if (e.shape.batched)
          coords.push_back(toI32(at.batch));
        Value dst = LLVM::AddrSpaceCastOp::create(
            b, loc, LLVM::LLVMPointerType::get(ctx, 7),
            ptrTo(e.add(stageAddr, e.add(e.mul(j, bk * kRowBytes), bytesA)),
                  3));
        NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
            b, loc, dst, mapB, coords, bar, ValueRange{}, mask, hintB,
            NVVM::TMALoadMode::TILE, false, nullptr, Value());
      }
    };
    // A producer warpgroup (a row-major B; B^T with two consumer
    // warpgroups where the config asks for 384 threads) gives most of
    // its registers to the consumers: 40 for the producer, the rest shared by
    // the consumers in steps of 8. A block starts with the registers of its
    // launch (ptxas gives every thread the same count, 65536 / threads in
    // steps of 8: 168 at 384 threads, 96 at 640), and setmaxnreg.inc takes
    // only what the block's own warps released with setmaxnreg.dec: the
    // consumers' count is the launch count plus their share of the
    // producer's 128 x (launch - 40) (232 for two warpgroups, 104 for four).
    // A larger one waits for registers that never come (run 5: a block of
    // 640 threads with the old count, 112, hung). Each setmaxnreg opens the
    // branch whose code it sizes, so that ptxas allocates the consumers'
    // code to the larger count.
    bool moveRegisters = e.threads - consumerThreads == 128 &&
                         consumerThreads >= 256;
    // With B^T the producer keeps 72 (consumers 216): at 40 ptxas spilled
    // 8 bytes in the producer of 128 x 256 kernels + bias + swish (its tile
    // walk), and over 504 fused nn.Linear programs at 40 / 56 / 72, 102 /
    // 82 / 8 kernels spilled (the 8: GELU with an edge in N, N = 5000).
    int64_t producerRegs = rowB ? 40 : 72;
    int64_t consumerRegs = setmaxnregConsumerCount(
        consumerThreads + 128, consumerThreads, producerRegs);
    // The producer.
    Value warp = e.div(e.tid, 32);
    auto producerGroup = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::uge, e.tid, consumerThreads), false);
    {
      OpBuilder::InsertionGuard pg(b);
      b.setInsertionPointToStart(producerGroup.thenBlock());
      if (moveRegisters)
        NVVM::SetMaxRegisterOp::create(b, loc, producerRegs,
                                       NVVM::SetMaxRegisterAction::decrease);
      when(both(cmp(arith::CmpIPredicate::eq, warp, consumerThreads / 32),
                laneZero),
           [&] {
             // k tile c of the block: wait for its stage's last use, c - S.
             auto produceOne = [&](Value c, Value kt,
                                   const MatmulEmitter::BlockTile &at) {
               when(cmp(arith::CmpIPredicate::uge, c, stages), [&] {
                 // Tile c - S's release completes empty's phase (c / S - 1).
                 NVVM::MBarrierTryWaitParityOp::create(
                     b, loc, empty(e.rem(c, stages)),
                     toI32(e.rem(e.add(e.div(c, stages), 1), 2)),
                     i32(0x989680));
               });
               issueTma(c, kt, at);
             };
             // In a cluster, the producer's tail: it waits for the
             // release of each of the block's last S k tiles by both blocks'
             // consumers (as CUTLASS's producer tail), so that the block
             // exits only once every copy it multicast into the peer was
             // consumed there and every arrive the peer's consumers send it
             // has landed. Release of tile c: empty (c % S), parity
             // (c / S) % 2.
             auto tail = [&](Value total) {
               if (cl == 1)
                 return;
               Value from = arith::SubIOp::create(
                   b, loc,
                   arith::MaxUIOp::create(b, loc, total,
                                          cidx(b, loc, stages)),
                   cidx(b, loc, stages));
               auto wait = scf::ForOp::create(b, loc, from, total,
                                              cidx(b, loc, 1));
               OpBuilder::InsertionGuard g(b);
               b.setInsertionPointToStart(wait.getBody());
               Value c = wait.getInductionVar();
               NVVM::MBarrierTryWaitParityOp::create(
                   b, loc, empty(e.rem(c, stages)),
                   toI32(e.rem(e.div(c, stages), 2)), i32(0x989680));
             };
             // A persistent grid's `count` whole tiles of the block.
             auto produceTiles = [&](Value count) {
               auto tilesLoop = scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                                   count, cidx(b, loc, 1));
               OpBuilder::InsertionGuard g(b);
               b.setInsertionPointToStart(tilesLoop.getBody());
               Value i = tilesLoop.getInductionVar();
               MatmulEmitter::BlockTile at = persistentTile(i);
               auto produce =
                   scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                      cidx(b, loc, kTiles), cidx(b, loc, 1));
               b.setInsertionPointToStart(produce.getBody());
               Value kt = produce.getInductionVar();
               produceOne(e.add(e.mul(i, kTiles), kt), kt, at);
             };
             if (streamChunks) {
               // The whole rounds, then the block's chunk of a rest tile.
               Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
               produceTiles(cidx(b, loc, plan.rounds));
               when(cmp(arith::CmpIPredicate::ult, g,
                        plan.rest * streamChunks),
                    [&] {
                      StreamKChunk ch = streamChunk(g);
                      auto produce = scf::ForOp::create(
                          b, loc, ch.kBegin, ch.kEnd, cidx(b, loc, 1));
                      OpBuilder::InsertionGuard g(b);
                      b.setInsertionPointToStart(produce.getBody());
                      Value kt = produce.getInductionVar();
                      produceOne(streamCount(ch, kt), kt, ch.at);
                    });
               return;
             }
             if (!persistent) {
               auto produce =
                   scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                      cidx(b, loc, kTiles), cidx(b, loc, 1));
               {
                 OpBuilder::InsertionGuard g(b);
                 b.setInsertionPointToStart(produce.getBody());
                 Value kt = produce.getInductionVar();
                 produceOne(kt, kt, tile);
               }
               tail(cidx(b, loc, kTiles));
               return;
             }
             Value count = persistentCount();
             produceTiles(count);
             tail(e.mul(count, kTiles));
           });
      // reduce = "cluster": the producer threads' arrive on the cluster
      // barrier that orders block 1's partial before block 0's loads.
      if (e.clusterReduce)
        NVVM::ClusterArriveRelaxedOp::create(b, loc, UnitAttr());
    }
    // The consumers: the k loop and, after it, the epilogue.
    auto consumer = scf::IfOp::create(
        b, loc, cmp(arith::CmpIPredicate::ult, e.tid, consumerThreads), false);
    b.setInsertionPointToStart(consumer.thenBlock());
    if (moveRegisters)
      NVVM::SetMaxRegisterOp::create(b, loc, consumerRegs,
                                     NVVM::SetMaxRegisterAction::increase);
    // Lane 0 of each consumer warp releases the stage of the block's k tile
    // `cPrev` (retired) where `cond` holds. In a cluster it arrives on the
    // peer's barrier too (the producers' tails wait for every release of
    // the last S k tiles).
    auto releaseStage = [&](Value cPrev, Value cond) {
      when(both(cond, laneZero), [&] {
        Value stage = e.rem(cPrev, stages);
        NVVM::MBarrierArriveOp::create(b, loc, Type(), empty(stage), Value(),
                                       NVVM::MemScopeKindAttr());
        if (cl == 1)
          return;
        // The peer's barrier at the same offset (mapa). The arrive has the
        // default semantics (release at CTA scope), as CUTLASS's
        // ClusterBarrier::arrive: this warp's wgmma reads of the stage
        // retired (wait_group) before it. With `.release.cluster` the same
        // kernel ran 1.57x slower (4096^3 B^T: 0.5622 against 0.3644 ms,
        // same call, bench/results/2026-12-02-cluster/call1): the slowdown
        // of 2026-11-30 run 38's first try, whose arrive had cluster scope
        // (NVVM::MBarrierArriveOp with MemScopeKind::CLUSTER). The empty
        // barriers follow the full ones (stages x 8 bytes).
        // With C blocks, one arrive on each of the C - 1 others (rank ^ j,
        // j = 1 .. C - 1).
        Value local = arith::IndexCastUIOp::create(
            b, loc, b.getI32Type(),
            e.add(barBase, e.add(e.mul(stage, 8), stages * 8)));
        for (int64_t j = 1; j < cl; ++j) {
          Value peerRank = arith::IndexCastUIOp::create(
              b, loc, b.getI32Type(),
              arith::XOrIOp::create(b, loc, rank, cidx(b, loc, j)));
          LLVM::InlineAsmOp::create(
              b, loc, TypeRange{}, ValueRange{local, peerRank},
              "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, $0, "
              "$1;\nmbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n",
              "r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
              LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
              ArrayAttr());
        }
      });
    };
    // The k loop of one output tile; its k tile kt is the block's k tile
    // c0 + kt (c0 = 0 without a persistent grid).
    // (`trips`: its k tiles, kTiles unless given: a stream-K chunk's.)
    auto consumeTile = [&](Value c0, Value trips = Value()) {
      auto kLoop = scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                      trips ? trips : cidx(b, loc, kTiles),
                                      cidx(b, loc, 1), ValueRange{zero});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value kt = kLoop.getInductionVar();
      Value c = c0 ? e.add(c0, kt) : kt;
      NVVM::MBarrierTryWaitParityOp::create(b, loc, full(e.rem(c, stages)),
                                            parityOf(c), i32(0x989680));
      Value acc = mmaStep(c, kLoop.getRegionIterArgs()[0]);
      // Tile c - 1 is retired: release its stage (the previous output
      // tile's last k tile was released after its loop).
      releaseStage(e.add(c, -1), cmp(arith::CmpIPredicate::ne, kt, 0));
      scf::YieldOp::create(b, loc, acc);
      return kLoop;
    };
    // A persistent grid's `count` whole tiles of the block: each one's k
    // loop, every wgmma retired, the last k tile's stage released (the
    // producer may be waiting for it), then the epilogue while the
    // producer copies the next tile's first k tiles.
    auto consumeTiles = [&](Value count) {
      auto tilesLoop =
          scf::ForOp::create(b, loc, cidx(b, loc, 0), count, cidx(b, loc, 1));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(tilesLoop.getBody());
      Value i = tilesLoop.getInductionVar();
      MatmulEmitter::BlockTile at = persistentTile(i);
      Value c0 = e.mul(i, kTiles);
      scf::ForOp kLoop = consumeTile(c0);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      releaseStage(e.add(c0, kTiles - 1),
                   arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
      epilogue(kLoop.getResult(0), at.row0, at.col0, at.batch);
    };
    if (streamChunks) {
      // The whole rounds as a persistent grid runs them; then the block's
      // chunk of a rest tile, if it has one: its k loop, every wgmma
      // retired, its last k tile's stage released; chunks 1 .. S - 1 store
      // their partial and set their flag, chunk 0 adds the others' and runs
      // the epilogue.
      Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
      consumeTiles(cidx(b, loc, plan.rounds));
      when(cmp(arith::CmpIPredicate::ult, g, plan.rest * streamChunks), [&] {
        StreamKChunk ch = streamChunk(g);
        scf::ForOp kLoop =
            consumeTile(cidx(b, loc, plan.rounds * kTiles),
                        arith::SubIOp::create(b, loc, ch.kEnd, ch.kBegin));
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
        releaseStage(e.add(streamCount(ch, ch.kEnd), -1),
                     arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
        Value acc = kLoop.getResult(0);
        StreamKFixup fixup(e, warpgroup, persistentGrid, streamChunks, nAcc,
                           consumerThreads);
        Value restTile = e.div(g, streamChunks);
        Value isFirst = cmp(arith::CmpIPredicate::eq, ch.chunk, 0);
        auto ifFirst = scf::IfOp::create(b, loc, isFirst, true);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(ifFirst.thenBlock());
        epilogue(fixup.waitAndAdd(acc, g, restTile), ch.at.row0, ch.at.col0,
                 ch.at.batch);
        b.setInsertionPointToStart(ifFirst.elseBlock());
        fixup.storeAndSignal(acc, g, fixup.slot(restTile, ch.chunk));
      });
      return success();
    }
    if (persistent) {
      consumeTiles(persistentCount());
      tmaStoreFinish();
      return success();
    }
    loop = consumeTile(Value());
    b.setInsertionPointAfter(loop);
    if (cl > 1) {
      // The last k tile's release (the producers' tails wait for it).
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      releaseStage(cidx(b, loc, kTiles - 1),
                   arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
    }
  } else {
    auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
    Value lastGroup;
    for (int64_t s = 0; s < stages - 2; ++s) {
      if (s < kTiles)
        issueCopies(cidx(b, loc, s), cidx(b, loc, s),
                    kEdge && (e.shape.splits > 1 || s == kTiles - 1));
      lastGroup = nvgpu::DeviceAsyncCreateGroupOp::create(b, loc, tokenType,
                                                          ValueRange{});
    }
    loop = scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, kTiles),
                              cidx(b, loc, 1), ValueRange{zero});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    e.pipelineStep(kt, lastGroup, stages - 3, stages - 2, kTiles,
                   /*fenceAsyncProxy=*/true, issueTile);
    scf::YieldOp::create(b, loc, mmaStep(kt, loop.getRegionIterArgs()[0]));
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

  if (e.clusterReduce) {
    // reduce = "cluster": the two chunks summed by the cluster's two blocks
    // (MatmulWgmmaReduce.cpp).
    emitClusterReduce(e, loop.getResult(0), warpgroup, (rowB ? bn : bm) / 64,
                      [&](Value acc) {
                        epilogue(acc, row0, col0, cidx(b, loc, 0));
                      });
    return success();
  }
  epilogue(loop.getResult(0), row0, col0, bz);
  tmaStoreFinish();
  return success();
}
