//===- KernelGen.h - building kb kernels as gpu.func bodies -----*- C++ -*-===//
//
// The kernel generators that kb-lower-to-gpu calls, one per kernel kind, and
// the small IR-building helpers they share (index arithmetic, Philox, the
// scalar form of each elementwise op, block-wide reductions).
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_KBTOGPU_KERNELGEN_H
#define KB_CONVERSION_KBTOGPU_KERNELGEN_H

#include "kb/Conversion/Passes.h"
#include "mlir/IR/Builders.h"

#include <array>

namespace mlir::kb {

/// Launch geometry of a generated kernel.
struct LaunchInfo {
  std::array<int64_t, 3> grid{1, 1, 1};
  std::array<int64_t, 3> block{1, 1, 1};
  /// Thread-block cluster shape; {1, 1, 1}: launched without clusters.
  std::array<int64_t, 3> cluster{1, 1, 1};
  int64_t dynamicSharedBytes = 0;
};

/// A kernel to build: `op` is a top-level kb op or kb.fusion with its
/// #kb.config; `func` is an empty gpu.func whose arguments are the memrefs of
/// op's operands followed by the output memref.
struct KernelRequest {
  Operation *op;
  ConfigAttr config;
  gpu::GPUFuncOp func;
};

LogicalResult buildElementwiseKernel(const KernelRequest &req,
                                     LaunchInfo &info);
LogicalResult buildSoftmaxKernel(const KernelRequest &req, LaunchInfo &info);
LogicalResult buildMatmulKernel(const KernelRequest &req, LaunchInfo &info);
LogicalResult buildTransposeKernel(const KernelRequest &req, LaunchInfo &info);
LogicalResult buildPadKernel(const KernelRequest &req, LaunchInfo &info);
/// kb.layer_norm, kb.rms_norm, kb.reduce (RowNorm.cpp).
LogicalResult buildRowReduceKernel(const KernelRequest &req,
                                   LaunchInfo &info);
/// kb.reduce over a non-last axis (ColumnReduce.cpp).
LogicalResult buildColumnReduceKernel(const KernelRequest &req,
                                      LaunchInfo &info);
/// kb.reduce of the whole tensor, two stages in one launch
/// (WholeReduce.cpp); its i32 workspace holds wholeReduceWorkspaceWords.
LogicalResult buildWholeReduceKernel(const KernelRequest &req,
                                     LaunchInfo &info);
int64_t wholeReduceWorkspaceWords(int64_t grid);
/// kb.attention: the fused attention kernel (Attention.cpp).
LogicalResult buildAttentionKernel(const KernelRequest &req, LaunchInfo &info);

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// An arith.constant of index type.
Value cidx(OpBuilder &b, Location loc, int64_t v);
/// An empty asm statement that takes `floats` (f32 values; it emits no
/// instruction): everything they depend on is computed ahead of it, so LLVM
/// cannot sink each value's loads or arithmetic into the guarded branch of
/// its store, where ptxas would run them one at a time.
void pinValues(OpBuilder &b, Location loc, ValueRange floats);
/// An arith.constant of f32 type.
Value cf32(OpBuilder &b, Location loc, float v);
/// An arith.constant of i32 type.
Value ci32(OpBuilder &b, Location loc, uint32_t v);
/// An L2 cache policy (i64) that marks the lines it is used on first to go
/// (`createpolicy.fractional.L2::evict_first`, inline PTX), for data read
/// once: the gemv weight's loads, the wgmma copies of an operand one block
/// reads (docs/shapes.md, "Run 21" and "The operand read once").
Value evictFirstPolicy(OpBuilder &b, Location loc);
/// wgmma.mma_async m64nNk{K} with A from registers, which upstream's NVVM
/// op does not have: inline PTX (MatmulWgmmaMma.cpp), outputs tied to the
/// accumulators `acc` (N / 2 f32), A's four 32-bit registers `aRegs`, B's
/// shared-memory descriptor. `types`: the PTX type suffix after f32
/// ("tf32.tf32", "bf16.bf16", "f16.f16"); `k`: 8 (tf32) or 16; `transB`:
/// the 16-bit forms' B-transpose immediate (-1: none, tf32 has no such
/// operand). Returns the accumulators as a struct of N / 2 f32.
Value wgmmaRegAAsm(OpBuilder &b, Location loc, ArrayRef<Value> acc,
                   ArrayRef<Value> aRegs, Value descB, StringRef types,
                   int64_t k, int transB);

/// The four 32-bit words of Philox4x32-10 for counter (lo, hi, 0, 0) and key
/// (seed low word, seed high word). `lo` and `hi` are i32 values.
std::array<Value, 4> emitPhilox(OpBuilder &b, Location loc, Value lo, Value hi,
                                uint64_t seed);

/// The dropout keep-threshold on the top 24 bits of a Philox word: element
/// kept iff (word >> 8) >= threshold. Shared with kb-run's CPU reference.
uint32_t dropoutThreshold(float p);

/// A chain of elementwise ops in program order: kernel inputs (tensor values
/// standing for the kernel's memref arguments), the ops, and the result.
struct ElementwiseChain {
  SmallVector<Value> inputs;
  SmallVector<Operation *> ops;
  Value result;
  /// The chain of a lone elementwise op or of an elementwise-only kb.fusion.
  static ElementwiseChain of(Operation *op);
  /// The ops of `fusion` after `anchor` (its matmul/softmax), whose input
  /// is the anchor's result (the epilogue or prologue chain).
  static ElementwiseChain after(FusionOp fusion, Operation *anchor);
};

/// Emits the scalar form of `chain` for one element. `values` maps each of
/// the chain's inputs to its scalar for this element; `flatIndex` is the
/// element's row-major index (index type), used by dropout; `philox`, when
/// non-null, gives the 4 words already drawn for the element's group of 4
/// and `lane` its position in the group.
/// With `fast`, exp and division use the approximate hardware forms
/// (fastmath afn: __nv_fast_expf, div.approx), for compute-bound epilogues.
Value emitChainScalar(OpBuilder &b, Location loc, const ElementwiseChain &chain,
                      DenseMap<Value, Value> values, Value flatIndex,
                      const std::array<Value, 4> *philox, int lane,
                      bool fast = false);

/// Whether `chain` contains a kb.rotary (then it runs a pair of adjacent
/// elements at a time: emitChainPair).
bool chainHasRotary(const ElementwiseChain &chain);

/// Emits `chain` for the pair of adjacent elements (2k, 2k + 1 of the last
/// axis) that a kb.rotary in it rotates together: `values[l]` maps the
/// chain's inputs to element l's scalar, `flatIndex[l]` is its row-major
/// index (dropout's counter, one Philox draw an element). Every other op
/// runs once an element, as in emitChainScalar; a kb.rotary rotates the
/// two by its tables at the pair, which `table(rotary, table)` loads (an
/// f32 scalar, cos or sin at the pair's position and column).
std::array<Value, 2>
emitChainPair(OpBuilder &b, Location loc, const ElementwiseChain &chain,
              std::array<DenseMap<Value, Value>, 2> values,
              std::array<Value, 2> flatIndex,
              llvm::function_ref<Value(RotaryOp, Value)> table,
              bool fast = false);

/// The (position, column) of a kb.rotary's tables for the pair whose first
/// element is at `row` of the flattened leading axes (index) and `col` of
/// the last axis (even, index): (row mod P, (col mod head_dim) / 2).
std::pair<Value, Value> rotaryTableIndex(OpBuilder &b, Location loc,
                                         RotaryOp op, Value row, Value col);

/// The scalar form of one activation or simple math op of issue #45
/// (softplus ... maximum, ActivationScalar.cpp), or a null Value for any
/// other op. `get` maps an operand to its scalar; `fast` as above.
Value emitActivationScalar(OpBuilder &b, Location loc, Operation *op,
                           llvm::function_ref<Value(Value)> get, bool fast);

/// Whether `chain` contains a dropout.
bool chainHasDropout(const ElementwiseChain &chain);

/// Reduces `v` over the whole block (`threads` threads, a multiple of 32)
/// with `op` (ADD or MAXIMUMF), using warp shuffles and `scratch`, a
/// workgroup memref<32xf32>. Every thread gets the result. Starts with a
/// barrier-free warp step; contains one barrier.
Value emitBlockReduce(OpBuilder &b, Location loc, Value v,
                      gpu::AllReduceOperation op, int64_t threads,
                      Value scratch);

/// A 1-D view of a statically shaped memref.
Value flatten(OpBuilder &b, Location loc, Value memref);

} // namespace mlir::kb

#endif // KB_CONVERSION_KBTOGPU_KERNELGEN_H
