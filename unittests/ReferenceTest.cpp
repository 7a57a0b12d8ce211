//===- ReferenceTest.cpp - the float64 references and the comparison
//-------===//

#include "kb/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kb::runtime;

static ProgramOp opNamed(const std::string &name,
                         nlohmann::json attrs = nlohmann::json::object()) {
  ProgramOp op;
  op.op = name;
  op.attrs = attrs;
  return op;
}

static HostTensor tensor(std::vector<int64_t> shape, std::vector<double> data) {
  HostTensor t;
  t.shape = shape;
  t.data = data;
  return t;
}

TEST(Reference, SoftmaxRowsSumToOneAndMatchByHand) {
  auto x = tensor({2, 3}, {1, 2, 3, -1000, 0, 1000});
  HostTensor y = evalOp(opNamed("kb.softmax"), {&x});
  double e1 = std::exp(-2.0), e2 = std::exp(-1.0), s = e1 + e2 + 1;
  EXPECT_NEAR(y.data[0], e1 / s, 1e-15);
  EXPECT_NEAR(y.data[2], 1 / s, 1e-15);
  EXPECT_NEAR(y.data[5], 1.0, 1e-15); // stable for large inputs
  EXPECT_EQ(y.data[3], 0.0);
}

TEST(Reference, GeluTanhAndErf) {
  auto x = tensor({4}, {-3, -0.5, 0, 2});
  HostTensor t = evalOp(opNamed("kb.gelu", {{"approx", "tanh"}}), {&x});
  HostTensor e = evalOp(opNamed("kb.gelu", {{"approx", "erf"}}), {&x});
  for (int i = 0; i < 4; ++i) {
    double v = x.data[i];
    double tanhForm =
        0.5 * v *
        (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(t.data[i], tanhForm, 1e-14);
    EXPECT_NEAR(e.data[i], 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))), 1e-15);
  }
  EXPECT_NEAR(t.data[3], 1.954597694087775, 1e-12);
  EXPECT_NEAR(e.data[3], 1.9544997361036416, 1e-12);
  // Far in the negative tail the value is tiny but not zero.
  auto far = tensor({1}, {-7.5});
  EXPECT_LT(evalOp(opNamed("kb.gelu", {{"approx", "tanh"}}), {&far}).data[0],
            0.0);
}

TEST(Reference, BiasAddBroadcastsAlongLastAxis) {
  auto x = tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  auto b = tensor({3}, {10, 20, 30});
  HostTensor y = evalOp(opNamed("kb.bias_add"), {&x, &b});
  EXPECT_EQ(y.data, (std::vector<double>{11, 22, 33, 14, 25, 36}));
}

TEST(Reference, DropoutScalesKeptElementsAndUsesTheIndexOffset) {
  std::vector<double> ones(64, 1.0);
  auto x = tensor({64}, ones);
  auto op = opNamed("kb.dropout", {{"p", 0.25}, {"seed", 3}});
  HostTensor all = evalOp(op, {&x});
  for (double v : all.data)
    EXPECT_TRUE(v == 0.0 || std::fabs(v - 1 / 0.75) < 1e-12);
  auto tail = tensor({16}, std::vector<double>(16, 1.0));
  HostTensor part = evalOp(op, {&tail}, 48);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(part.data[i], all.data[48 + i]);
}

TEST(Reference, UnknownOpIsAnError) {
  auto x = tensor({1}, {1});
  EXPECT_THROW(evalOp(opNamed("kb.frobnicate"), {&x}), std::runtime_error);
}

TEST(Reference, MatmulAndSampledEntryAgree) {
  std::vector<float> a = {1, 2, 3, 4, 5, 6};    // 2x3
  std::vector<float> b = {7, 8, 9, 10, 11, 12}; // 3x2
  HostTensor c = evalMatmul(fromFloats({2, 3}, a.data()),
                            fromFloats({3, 2}, b.data()), false);
  EXPECT_EQ(c.data, (std::vector<double>{58, 64, 139, 154}));
  MatmulEntry e = matmulEntry(a.data(), b.data(), 2, 2, 3, false, 0, 1, 0);
  EXPECT_EQ(e.value, 139);
  EXPECT_EQ(e.absSum, 139);
  std::vector<float> bt = {7, 9, 11, 8, 10, 12}; // B transposed, 2x3
  EXPECT_EQ(matmulEntry(a.data(), bt.data(), 2, 2, 3, true, 0, 1, 1).value,
            154);
  // B^T with rows padded to 4 (kb.transpose pad): the padding is not read,
  // whatever it holds.
  std::vector<float> btPad = {7, 9, 11, 99, 8, 10, 12, -99};
  EXPECT_EQ(
      matmulEntry(a.data(), btPad.data(), 2, 2, 3, true, 0, 1, 1, 4).value,
      154);
  HostTensor cp = evalMatmul(fromFloats({2, 3}, a.data()),
                             fromFloats({2, 4}, btPad.data()), true);
  EXPECT_EQ(cp.data, (std::vector<double>{58, 64, 139, 154}));
}

TEST(Reference, CompareFlagsNaNAndOutliers) {
  std::vector<float> got = {1.0f, 2.0f, NAN, 4.5f};
  std::vector<double> ref = {1.0, 2.0, 3.0, 4.0};
  Comparison c = compare(got.data(), ref.data(), 4, 1e-5, 1e-6);
  EXPECT_EQ(c.bad, 2);
  EXPECT_EQ(c.firstBad, 2);
  EXPECT_FALSE(c.ok());
  Comparison good = compare(got.data(), ref.data(), 2, 1e-5, 1e-6);
  EXPECT_TRUE(good.ok());
}

TEST(Reference, RowSums) {
  std::vector<float> y = {0.25f, 0.75f, 0.5f, 0.5f};
  EXPECT_NEAR(maxRowSumError(y.data(), 4, 2), 0.0, 1e-7);
  y[3] = 0.6f;
  EXPECT_NEAR(maxRowSumError(y.data(), 4, 2), 0.1, 1e-6);
}

// kb.rotary: rows are positions r mod P, each head's pairs (2i, 2i + 1)
// rotated by the tables' row: checked against the formula written out
// head by head, and the bound covers the kernel's fp32 arithmetic (two
// rounded products and a rounded sum).
TEST(Reference, RotaryRotatesEachHeadsPairsByTheRowsPosition) {
  const int64_t rows = 6, heads = 2, hd = 4, period = 3, c = heads * hd;
  std::vector<double> xs(rows * c), cs(period * hd / 2), sn(period * hd / 2);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = std::sin(0.7 * double(i) + 0.3) * 3;
  for (int64_t p = 0; p < period; ++p)
    for (int64_t i = 0; i < hd / 2; ++i) {
      double ang = double(p) / std::pow(10000.0, 2.0 * double(i) / hd);
      cs[p * hd / 2 + i] = std::cos(ang);
      sn[p * hd / 2 + i] = std::sin(ang);
    }
  auto x = tensor({rows, c}, xs), ct = tensor({period, hd / 2}, cs),
       st = tensor({period, hd / 2}, sn);
  HostTensor y = evalOp(opNamed("kb.rotary"), {&x, &ct, &st});
  ASSERT_EQ(y.shape, x.shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < hd / 2; ++i) {
        int64_t at = r * c + h * hd + 2 * i, t = (r % period) * hd / 2 + i;
        double x1 = xs[at], x2 = xs[at + 1];
        EXPECT_DOUBLE_EQ(y.data[at], x1 * cs[t] - x2 * sn[t]);
        EXPECT_DOUBLE_EQ(y.data[at + 1], x1 * sn[t] + x2 * cs[t]);
        float f1 = float(x1), f2 = float(x2), fc = float(cs[t]),
              fs = float(sn[t]);
        float g0 = f1 * fc - f2 * fs, g1 = f1 * fs + f2 * fc;
        EXPECT_LE(std::fabs(double(g0) - y.data[at]), y.err[at]);
        EXPECT_LE(std::fabs(double(g1) - y.data[at + 1]), y.err[at + 1]);
        EXPECT_GT(y.err[at], 0.0);
      }
  // Row 3 is position 0 (P = 3): cos 1, sin 0 leave it as it was.
  for (int64_t j = 0; j < c; ++j)
    EXPECT_DOUBLE_EQ(y.data[3 * c + j], xs[3 * c + j]);
  // A block of rows (kb-run checks an elementwise kernel a block at a
  // time): rows 4 and 5 given alone, with their flat offset, are positions
  // 1 and 2 again.
  auto tail = tensor({2, c}, std::vector<double>(xs.begin() + 4 * c, xs.end()));
  HostTensor part = evalOp(opNamed("kb.rotary"), {&tail, &ct, &st}, 4 * c);
  for (int64_t j = 0; j < 2 * c; ++j)
    EXPECT_DOUBLE_EQ(part.data[j], y.data[4 * c + j]);
  EXPECT_THROW(evalOp(opNamed("kb.rotary"), {&tail, &ct, &st}, 3),
               std::runtime_error);
  // Tables that are not P x head_dim / 2 of a head_dim dividing the row.
  auto wide = tensor({period, 3}, std::vector<double>(period * 3, 0.5));
  EXPECT_THROW(evalOp(opNamed("kb.rotary"), {&x, &wide, &wide}),
               std::runtime_error);
  EXPECT_THROW(evalOp(opNamed("kb.rotary"), {&x, &ct}), std::runtime_error);
}
