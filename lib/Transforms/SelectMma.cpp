//===- SelectMma.cpp - pick the arithmetic unit of each matmul ------------===//
//
// kb-select-mma: the lab notes' second lesson made explicit. In strict fp32
// (precision ieee) the tensor cores sit idle and the inner tile is FFMA; tf32
// puts it on mma.sync.m16n8k8, or on sm_90a on wgmma (reading a row-major B
// as it is where N % 4 == 0, else with a kb.transpose in front, and with a
// kb.pad of A's rows where K % 4 != 0); tf32x3 runs three tf32 products (big
// x big, big x small, small x big) for near-fp32 accuracy on tensor cores.
//
//===----------------------------------------------------------------------===//

#include "kb/Transforms/Passes.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBSELECTMMA
#include "kb/Transforms/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// wgmma copies A and B^T by TMA (or 16-byte cp.async), which needs rows
/// whose pitch is a multiple of 16 bytes: K % 4 == 0, or a kb.pad in front.
/// The operands' element size: 4 (f32) or 2 (f16, bf16).
int64_t elemBytes(MatmulOp mm) {
  return mm.getLhs().getType().getElementType().getIntOrFloatBitWidth() / 8;
}
bool kAligned(MatmulOp mm) {
  return mm.getLhs().getType().getShape().back() % (16 / elemBytes(mm)) == 0;
}

/// tf32 wgmma reads both operands K-major. A row-major B gets a kb.transpose
/// in front of the kernel (one read and one write of B, a memory-bound
/// kernel) and the matmul becomes transpose_b: run 24 measured the
/// alternative, transposing inside the matmul on the way to shared memory,
/// at 179 TFLOP/s against 309 with B already K-major (4096^3), because the
/// extra trip through registers and the L1 competes with wgmma's own
/// shared-memory reads. Fails (leaving the IR untouched) when B is a fusion
/// input that something else in the fusion also reads. Matmuls that share a
/// B share its transpose (`transposed`: B -> B^T made so far).
///
/// When K is not a multiple of 32, B^T's rows are padded to one (`pad(32)`,
/// the matmul reads them as `padded_b`): each row then starts on a 128-byte
/// line, and a 32-float k tile of it is four whole 32-byte sectors instead
/// of five partial ones. 2026-11-30 run 12 measured what the misaligned
/// rows cost: 1024x768xK with K = 1500 (rows 16-byte aligned) 0.0379 ms,
/// K = 1512 (32-byte aligned, also with a K edge) 0.0305, K = 1504 0.0287.
/// A's rows are the caller's and stay as they are.
constexpr int64_t kBTRowPad = 32;
LogicalResult makeBKMajor(Operation *kernel, MatmulOp mm,
                          DenseMap<Value, Value> &transposed) {
  if (mm.getTransposeB())
    return success();
  int64_t k = getMatmulLogicalK(mm);
  // 32 floats or 64 16-bit values: one 128-byte line.
  int64_t rowPad = kBTRowPad * 4 / elemBytes(mm);
  bool pad = k % rowPad != 0;
  auto transposeOf = [&](Value v) {
    Value &t = transposed[v];
    if (!t) {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
      if (pad)
        shape.back() = llvm::alignTo(shape.back(), rowPad);
      OpBuilder b(kernel);
      t = TransposeOp::create(
          b, mm.getLoc(), RankedTensorType::get(shape, type.getElementType()),
          v, pad ? b.getI64IntegerAttr(rowPad) : nullptr, nullptr);
    }
    return t;
  };
  if (kernel == mm.getOperation()) {
    mm.getRhsMutable().assign(transposeOf(mm.getRhs()));
  } else {
    auto fusion = cast<FusionOp>(kernel);
    auto arg = dyn_cast<BlockArgument>(mm.getRhs());
    if (!arg || !arg.hasOneUse())
      return failure();
    OpOperand &outer = fusion->getOpOperand(arg.getArgNumber());
    outer.set(transposeOf(outer.get()));
    arg.setType(outer.get().getType());
  }
  mm.setTransposeB(true);
  mm.setPaddedB(pad);
  return success();
}

/// When K is not a multiple of 4, A's rows (and those of a B given as B^T)
/// get a kb.pad in front: rows of K rounded up to 32 floats, zeros after K.
/// 4 would do for TMA (its row pitch must be a multiple of 16 bytes); 32
/// makes every row start on a 128-byte line, so a k tile's 32-float box row
/// is four whole 32-byte sectors (the reason B^T is padded to 32, run 12
/// above), gives the padded A the same K as the padded B^T kb.transpose
/// makes (no padded_b for the matmul to honour), and adds no k tile
/// (ceil(K / 32) tiles either way). The matmul then multiplies the padded
/// operands over the padded K: the extra terms are 0 x 0, exact zeros.
/// Matmuls that share an operand share its pad (`padded`). Fails, leaving
/// the IR untouched, when an operand to pad is a fusion input that something
/// else in the fusion also reads.
constexpr int64_t kRowPad = 32;
bool padsFeasible(Operation *kernel, MatmulOp mm) {
  if (kAligned(mm) || kernel == mm.getOperation())
    return true;
  auto single = [](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.hasOneUse();
  };
  return single(mm.getLhs()) && (!mm.getTransposeB() || single(mm.getRhs()));
}

void padRows(Operation *kernel, MatmulOp mm, DenseMap<Value, Value> &padded) {
  if (kAligned(mm))
    return;
  // 32 floats or 64 16-bit values: one 128-byte line.
  int64_t rowPad = kRowPad * 4 / elemBytes(mm);
  auto padOf = [&](Value v) {
    Value &p = padded[v];
    if (!p) {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.back() = llvm::alignTo(shape.back(), rowPad);
      OpBuilder b(kernel);
      p = PadOp::create(b, mm.getLoc(),
                        RankedTensorType::get(shape, type.getElementType()), v,
                        b.getI64IntegerAttr(rowPad), nullptr);
    }
    return p;
  };
  auto padOperand = [&](OpOperand &use) {
    if (kernel == mm.getOperation()) {
      use.set(padOf(use.get()));
      return;
    }
    auto fusion = cast<FusionOp>(kernel);
    auto arg = cast<BlockArgument>(use.get());
    OpOperand &outer = fusion->getOpOperand(arg.getArgNumber());
    outer.set(padOf(outer.get()));
    arg.setType(outer.get().getType());
  };
  // B^T first: a given one is K long (padded here); a transposed one is
  // already padded to 32 by kb.transpose, which for 16 bits (64 to a line)
  // can be shorter than A's padded K (K = 1500: 1504 < 1536): padded again.
  int64_t bRow =
      cast<RankedTensorType>(mm.getRhs().getType()).getShape().back();
  int64_t kPadded = llvm::alignTo(
      mm.getLhs().getType().getShape().back(), rowPad);
  if (bRow % (16 / elemBytes(mm)) || bRow < kPadded)
    padOperand(mm.getRhsMutable());
  padOperand(mm.getLhsMutable());
  int64_t k = mm.getLhs().getType().getShape().back();
  mm.setPaddedB(
      cast<RankedTensorType>(mm.getRhs().getType()).getShape().back() != k);
}

/// Both: B K-major, then the rows padded. Returns what stops it (the IR
/// then untouched), or None.
enum class Blocker { None, BReadTwice, AReadTwice };
Blocker prepareWgmmaOperands(Operation *kernel, MatmulOp mm,
                             DenseMap<Value, Value> &transposed,
                             DenseMap<Value, Value> &padded) {
  if (!padsFeasible(kernel, mm))
    return Blocker::AReadTwice;
  if (failed(makeBKMajor(kernel, mm, transposed)))
    return Blocker::BReadTwice;
  padRows(kernel, mm, padded);
  return Blocker::None;
}
constexpr const char *kAReadTwice =
    "A (or the given B^T) is a fusion input that other ops of the fusion "
    "also read, so its rows cannot be padded in front of it (K % 4 != 0)";

/// Whether wgmma, with the kernels its operands need in front of it (a
/// kb.transpose of a row-major B; a kb.pad of A's rows, and of a given
/// B^T's, when K % 4 != 0), beats mma.sync reading the operands as they are,
/// by a model of the two: each kernel takes the longer of its flops at its
/// unit's rate and its operands' bytes at the copy bandwidth; the transpose
/// reads and writes B once more, a pad its operand. mma.sync's rate where
/// K % 4 != 0 is its register-staged one (the target model's unaligned
/// rate). A matmul bound by its bytes (a long K over few outputs, a vector
/// times a matrix) then keeps mma.sync: the layout kernels would add about
/// as much as it moves. docs/shapes.md has the measurements behind the
/// rates.
bool wgmmaPays(MatmulOp mm, const TargetModel &model) {
  if (model.wgmmaTf32Tflops <= 0 || model.mmaSyncTf32Tflops <= 0 ||
      model.copyGBs <= 0)
    return true;
  auto a = mm.getLhs().getType().getShape();
  auto c = mm.getResult().getType().getShape();
  size_t r = a.size();
  double batch = r == 3 ? a[0] : 1, m = c[r - 2], n = c[r - 1], k = a[r - 1];
  double flops = 2 * batch * m * n * k;
  double bytes = 4 * batch * (m * k + k * n + m * n);
  double layoutBytes = 0;
  if (!mm.getTransposeB())
    layoutBytes += 2 * 4 * batch * k * n;
  bool aligned = kAligned(mm);
  if (!aligned) {
    double kp = llvm::alignTo(a[r - 1], kRowPad);
    layoutBytes += 4 * batch * m * (k + kp);
    if (mm.getTransposeB())
      layoutBytes += 4 * batch * n * (k + kp);
  }
  if (layoutBytes == 0)
    return true; // the faster unit on operands as they are
  double bw = model.copyGBs * 1e9;
  double wgmma = std::max(flops / (model.wgmmaTf32Tflops * 1e12), bytes / bw) +
                 layoutBytes / bw;
  double mmaRate = !aligned && model.mmaSyncTf32UnalignedTflops > 0
                       ? model.mmaSyncTf32UnalignedTflops
                       : model.mmaSyncTf32Tflops;
  double mmaSync = std::max(flops / (mmaRate * 1e12), bytes / bw);
  return wgmma < mmaSync;
}

/// Whether wgmma reads this matmul's B as it is, row-major: the kernel then
/// computes C^T = B^T A^T with B^T's fragments loaded into registers
/// (MatmulWgmma.cpp, "Row-major B"), and no transpose runs in front. Its
/// tiles come by TMA, whose rows must be 16-byte aligned: N % 4 == 0 (and
/// K % 4 == 0 for A's; where K % 4 != 0 both operands take the padded,
/// K-major path below, since the padded A's K would not match B's rows).
/// Where this does not hold (or with a hand-set copy = "cp_async"), a
/// row-major B is transposed K-major in front of the kernel as before.
bool wgmmaReadsRowMajorB(MatmulOp mm, const ConfigFields &f) {
  return !mm.getTransposeB() && kAligned(mm) &&
         mm.getResult().getType().getShape().back() % 4 == 0 &&
         f.copy != CopyKind::cp_async;
}

/// The gemv form of a matmul (at most 16 rows or columns, batch 1), or
/// nullopt.
std::optional<GemvForm> gemvFormOf(MatmulOp mm) {
  auto c = mm.getResult().getType().getShape();
  if (c.size() != 2)
    return std::nullopt;
  return gemvForm(c[0], c[1], mm.getTransposeB());
}

/// A matmul with at most 16 rows or columns is bound by the bytes of its
/// other operand (the weight) at every precision: the gemv kernel streams
/// it in fp32 FMAs, as fast as the bytes allow and more accurate than the
/// tf32 tensor cores, whose 16- to 64-row tiles would compute rows that do
/// not exist (docs/shapes.md, "Precision where it buys nothing").
/// By default only where the H200 measured it ahead (2026-12-01 shape suite
/// run 3, against the best cuBLAS route in the same call): M <= 4 (1 x 4096
/// x 4096 0.80x against mma.sync's 0.65x, 3 x 4093 x 4099 0.81x against
/// 0.53x, 4 x 28672 x 8192 0.88x against 0.87x) and N = 1 (8192 x 1 x 8192
/// with a row-major B 0.91x against 0.20x). With 8 or 16 rows wgmma was
/// faster (8 x 4096 x 4096: 0.64x against 0.89x) and with 8 columns much
/// faster (4096 x 8 x 4096 at 0.11x), so those keep the tensor cores unless
/// gemv is set by hand.
constexpr int64_t kGemvDefaultRows = 4;
bool gemvByDefault(MatmulOp mm) {
  auto form = gemvFormOf(mm);
  if (!form)
    return false;
  auto c = mm.getResult().getType().getShape();
  return *form == GemvForm::WeightA ? c[1] == 1 : c[0] <= kGemvDefaultRows;
}

MmaUnit unitFor(MatmulOp mm, const ConfigFields &f, const TargetModel &model) {
  if (gemvByDefault(mm))
    return MmaUnit::gemv;
  switch (mm.getPrecision()) {
  case Precision::ieee:
    return MmaUnit::ffma;
  case Precision::tf32:
    return model.hasWgmma &&
                   (wgmmaReadsRowMajorB(mm, f) || wgmmaPays(mm, model))
               ? MmaUnit::wgmma_tf32
               : MmaUnit::mma_sync_tf32;
  case Precision::tf32x3:
    return MmaUnit::mma_sync_tf32x3;
  case Precision::native: // 16-bit operands: select16
    break;
  }
  llvm_unreachable("unknown precision");
}

/// A 16-bit matmul (precision native): the gemv kernel for at most 16 rows
/// or columns (by default as for f32), else wgmma in its type on sm_90a and
/// mma.sync m16n8k16 in its type elsewhere (sm_80, sm_90; by hand on sm_90a
/// too). Its operands get what both kernels read: rows of 16-byte pitch (a
/// kb.pad where K % 8 != 0), and B as it is where N % 8 == 0, else B^T (a
/// kb.transpose in front).
LogicalResult select16(Operation &op, MatmulOp mm, ConfigFields &f,
                       const TargetModel &model,
                       DenseMap<Value, Value> &transposed,
                       DenseMap<Value, Value> &padded) {
  Type t = mm.getLhs().getType().getElementType();
  MmaUnit wgmmaUnit = t.isBF16() ? MmaUnit::wgmma_bf16 : MmaUnit::wgmma_f16;
  MmaUnit syncUnit =
      t.isBF16() ? MmaUnit::mma_sync_bf16 : MmaUnit::mma_sync_f16;
  MmaUnit unit = model.hasWgmma ? wgmmaUnit : syncUnit;
  // At most 16 rows or columns: the gemv kernel, as for f32 (by default
  // where gemvByDefault says; by hand up to 16), with 16-bit loads and f32
  // FMAs, on any chip; it reads both forms of B as they are.
  if (f.mma == MmaUnit::gemv || (!f.mma && gemvByDefault(mm))) {
    if (!gemvFormOf(mm)) {
      auto c = mm.getResult().getType().getShape();
      return op.emitOpError()
             << "config asks for mma \"gemv\", which computes matmuls of "
                "batch 1 with at most "
             << kGemvMaxFew << " rows or columns; this one is "
             << (c.size() == 3
                     ? "batched"
                     : std::to_string(c[0]) + " x " + std::to_string(c[1]));
    }
    if (f.operands == OperandOrder::ba)
      return op.emitOpError()
             << "config asks for operands = \"ba\", which only the wgmma "
                "kernel has (mma = \""
             << stringifyMmaUnit(wgmmaUnit) << "\"); this matmul gets mma = "
             << "\"gemv\"";
    if (!f.mma && model.hasWgmma) {
      auto c = mm.getResult().getType().getShape();
      op.emitRemark() << "gemv, not " << stringifyMmaUnit(unit) << ": " << c[0]
                      << " x " << c[1]
                      << " outputs are bound by the weight's bytes; f32 FMAs "
                         "stream it in 16 bits (wgmma tiles of 64 rows would "
                         "compute rows that do not exist)";
    }
    f.mma = MmaUnit::gemv;
    return success();
  }
  if (f.mma && *f.mma != wgmmaUnit && *f.mma != syncUnit)
    return op.emitOpError()
           << "config asks for mma \"" << nameOf(f.mma) << "\", but a " << t
           << " matmul computes on \"" << stringifyMmaUnit(wgmmaUnit)
           << "\" (sm_90a) or \"" << stringifyMmaUnit(syncUnit)
           << "\" (tensor cores in " << t << ", f32 accumulation)";
  if (f.mma == wgmmaUnit && !model.hasWgmma)
    return op.emitOpError()
           << "config asks for mma \"" << nameOf(f.mma)
           << "\", which needs chip sm_90a; the target is " << model.chip
           << " (mma = \"" << stringifyMmaUnit(syncUnit) << "\" runs there)";
  if (f.mma)
    unit = *f.mma;
  f.mma = unit;
  if (unit == syncUnit) {
    // The fields only the wgmma kernel has, refused with their location.
    std::string asks;
    if (f.copy == CopyKind::tma)
      asks = "copy = \"tma\"";
    else if (f.store == StoreKind::tma)
      asks = "store = \"tma\"";
    else if (f.grid)
      asks = "grid = " + std::to_string(f.grid) + " (a persistent grid)";
    else if (f.cluster > 1)
      asks = "cluster = " + std::to_string(f.cluster);
    else if (f.reduce == ReduceKind::cluster || f.reduce == ReduceKind::stream)
      asks = "reduce = \"" + nameOf(f.reduce).str() + "\"";
    else if (f.operands == OperandOrder::ba)
      asks = "operands = \"ba\"";
    if (!asks.empty())
      return op.emitOpError()
             << "config asks for " << asks << ", which only the wgmma kernel "
             << "has (chip sm_90a); this matmul gets mma = \""
             << stringifyMmaUnit(unit) << "\"";
  }
  // A row-major B with 16-byte rows (N % 8 == 0) and K % 8 == 0 (A's rows
  // too) is read as it is, MN-major (MatmulWgmma.cpp); else B^T in front.
  bool asItIs = !mm.getTransposeB() && kAligned(mm) &&
                mm.getResult().getType().getShape().back() % 8 == 0;
  // operands = "ba" (MatmulWgmma.cpp): B's tile as wgmma's A operand,
  // read MN-major as it lies in a row-major B.
  if (f.operands == OperandOrder::ba && !asItIs)
    return op.emitOpError()
           << "config asks for operands = \"ba\", which reads a row-major B "
              "as it is: "
           << (mm.getTransposeB()
                   ? std::string("B is transposed (transpose_b)")
                   : "N = " +
                         std::to_string(
                             mm.getResult().getType().getShape().back()) +
                         " and K = " +
                         std::to_string(
                             mm.getLhs().getType().getShape().back()) +
                         " must be multiples of 8");
  if (asItIs)
    return success();
  Blocker blocker = prepareWgmmaOperands(&op, mm, transposed, padded);
  if (blocker == Blocker::BReadTwice)
    return op.emitOpError()
           << "a " << t << " matmul reads B^T (K-major) so far, and B is a "
              "fusion input that other ops of the fusion also read, so it "
              "cannot be transposed in front of it";
  if (blocker == Blocker::AReadTwice)
    return op.emitOpError() << "a " << t << " matmul reads rows 16-byte "
                            << "pitched; " << kAReadTwice;
  return success();
}

struct SelectMmaPass : public kb::impl::KBSelectMmaBase<SelectMmaPass> {
  using Base::Base;
  void runOnOperation() override {
    auto model = getTargetModel(chip);
    if (failed(model)) {
      getOperation().emitError() << "kb-select-mma: unknown chip '" << chip
                                 << "' (known: sm_80, sm_90, sm_90a)";
      return signalPassFailure();
    }
    std::optional<TuningDb> db;
    if (!tuningDb.empty()) {
      std::string error;
      auto loaded = loadTuningDb(tuningDb, error);
      if (failed(loaded)) {
        getOperation().emitError() << "kb-select-mma: " << error;
        return signalPassFailure();
      }
      db = std::move(*loaded);
    }
    // makeBKMajor and padRows insert ops: walk a snapshot of the kernels.
    DenseMap<Value, Value> transposed, padded;
    SmallVector<Operation *> kernels;
    for (Operation &op : getOperation().getBody().getOps())
      kernels.push_back(&op);
    for (Operation *opp : kernels) {
      Operation &op = *opp;
      MatmulOp mm = getKernelMatmul(&op);
      if (!mm)
        continue;
      if (db && failed(applyTuningEntry(&op, *db, model->chip)))
        return signalPassFailure();
      ConfigFields f = ConfigFields::from(getConfig(&op));
      // operands = "ba": the 16-bit wgmma kernel's operands swapped.
      if (f.operands == OperandOrder::ba &&
          mm.getPrecision() != Precision::native) {
        op.emitOpError() << "config asks for operands = \"ba\" (the "
                            "swapped 16-bit wgmma), which only a 16-bit "
                            "matmul has; this one is "
                         << mm.getLhs().getType().getElementType();
        return signalPassFailure();
      }
      if (mm.getPrecision() == Precision::native) {
        if (failed(select16(op, mm, f, *model, transposed, padded)))
          return signalPassFailure();
        setConfig(&op, f.get(&getContext()));
        continue;
      }
      bool autoMma = !f.mma;
      if (!f.mma) {
        f.mma = unitFor(mm, f, *model);
        // Where wgmma would be the unit of a tf32 matmul and is not, a
        // remark says why (a silent fallback cost 4x once: issue #19).
        bool wgmmaChip =
            model->hasWgmma && mm.getPrecision() == Precision::tf32;
        Blocker blocker =
            f.mma == MmaUnit::wgmma_tf32 && !wgmmaReadsRowMajorB(mm, f)
                ? prepareWgmmaOperands(&op, mm, transposed, padded)
                : Blocker::None;
        if (blocker != Blocker::None) {
          f.mma = MmaUnit::mma_sync_tf32;
          if (blocker == Blocker::BReadTwice)
            op.emitRemark() << "mma.sync, not wgmma: B is a fusion input that "
                               "other ops of the fusion also read, so it "
                               "cannot be transposed K-major in front of it";
          else
            op.emitRemark() << "mma.sync, not wgmma: " << kAReadTwice;
        } else if (wgmmaChip && f.mma == MmaUnit::gemv) {
          auto c = mm.getResult().getType().getShape();
          op.emitRemark() << "gemv, not wgmma: " << c[0] << " x " << c[1]
                          << " outputs are bound by the weight's bytes; fp32 "
                             "FMAs stream it (tf32 tiles of 16-64 rows would "
                             "compute rows that do not exist)";
        } else if (wgmmaChip && f.mma != MmaUnit::wgmma_tf32) {
          if (!kAligned(mm))
            op.emitRemark()
                << "mma.sync, not wgmma: this matmul is bound by its bytes, "
                   "and the pad of A's rows (K = "
                << mm.getLhs().getType().getShape().back()
                << " is not a multiple of 4)"
                << (mm.getTransposeB() ? " and of B^T's"
                                       : " and the transpose of B")
                << " that wgmma needs would move more than it saves "
                   "(kb-select-mma's model)";
          else
            op.emitRemark()
                << "mma.sync, not wgmma: this matmul is bound by its bytes, "
                   "and the transpose a row-major B needs for wgmma would "
                   "move B twice more (kb-select-mma's model)";
        }
      } else if (f.mma == MmaUnit::gemv) {
        // fp32 FMAs: every precision is at least met. The shape is what
        // it cannot take.
        auto c = mm.getResult().getType().getShape();
        if (!gemvFormOf(mm)) {
          op.emitOpError() << "config asks for mma \"gemv\", which computes "
                              "matmuls of batch 1 with at most "
                           << kGemvMaxFew << " rows or columns; this one is "
                           << (c.size() == 3 ? "batched"
                                             : std::to_string(c[0]) + " x " +
                                                   std::to_string(c[1]));
          return signalPassFailure();
        }
      } else if (mm.getPrecision() == Precision::ieee &&
                 f.mma != MmaUnit::ffma) {
        op.emitOpError()
            << "config asks for mma \"" << nameOf(f.mma)
            << "\", but precision(ieee) needs fp32 arithmetic "
               "(\"ffma\" or \"gemv\"): tensor-core tf32 would lose precision";
        return signalPassFailure();
      } else if (mm.getPrecision() == Precision::tf32x3 &&
                 (f.mma == MmaUnit::mma_sync_tf32 ||
                  f.mma == MmaUnit::wgmma_tf32)) {
        // A unit less precise than the program asks for would compute plain
        // tf32 (about 1e-3 relative) where tf32x3 promises near fp32.
        op.emitOpError() << "config asks for mma \"" << nameOf(f.mma)
                         << "\", but precision(tf32x3) needs the three-pass "
                            "split (\"mma_sync_tf32x3\") or fp32 (\"ffma\"): \""
                         << nameOf(f.mma) << "\" computes plain tf32";
        return signalPassFailure();
      } else if (f.mma == MmaUnit::wgmma_tf32) {
        if (!model->hasWgmma) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which needs "
                              "chip sm_90a; the target is "
                           << model->chip;
          return signalPassFailure();
        }
        if (mm.getPrecision() != Precision::tf32) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which "
                              "computes precision(tf32) only";
          return signalPassFailure();
        }
        Blocker blocker =
            wgmmaReadsRowMajorB(mm, f)
                ? Blocker::None
                : prepareWgmmaOperands(&op, mm, transposed, padded);
        if (blocker == Blocker::BReadTwice) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which reads "
                              "a row-major B only when N % 4 == 0 and the "
                              "copies are TMA's, else K-major; B is a fusion "
                              "input that other ops of the fusion also read, "
                              "so it cannot be transposed in front of it";
          return signalPassFailure();
        }
        if (blocker == Blocker::AReadTwice) {
          op.emitOpError() << "config asks for mma \"wgmma_tf32\", which "
                              "reads rows 16-byte pitched; "
                           << kAReadTwice;
          return signalPassFailure();
        }
      }
      // Fields that belong to the wgmma kernel only (MatmulWgmma.cpp): a
      // hand-written copy = "tma", store = "tma" (the TMA-store epilogue),
      // a persistent grid, or a cluster of blocks sharing B^T's tile, on a
      // matmul that does not get wgmma, is refused here with its location,
      // before a config the attribute's verifier would refuse is built
      // (kb-compile's fuzzer found the asserts that did:
      // fuzz/regressions/kb-compile/).
      bool wgmma = f.mma == MmaUnit::wgmma_tf32;
      auto wgmmaOnly = [&](const std::string &asks, bool saysGets) {
        op.emitOpError() << "config asks for " << asks
                         << ", which only the wgmma kernel has (mma = "
                            "\"wgmma_tf32\", chip sm_90a, precision(tf32)); "
                            "this matmul "
                         << (saysGets ? "gets" : "asks for") << " mma = \""
                         << nameOf(f.mma) << "\"";
        signalPassFailure();
      };
      if (!wgmma && f.copy == CopyKind::tma)
        return wgmmaOnly("copy = \"tma\"", /*saysGets=*/true);
      if (!wgmma && f.store == StoreKind::tma)
        return wgmmaOnly("store = \"tma\"", autoMma);
      if (!wgmma && f.grid)
        return wgmmaOnly("grid = " + std::to_string(f.grid) +
                             " (a persistent grid)",
                         autoMma);
      if (!wgmma && f.cluster > 1)
        return wgmmaOnly("cluster = " + std::to_string(f.cluster) +
                             " (blocks sharing B^T's tile)",
                         autoMma);
      if (!wgmma && f.reduce == ReduceKind::cluster)
        return wgmmaOnly("reduce = \"cluster\" (split-K summed in a "
                         "cluster of two blocks)",
                         autoMma);
      if (!wgmma && f.reduce == ReduceKind::stream)
        return wgmmaOnly("reduce = \"stream\" (stream-K)", autoMma);
      setConfig(&op, f.get(&getContext()));
    }
  }
};

} // namespace
