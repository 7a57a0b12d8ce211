//===- Reference16Test.cpp - references and bounds of 16-bit results ------===//
//
// A 16-bit result is the f32 value rounded once at its store (or at a
// kb.convert): the tolerance grows by the output type's rounding
// (roundToType, withOutputRounding; docs/tolerances.md). Checked on a bf16
// output's bound, on kb.convert, on a tiny bf16 matmul (exact 16-bit
// operands, fp32 accumulation emulated, bf16 store) and a tiny bf16
// softmax: the kernel-like result passes, one a few ulps off fails.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kb::runtime;

namespace {
ProgramOp opOf(const std::string &name, DType t, bool toBuffer) {
  ProgramOp op;
  op.op = name;
  op.attrs = nlohmann::json::object();
  op.dtype = t;
  op.toBuffer = toBuffer;
  return op;
}

/// `x` moved by `ulps` steps of bf16 (x is a bf16 value).
float bf16Step(float x, int ulps) {
  uint16_t h = floatToBf16(x);
  return bf16ToFloat(uint16_t(h + (x >= 0 ? ulps : -ulps)));
}
} // namespace

TEST(Reference16, Bf16OutputBoundIncludesItsRounding) {
  HostTensor t;
  t.shape = {3};
  t.data = {1.0 + 0x1p-10, -300.0, 0x1p-140};
  t.err = {1e-6, 1e-4, 0};
  roundToType(t, DType::BF16);
  // Inexact: value kept, bound e + 2^-8 (|x| + e) + 2^-134.
  EXPECT_EQ(t.data[0], 1.0 + 0x1p-10);
  EXPECT_DOUBLE_EQ(t.err[0], 1e-6 + 0x1p-8 * (1.0 + 0x1p-10 + 1e-6) + 0x1p-134);
  EXPECT_DOUBLE_EQ(t.err[1], 1e-4 + 0x1p-8 * (300.0 + 1e-4) + 0x1p-134);
  // Exact: rounded as the kernel rounds it, still exact (2^-140 is a bf16
  // subnormal of 2^-133 steps: to 0).
  EXPECT_EQ(t.data[2], 0.0);
  EXPECT_EQ(t.err[2], 0.0);
  // A bf16 kernel's store of 1 + 2^-10 (+ its f32 error) is 1: within the
  // bound; 1 + 2^-7, a whole ulp further, is not within the bare f32 one.
  EXPECT_LE(std::fabs(1.0 - t.data[0]), kBoundSafety * t.err[0]);
  EXPECT_GT(std::fabs(1.0 - t.data[0]), kBoundSafety * 1e-6);
  // Past the largest finite bf16: unbounded.
  HostTensor big;
  big.shape = {1};
  big.data = {3.39e38};
  big.err = {1e36};
  roundToType(big, DType::BF16);
  EXPECT_TRUE(std::isinf(big.err[0]));
  // f32 results are not touched.
  HostTensor f;
  f.shape = {1};
  f.data = {1.0 + 0x1p-10};
  f.err = {1e-7};
  roundToType(f, DType::F32);
  EXPECT_EQ(f.err[0], 1e-7);
  EXPECT_DOUBLE_EQ(withOutputRounding(1e-3, 2.0, DType::F16),
                   1e-3 + 0x1p-11 * (2.0 + 1e-3) + 0x1p-25);
  EXPECT_EQ(withOutputRounding(1e-3, 2.0, DType::F32), 1e-3);
}

TEST(Reference16, ConvertRoundsExactInputsExactly) {
  HostTensor x;
  x.shape = {4};
  x.data = {1.0 + 3 * 0x1p-8, 0.1, 65520.0, -2.0};
  HostTensor b = evalOp(opOf("kb.convert", DType::BF16, true), {&x});
  EXPECT_EQ(b.data[0], 1.0 + 0x1p-6); // tie to even
  EXPECT_EQ(b.data[1], roundTo(DType::BF16, 0.1));
  EXPECT_EQ(b.errAt(1), 0.0);
  HostTensor h = evalOp(opOf("kb.convert", DType::F16, false), {&x});
  EXPECT_TRUE(std::isinf(h.data[2]));
  EXPECT_TRUE(std::isinf(h.errAt(2))); // overflow: not compared
  EXPECT_EQ(h.data[3], -2.0);
  // A bf16 relu stored: exact, rounding nothing; kept in registers (not a
  // buffer): f32, unrounded.
  HostTensor r = evalOp(opOf("kb.relu", DType::BF16, true), {&b});
  EXPECT_EQ(r.data[0], 1.0 + 0x1p-6);
  EXPECT_EQ(r.errAt(0), 0.0);
  HostTensor g = evalOp(opOf("kb.gelu", DType::BF16, false), {&b});
  HostTensor gs = evalOp(opOf("kb.gelu", DType::BF16, true), {&b});
  EXPECT_EQ(g.data[0], gs.data[0]);
  EXPECT_GT(gs.err[0], 100 * g.err[0]);
}

TEST(Reference16, TinyBf16Matmul) {
  // C (3 x 5, bf16) = A (3 x 32) B (32 x 5), operands of bf16 values.
  const int64_t m = 3, n = 5, k = 32;
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0, 1);
  std::vector<float> a(m * k), b(k * n);
  for (float &x : a)
    x = roundFloatTo(DType::BF16, d(rng));
  for (float &x : b)
    x = roundFloatTo(DType::BF16, d(rng));
  int within = 0, off = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      MatmulEntry e = matmulEntry(a.data(), b.data(), m, n, k, false, 0, i, j);
      // A tensor-core kernel: exact bf16 products, fp32 sums of 16 per
      // step, then one bf16 rounding at the store.
      float acc = 0;
      for (int64_t p0 = 0; p0 < k; p0 += 16) {
        float part = 0;
        for (int64_t p = p0; p < p0 + 16; ++p)
          part += a[i * k + p] * b[p * n + j];
        acc += part;
      }
      float got = roundFloatTo(DType::BF16, acc);
      double bound = withOutputRounding(matmulErrorBound(e, k, "native"),
                                        e.value, DType::BF16);
      within += std::fabs(got - e.value) <= kBoundSafety * bound;
      // Three bf16 ulps off: a wrong kernel (a dropped product would be
      // further still).
      off += std::fabs(bf16Step(got, 3) - e.value) <= kBoundSafety * bound;
      // Without the output's rounding the bf16 result would not fit.
      EXPECT_LT(kBoundSafety * matmulErrorBound(e, k, "native"),
                0x1p-9 * std::fabs(e.value) + 1e-30);
    }
  EXPECT_EQ(within, m * n);
  EXPECT_EQ(off, 0);
  // cuBLAS's own bound (any order) is at least the kernel's.
  MatmulEntry e = matmulEntry(a.data(), b.data(), m, n, k, false, 0, 1, 2);
  EXPECT_GE(matmulErrorBound(e, k, "cublas-native"),
            matmulErrorBound(e, k, "native"));
}

TEST(Reference16, TinyBf16Softmax) {
  // Two rows of 8 bf16 values; f32 arithmetic, a bf16 store.
  HostTensor x;
  x.shape = {2, 8};
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0, 2);
  for (int i = 0; i < 16; ++i)
    x.data.push_back(roundFloatTo(DType::BF16, d(rng)));
  HostTensor ref = evalOp(opOf("kb.softmax", DType::BF16, true), {&x});
  std::vector<float> got(16), bad(16);
  for (int r = 0; r < 2; ++r) {
    float mx = -INFINITY, sum = 0;
    for (int j = 0; j < 8; ++j)
      mx = std::max(mx, float(x.data[r * 8 + j]));
    for (int j = 0; j < 8; ++j)
      sum += std::exp(float(x.data[r * 8 + j]) - mx);
    for (int j = 0; j < 8; ++j) {
      float y = std::exp(float(x.data[r * 8 + j]) - mx) / sum;
      got[r * 8 + j] = roundFloatTo(DType::BF16, y);
      bad[r * 8 + j] = bf16Step(got[r * 8 + j], 3);
    }
  }
  Comparison ok = compareWithBound(got.data(), ref.data.data(), ref.err, 16);
  EXPECT_TRUE(ok.ok()) << ok.maxErrOverBound;
  EXPECT_EQ(ok.unbounded, 0);
  Comparison wrong =
      compareWithBound(bad.data(), ref.data.data(), ref.err, 16);
  EXPECT_EQ(wrong.bad, 16);
  // The same f32 softmax stored in f32 would fail the bf16 values: the
  // rounding is what the bound adds.
  HostTensor f32 = evalOp(opOf("kb.softmax", DType::F32, true), {&x});
  EXPECT_FALSE(
      compareWithBound(got.data(), f32.data.data(), f32.err, 16).ok());
}
