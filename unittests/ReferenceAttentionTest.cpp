//===- ReferenceAttentionTest.cpp - kb.attention's float64 reference ------===//
//
// evalAttentionRows against a naive attention written here (scores, a
// softmax, a product, each in the plainest form) on small shapes, with a
// shared and a per-head mask, causal (Sq != Sk, top-left aligned), the
// log-sum-exp, sampled rows and fully masked rows; and its bound against a
// kernel emulated in f32 (and in bf16 with P rounded before P V): the
// emulation passes, the same emulation with the scale off by 5% or the
// causal mask aligned bottom-right fails.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/DType.h"
#include "kb/Runtime/Reference.h"
#include "kb/Runtime/ReferenceAttention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kb::runtime;

namespace {

std::vector<double> randomValues(size_t n, unsigned seed, DType t,
                                 double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> x(n);
  for (double &v : x)
    v = roundTo(t, static_cast<float>(d(gen)));
  return x;
}

struct Operands {
  std::vector<double> q, k, v, mask;
};

Operands operands(const AttentionProblem &p, bool withMask, unsigned seed) {
  Operands o;
  o.q = randomValues(p.batch * p.sq * p.d, seed, p.type);
  o.k = randomValues(p.batch * p.sk * p.d, seed + 1, p.type);
  o.v = randomValues(p.batch * p.sk * p.dv, seed + 2, p.type);
  if (withMask)
    o.mask = randomValues((p.maskPerHead ? p.batch : 1) * p.sq * p.sk,
                          seed + 3, p.type, -2, 2);
  return o;
}

/// out and lse the plain way: a [Sq, Sk] score matrix per head, masked,
/// each row's softmax, then the product. `bottomRight`: a causal mask
/// aligned to the last key instead (the wrong one for kb).
void naive(const AttentionProblem &p, const Operands &o,
           std::vector<double> &out, std::vector<double> &lse,
           bool bottomRight = false) {
  out.assign(p.batch * p.sq * p.dv, 0);
  lse.assign(p.batch * p.sq, 0);
  for (int64_t b = 0; b < p.batch; ++b) {
    std::vector<std::vector<double>> s(p.sq, std::vector<double>(p.sk));
    for (int64_t i = 0; i < p.sq; ++i)
      for (int64_t j = 0; j < p.sk; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < p.d; ++t)
          dot += o.q[(b * p.sq + i) * p.d + t] * o.k[(b * p.sk + j) * p.d + t];
        s[i][j] = p.scale * dot;
        if (!o.mask.empty())
          s[i][j] += o.mask[((p.maskPerHead ? b * p.sq : 0) + i) * p.sk + j];
        int64_t limit = bottomRight ? i + (p.sk - p.sq) : i;
        if (p.causal && j > limit)
          s[i][j] = -INFINITY;
      }
    for (int64_t i = 0; i < p.sq; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < p.sk; ++j)
        sum += std::exp(s[i][j]);
      lse[b * p.sq + i] = std::log(sum);
      for (int64_t c = 0; c < p.dv; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < p.sk; ++j)
          acc += std::exp(s[i][j]) / sum * o.v[(b * p.sk + j) * p.dv + c];
        out[(b * p.sq + i) * p.dv + c] = acc;
      }
    }
  }
}

AttentionRows reference(const AttentionProblem &p, const Operands &o,
                        std::vector<int64_t> rows = {}) {
  return evalAttentionRows(p, o.q.data(), o.k.data(), o.v.data(),
                           o.mask.empty() ? nullptr : o.mask.data(), rows);
}

AttentionProblem problem(bool causal, int64_t sq = 5, int64_t sk = 7) {
  AttentionProblem p;
  p.batch = 3, p.sq = sq, p.sk = sk, p.d = 4, p.dv = 3;
  p.scale = 0.5, p.causal = causal;
  return p;
}

void expectNear(const std::vector<double> &a, const std::vector<double> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_NEAR(a[i], b[i], 1e-12 * (1 + std::fabs(b[i]))) << "at " << i;
}

TEST(ReferenceAttention, MatchesNaive) {
  for (bool causal : {false, true})
    for (int maskKind : {0, 1, 2}) {
      AttentionProblem p = problem(causal);
      p.maskPerHead = maskKind == 2;
      Operands o = operands(p, maskKind != 0, 11);
      std::vector<double> out, lse;
      naive(p, o, out, lse);
      AttentionRows r = reference(p, o);
      SCOPED_TRACE("causal " + std::to_string(causal) + " mask " +
                   std::to_string(maskKind));
      expectNear(r.out, out);
      expectNear(r.lse, lse);
    }
}

// bthd ([B, S, H, D] operands and output): the BHTD problem's rows with
// q, k, v permuted into [B, S, H, D]; output row r at outputRow(r). B = 2,
// H = 3 (batch 6), Sq 5, Sk 7, causal, a per-head mask (kept [B, H, Sq, Sk]).
TEST(ReferenceAttention, BthdIsThePermutedProblem) {
  AttentionProblem p = problem(true);
  p.batch = 6, p.maskPerHead = true;
  Operands o = operands(p, true, 21);
  AttentionRows bhtd = reference(p, o);
  AttentionProblem t = p;
  t.bthd = true, t.heads = 3;
  auto permute = [&](const std::vector<double> &x, int64_t len, int64_t w) {
    std::vector<double> y(x.size());
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t i = 0; i < len; ++i)
        for (int64_t c = 0; c < w; ++c)
          y[t.rowOf(b, i, len) * w + c] = x[(b * len + i) * w + c];
    return y;
  };
  Operands ot = o;
  ot.q = permute(o.q, p.sq, p.d);
  ot.k = permute(o.k, p.sk, p.d);
  ot.v = permute(o.v, p.sk, p.dv);
  EXPECT_NE(ot.k, o.k);
  AttentionRows r = reference(t, ot);
  expectNear(r.out, bhtd.out);
  expectNear(r.lse, bhtd.lse);
  // Head 4 = (batch 1, head 1), query 2: q row (1 x 5 + 2) x 3 + 1 = 22.
  EXPECT_EQ(t.outputRow(4 * p.sq + 2), 22);
  // Read as BHTD the permuted operands give another answer.
  AttentionRows wrong = reference(p, ot);
  EXPECT_GT(std::fabs(wrong.out[p.dv] - bhtd.out[p.dv]), 1e-6);
}

TEST(ReferenceAttention, CausalIsTopLeftWithMoreKeys) {
  // Sq = 4, Sk = 9: query 0 sees key 0 only, so its output is v's row 0.
  AttentionProblem p = problem(true, 4, 9);
  Operands o = operands(p, false, 5);
  AttentionRows r = reference(p, o, {0, p.sq}); // head 0 and 1, query 0
  for (int64_t c = 0; c < p.dv; ++c) {
    EXPECT_DOUBLE_EQ(r.out[c], o.v[c]);
    EXPECT_DOUBLE_EQ(r.out[p.dv + c], o.v[p.sk * p.dv + c]);
  }
  std::vector<double> out, lse, outBr, lseBr;
  naive(p, o, out, lse);
  naive(p, o, outBr, lseBr, /*bottomRight=*/true);
  expectNear(reference(p, o).out, out);
  EXPECT_GT(std::fabs(out[0] - outBr[0]), 1e-3);
}

TEST(ReferenceAttention, SampledRowsAreTheFullRows) {
  AttentionProblem p = problem(false);
  Operands o = operands(p, true, 3);
  AttentionRows all = reference(p, o);
  AttentionRows some = reference(p, o, {14, 0, 7});
  ASSERT_EQ(some.out.size(), 3u * p.dv);
  int64_t idx[] = {14, 0, 7};
  for (int s = 0; s < 3; ++s) {
    for (int64_t c = 0; c < p.dv; ++c)
      EXPECT_EQ(some.out[s * p.dv + c], all.out[idx[s] * p.dv + c]);
    EXPECT_EQ(some.lse[s], all.lse[idx[s]]);
  }
  EXPECT_THROW(reference(p, o, {p.batch * p.sq}), std::runtime_error);
  p.precision = "tf32x3";
  EXPECT_THROW(reference(p, o), std::runtime_error);
}

TEST(ReferenceAttention, FullyMaskedRowIsZero) {
  AttentionProblem p = problem(false);
  Operands o = operands(p, true, 9);
  for (int64_t j = 0; j < p.sk; ++j)
    o.mask[2 * p.sk + j] = -INFINITY; // query 2 of every head
  AttentionRows r = reference(p, o);
  for (int64_t b = 0; b < p.batch; ++b) {
    int64_t row = b * p.sq + 2;
    for (int64_t c = 0; c < p.dv; ++c)
      EXPECT_EQ(r.out[row * p.dv + c], 0.0);
    EXPECT_EQ(r.lse[row], -INFINITY);
    EXPECT_TRUE(std::isinf(r.lseErr[row]));
    EXPECT_TRUE(std::isfinite(r.lse[row + 1]));
  }
}

TEST(ReferenceAttention, ScoresPastFp32AreUnbounded) {
  // Inputs around 1e20 (a fuzzed init of 2026-12-07 drew 9e18): q.k sums past
  // FLT_MAX, which an fp32 kernel may turn into inf and NaN; float64 does
  // not overflow, so those rows' bounds are infinite (not checked), and a
  // row of ordinary size in the same problem keeps its finite bound.
  AttentionProblem p = problem(false);
  Operands o = operands(p, false, 4);
  for (int64_t t = 0; t < p.d; ++t)
    o.q[t] *= 1e20; // query row 0 of head 0
  for (double &x : o.k)
    x *= 1e20;
  AttentionRows r = reference(p, o, {0, 1});
  for (int64_t c = 0; c < p.dv; ++c) {
    EXPECT_TRUE(std::isinf(r.outErr[c])) << c;
    EXPECT_TRUE(std::isfinite(r.outErr[p.dv + c])) << c;
  }
  EXPECT_TRUE(std::isinf(r.lseErr[0]));
  EXPECT_TRUE(std::isfinite(r.lseErr[1]));
}

/// A kernel's arithmetic emulated on the CPU: scores, the softmax and the
/// product in float (P rounded to the operand type for a 16-bit problem),
/// the output rounded to it. `scaleBy` scales the scale (a broken kernel).
std::vector<float> emulate(const AttentionProblem &p, const Operands &o,
                           float scaleBy = 1, bool bottomRight = false) {
  std::vector<float> out(p.batch * p.sq * p.dv);
  std::vector<float> s(p.sk);
  for (int64_t r = 0; r < p.batch * p.sq; ++r) {
    int64_t b = r / p.sq, i = r % p.sq;
    float m = -INFINITY;
    for (int64_t j = 0; j < p.sk; ++j) {
      float dot = 0;
      for (int64_t t = 0; t < p.d; ++t)
        dot += float(o.q[r * p.d + t]) * float(o.k[(b * p.sk + j) * p.d + t]);
      s[j] = float(p.scale) * scaleBy * dot;
      if (!o.mask.empty())
        s[j] += float(o.mask[((p.maskPerHead ? b * p.sq : 0) + i) * p.sk + j]);
      if (p.causal && j > (bottomRight ? i + p.sk - p.sq : i))
        s[j] = -INFINITY;
      m = std::max(m, s[j]);
    }
    float l = 0;
    for (int64_t j = 0; j < p.sk; ++j)
      l += (s[j] = std::exp(s[j] - m));
    for (int64_t c = 0; c < p.dv; ++c) {
      float acc = 0;
      for (int64_t j = 0; j < p.sk; ++j)
        acc += roundFloatTo(p.type, s[j]) * float(o.v[(b * p.sk + j) * p.dv + c]);
      out[r * p.dv + c] = roundFloatTo(p.type, acc / l);
    }
  }
  return out;
}

Comparison check(const AttentionProblem &p, const Operands &o,
                 const std::vector<float> &got) {
  AttentionRows r = reference(p, o);
  return compareWithBound(got.data(), r.out.data(), r.outErr,
                          static_cast<int64_t>(got.size()));
}

TEST(ReferenceAttention, BoundPassesAnEmulatedKernelAndFailsABrokenOne) {
  for (DType t : {DType::F32, DType::BF16, DType::F16}) {
    AttentionProblem p = problem(true, 40, 100);
    p.d = 64, p.dv = 64, p.scale = 0.125, p.type = t;
    p.precision = t == DType::F32 ? "ieee" : "native";
    Operands o = operands(p, true, 21);
    SCOPED_TRACE(dtypeName(t));
    Comparison ok = check(p, o, emulate(p, o));
    EXPECT_TRUE(ok.ok()) << ok.bad << " bad, max err/bound "
                         << ok.maxErrOverBound;
    EXPECT_FALSE(check(p, o, emulate(p, o, 1.05f)).ok());
    EXPECT_FALSE(check(p, o, emulate(p, o, 1, /*bottomRight=*/true)).ok());
  }
}

} // namespace
