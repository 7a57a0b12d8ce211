//===- MatmulWgmmaMma.cpp - one k tile's wgmma ----------------------------===//
//
// The wgmma kernel's tensor-core step: the matrix descriptors of the
// 128-byte-swizzled shared-memory tiles, and the wgmma.mma_async of one k
// tile onto the accumulators, with both operands from shared memory
// (K-major A and B^T, or a 16-bit B read MN-major as it lies in a
// row-major B), or, for an f32 row-major B, the transposed product with
// B^T's fragments loaded into registers (inline PTX: upstream's NVVM op
// has no register A).
//
//===----------------------------------------------------------------------===//

#include "MatmulWgmmaKernel.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::wgmma;

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
/// row-major B (N contiguous: wgmma's "transposed" B, MN-major): BN / W
/// boxes of BK = 64 k rows x W columns (W = 64, 32 or 16: rows of `rowBytes`
/// = 128, 64 or 32 bytes, swizzled by as many: wgmmaMnBoxCols), one after
/// the other. In the PTX ISA's canonical MN-major layouts (the swizzled
/// ((T, W / 8, m), (8, k)) : ((1, T, LBO), (W / 8 T, SBO)), T = 8 16-bit
/// elements), one box is the m-th repeat of the swizzle atom along N and 8
/// of its rows one 8-row group of k: the leading byte offset is the stride
/// from one box to the next (`boxBytes`, BK x rowBytes), the stride byte
/// offset that from one 8-row group of k to the next (8 x rowBytes), the
/// swizzle mode 1 (128B), 2 (64B) or 3 (32B). A k16 step is 16 rows (16 x
/// rowBytes, a whole number of the swizzle's 8-row periods, so the base
/// offset stays 0). rowBytes = 128 is the K-major descriptor's high word.
Value mlir::kb::wgmma::descriptor(OpBuilder &b, Location loc, Value addr,
                                  int64_t kk, bool mnMajor, int64_t boxBytes,
                                  int64_t rowBytes) {
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
        arith::ConstantIntOp::create(
            b, loc, i32, (mnMajor ? 16 * rowBytes >> 4 : 2) * kk));
  // Low word: the start address and the leading byte offset (1 << 16);
  // high word: the stride byte offset and the swizzle mode. Joined by
  // inline PTX: as a zext and an or, LLVM folds the 32-bit arithmetic back
  // into 64-bit shifts and masks of the 64-bit shared address. Both words
  // are registers ("r"): PTX documents registers in a vector operand.
  uint32_t lowFixed =
      mnMajor ? uint32_t(boxBytes >> 4) << 16 : uint32_t(1) << 16;
  assert((rowBytes == 128 || rowBytes == 64 || rowBytes == 32) &&
         "a wgmma descriptor's rows are 128, 64 or 32 bytes");
  uint32_t mode = rowBytes == 128 ? 1 : rowBytes == 64 ? 2 : 3;
  uint32_t high = uint32_t(8 * rowBytes >> 4) | (mode << 30);
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
SmallVector<Value> WgmmaKernel::loadFragments(Value kt, int64_t kk) {
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
      Value swz =
          arith::XOrIOp::create(b, loc, e.add(chunk0, 2 * h), e.add(tt, 4 * v));
      Value idx =
          e.add(e.add(bBase, e.mul(box, 1024)),
                e.add(e.add(e.mul(kRow, 32), e.mul(swz, 4)), e.rem(gg, 4)));
      Value x = memref::LoadOp::create(b, loc, flat, ValueRange{idx});
      regs.push_back(
          arith::BitcastOp::create(b, loc, b.getI32Type(), x).getResult());
    }
  // Register order a0..a3: (h, v) = (0, 0), (1, 0), (0, 1), (1, 1).
  return regs;
}

Value mlir::kb::wgmmaRegAAsm(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                            ArrayRef<Value> aRegs, Value descB, StringRef types,
                            int64_t k, int transB) {
  int64_t nAcc = acc.size();
  auto accType = LLVM::LLVMStructType::getLiteral(
      b.getContext(), SmallVector<Type>(nAcc, b.getF32Type()));
  SmallVector<Value> operands(acc);
  std::string constraints, asmText;
  llvm::raw_string_ostream cs(constraints), os(asmText);
  for (int64_t i = 0; i < nAcc; ++i)
    cs << (i ? "," : "") << "=f";
  for (int64_t i = 0; i < nAcc; ++i)
    cs << "," << i;
  cs << ",r,r,r,r,l";
  llvm::append_range(operands, aRegs);
  operands.push_back(descB);
  os << "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
     << "wgmma.mma_async.sync.aligned.m64n" << 2 * nAcc << "k" << k
     << ".f32." << types << " {";
  for (int64_t i = 0; i < nAcc; ++i)
    os << (i ? ", " : "") << "$" << i;
  os << "}, {$" << 2 * nAcc << ", $" << 2 * nAcc + 1 << ", $" << 2 * nAcc + 2
     << ", $" << 2 * nAcc + 3 << "}, $" << 2 * nAcc + 4 << ", p, 1, 1";
  if (transB >= 0)
    os << ", " << transB;
  os << ";\n}\n";
  return LLVM::InlineAsmOp::create(
             b, loc, accType, operands, asmText, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
             ArrayAttr())
      .getResult(0);
}

// The tf32 form for a row-major B (C^T = B^T A^T: A's fragments from
// registers, m64n{BM}k8).
Value WgmmaKernel::wgmmaRegA(Value acc, ArrayRef<Value> aRegs, Value descB) {
  SmallVector<Value> accs;
  for (int64_t i = 0; i < nAcc; ++i)
    accs.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
  return wgmmaRegAAsm(b, loc, accs, aRegs, descB, "tf32.tf32", 8, -1);
}

Value WgmmaKernel::mmaStepRowB(Value kt, Value acc) {
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
}

// operands = "ba" (16-bit, a row-major B): C^T = B^T A^T from shared
// memory. Warpgroup w's wgmma A operand (M = 64) is B's box w, columns
// [64w, 64w + 64) of the tile in BK = 64 k rows of 128 bytes, read MN-major
// (layout col: the transpose bit imm-trans-a; the descriptor is mnB's); its
// B operand is the whole A tile, K-major as B^T's tile is in the B^T
// kernel, N = BM: m64n{BM}k16, so the narrow side of the tile is A's rows,
// which take any multiple of 8, not B's contiguous columns.
Value WgmmaKernel::mmaStepSwapped(Value kt, Value acc) {
  Value stage = e.rem(kt, stages);
  Value stageAddr = e.add(aligned, e.mul(stage, stageBytes));
  int64_t boxBytes = bk * mnRowBytes;
  Value boxAddr = e.add(stageAddr, e.add(e.mul(warpgroup, boxBytes), bytesA));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t kk = 0; kk < bk / kStep; ++kk) {
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, accType, acc,
        descriptor(b, loc, boxAddr, kk, /*mnMajor=*/true, boxBytes, mnRowBytes),
        descriptor(b, loc, stageAddr, kk),
        NVVM::MMAShapeAttr::get(ctx, 64, bm, kStep), opType, opType,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::col,
        NVVM::MMALayout::col, nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
  return acc;
}

// The wgmma of k tile kt (already in shared memory) onto `acc`.
Value WgmmaKernel::mmaStep(Value kt, Value acc) {
  if (swapped)
    return mmaStepSwapped(kt, acc);
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
        descriptor(b, loc, bAddr, kk, mnB, bk * mnRowBytes, mnRowBytes),
        NVVM::MMAShapeAttr::get(ctx, 64, bn, kStep), opType, opType,
        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        mnB ? NVVM::MMALayout::row : NVVM::MMALayout::col, nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
  return acc;
}
