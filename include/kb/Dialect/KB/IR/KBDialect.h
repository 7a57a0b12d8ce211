//===- KBDialect.h - the kb dialect -----------------------------*- C++ -*-===//
//
// Declares the kb dialect, its enums, the #kb.config attribute, the
// elementwise interface and the ops. Include this one header to use kb IR.
//
//===----------------------------------------------------------------------===//

#ifndef KB_DIALECT_KB_IR_KBDIALECT_H
#define KB_DIALECT_KB_IR_KBDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "kb/Transforms/StreamK.h"

namespace mlir::kb {
/// Parses `[a, b, ...]` for #kb.config's size lists.
FailureOr<SmallVector<int64_t>> parseSizes(AsmParser &parser);
/// Prints `[a, b, ...]`.
void printSizes(AsmPrinter &printer, ArrayRef<int64_t> sizes);
/// Parses a #kb.config count (`threads`, `stages`, ...): a positive integer.
FailureOr<int64_t> parseCount(AsmParser &parser, StringRef field);

/// The most elements a kb tensor may have: 2^36 f32 values (256 GiB), more
/// than any GPU holds. Bounding every shape bounds the arithmetic of the
/// passes and the lowering (element counts, grids, byte sizes) far below
/// int64's range.
constexpr int64_t kMaxTensorElements = int64_t(1) << 36;
/// The largest size a #kb.config size list (block, warp, thread, pad) may
/// hold: products of three of them stay far below int64's range.
constexpr int64_t kMaxConfigSize = int64_t(1) << 20;
/// The registers a thread has (ptxas's limit).
constexpr int64_t kMaxRegistersPerThread = 255;

/// The element count of a static shape, or failure if it overflows int64.
FailureOr<int64_t> checkedNumElements(ArrayRef<int64_t> shape);
/// Why `type` is not a tensor kb supports (static shape, rank >= 1, at least
/// one and at most kMaxTensorElements elements, f32, f16 or bf16 when `f32` is
/// set), or
/// an empty string when it is one.
std::string unsupportedTensorReason(Type type, bool f32 = true);
} // namespace mlir::kb

#include "kb/Dialect/KB/IR/KBEnums.h.inc"
#include "kb/Dialect/KB/IR/KBOpsDialect.h.inc"

namespace mlir::kb {
/// The wgmma kernel's units (MatmulWgmma.cpp): tf32 operands, or 16-bit ones.
inline bool isWgmma(std::optional<MmaUnit> m) {
  return m == MmaUnit::wgmma_tf32 || m == MmaUnit::wgmma_f16 ||
         m == MmaUnit::wgmma_bf16;
}
/// The 16-bit wgmma units (f16 or bf16 operands, f32 accumulation).
inline bool isWgmma16(std::optional<MmaUnit> m) {
  return m == MmaUnit::wgmma_f16 || m == MmaUnit::wgmma_bf16;
}
/// Parses an enumerated #kb.config field written as a quoted string
/// (`mma = "ffma"`); an unknown value is an error, located at the string,
/// that names the field and lists the valid values.
template <typename E>
FailureOr<std::optional<E>> parseConfigEnum(AsmParser &parser,
                                            StringRef field) {
  SMLoc loc = parser.getCurrentLocation();
  std::string value;
  if (parser.parseString(&value))
    return failure();
  if (std::optional<E> e = symbolizeEnum<E>(value))
    return std::optional<E>(*e);
  SmallVector<StringRef> names;
  for (uint32_t i = 0; !stringifyEnum(static_cast<E>(i)).empty(); ++i)
    names.push_back(stringifyEnum(static_cast<E>(i)));
  InFlightDiagnostic diag = parser.emitError(loc)
                            << "#kb.config '" << field << "' must be ";
  for (size_t i = 0; i < names.size(); ++i)
    diag << (i == 0                  ? ""
             : i + 1 == names.size() ? " or "
                                     : ", ")
         << "\"" << names[i] << "\"";
  diag << ", got \"" << value << "\"";
  return failure();
}
/// Prints an enumerated #kb.config field as a quoted string.
template <typename E> void printConfigEnum(AsmPrinter &printer, E value) {
  printer << '"' << stringifyEnum(value) << '"';
}
/// The name of an optional enumerated field's value, "" when absent (for
/// diagnostics).
template <typename E> StringRef nameOf(std::optional<E> value) {
  return value ? stringifyEnum(*value) : StringRef();
}
/// The 16-bit mma.sync units (m16n8k16, f16 or bf16 operands, f32
/// accumulation).
inline bool isMmaSync16(std::optional<MmaUnit> unit) {
  return unit == MmaUnit::mma_sync_f16 || unit == MmaUnit::mma_sync_bf16;
}
/// Whether `unit` is one of the mma.sync units (tf32, tf32x3, f16, bf16).
inline bool isMmaSync(std::optional<MmaUnit> unit) {
  return unit == MmaUnit::mma_sync_tf32 || unit == MmaUnit::mma_sync_tf32x3 ||
         isMmaSync16(unit);
}
} // namespace mlir::kb

#define GET_ATTRDEF_CLASSES
#include "kb/Dialect/KB/IR/KBAttrs.h.inc"

#include "kb/Dialect/KB/IR/KBInterfaces.h.inc"

#define GET_OP_CLASSES
#include "kb/Dialect/KB/IR/KBOps.h.inc"

namespace mlir::kb {
/// The config attached to `op`, or null.
ConfigAttr getConfig(Operation *op);
/// Attaches `config` to `op` under the name "config".
void setConfig(Operation *op, ConfigAttr config);
/// Number of elements of a statically shaped tensor type.
int64_t numElements(Type type);
} // namespace mlir::kb

namespace mlir::kb {
/// A mutable copy of a #kb.config: read one, change fields, build a new one.
struct ConfigFields {
  SmallVector<int64_t> block, warp, thread, pad;
  int64_t threads = 0, vector = 0, stages = 0, cluster = 0, grid = 0,
          raster = 0, split = 0;
  std::optional<MmaUnit> mma;
  std::optional<SoftmaxStrategy> strategy;
  std::optional<CopyKind> copy;
  std::optional<StoreKind> store;
  std::optional<ReduceKind> reduce;
  std::optional<ScheduleKind> schedule;
  std::optional<OperandOrder> operands;

  static ConfigFields from(ConfigAttr attr);
  ConfigAttr get(MLIRContext *ctx) const;
};

/// Columns of a row that each of the `cluster` blocks of a split softmax
/// handles: the row divided evenly, rounded up to whole vectors (the last
/// block's part may be shorter).
inline int64_t splitPartLength(int64_t n, int64_t cluster, int64_t vector) {
  int64_t part = (n + cluster - 1) / cluster;
  return (part + vector - 1) / vector * vector;
}

/// Shared memory of one split_shared block: its part of the row, rounded up
/// to 16 bytes, plus one 16-byte chunk when rows that are not a multiple of
/// the vector are read as aligned chunks...
inline int64_t splitSharedPartBytes(int64_t n, int64_t cluster,
                                    int64_t vector) {
  int64_t bytes = (splitPartLength(n, cluster, vector) * 4 + 15) / 16 * 16;
  return bytes + (n % vector ? 16 : 0);
}
/// ...followed by the reduction scratch: two 32-float buffers (max, sum)
/// and the partial (max, sum) pair the cluster exchanges.
constexpr int64_t kSplitSharedScratchBytes = 2 * 128 + 16;
inline int64_t splitSharedBytes(int64_t n, int64_t cluster, int64_t vector) {
  return splitSharedPartBytes(n, cluster, vector) + kSplitSharedScratchBytes;
}

/// i32 words of a split_global softmax's workspace: a ticket counter, two
/// counters per row and a (max, sum) pair per block of each row (layout in
/// lib/Conversion/KBToGPU/SoftmaxGen.h, GlobalWorkspace).
inline int64_t splitGlobalWorkspaceWords(int64_t rows, int64_t blocksPerRow) {
  return 2 + 2 * rows + 2 * rows * blocksPerRow;
}

/// Shared memory of one wgmma_tf32 block: `stages` buffers of an A tile (bm
/// rows) and a B^T tile (bn rows), each row bk floats, plus 1 KB so that the
/// kernel can align the region to the 128-byte swizzle's 1024-byte period,
/// plus, when TMA copies the tiles, two 8-byte mbarriers per stage after them
/// (the stage is full; the stage is empty again).
constexpr int64_t kWgmmaAlignBytes = 1024;
/// `staging`: bytes after the mbarriers for an epilogue staged through
/// shared memory (wgmmaStagingBytes).
/// `elemBytes`: the operands' element size, 4 (tf32: BK = 32) or 2 (f16,
/// bf16: BK = 64); either way a row is 128 bytes.
inline int64_t wgmmaSharedBytes(int64_t bm, int64_t bn, int64_t bk,
                                int64_t stages, bool tma, int64_t staging = 0,
                                int64_t elemBytes = 4) {
  return stages * (bm + bn) * bk * elemBytes + kWgmmaAlignBytes +
         (tma ? 16 * stages : 0) + staging;
}
/// The persistent wgmma kernel with B K-major (transpose_b, TMA, a `grid`)
/// stages its epilogue through shared memory, 16 rows x 32 columns a
/// consumer warp at a time (2 KB each), to store whole 128-byte lines; N % 4
/// == 0 (16-byte stores), BN % 32 == 0, and only where the staging fits
/// beside the stages in a Hopper block's 227 KB (otherwise the epilogue
/// stores directly, as before: a config that fits without staging is never
/// refused for it). Its bytes, 0 where the kernel does not stage.
///
/// With store = "tma" (`tmaStore`) the bytes are instead those of the TMA
/// store's C buffer (wgmmaTmaStoreBytes), whether they fit or not (a config
/// that does not fit is refused, never silently stored another way).
constexpr int64_t kWgmmaMaxSharedBytes = 232448;
/// store = "tma": each consumer warpgroup stages its 64 rows of C in boxes of
/// 64 rows x 32 columns (8 KB, 128-byte swizzled like the operand tiles),
/// `kWgmmaStoreSlots` of them in turn; the buffer starts on the 1024 bytes
/// after the mbarriers (16 x stages bytes, at most 256), so that each box
/// starts on the swizzle's period.
constexpr int64_t kWgmmaStoreBoxRows = 64, kWgmmaStoreBoxCols = 32,
                  kWgmmaStoreSlots = 2;
/// A box's columns for C's element size: 128-byte rows (32 f32, 64 16-bit).
inline int64_t wgmmaStoreBoxCols(int64_t cElemBytes) {
  return 128 / cElemBytes;
}
inline int64_t wgmmaTmaStoreBytes(int64_t bm, int64_t stages) {
  return kWgmmaAlignBytes - 16 * stages +
         bm / 64 * kWgmmaStoreSlots * kWgmmaStoreBoxRows * kWgmmaStoreBoxCols *
             4;
}
/// The staged epilogue stores f32 (`cF32`); a 16-bit C is stored directly.
inline int64_t wgmmaStagingBytes(int64_t bm, int64_t bn, int64_t bk,
                                 int64_t stages, bool transB, bool tma,
                                 bool persistent, int64_t n,
                                 bool tmaStore = false, int64_t elemBytes = 4,
                                 bool cF32 = true) {
  if (tmaStore)
    return wgmmaTmaStoreBytes(bm, stages);
  int64_t bytes = bm / 16 * 2048;
  bool fits = wgmmaSharedBytes(bm, bn, bk, stages, tma, bytes, elemBytes) <=
              kWgmmaMaxSharedBytes;
  return transB && tma && persistent && n % 4 == 0 && bn % 32 == 0 && fits &&
                 cF32
             ? bytes
             : 0;
}

/// Threads of one wgmma_tf32 block: a warpgroup (128 threads) per 64 rows of
/// the tile, and with TMA copies one producer warp after them.
inline int64_t wgmmaThreads(int64_t bm, bool tma) {
  return bm / 64 * 128 + (tma ? 32 : 0);
}
/// The same for a matmul of a BM x BN tile: with B K-major (transpose_b) the
/// warpgroups split the tile's rows (A is wgmma's A operand); with a
/// row-major B they split its columns, because wgmma computes C^T = B^T A^T
/// there, with B^T's fragments loaded into registers (tf32 wgmma reads only
/// K-major operands from shared memory; MatmulWgmma.cpp).
/// With a row-major B and TMA the producer is a whole warpgroup (its first
/// lane issues the copies): `setmaxnreg` then moves its registers to the
/// consumers, which hold B^T's fragments besides the accumulators. With B^T
/// and two consumer warpgroups (BM = 128) a config may ask for that form
/// too (384 threads, wgmmaThreadsAllowed): ptxas gives a block of 288
/// threads the 168 registers of 384, and a producer warpgroup hands the
/// consumers 216, so no fused kernel spills in its epilogue; but it was not
/// faster (bench/results/2026-12-03-width call 2: the producer warp alone
/// 0.972-1.001 of its time on 8 nn.Linear programs, fused ones whose
/// 288-thread kernels spilled 136 bytes among them), so kb's default keeps
/// the warp.
inline int64_t wgmmaThreads(int64_t bm, int64_t bn, bool transposeB, bool tma) {
  if (transposeB)
    return wgmmaThreads(bm, tma);
  return wgmmaThreads(bn, /*tma=*/false) + (tma ? 128 : 0);
}
/// Whether the wgmma kernel runs a block of `threads`: wgmmaThreads' count,
/// or with B^T, TMA and BM = 128 a producer warpgroup (384 threads).
inline bool wgmmaThreadsAllowed(int64_t bm, int64_t bn, bool transposeB,
                                bool tma, int64_t threads) {
  return threads == wgmmaThreads(bm, bn, transposeB, tma) ||
         (transposeB && tma && bm == 128 && threads == 256 + 128);
}

/// Whether a wgmma matmul's consumer warpgroups split the tile's rows (A
/// is wgmma's A operand: B^T, or a 16-bit row-major B read MN-major as its
/// B operand) rather than its columns (the kernel computes C^T = B^T A^T:
/// an f32 row-major B, its B^T fragments from registers, or 16-bit operands
/// with operands = "ba", a row-major B's tile read MN-major as wgmma's A
/// operand): wgmmaThreads' `transposeB`.
inline bool wgmmaSplitsRows(bool transposeB, std::optional<MmaUnit> mma,
                            std::optional<OperandOrder> operands) {
  if (operands == OperandOrder::ba)
    return false;
  return transposeB || isWgmma16(mma);
}

/// A 16-bit row-major B, which wgmma reads as it lies (MN-major): its tile
/// of BK = 64 k rows x BN columns is TMA-copied in boxes of BK rows x the
/// widest of 64, 32 or 16 columns that divides BN (128, 64 or 32 bytes a
/// row, swizzled by as many bytes: the TMA map's and the wgmma
/// descriptors' swizzle), one after the other in shared memory. 0 where
/// none divides BN (refused).
inline int64_t wgmmaMnBoxCols(int64_t bn) {
  for (int64_t cols : {64, 32, 16})
    if (bn % cols == 0)
      return cols;
  return 0;
}

/// A wgmma matmul's `cluster` (MatmulWgmma.cpp): 2, 4 or 8 blocks of one
/// column of tiles sharing B's tile by TMA multicast.
inline bool isWgmmaClusterSize(int64_t cluster) {
  return cluster == 2 || cluster == 4 || cluster == 8;
}
/// What BN must be a multiple of for such a cluster: each block copies a
/// C-th of B's tile, BN / C rows of B^T starting on the 1024 bytes of the
/// 128-byte swizzle (8 rows), or BN / 32C of a row-major B's boxes of 32
/// columns (tf32; 64 columns for 16-bit operands, `half`: both are 128
/// bytes).
inline int64_t wgmmaClusterBnMultiple(bool transposeB, int64_t cluster,
                                      bool half = false) {
  return (transposeB ? 8 : half ? 64 : 32) * cluster;
}

/// The kind of kernel an op (or a kb.fusion) lowers to.
/// RowReduce: kb.layer_norm, kb.rms_norm and kb.reduce (one block a row).
/// Attention: kb.attention (never inside a kb.fusion).
enum class KernelKind {
  Elementwise,
  Softmax,
  Matmul,
  Transpose,
  Pad,
  RowReduce,
  Attention
};
/// The kernel kind of a top-level kb op, or std::nullopt for ops that are
/// not kernels (kb.yield).
std::optional<KernelKind> getKernelKind(Operation *op);
/// For a kb.fusion, the matmul, softmax or norm it is built around, if any.
Operation *getFusionAnchor(FusionOp fusion);
/// Whether `op` is a kb.rotary or a kb.fusion holding one (its kernel then
/// runs pairs of adjacent elements: vectors of whole pairs).
bool holdsRotary(Operation *op);
/// Gives a kb.fusion without a config the config written on an op inside
/// it (the anchor's; with no anchor, any op's, all such configs being
/// equal) and removes every config from the ops inside: kb-select-config
/// and the lowering read only the fusion's. A config that would be dropped
/// (on an op beside the anchor, or one that disagrees with another) is an
/// error naming the op, and the configs stay where they are.
LogicalResult adoptInnerConfig(FusionOp fusion);
/// The matmul a kernel op computes: the op itself, or a fusion's anchor.
MatmulOp getKernelMatmul(Operation *op);
/// The K of the problem a matmul computes: its lhs's last dimension, or,
/// where kb-select-mma padded A's rows (a kb.pad in front of the matmul or
/// of its fusion), the last dimension of the pad's input.
int64_t getMatmulLogicalK(MatmulOp mm);
} // namespace mlir::kb

#endif // KB_DIALECT_KB_IR_KBDIALECT_H
