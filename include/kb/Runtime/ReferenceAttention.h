//===- ReferenceAttention.h - float64 reference for kb.attention -*- C++ -*-===//
//
// kb.attention evaluated in float64 on the CPU, query row by query row (so
// that a checker may sample rows of a large problem), with a bound on the
// error of a kernel that computes it in f32 (the products in the op's
// precision) from the same inputs. docs/tolerances.md derives the bound.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_REFERENCEATTENTION_H
#define KB_RUNTIME_REFERENCEATTENTION_H

#include "kb/Runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kb::runtime {

/// What one kb.attention computes: `batch` heads (the product of the leading
/// dimensions), each out[Sq, Dv] = softmax(scale q k^T + mask (-inf above
/// the diagonal when causal)) v, q [Sq, D], k [Sk, D], v [Sk, Dv], all
/// row-major and contiguous. The mask, when given, is [Sq, Sk] (shared by
/// every head) or [batch, Sq, Sk] (`maskPerHead`).
/// With `bthd` q, k, v (and the output) are [B, S, H, D] instead, `heads`
/// = H and `batch` = B H: head b = bb H + h's row i is row (bb S + i) H + h
/// (outputRow); the mask and the lse keep [B, H, Sq, ...].
struct AttentionProblem {
  int64_t batch = 1, heads = 1, sq = 0, sk = 0, d = 0, dv = 0;
  double scale = 1.0;
  bool causal = false, maskPerHead = false, bthd = false;
  /// The row of q (or of the output) that holds query row r = b Sq + i.
  int64_t outputRow(int64_t r) const { return rowOf(r / sq, r % sq, sq); }
  /// The row of head b's position i in an operand of `len` positions.
  int64_t rowOf(int64_t b, int64_t i, int64_t len) const {
    if (!bthd)
      return b * len + i;
    return ((b / heads) * len + i) * heads + b % heads;
  }
  /// The products' precision: "ieee" or "tf32" (f32 operands), "native"
  /// (16-bit).
  std::string precision = "tf32";
  /// The operands' and the output's element type.
  DType type = DType::F32;
};

/// The reference of some query rows: for each requested row r (a flat index
/// b * Sq + i), out[r * Dv + c] and its bound, the log-sum-exp (natural log
/// of the sum of exp of the row's scaled and masked scores) and its bound.
/// A row whose keys are all masked gives 0 (lse -inf, bound +inf: not
/// checked). The output's bound includes its rounding to `type` (as a
/// kernel's store rounds it); its value is the float64 one.
struct AttentionRows {
  std::vector<int64_t> rows;
  std::vector<double> out, outErr, lse, lseErr;
};

/// Evaluates the rows `rows` (all rows when empty). q, k, v and mask hold
/// the operands' values (16-bit ones widened exactly); mask may be null.
/// Throws std::runtime_error for a row out of range or an unknown precision.
AttentionRows evalAttentionRows(const AttentionProblem &p, const double *q,
                                const double *k, const double *v,
                                const double *mask,
                                std::vector<int64_t> rows = {});

} // namespace kb::runtime

#endif
