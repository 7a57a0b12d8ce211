//===- Reference.h - float64 references for kb's ops ------------*- C++ -*-===//
//
// The trusted side of every check kb-run makes: each kb op evaluated in
// float64 on the CPU together with a bound on the error an fp32 kernel may
// make (propagated through the ops), a sampled float64 matmul with an error
// bound that grows with K as the precision's does, and the comparison of a
// GPU result against a reference within those bounds. docs/tolerances.md
// derives every bound.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_REFERENCE_H
#define KB_RUNTIME_REFERENCE_H

#include "kb/Runtime/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kb::runtime {

/// fp32's unit roundoff, u = 2^-24: a correctly rounded fp32 operation
/// errs by at most u relative.
constexpr double kFp32Unit = 0x1p-24;
/// FLT_MAX as a double: past it an fp32 kernel's value may be inf.
constexpr double kFltMax = 3.4028234663852886e38;
/// The factor every derived bound is multiplied by before it is compared
/// (the first-order terms the derivations drop, and a margin).
constexpr double kBoundSafety = 2.0;

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  /// Per element, a bound on |fp32 kernel's value - data| when the kernel
  /// computes the same ops in fp32 from the same fp32 inputs; empty means
  /// exact (an input). +inf marks an element whose fp32 value may have
  /// overflowed or is otherwise unbounded: it cannot be checked.
  std::vector<double> err;
  int64_t lastDim() const { return shape.back(); }
  double errAt(size_t i) const { return err.empty() ? 0.0 : err[i]; }
};

HostTensor fromFloats(const std::vector<int64_t> &shape, const float *data);

/// Evaluates one elementwise, softmax or convert op in float64 (matmul:
/// evalMatmul), its result rounded as roundToType says when it is 16-bit
/// and stored (op.toBuffer) or converted,
/// and the error bound of its fp32 evaluation from inputs that carry their
/// own bounds (HostTensor::err), following the derivations of
/// docs/tolerances.md. `indexOffset` is the row-major index of the inputs'
/// first element in the whole tensor (dropout's mask depends on it) when
/// evaluating a slice. Throws std::runtime_error for an op it does not know.
HostTensor evalOp(const ProgramOp &op,
                  const std::vector<const HostTensor *> &in,
                  int64_t indexOffset = 0);

/// The most rounded adds a term of a row sum passes through in kb's row
/// kernels (RowNorm.cpp): at most 64 values a thread added in order, then
/// a warp's 5 shuffle levels and 5 more over at most 32 warps (74), with a
/// margin. The row ops' bounds (ReferenceRows.cpp) rest on it.
constexpr double kRowSumDepth = 80;
/// The same for one kernel: rows of `n` values over `threads` threads of
/// `vector` values (RowNorm.cpp's layout): its values a thread, then 5
/// shuffle levels, and 5 more where there is more than one warp (the online
/// strategy's loops add a thread's values in order too: not capped);
/// kRowSumDepth where threads or vector is not positive.
double rowSumDepth(int64_t n, int64_t threads, int64_t vector);
/// The same for a kb.reduce over a non-last axis of length `len` split over
/// `slices` (ColumnReduce.cpp, #kb.config block[0]), and for a whole-tensor
/// kb.reduce of `total` elements on `grid` blocks of `threads` threads of
/// `vector` values (WholeReduce.cpp). Not capped at kRowSumDepth: these
/// kernels' sums are as deep as their layout makes them. The full length
/// where the layout is not known.
double columnSumDepth(int64_t len, int64_t slices);
double wholeSumDepth(int64_t total, int64_t grid, int64_t threads,
                     int64_t vector);
/// Whether `name` is a row op (kb.layer_norm, kb.rms_norm, kb.reduce).
bool isRowOp(const std::string &name);
/// evalOp's part for the row ops, before any 16-bit rounding of the result
/// (ReferenceRows.cpp; docs/tolerances.md derives the bounds).
HostTensor evalRowOp(const ProgramOp &op,
                     const std::vector<const HostTensor *> &in);

/// Rounds a result to a 16-bit `type` (f32 and i32: unchanged), as a kernel
/// does once at its store or at a kb.convert: an exact element (bound 0) is
/// rounded as the kernel rounds it (to nearest even) and stays exact; any
/// other keeps its float64 value and its bound grows by the rounding,
/// u (|x| + e) plus half a subnormal step (docs/tolerances.md), infinite
/// where |x| + e reaches the type's largest finite value.
void roundToType(HostTensor &t, DType type);

/// `bound` on |c - value| grown by the rounding of the result to a 16-bit
/// `out` (roundToType's rule); f32: `bound`.
double withOutputRounding(double bound, double value, DType out);

/// C = A x B in float64 (optionally batched, B transposed).
/// With transB, b's rows (of B^T) may be longer than K (a padded leading
/// dimension): the first K of each are read.
HostTensor evalMatmul(const HostTensor &a, const HostTensor &b, bool transB);

/// One entry C[batch][i][j] of a matmul of f32 operands, in float64, and the
/// sum over k of |a_ik * b_kj| (the scale its rounding error is measured on).
/// `ldbT`: the row length of B^T when transB (at least K; 0 means K).
/// Also what the error bounds need: the 2-norm of the products, and the sum
/// of |partial sum| over a sequential accumulation in steps of 1 (FFMA) and
/// of 8 (one m16n8k8 / wgmma k8 instruction per step).
struct MatmulEntry {
  double value = 0, absSum = 0, prodNorm2 = 0, partial1 = 0, partial8 = 0;
};
MatmulEntry matmulEntry(const float *a, const float *b, int64_t m, int64_t n,
                        int64_t k, bool transB, int64_t batch, int64_t i,
                        int64_t j, int64_t ldbT = 0);

struct Comparison {
  int64_t checked = 0, bad = 0, firstBad = -1;
  /// Elements whose bound is infinite (fp32 may overflow there): not checked.
  int64_t unbounded = 0;
  double maxAbsErr = 0, maxRelErr = 0, got = 0, want = 0;
  /// The largest |got - ref| / allowed over the checked elements (the share
  /// of its tolerance the worst element uses; > 1 fails).
  double maxErrOverBound = 0;
  double allowed = 0; // the tolerance of the first bad element
  bool ok() const { return bad == 0 && checked > 0; }
};

/// |got - ref| <= atol + rtol * |ref| elementwise; NaN never passes.
Comparison compare(const float *got, const double *ref, int64_t n, double rtol,
                   double atol);

/// |got - ref| <= kBoundSafety * err elementwise (err from evalOp); NaN never
/// passes; elements with an infinite bound are counted as unbounded and not
/// checked. An empty `err` means every bound is 0 (exact).
Comparison compareWithBound(const float *got, const double *ref,
                            const std::vector<double> &err, int64_t n);

/// Folds the comparison of a slice (whose first element is `offset`) into
/// `all`.
void mergeComparison(Comparison &all, const Comparison &part, int64_t offset);

/// The largest |row sum - 1| of a softmax output (rows of `rowLen`).
double maxRowSumError(const float *got, int64_t n, int64_t rowLen);

/// A bound on |c - ref| for one entry of a matmul of `k` terms computed in
/// `precision` ("ieee", "tf32", "tf32x3"; "cublas-ieee" and "cublas-tf32"
/// for cuBLAS's own, whose order and operand rounding are unknown): operand
/// rounding (a bias term plus a 6-sigma term on independent roundings) and fp32
/// accumulation (the sum of |partial sums| in the kernel's step, with
/// truncating tensor-core adds, and a tree term for split or tree orders).
/// docs/tolerances.md derives it. "native" (f16/bf16 operands, fp32
/// accumulation) and "cublas-native" bound the 16-bit matmuls before their
/// output is rounded (roundToType adds that). Not multiplied by
/// kBoundSafety. Throws for an unknown precision.
double matmulErrorBound(const MatmulEntry &e, int64_t k,
                        const std::string &precision);

} // namespace kb::runtime

#endif
