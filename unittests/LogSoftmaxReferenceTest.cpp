//===- LogSoftmaxReferenceTest.cpp - the kb.log_softmax reference ---------===//
//
// kb.log_softmax's float64 reference against values worked by hand, and its
// bound against a kernel emulated on the CPU the way SoftmaxRegisters.cpp
// computes (fp32: the row max, d = x - max, exp(d) off by up to 2 ulp,
// per-thread sums then a tree, logf, d - log(sum)): the emulated kernel
// passes; the same kernel broken (log(exp(d) / sum), which underflows to
// -inf on wide rows; a sum that misses one term) fails.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kb::runtime;

namespace {

ProgramOp logSoftmaxOp() {
  ProgramOp op;
  op.op = "kb.log_softmax";
  op.toBuffer = true;
  return op;
}

enum class Broken { None, LogOfSoftmax, MissingTerm };

/// One row as the registers kernel computes it: `threads` threads of
/// `vec` lanes; exp off by `expUlps` ulp (ex2.approx and the scaling).
std::vector<float> kernelRow(const std::vector<float> &x, int threads, int vec,
                             Broken broken) {
  int n = static_cast<int>(x.size()), span = threads * vec;
  float m = -INFINITY;
  for (float v : x)
    m = std::max(m, v);
  std::vector<float> d(n), e(n);
  for (int j = 0; j < n; ++j) {
    d[j] = x[j] - m;
    float ex = std::exp(d[j]);
    e[j] = ex * (1.0f + ((j % 3) - 1) * 2.4e-7f); // within 2 ulp
  }
  std::vector<float> part(threads, 0.0f);
  for (int t = 0; t < threads; ++t)
    for (int k = 0; k * span < n; ++k)
      for (int l = 0; l < vec; ++l) {
        int col = k * span + t * vec + l;
        if (col < n && !(broken == Broken::MissingTerm && col == n - 1))
          part[t] += e[col];
      }
  for (size_t w = 1; w < part.size(); w *= 2)
    for (size_t i = 0; i + w < part.size(); i += 2 * w)
      part[i] += part[i + w];
  float s = part[0], logS = std::log(s);
  std::vector<float> y(n);
  for (int j = 0; j < n; ++j)
    y[j] = broken == Broken::LogOfSoftmax ? std::log(e[j] * (1.0f / s))
                                          : d[j] - logS;
  return y;
}

Comparison check(int rows, int n, double sigma, int threads, Broken broken,
                 unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, static_cast<float>(sigma));
  HostTensor hx;
  hx.shape = {rows, n};
  std::vector<float> got;
  for (int r = 0; r < rows; ++r) {
    std::vector<float> row(n);
    for (float &v : row) {
      v = dist(gen);
      hx.data.push_back(v);
    }
    auto y = kernelRow(row, threads, 4, broken);
    got.insert(got.end(), y.begin(), y.end());
  }
  HostTensor ref = evalOp(logSoftmaxOp(), {&hx});
  return compareWithBound(got.data(), ref.data.data(), ref.err, rows * n);
}

} // namespace

TEST(LogSoftmaxReference, ByHand) {
  HostTensor x;
  x.shape = {2, 3};
  x.data = {0, 0, 0, 1, 2, 3};
  HostTensor y = evalOp(logSoftmaxOp(), {&x});
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_NEAR(y.data[0], -std::log(3.0), 1e-15);
  double lse = 3 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1);
  EXPECT_NEAR(y.data[3], 1 - lse, 1e-15);
  EXPECT_NEAR(y.data[5], 3 - lse, 1e-15);
  for (double e : y.err) {
    EXPECT_GT(e, 0);
    EXPECT_LT(e, 1e-5);
  }
}

TEST(LogSoftmaxReference, EmulatedKernelPassesBrokenFails) {
  for (auto [n, threads] : {std::pair{1024, 64}, std::pair{8192, 512}}) {
    Comparison ok = check(4, n, 1.0, threads, Broken::None, 7 + n);
    EXPECT_TRUE(ok.ok()) << n << ": " << ok.bad << " outside, worst "
                         << ok.maxErrOverBound << " of its bound";
    EXPECT_LT(ok.maxErrOverBound, 1.0);
    // Logits of spread 40: exp(d) underflows for the smallest elements.
    Comparison wide = check(4, n, 40.0, threads, Broken::None, 11 + n);
    EXPECT_TRUE(wide.ok()) << n << " sigma 40: worst " << wide.maxErrOverBound;
    EXPECT_FALSE(check(4, n, 40.0, threads, Broken::LogOfSoftmax, 11 + n).ok())
        << n << ": log(softmax) passed on logits of spread 40";
    EXPECT_FALSE(check(4, n, 1.0, threads, Broken::MissingTerm, 7 + n).ok())
        << n << ": a sum missing one term passed";
  }
}
