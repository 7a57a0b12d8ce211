//===- RowReferenceTest.cpp - layer_norm, rms_norm, reduce references -----===//
//
// The float64 references of the row ops against values worked by hand, and
// their bounds against kernels emulated on the CPU the way RowNorm.cpp
// computes (fp32 arithmetic, per-thread sums in order then a 32-way tree
// and another over the warps, two-pass variance, an rsqrt off by up to 2
// ulp, a bf16 store): the emulated kernel passes, and the same kernel
// broken (an unbiased variance, a weight left out, a one-pass variance on
// rows far from zero mean) fails.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/DType.h"
#include "kb/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace kb::runtime;

namespace {

ProgramOp rowOp(const std::string &name, nlohmann::json attrs,
                DType t = DType::F32, bool toBuffer = true) {
  ProgramOp op;
  op.op = name;
  op.attrs = attrs;
  op.dtype = t;
  op.toBuffer = toBuffer;
  return op;
}

HostTensor tensor(std::vector<int64_t> shape, std::vector<double> data) {
  HostTensor t;
  t.shape = shape;
  t.data = data;
  return t;
}

/// The kernel's block sum: thread t adds its lanes (columns t*vec + k*span
/// + l) in order, then the threads' partials are added in a tree of 32
/// lanes and again over the warps.
float blockSum(const std::vector<float> &terms, int threads, int vec) {
  int n = static_cast<int>(terms.size()), span = threads * vec;
  std::vector<float> part(threads, 0.0f);
  for (int t = 0; t < threads; ++t)
    for (int k = 0; k * span < n; ++k)
      for (int l = 0; l < vec; ++l) {
        int col = k * span + t * vec + l;
        if (col < n)
          part[t] += terms[col];
      }
  auto tree = [](std::vector<float> v) {
    for (size_t w = 1; w < v.size(); w *= 2)
      for (size_t i = 0; i + w < v.size(); i += 2 * w)
        v[i] += v[i + w];
    return v[0];
  };
  std::vector<float> warps;
  for (int w = 0; w < threads; w += 32)
    warps.push_back(tree(std::vector<float>(part.begin() + w,
                                            part.begin() + std::min(threads, w + 32))));
  return tree(warps);
}

/// rsqrtf off by `ulps` ulp (the hardware's is within 2).
float rsqrtOff(float a, int ulps) {
  float r = static_cast<float>(1 / std::sqrt(static_cast<double>(a)));
  for (int i = 0; i < ulps; ++i)
    r = std::nextafter(r, INFINITY);
  return r;
}

enum class Broken { None, Unbiased, NoWeight, OnePass };

/// One row of the kernel's layer_norm (or, without `centre`, rms_norm).
std::vector<float> kernelNorm(const std::vector<float> &x,
                              const std::vector<float> &w,
                              const std::vector<float> &b, float eps,
                              bool centre, int threads, int vec,
                              Broken broken = Broken::None) {
  int n = static_cast<int>(x.size());
  float mean = 0;
  if (centre)
    mean = blockSum(x, threads, vec) / static_cast<float>(n);
  std::vector<float> d(n), sq(n);
  for (int j = 0; j < n; ++j) {
    d[j] = broken == Broken::OnePass ? x[j] : x[j] - mean;
    sq[j] = d[j] * d[j];
  }
  float var = blockSum(sq, threads, vec) /
              static_cast<float>(broken == Broken::Unbiased ? n - 1 : n);
  if (broken == Broken::OnePass && centre) {
    var -= mean * mean;
    for (int j = 0; j < n; ++j)
      d[j] = x[j] - mean;
  }
  float r = rsqrtOff(var + eps, 2);
  std::vector<float> y(n);
  for (int j = 0; j < n; ++j) {
    float v = d[j] * r;
    if (!w.empty() && broken != Broken::NoWeight)
      v = v * w[j];
    if (!b.empty())
      v = v + b[j];
    y[j] = v;
  }
  return y;
}

struct Case {
  std::vector<float> x, w, b;
  HostTensor hx, hw, hb;
};

Case randomCase(int rows, int n, double offset, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0, 1);
  Case c;
  for (int i = 0; i < rows * n; ++i)
    c.x.push_back(static_cast<float>(offset) + dist(rng));
  for (int j = 0; j < n; ++j) {
    c.w.push_back(1 + 0.5f * dist(rng));
    c.b.push_back(dist(rng));
  }
  c.hx = fromFloats({rows, n}, c.x.data());
  c.hw = fromFloats({n}, c.w.data());
  c.hb = fromFloats({n}, c.b.data());
  return c;
}

Comparison checkLayerNorm(const Case &c, int rows, int n, int threads,
                          int vec, Broken broken, bool affine = true,
                          bool kernelDepth = false) {
  std::vector<float> got;
  for (int r = 0; r < rows; ++r) {
    std::vector<float> row(c.x.begin() + r * n, c.x.begin() + (r + 1) * n);
    auto y = kernelNorm(row, affine ? c.w : std::vector<float>{},
                        affine ? c.b : std::vector<float>{}, 1e-5f, true,
                        threads, vec, broken);
    got.insert(got.end(), y.begin(), y.end());
  }
  std::vector<const HostTensor *> in = {&c.hx};
  if (affine)
    in = {&c.hx, &c.hw, &c.hb};
  ProgramOp op = rowOp("kb.layer_norm", {{"eps", 1e-5}});
  if (kernelDepth) // as kb-run sets it from the kernel's launch
    op.sumDepth = rowSumDepth(n, threads, vec);
  HostTensor ref = evalOp(op, in);
  return compareWithBound(got.data(), ref.data.data(), ref.err,
                          rows * n);
}

} // namespace

TEST(RowReference, LayerNormByHand) {
  auto x = tensor({1, 4}, {1, 2, 3, 4});
  auto w = tensor({4}, {1, 2, 1, 1});
  auto b = tensor({4}, {0, 0, 0, 10});
  HostTensor y = evalOp(rowOp("kb.layer_norm", {{"eps", 0.0}}), {&x, &w, &b});
  double r = 1 / std::sqrt(1.25); // var of 1..4 is 1.25
  EXPECT_NEAR(y.data[0], -1.5 * r, 1e-15);
  EXPECT_NEAR(y.data[1], -0.5 * r * 2, 1e-15);
  EXPECT_NEAR(y.data[3], 1.5 * r + 10, 1e-14);
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 4}));
}

TEST(RowReference, RmsNormByHand) {
  auto x = tensor({2, 2}, {3, 4, 1, 1});
  auto w = tensor({2}, {2, 1});
  HostTensor y = evalOp(rowOp("kb.rms_norm", {{"eps", 0.0}}), {&x, &w});
  double r = 1 / std::sqrt(12.5);
  EXPECT_NEAR(y.data[0], 3 * r * 2, 1e-15);
  EXPECT_NEAR(y.data[1], 4 * r, 1e-15);
  EXPECT_NEAR(y.data[2], 2.0, 1e-15);
}

TEST(RowReference, ReduceKindsAndShapes) {
  auto x = tensor({2, 3}, {1, -2, 3, 4, 5, -6});
  auto sum = evalOp(rowOp("kb.reduce", {{"kind", "sum"}, {"keepdim", true}}),
                    {&x});
  EXPECT_EQ(sum.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(sum.data, (std::vector<double>{2, 3}));
  auto mean = evalOp(rowOp("kb.reduce", {{"kind", "mean"}}), {&x});
  EXPECT_EQ(mean.shape, (std::vector<int64_t>{2}));
  EXPECT_NEAR(mean.data[1], 1.0, 1e-15);
  auto mx = evalOp(rowOp("kb.reduce", {{"kind", "max"}}), {&x});
  auto mn = evalOp(rowOp("kb.reduce", {{"kind", "min"}}), {&x});
  EXPECT_EQ(mx.data, (std::vector<double>{3, 5}));
  EXPECT_EQ(mn.data, (std::vector<double>{-2, -6}));
  // max and min of exact inputs are exact.
  EXPECT_EQ(mx.err, (std::vector<double>{0, 0}));
  auto v = tensor({3}, {1, 2, 3});
  auto one = evalOp(rowOp("kb.reduce", {{"kind", "sum"}, {"keepdim", true}}),
                    {&v});
  EXPECT_EQ(one.shape, (std::vector<int64_t>{1}));
  EXPECT_THROW(evalOp(rowOp("kb.reduce", {{"kind", "prod"}}), {&x}),
               std::runtime_error);
}

TEST(RowReference, EmulatedLayerNormPassesBrokenFails) {
  // 16384 x 1024's kernel: 64 threads of 4; 8192 wide: 512 of 4. Rows with
  // mean 0 and mean 100 (the mean's rounding matters there).
  for (auto [n, threads] : {std::pair{1024, 64}, std::pair{8192, 512}})
    for (double offset : {0.0, 100.0}) {
      Case c = randomCase(4, n, offset, 1234 + n);
      Comparison ok = checkLayerNorm(c, 4, n, threads, 4, Broken::None);
      EXPECT_TRUE(ok.ok()) << n << " offset " << offset << ": " << ok.bad
                           << " outside, worst at "
                           << ok.maxErrOverBound << " of its bound";
      EXPECT_LT(ok.maxErrOverBound, 1.0);
      Comparison plain =
          checkLayerNorm(c, 4, n, threads, 4, Broken::None, false);
      EXPECT_TRUE(plain.ok()) << n << " without weight and bias";
      // The unbiased variance moves y by 1/(2n) relative: caught on rows of
      // mean 0 with any kernel's depth; on rows of mean 100 the mean's
      // worst-case rounding bound at kRowSumDepth (about 5e-4) is as large,
      // so only with this kernel's own depth (as kb-run checks).
      Comparison deep =
          checkLayerNorm(c, 4, n, threads, 4, Broken::None, true, true);
      EXPECT_TRUE(deep.ok()) << n << " offset " << offset
                             << " at the kernel's depth: worst "
                             << deep.maxErrOverBound;
      if (offset == 0)
        EXPECT_FALSE(
            checkLayerNorm(c, 4, n, threads, 4, Broken::Unbiased).ok())
            << n << ": the unbiased variance passed";
      if (n == 1024)
        EXPECT_FALSE(checkLayerNorm(c, 4, n, threads, 4, Broken::Unbiased,
                                    true, true)
                         .ok())
            << n << " offset " << offset
            << ": the unbiased variance passed at the kernel's depth";
      EXPECT_FALSE(checkLayerNorm(c, 4, n, threads, 4, Broken::NoWeight).ok());
    }
  // A one-pass variance (E[x^2] - mean^2) cancels on rows far from 0.
  Case far = randomCase(4, 1024, 1000.0, 7);
  EXPECT_FALSE(checkLayerNorm(far, 4, 1024, 64, 4, Broken::OnePass).ok());
}

TEST(RowReference, SumDepthOfTheKernelsLayout) {
  EXPECT_EQ(rowSumDepth(1024, 64, 4), 16 + 10);  // 16 values a thread, 2 warps
  EXPECT_EQ(rowSumDepth(1000, 32, 8), 32 + 5);   // one warp: shuffles only
  EXPECT_EQ(rowSumDepth(100, 64, 1), 2 + 10);    // a partial second chunk
  // The online strategy's loops: 4096 vectors a thread.
  EXPECT_EQ(rowSumDepth(1 << 20, 64, 4), 16384 + 10);
  EXPECT_EQ(rowSumDepth(1024, 0, 4), kRowSumDepth);
}

TEST(RowReference, EmulatedRmsNormBf16Store) {
  int rows = 3, n = 2048;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0, 1);
  std::vector<float> x, w;
  for (int i = 0; i < rows * n; ++i)
    x.push_back(bf16ToFloat(floatToBf16(dist(rng))));
  for (int j = 0; j < n; ++j)
    w.push_back(bf16ToFloat(floatToBf16(1 + 0.1f * dist(rng))));
  std::vector<float> got, broken;
  for (int r = 0; r < rows; ++r) {
    std::vector<float> row(x.begin() + r * n, x.begin() + (r + 1) * n);
    auto y = kernelNorm(row, w, {}, 1e-6f, false, 256, 8);
    auto z = kernelNorm(row, w, {}, 1e-6f, false, 256, 8, Broken::Unbiased);
    for (int j = 0; j < n; ++j) {
      got.push_back(bf16ToFloat(floatToBf16(y[j])));
      // Off by 2 bf16 ulps where the unbiased variance moves it less.
      broken.push_back(bf16ToFloat(floatToBf16(z[j]) + 2));
    }
  }
  HostTensor hx = fromFloats({rows, n}, x.data());
  HostTensor hw = fromFloats({n}, w.data());
  HostTensor ref =
      evalOp(rowOp("kb.rms_norm", {{"eps", 1e-6}}, DType::BF16), {&hx, &hw});
  Comparison ok =
      compareWithBound(got.data(), ref.data.data(), ref.err, rows * n);
  EXPECT_TRUE(ok.ok()) << ok.bad << " outside, worst "
                       << ok.maxErrOverBound;
  EXPECT_FALSE(
      compareWithBound(broken.data(), ref.data.data(), ref.err, rows * n)
          .ok());
}

TEST(RowReference, EmulatedSumPassesOffByOneTermFails) {
  int n = 8192;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(0, 1);
  std::vector<float> x;
  for (int j = 0; j < n; ++j)
    x.push_back(dist(rng));
  float s = blockSum(x, 512, 4);
  HostTensor hx = fromFloats({1, n}, x.data());
  HostTensor ref =
      evalOp(rowOp("kb.reduce", {{"kind", "sum"}, {"keepdim", true}}), {&hx});
  EXPECT_TRUE(compareWithBound(&s, ref.data.data(), ref.err, 1).ok());
  // A sum that missed its largest term.
  float missed = s - *std::max_element(x.begin(), x.end());
  EXPECT_FALSE(compareWithBound(&missed, ref.data.data(), ref.err, 1).ok());
}

TEST(RowReference, EmulatedOnlineLayerNormAtItsDepth) {
  // 1024 x 65536's online kernel: 1024 threads of 4, 16 vectors a thread
  // (64 values); 4096 x 262144 would add 256 values a thread, past
  // kRowSumDepth: the bound at the kernel's own depth still holds it.
  for (auto [n, threads] : {std::pair{65536, 1024}, std::pair{262144, 1024}}) {
    Case c = randomCase(2, n, 100.0, 99 + n);
    Comparison ok =
        checkLayerNorm(c, 2, n, threads, 4, Broken::None, true, true);
    EXPECT_TRUE(ok.ok()) << n << ": worst " << ok.maxErrOverBound;
    EXPECT_FALSE(
        checkLayerNorm(c, 2, n, threads, 4, Broken::NoWeight, true, true).ok())
        << n;
  }
}
