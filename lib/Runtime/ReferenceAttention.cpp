//===- ReferenceAttention.cpp - float64 reference for kb.attention --------===//
//
// Each query row in float64: the scores s_j = scale q.k_j (+ mask, -inf
// above the diagonal when causal), p = softmax(s), out = p V, lse = log sum
// exp s_j; and the bound on an f32 kernel's error derived in
// docs/tolerances.md ("Attention"): the error of each score (its q.k
// product in the op's precision, K = D, then the scale and the mask add)
// moves each p_j by at most twice the row's largest score error relative,
// plus exp's and the row sum's rounding; the P V product (K = Sk) adds its
// own matmul bound, the rounding of P to the operand type for the second
// product, and the rescaling of the running sums of an online softmax.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/ReferenceAttention.h"
#include "kb/Runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kb::runtime {

namespace {

constexpr double u = kFp32Unit;

/// The relative rounding of P to the second product's operand type where
/// matmulErrorBound does not count it: f16 and bf16 round to nearest (their
/// unit); tf32's rounding of both operands is in its bound, and ieee keeps
/// P in f32.
double probabilityRounding(const AttentionProblem &p) {
  if (p.precision == "ieee" || p.precision == "tf32")
    return 0;
  if (p.precision == "native")
    return unitRoundoff(p.type);
  throw std::runtime_error("kb.attention: no reference for precision '" +
                           p.precision + "'");
}

/// The error-bound statistics of one dot product of `n` terms, in the order
/// a kernel adds them (as matmulEntry gathers them for a matmul).
template <typename Term> MatmulEntry dotEntry(int64_t n, Term term) {
  MatmulEntry e;
  for (int64_t t = 0; t < n; ++t) {
    double prod = term(t);
    e.value += prod;
    e.absSum += std::fabs(prod);
    e.prodNorm2 += prod * prod;
    e.partial1 += std::fabs(e.value);
    if (t % 8 == 7 || t == n - 1)
      e.partial8 += std::fabs(e.value);
  }
  e.prodNorm2 = std::sqrt(e.prodNorm2);
  return e;
}

} // namespace

AttentionRows evalAttentionRows(const AttentionProblem &p, const double *q,
                                const double *k, const double *v,
                                const double *mask,
                                std::vector<int64_t> rows) {
  const int64_t total = p.batch * p.sq;
  if (rows.empty())
    for (int64_t r = 0; r < total; ++r)
      rows.push_back(r);
  // The second product's precision: a 16-bit P V is "native"; f32 keeps the
  // op's. Its bound (matmulErrorBound) counts V's rounding to tf32 and the
  // accumulation; P's rounding is added apart (probabilityRounding).
  const std::string pvPrecision = p.precision;
  const double pRound = probabilityRounding(p);
  // The running sums of an online softmax are rescaled once a key block (at
  // least 16 keys): each rescale rounds once.
  const double rescales = std::ceil(double(p.sk) / 16) + 2;
  // The row sum l = sum exp(s_j - m) in f32: at most Sk rounded adds.
  const double rowSum = double(p.sk) * u;

  AttentionRows res;
  res.rows = rows;
  res.out.assign(rows.size() * p.dv, 0.0);
  res.outErr.assign(rows.size() * p.dv, 0.0);
  res.lse.assign(rows.size(), 0.0);
  res.lseErr.assign(rows.size(), 0.0);
  std::vector<double> s(p.sk), se(p.sk), pr(p.sk);
  for (size_t ri = 0; ri < rows.size(); ++ri) {
    int64_t r = rows[ri];
    if (r < 0 || r >= total)
      throw std::runtime_error("kb.attention: row " + std::to_string(r) +
                               " is out of range (" + std::to_string(total) +
                               " rows)");
    int64_t b = r / p.sq, i = r % p.sq;
    const double *qr = q + p.outputRow(r) * p.d;
    // Key j of head b: row rowOf(b, j, Sk) of k and v (b Sk + j, or with
    // bthd (bb Sk + j) H + h).
    auto kRow = [&](int64_t j) { return k + p.rowOf(b, j, p.sk) * p.d; };
    auto vRow = [&](int64_t j) { return v + p.rowOf(b, j, p.sk) * p.dv; };
    const double *mr =
        mask ? mask + ((p.maskPerHead ? b * p.sq : 0) + i) * p.sk : nullptr;
    double m = -INFINITY, sMax = 0, delta = 0;
    // A score whose products' magnitudes sum past FLT_MAX may overflow in
    // the kernel's fp32 (inf - inf: NaN) where float64 does not: the row
    // cannot be checked (its bounds are infinite, counted as unbounded).
    bool overflows = false;
    for (int64_t j = 0; j < p.sk; ++j) {
      if (p.causal && j > i) {
        s[j] = -INFINITY;
        continue;
      }
      MatmulEntry e =
          dotEntry(p.d, [&, kr = kRow(j)](int64_t t) { return qr[t] * kr[t]; });
      double qk = p.scale * e.value;
      overflows |= std::max(1.0, std::fabs(p.scale)) * e.absSum > kFltMax;
      // The q.k product's bound, scaled; the scale multiply and the mask add
      // round once each.
      double err = std::fabs(p.scale) * matmulErrorBound(e, p.d, p.precision) +
                   u * std::fabs(qk);
      s[j] = qk;
      if (mr) {
        s[j] += mr[j];
        err += u * std::fabs(s[j]);
      }
      if (std::isfinite(s[j])) {
        se[j] = err;
        delta = std::max(delta, err);
        sMax = std::max(sMax, std::fabs(s[j]));
      }
      m = std::max(m, s[j]);
    }
    double *o = &res.out[ri * p.dv], *oe = &res.outErr[ri * p.dv];
    if (!(m > -INFINITY)) {
      // Every key masked: kb.attention gives 0 (PyTorch: NaN); the lse is
      // -inf and not checked.
      res.lse[ri] = -INFINITY;
      res.lseErr[ri] = INFINITY;
      continue;
    }
    double l = 0;
    for (int64_t j = 0; j < p.sk; ++j) {
      pr[j] = std::isfinite(s[j]) ? std::exp(s[j] - m) : 0.0;
      l += pr[j];
    }
    for (int64_t j = 0; j < p.sk; ++j)
      pr[j] /= l;
    res.lse[ri] = m + std::log(l);
    // exp2 of (s - m) log2(e) in f32: the argument's rounding (relative to
    // |s| and |m|) and ex2.approx's 2 ulp.
    double expRel = (2 * (sMax + std::fabs(m)) + 4) * u;
    // A score error of at most delta moves p_j by at most 2 delta relative
    // (its own exp and the row sum's).
    double pRel = 2 * delta + expRel + rowSum + u;
    res.lseErr[ri] = delta + expRel + rowSum + u * std::fabs(res.lse[ri]);
    for (int64_t c = 0; c < p.dv; ++c) {
      MatmulEntry e =
          dotEntry(p.sk, [&](int64_t j) { return pr[j] * vRow(j)[c]; });
      double w = e.absSum; // sum_j p_j |v_jc|
      double err = (pRel + pRound + rescales * u) * w +
                   matmulErrorBound(e, p.sk, pvPrecision);
      o[c] = e.value;
      oe[c] = overflows ? INFINITY : withOutputRounding(err, e.value, p.type);
    }
    if (overflows)
      res.lseErr[ri] = INFINITY;
  }
  return res;
}

} // namespace kb::runtime
