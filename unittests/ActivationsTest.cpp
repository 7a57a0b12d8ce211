//===- ActivationsTest.cpp - kb-run's activations ------------------------===//
//
// The ops of issue #45 in kb-run: their float64 references against values
// PyTorch gives (NaN through clamp, minimum and maximum), their error
// bounds on fp32 kernels emulated on the CPU the way ActivationScalar.cpp
// computes them (which must pass, and fail when the result is carried in
// 8-bit precision), and the manifest's acceptance and refusal of them and
// their attributes.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"
#include "kb/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <random>

using namespace kb::runtime;
using nlohmann::json;

namespace {

ProgramOp op(const std::string &name, json attrs = json::object()) {
  ProgramOp o;
  o.op = name;
  o.attrs = attrs;
  return o;
}

double ref1(const ProgramOp &o, double v) {
  HostTensor x{{1}, {v}, {}};
  return evalOp(o, {&x}).data[0];
}

double ref2(const char *name, double a, double b) {
  HostTensor x{{1}, {a}, {}}, y{{1}, {b}, {}};
  return evalOp(op(name), {&x, &y}).data[0];
}

/// __expf: ex2.approx of the rounded product t * log2(e).
float fastExp(float t) {
  return std::exp2(static_cast<float>(t * 1.44269504f));
}

float relu6p3(float x) { return std::fmin(std::fmax(x + 3.0f, 0.0f), 6.0f); }

} // namespace

TEST(Activations, ReferencesAsPyTorchDefinesThem) {
  // Values from torch 1.13 (float64) for the same calls.
  auto sp = [](double b, double t) {
    return op("kb.softplus", {{"beta", b}, {"threshold", t}});
  };
  EXPECT_DOUBLE_EQ(ref1(sp(1, 20), 0.0), std::log(2.0));
  EXPECT_DOUBLE_EQ(ref1(sp(1, 20), 30.0), 30.0); // beta x > threshold: x
  EXPECT_DOUBLE_EQ(ref1(sp(2, 20), 1.0), std::log1p(std::exp(2.0)) / 2);
  EXPECT_DOUBLE_EQ(ref1(sp(2, 1), 1.0), 1.0); // 2 > 1: x
  EXPECT_DOUBLE_EQ(ref1(op("kb.elu", {{"alpha", 1.0}}), -1.0),
                   std::expm1(-1.0));
  EXPECT_DOUBLE_EQ(ref1(op("kb.elu", {{"alpha", 0.5}}), 2.0), 2.0);
  EXPECT_DOUBLE_EQ(ref1(op("kb.selu"), 1.0), 1.0507009873554805);
  EXPECT_NEAR(ref1(op("kb.selu"), -1.0), -1.1113307378125625, 1e-15);
  json ht = {{"min_val", -1.0}, {"max_val", 2.0}};
  EXPECT_EQ(ref1(op("kb.hardtanh", ht), -3.0), -1.0);
  EXPECT_EQ(ref1(op("kb.hardtanh", ht), 5.0), 2.0);
  EXPECT_EQ(ref1(op("kb.hardtanh", ht), 0.25), 0.25);
  EXPECT_EQ(ref1(op("kb.hardsigmoid"), 0.0), 0.5);
  EXPECT_EQ(ref1(op("kb.hardsigmoid"), -4.0), 0.0);
  EXPECT_EQ(ref1(op("kb.hardsigmoid"), 4.0), 1.0);
  EXPECT_DOUBLE_EQ(ref1(op("kb.hardswish"), 1.0), 4.0 / 6.0);
  EXPECT_EQ(ref1(op("kb.hardswish"), 5.0), 5.0);
  EXPECT_EQ(ref1(op("kb.hardswish"), -3.5), 0.0);
  EXPECT_NEAR(ref1(op("kb.mish"), 1.0), 0.8650983882673103, 1e-15);
  EXPECT_NEAR(ref1(op("kb.mish"), -2.0), -0.2525014826957089, 1e-15);
  EXPECT_EQ(ref1(op("kb.mish"), 800.0), 800.0); // exp overflows: tanh(inf)
  EXPECT_EQ(ref1(op("kb.softsign"), -3.0), -0.75);
  EXPECT_EQ(ref1(op("kb.abs"), -2.5), 2.5);
  EXPECT_EQ(ref1(op("kb.neg"), 2.5), -2.5);
  EXPECT_EQ(ref1(op("kb.sqrt"), 6.25), 2.5);
  EXPECT_EQ(ref1(op("kb.rsqrt"), 0.25), 2.0);
  EXPECT_TRUE(std::isinf(ref1(op("kb.rsqrt"), 0.0)));
  EXPECT_DOUBLE_EQ(ref1(op("kb.log"), 10.0), std::log(10.0));
  EXPECT_TRUE(std::isnan(ref1(op("kb.log"), -1.0)));
  EXPECT_TRUE(std::isnan(ref1(op("kb.sqrt"), -1.0)));
  EXPECT_EQ(ref1(op("kb.clamp", {{"min", 0.5}}), -7.0), 0.5);
  EXPECT_EQ(ref1(op("kb.clamp", {{"min", 0.5}}), 7.0), 7.0);
  EXPECT_EQ(ref1(op("kb.clamp", {{"max", 0.5}}), 7.0), 0.5);
  EXPECT_EQ(ref1(op("kb.clamp", {{"min", 0.0}, {"max", 6.0}}), 7.0), 6.0);
  EXPECT_EQ(ref2("kb.minimum", 1.0, -2.0), -2.0);
  EXPECT_EQ(ref2("kb.maximum", 1.0, -2.0), 1.0);
  // NaN propagates (torch.clamp, torch.minimum, torch.maximum, hardtanh).
  EXPECT_TRUE(
      std::isnan(ref1(op("kb.clamp", {{"min", 0.0}, {"max", 1.0}}), NAN)));
  EXPECT_TRUE(std::isnan(ref1(op("kb.hardtanh", ht), NAN)));
  EXPECT_TRUE(std::isnan(ref1(op("kb.hardsigmoid"), NAN)));
  EXPECT_TRUE(std::isnan(ref2("kb.minimum", NAN, 1.0)));
  EXPECT_TRUE(std::isnan(ref2("kb.minimum", 1.0, NAN)));
  EXPECT_TRUE(std::isnan(ref2("kb.maximum", NAN, 1.0)));
  EXPECT_TRUE(std::isnan(ref2("kb.maximum", 1.0, NAN)));
  // A NaN reference is unbounded (counted, not checked).
  HostTensor nan{{1}, {NAN}, {}};
  EXPECT_TRUE(
      std::isinf(evalOp(op("kb.clamp", {{"min", 0.0}}), {&nan}).err[0]));
}

TEST(Activations, BoundsPassFp32KernelsAndFailLowPrecision) {
  const int64_t n = 1 << 16;
  std::mt19937_64 rng(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> a(n), b(n), pos(n);
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 3 * d(rng);
    b[i] = d(rng);
    pos[i] = std::fabs(a[i]) + 0.01f; // sqrt, rsqrt, log
  }
  HostTensor ha = fromFloats({n}, a.data()), hb = fromFloats({n}, b.data()),
             hp = fromFloats({n}, pos.data());
  struct Case {
    const char *name;
    ProgramOp o;
    std::function<float(float, float)> f32;
    int input; // 0: a, 1: a and b, 2: pos
  };
  // The kernels as ActivationScalar.cpp emits them (fp32 libm for
  // libdevice's precise functions, fastExp for exp).
  const float seluScale = 1.0507009873554805f;
  const float seluNeg =
      static_cast<float>(1.6732632423543772 * 1.0507009873554805);
  std::vector<Case> cases = {
      {"softplus", op("kb.softplus", {{"beta", 1.0}, {"threshold", 20.0}}),
       [](float x, float) { return x > 20.0f ? x : std::log1p(fastExp(x)); },
       0},
      {"softplus beta 3 threshold 2",
       op("kb.softplus", {{"beta", 3.0}, {"threshold", 2.0}}),
       [](float x, float) {
         float z = x * 3.0f;
         return z > 2.0f ? x : std::log1p(fastExp(z)) / 3.0f;
       },
       0},
      {"elu 0.5", op("kb.elu", {{"alpha", 0.5}}),
       [](float x, float) { return x > 0 ? x : std::expm1(x) * 0.5f; }, 0},
      {"selu", op("kb.selu"),
       [&](float x, float) {
         return x > 0 ? x * seluScale : std::expm1(x) * seluNeg;
       },
       0},
      {"hardtanh", op("kb.hardtanh", {{"min_val", -2.0}, {"max_val", 1.5}}),
       [](float x, float) { return std::fmin(std::fmax(x, -2.0f), 1.5f); }, 0},
      {"hardsigmoid", op("kb.hardsigmoid"),
       [](float x, float) { return relu6p3(x) / 6.0f; }, 0},
      {"hardswish", op("kb.hardswish"),
       [](float x, float) { return x * relu6p3(x) / 6.0f; }, 0},
      {"mish", op("kb.mish"),
       [](float x, float) { return x * std::tanh(std::log1p(fastExp(x))); }, 0},
      {"softsign", op("kb.softsign"),
       [](float x, float) { return x / (std::fabs(x) + 1.0f); }, 0},
      {"abs", op("kb.abs"), [](float x, float) { return std::fabs(x); }, 0},
      {"neg", op("kb.neg"), [](float x, float) { return -x; }, 0},
      {"clamp min", op("kb.clamp", {{"min", -0.5}}),
       [](float x, float) { return std::fmax(x, -0.5f); }, 0},
      {"minimum", op("kb.minimum"),
       [](float x, float y) { return std::fmin(x, y); }, 1},
      {"maximum", op("kb.maximum"),
       [](float x, float y) { return std::fmax(x, y); }, 1},
      {"sqrt", op("kb.sqrt"), [](float x, float) { return std::sqrt(x); }, 2},
      {"rsqrt", op("kb.rsqrt"),
       [](float x, float) { return 1.0f / std::sqrt(x); }, 2},
      {"log", op("kb.log"), [](float x, float) { return std::log(x); }, 2},
  };
  for (const Case &c : cases) {
    const std::vector<float> &x = c.input == 2 ? pos : a;
    std::vector<const HostTensor *> ins = {c.input == 2 ? &hp : &ha};
    if (c.input == 1)
      ins.push_back(&hb);
    HostTensor ref = evalOp(c.o, ins);
    std::vector<float> got(n), low(n);
    for (int64_t i = 0; i < n; ++i) {
      got[i] = c.f32(x[i], b[i]);
      int ex;
      float m = std::frexp(got[i], &ex);
      low[i] = std::ldexp(std::nearbyint(m * 256.0f) / 256.0f, ex);
    }
    Comparison ok = compareWithBound(got.data(), ref.data.data(), ref.err, n);
    EXPECT_TRUE(ok.ok()) << c.name << ": first bad " << ok.firstBad << " got "
                         << ok.got << " want " << ok.want << " allowed "
                         << ok.allowed;
    EXPECT_EQ(ok.unbounded, 0) << c.name;
    EXPECT_FALSE(compareWithBound(low.data(), ref.data.data(), ref.err, n).ok())
        << c.name << " in 8-bit precision passed";
  }
}

TEST(Activations, BoundsCarryInputErrors) {
  // An input known to 1e-3: the result's bound grows by the op's slope.
  HostTensor x{{1}, {4.0}, {1e-3}};
  EXPECT_NEAR(evalOp(op("kb.sqrt"), {&x}).err[0], 1e-3 / 4, 1e-5);
  EXPECT_NEAR(evalOp(op("kb.log"), {&x}).err[0], 1e-3 / 4, 1e-5);
  EXPECT_NEAR(evalOp(op("kb.rsqrt"), {&x}).err[0], 1e-3 / 16, 1e-5);
  EXPECT_GE(evalOp(op("kb.neg"), {&x}).err[0], 1e-3);
  // Surely clamped: exact whatever the input's error.
  EXPECT_EQ(evalOp(op("kb.clamp", {{"max", 1.0}}), {&x}).err[0], 0.0);
  EXPECT_EQ(evalOp(op("kb.hardsigmoid"), {&x}).err[0], 0.0);
  // An input that may be 0 or negative: sqrt, rsqrt and log unbounded.
  HostTensor z{{1}, {1e-4}, {1e-3}};
  for (const char *name : {"kb.sqrt", "kb.rsqrt", "kb.log"})
    EXPECT_TRUE(std::isinf(evalOp(op(name), {&z}).err[0])) << name;
  // softplus across its threshold: the branches' gap is in the bound.
  HostTensor t{{1}, {2.0}, {1e-3}};
  double e =
      evalOp(op("kb.softplus", {{"beta", 1.0}, {"threshold", 2.0}}), {&t})
          .err[0];
  EXPECT_GT(e, std::log1p(std::exp(-2.0)));
}

namespace {

/// A bundle of one kernel of `ops` (each unary on x, or binary on x and w,
/// writing y) for Manifest::parse.
json bundle(json program, const char *dtype = "f32") {
  json j = json::parse(R"({
    "format": "kb-bundle", "version": 1, "target": "sm_90a",
    "buffers": [
      {"name": "x", "shape": [4, 8], "dtype": "f32", "role": "input"},
      {"name": "w", "shape": [4, 8], "dtype": "f32", "role": "input"},
      {"name": "y", "shape": [4, 8], "dtype": "f32", "role": "output"}],
    "kernels": [{"name": "k0", "ptx": "k0.ptx", "grid": [1, 1, 1],
                 "block": [128, 1, 1], "args": ["x", "w", "y"]}]})");
  for (auto &b : j["buffers"])
    b["dtype"] = dtype;
  json ops = json::array();
  for (size_t i = 0; i < program.size(); ++i) {
    json &p = program[i];
    p["kernel"] = "k0";
    p["shape"] = {4, 8};
    p["output"] = i + 1 == program.size() ? "y" : "k0.v" + std::to_string(i);
    ops.push_back(i);
  }
  j["program"] = program;
  j["kernels"][0]["ops"] = ops;
  return j;
}

std::string errorOf(const json &j) {
  try {
    Manifest::parse(j.dump(), "/tmp");
  } catch (const ManifestError &e) {
    return e.what();
  }
  return "";
}

json one(const char *name, json attrs, json inputs = {"x"}) {
  return bundle(
      json::array({{{"op", name}, {"inputs", inputs}, {"attrs", attrs}}}));
}

} // namespace

TEST(Activations, ManifestAcceptsEveryOpAndItsAttributes) {
  json chain = json::array();
  std::string prev = "x";
  auto add = [&](const char *name, json attrs, bool binary = false) {
    json in = binary ? json{prev, "w"} : json{prev};
    chain.push_back({{"op", name}, {"inputs", in}, {"attrs", attrs}});
    prev = "k0.v" + std::to_string(chain.size() - 1);
  };
  add("kb.softplus", {{"beta", 2.0}, {"threshold", 20.0}});
  add("kb.elu", {{"alpha", 1.0}});
  add("kb.selu", json::object());
  add("kb.hardtanh", {{"min_val", -1.0}, {"max_val", 1.0}});
  add("kb.hardsigmoid", json::object());
  add("kb.hardswish", json::object());
  add("kb.mish", json::object());
  add("kb.softsign", json::object());
  add("kb.abs", json::object());
  add("kb.neg", json::object());
  add("kb.minimum", json::object(), true);
  add("kb.maximum", json::object(), true);
  add("kb.clamp", {{"min", 0.0625}});
  add("kb.sqrt", json::object());
  add("kb.rsqrt", json::object());
  add("kb.log", json::object());
  add("kb.clamp", {{"min", -4.0}, {"max", 4.0}});
  EXPECT_EQ(errorOf(bundle(chain)), "");
  EXPECT_EQ(errorOf(bundle(chain, "bf16")), "");
  Manifest m = Manifest::parse(bundle(chain).dump(), "/tmp");
  EXPECT_EQ(m.program.size(), 17u);
  EXPECT_EQ(m.program[10].inputs.size(), 2u);
}

TEST(Activations, ManifestRefusesBadAttributesAndOperands) {
  struct Case {
    json j;
    const char *error;
  } cases[] = {
      {one("kb.softplus", {{"beta", 0.0}, {"threshold", 20.0}}),
       "program[0] (kb.softplus).attrs.beta 0.0 must be positive"},
      {one("kb.softplus", {{"threshold", 20.0}}),
       "program[0] (kb.softplus) needs attrs.beta"},
      {one("kb.softplus", {{"beta", 1.0}, {"threshold", "big"}}),
       "program[0] (kb.softplus).attrs.threshold must be a number, not string"},
      {one("kb.elu", json::object()), "program[0] (kb.elu) needs attrs.alpha"},
      {one("kb.hardtanh", {{"min_val", 1.0}, {"max_val", -1.0}}),
       "program[0] (kb.hardtanh).attrs: min_val 1.0 is above max_val -1.0"},
      {one("kb.clamp", json::object()),
       "program[0] (kb.clamp) needs attrs.min or attrs.max (or both)"},
      {one("kb.clamp", {{"min", 6.0}, {"max", 0.0}}),
       "program[0] (kb.clamp).attrs: min 6.0 is above max 0.0"},
      {one("kb.minimum", json::object()),
       "program[0] (kb.minimum) needs 2 inputs, has 1"},
      {one("kb.sqrt", json::object(), {"x", "w"}),
       "program[0] (kb.sqrt) needs 1 input, has 2"},
      {one("kb.hardswishh", json::object()),
       "program[0].op 'kb.hardswishh' is not an op kb-run can check"},
  };
  for (const Case &c : cases) {
    std::string e = errorOf(c.j);
    EXPECT_NE(e.find(c.error), std::string::npos) << "got: " << e;
  }
  // Operands of two element types.
  json mixed = one("kb.maximum", json::object(), {"x", "w"});
  mixed["buffers"][1]["dtype"] = "bf16";
  EXPECT_NE(errorOf(mixed).find("program[0] (kb.maximum) reads 'w' of bf16"),
            std::string::npos)
      << errorOf(mixed);
}

TEST(Activations, BenchChainPassesAnEmulatedKernel) {
  // bench/programs.py's "activations" chain (17 ops, inputs x and w drawn
  // N(0, 1) as kb-run draws them), evaluated op by op with its bounds, and
  // the fused fp32 kernel emulated on the CPU: every element checked and
  // within its bound, and the kernel with one op's constant off by 1%
  // (hardtanh's max_val 2 -> 2.02) fails.
  const int64_t n = 1 << 18;
  std::mt19937_64 rng(11);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> x(n), w(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 3 * d(rng);
    w[i] = d(rng);
  }
  HostTensor hx = fromFloats({n}, x.data()), hw = fromFloats({n}, w.data());
  struct Step {
    ProgramOp o;
    int second; // 0: none, 1: w, 2: x
  };
  std::vector<Step> steps = {
      {op("kb.softplus", {{"beta", 1.0}, {"threshold", 20.0}}), 0},
      {op("kb.mish"), 0},
      {op("kb.maximum"), 1},
      {op("kb.hardswish"), 0},
      {op("kb.selu"), 0},
      {op("kb.elu", {{"alpha", 0.5}}), 0},
      {op("kb.hardtanh", {{"min_val", -1.0}, {"max_val", 2.0}}), 0},
      {op("kb.softsign"), 0},
      {op("kb.abs"), 0},
      {op("kb.clamp", {{"min", 0.0010000000474974513}}), 0},
      {op("kb.sqrt"), 0},
      {op("kb.log"), 0},
      {op("kb.neg"), 0},
      {op("kb.rsqrt"), 0},
      {op("kb.hardsigmoid"), 0},
      {op("kb.minimum"), 2},
      {op("kb.clamp", {{"max", 0.8999999761581421}}), 0},
  };
  HostTensor cur = hx;
  for (const Step &s : steps) {
    std::vector<const HostTensor *> ins = {&cur};
    if (s.second)
      ins.push_back(s.second == 1 ? &hw : &hx);
    cur = evalOp(s.o, ins);
  }
  const float seluScale = 1.0507009873554805f;
  const float seluNeg =
      static_cast<float>(1.6732632423543772 * 1.0507009873554805);
  auto kernel = [&](float xv, float wv, float htMax) {
    float v = xv > 20.0f ? xv : std::log1p(std::exp(xv));
    v = v * std::tanh(std::log1p(std::exp(v)));
    v = std::fmax(v, wv);
    v = v * relu6p3(v) / 6.0f;
    v = v > 0 ? v * seluScale : std::expm1(v) * seluNeg;
    v = v > 0 ? v : std::expm1(v) * 0.5f;
    v = std::fmin(std::fmax(v, -1.0f), htMax);
    v = v / (std::fabs(v) + 1.0f);
    v = std::fabs(v);
    v = std::fmax(v, 0.001f);
    v = std::sqrt(v);
    v = std::log(v);
    v = -v;
    v = 1.0f / std::sqrt(v);
    v = relu6p3(v) / 6.0f;
    v = std::fmin(v, xv);
    return std::fmin(v, 0.9f);
  };
  std::vector<float> got(n), off(n);
  for (int64_t i = 0; i < n; ++i) {
    got[i] = kernel(x[i], w[i], 2.0f);
    off[i] = kernel(x[i], w[i], 2.02f);
  }
  Comparison ok = compareWithBound(got.data(), cur.data.data(), cur.err, n);
  EXPECT_TRUE(ok.ok()) << "first bad " << ok.firstBad << " got " << ok.got
                       << " want " << ok.want << " allowed " << ok.allowed;
  EXPECT_EQ(ok.unbounded, 0);
  EXPECT_EQ(ok.checked, n);
  std::printf("chain: max error / allowed %.3g\n", ok.maxErrOverBound);
  EXPECT_FALSE(compareWithBound(off.data(), cur.data.data(), cur.err, n).ok());
}
