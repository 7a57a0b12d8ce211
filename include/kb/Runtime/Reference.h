//===- Reference.h - float64 references for kb's ops ------------*- C++ -*-===//
//
// The trusted side of every check kb-run makes: each kb op evaluated in
// float64 on the CPU, a sampled float64 matmul, and the comparison of a GPU
// result against a reference with per-precision tolerances.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_REFERENCE_H
#define KB_RUNTIME_REFERENCE_H

#include "kb/Runtime/Manifest.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kb::runtime {

struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
  int64_t lastDim() const { return shape.back(); }
};

HostTensor fromFloats(const std::vector<int64_t> &shape, const float *data);

/// Evaluates one elementwise or softmax op in float64 (matmul: evalMatmul).
/// `indexOffset` is the row-major index of the inputs' first element in the
/// whole tensor (dropout's mask depends on it) when evaluating a slice.
/// Throws std::runtime_error for an op it does not know.
HostTensor evalOp(const ProgramOp &op, const std::vector<const HostTensor *> &in,
                  int64_t indexOffset = 0);

/// C = A x B in float64 (optionally batched, B transposed).
/// With transB, b's rows (of B^T) may be longer than K (a padded leading
/// dimension): the first K of each are read.
HostTensor evalMatmul(const HostTensor &a, const HostTensor &b, bool transB);

/// One entry C[batch][i][j] of a matmul of f32 operands, in float64, and the
/// sum over k of |a_ik * b_kj| (the scale its rounding error is measured on).
/// `ldbT`: the row length of B^T when transB (at least K; 0 means K).
struct MatmulEntry {
  double value, absSum;
};
MatmulEntry matmulEntry(const float *a, const float *b, int64_t m, int64_t n,
                        int64_t k, bool transB, int64_t batch, int64_t i,
                        int64_t j, int64_t ldbT = 0);

struct Comparison {
  int64_t checked = 0, bad = 0, firstBad = -1;
  double maxAbsErr = 0, maxRelErr = 0, got = 0, want = 0;
  bool ok() const { return bad == 0 && checked > 0; }
};

/// |got - ref| <= atol + rtol * |ref| elementwise; NaN never passes.
Comparison compare(const float *got, const double *ref, int64_t n, double rtol,
                   double atol);

/// The largest |row sum - 1| of a softmax output (rows of `rowLen`).
double maxRowSumError(const float *got, int64_t n, int64_t rowLen);

/// Tolerances for a matmul precision, on |c - ref| / sum|a||b|.
double matmulTolerance(const std::string &precision);

} // namespace kb::runtime

#endif
