//===- ReferenceActivations.cpp - float64 references of the activations ---===//
//
// softplus, elu, selu, hardtanh, hardsigmoid, hardswish, mish, softsign,
// abs, neg, sqrt, rsqrt, log, clamp, minimum and maximum: the value as
// PyTorch defines it, in float64, and a bound on what the fp32 kernel of
// lib/Conversion/KBToGPU/ActivationScalar.cpp may err by, as
// docs/tolerances.md derives it (section 1's rows for these ops). The
// functions the kernel uses: __nv_expf (or __nv_fast_expf in a matmul
// epilogue), __nv_expm1f, __nv_log1pf, __nv_logf, __nv_tanhf, sqrt.rn.f32,
// rcp.rn.f32, div.rn.f32 (div.full in a fast epilogue).
//
//===----------------------------------------------------------------------===//

#include "ReferenceActivations.h"
#include "ManifestParsing.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>

namespace kb::runtime {

namespace {

constexpr double u = kFp32Unit;
/// Reference.cpp's constants: a result flushed to zero errs by at most
/// 2^-125; fp32 overflows past FLT_MAX.
constexpr double kFlush = 0x1p-125;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
/// The largest |mish'| on the real line, 1.0885 (at x = 1.49).
constexpr double kMishLipschitz = 1.1;

/// __expf's 2 + 1.173 |t| ulp (covers expf's 2 ulp), as Reference.cpp.
double expRel(double t) { return 2 * u * (2 + 1.173 * std::fabs(t)); }

/// Reference.cpp's finish: propagated error, own relative rounding on
/// |y| + prop, an absolute flush term; +inf where fp32 may overflow or the
/// reference is not finite.
double finish(double y, double prop, double rel, double flush = kFlush) {
  double e = prop + rel * (std::fabs(y) + prop) + flush;
  if (std::isnan(y) || std::isnan(e) || std::fabs(y) + e > kFltMax)
    return INFINITY;
  return e;
}

/// max(x, lo) then min(·, hi), NaN staying NaN (torch.clamp).
double clampRef(double v, bool hasLo, double lo, bool hasHi, double hi) {
  if (std::isnan(v))
    return v;
  if (hasLo)
    v = std::max(v, lo);
  if (hasHi)
    v = std::min(v, hi);
  return v;
}

/// A clamp is exact; where [v - e, v + e] lies beyond a bound the result is
/// that bound whatever the error.
double clampBound(double v, double e, double y, bool hasLo, double lo,
                  bool hasHi, double hi) {
  if ((hasHi && v - e >= hi) || (hasLo && v + e <= lo))
    return finish(y, 0, 0, 0);
  return finish(y, e, 0, 0);
}

double relu6p3(double v) { return std::min(std::max(v + 3, 0.0), 6.0); }

double softplusRef(double v, double beta, double threshold) {
  double z = beta * v;
  if (z > threshold)
    return v;
  return std::log1p(std::exp(z)) / beta;
}

/// z = fl(beta x), t = exp(z) (relative delta: the product's rounding u |z|
/// in the exponent and exp's own), L = log1pf(t) (w delta + 1 ulp, w =
/// t / (1 + t)), L / beta (4u: fast or not). Lipschitz 1. Where the
/// kernel's z may fall on the other side of the threshold, the two
/// branches differ by at most log1p(exp(-threshold)) / beta.
double softplusBound(double v, double e, double y, double beta,
                     double threshold) {
  double zHi = beta * (v + e) * (1 + u), zLo = beta * (v - e) * (1 - u);
  bool straddles = zLo <= threshold && threshold <= zHi;
  double gap = straddles ? std::log1p(std::exp(-threshold)) / beta : 0;
  if (beta * v > threshold && !straddles)
    return finish(y, e, 0, 0); // the kernel returns its x
  if (zHi > 88.7)
    return INFINITY; // exp(z) may overflow in fp32
  double z = beta * v;
  double delta =
      expRel(std::fabs(z) + beta * e) + u * (std::fabs(z) + beta * e);
  double w = 1 / (1 + std::exp(-zHi));
  double l = std::log1p(std::exp(z));
  double own = (w * delta + 2 * u * l) / beta;
  return finish(y, e + gap + own, 4 * u, kFlush * (1 + 1 / beta));
}

/// x where x > 0, k expm1(x) elsewhere (NaN: NaN).
double eluRef(double v, double pos, double k) {
  return v > 0 ? pos : k * std::expm1(v);
}

double mishRef(double v) {
  double sp = v > 700 ? v : std::log1p(std::exp(v));
  return v * std::tanh(sp);
}

/// x tanh(log1pf(exp(x))): exp's delta and log1pf's 1 ulp reach tanh's
/// argument as w delta + 2u sp (w = sigmoid(x)), tanh passes them on
/// damped by sech^2(sp) and adds its 2 ulp, the product its u. Where
/// exp(x) flushes (x < -87) the kernel gives 0, the true value is below
/// |x| 2^-126.
double mishBound(double v, double e, double y) {
  double hi = v + e;
  double sp = hi > 700 ? hi : std::log1p(std::exp(v));
  double w = 1 / (1 + std::exp(-std::min(hi, 700.0)));
  double c = std::cosh(std::min(sp, 700.0));
  double sech2 = 1 / (c * c);
  double inner = w * expRel(std::fabs(v) + e) + 2 * u * sp;
  double own =
      (std::fabs(v) + e) * (sech2 * inner + 4 * u * std::fabs(std::tanh(sp)));
  return finish(y, kMishLipschitz * e + own, u, kFlush * (1 + std::fabs(v)));
}

} // namespace

bool isActivationOp(const std::string &name, bool binary) {
  static const std::set<std::string> unary = {
      "kb.softplus",    "kb.elu",       "kb.selu", "kb.hardtanh",
      "kb.hardsigmoid", "kb.hardswish", "kb.mish", "kb.softsign",
      "kb.abs",         "kb.neg",       "kb.sqrt", "kb.rsqrt",
      "kb.log",         "kb.clamp"};
  static const std::set<std::string> binaryOps = {"kb.minimum", "kb.maximum"};
  return binary ? binaryOps.count(name) != 0 : unary.count(name) != 0;
}

bool evalActivation(const ProgramOp &op,
                    const std::vector<const HostTensor *> &in,
                    HostTensor &out) {
  const std::string &name = op.op;
  if (!isActivationOp(name, false) && !isActivationOp(name, true))
    return false;
  const HostTensor &x = *in[0];
  const int64_t n = static_cast<int64_t>(x.data.size());
  auto unary = [&](auto f, auto bound) {
    for (int64_t i = 0; i < n; ++i) {
      double v = x.data[i], e = x.errAt(i), y = f(v);
      out.data[i] = y;
      out.err[i] = std::isfinite(e) ? bound(v, e, y) : INFINITY;
    }
  };
  if (isActivationOp(name, true)) {
    if (in.size() != 2 || in[1]->data.size() != x.data.size())
      throw std::runtime_error(name + ": expects two inputs of one size");
    const HostTensor &z = *in[1];
    bool isMax = name == "kb.maximum";
    for (int64_t i = 0; i < n; ++i) {
      double a = x.data[i], b = z.data[i];
      // torch.minimum / maximum: NaN if either is NaN.
      double y = std::isnan(a) || std::isnan(b) ? NAN
                 : isMax                        ? std::max(a, b)
                                                : std::min(a, b);
      double e = std::max(x.errAt(i), z.errAt(i)); // exact: max error
      out.data[i] = y;
      out.err[i] = std::isfinite(e) ? finish(y, e, 0, 0) : INFINITY;
    }
    return true;
  }
  if (name == "kb.abs") {
    unary([](double v) { return std::fabs(v); },
          [](double, double e, double y) { return finish(y, e, 0, 0); });
  } else if (name == "kb.neg") {
    unary([](double v) { return -v; },
          [](double, double e, double y) { return finish(y, e, 0, 0); });
  } else if (name == "kb.clamp" || name == "kb.hardtanh") {
    bool clamp = name == "kb.clamp";
    bool hasLo = !clamp || op.attrs.contains("min");
    bool hasHi = !clamp || op.attrs.contains("max");
    double lo = op.attrDouble(clamp ? "min" : "min_val", -1.0);
    double hi = op.attrDouble(clamp ? "max" : "max_val", 1.0);
    unary([&](double v) { return clampRef(v, hasLo, lo, hasHi, hi); },
          [&](double v, double e, double y) {
            return clampBound(v, e, y, hasLo, lo, hasHi, hi);
          });
  } else if (name == "kb.hardsigmoid") {
    // fl(x + 3) (u |x + 3|), clamped exactly, / 6 (4u).
    unary([](double v) { return std::isnan(v) ? v : relu6p3(v) / 6; },
          [](double v, double e, double y) {
            if (v + e <= -3 || v - e >= 3)
              return finish(y, 0, 0, 0); // 0 or 1 exactly
            return finish(y, e / 6 + u * (std::fabs(v) + e + 3) / 6, 4 * u);
          });
  } else if (name == "kb.hardswish") {
    // (x * relu6(x + 3)) / 6: |hardswish'| <= 1.5; the add's u |x + 3|
    // times |x| / 6, then the product's u and the division's 4u.
    unary([](double v) { return std::isnan(v) ? v : v * relu6p3(v) / 6; },
          [](double v, double e, double y) {
            if (v + e <= -3)
              return finish(y, 0, 0, 0); // x * 0
            double m = std::fabs(v) + e;
            return finish(y, 1.5 * e + u * m * (m + 3) / 6, 5 * u);
          });
  } else if (name == "kb.softsign") {
    // x / (1 + |x|): |softsign'| = 1 / (1 + |x|)^2; the add's u and the
    // division's 4u, relative.
    unary([](double v) { return v / (1 + std::fabs(v)); },
          [](double v, double e, double y) {
            double d = 1 + std::max(0.0, std::fabs(v) - e);
            return finish(y, e / (d * d), 5 * u);
          });
  } else if (name == "kb.sqrt") {
    // sqrt.rn: u. Concave: the spread is largest towards 0,
    // sqrt(v) - sqrt(v - e); unbounded where the input may be negative.
    unary([](double v) { return std::sqrt(v); },
          [](double v, double e, double y) -> double {
            if (e > 0 && v - e <= 0)
              return INFINITY;
            double prop = e == 0 ? 0 : e / (std::sqrt(v) + std::sqrt(v - e));
            return finish(y, prop, u);
          });
  } else if (name == "kb.rsqrt") {
    // rcp.rn(sqrt.rn(x)): 2u. Convex, decreasing: the spread is
    // 1/sqrt(v - e) - 1/sqrt(v).
    unary([](double v) { return 1 / std::sqrt(v); },
          [](double v, double e, double y) -> double {
            if (v <= 0 || (e > 0 && v - e <= 0))
              return INFINITY;
            double s = std::sqrt(v), t = std::sqrt(v - e);
            return finish(y, e / (s * t * (s + t)), 2 * u);
          });
  } else if (name == "kb.log") {
    // __nv_logf: 1 ulp (2u relative). The spread is log(v) - log(v - e) =
    // -log1p(-e / v); a subnormal input may be flushed to 0 (log -inf).
    unary([](double v) { return std::log(v); },
          [](double v, double e, double y) -> double {
            if (v < 0x1p-126 || (e > 0 && v - e <= 0))
              return INFINITY;
            return finish(y, -std::log1p(-e / v), 2 * u);
          });
  } else if (name == "kb.softplus") {
    double beta = op.attrDouble("beta", 1.0);
    double threshold = op.attrDouble("threshold", 20.0);
    unary([&](double v) { return softplusRef(v, beta, threshold); },
          [&](double v, double e, double y) {
            return softplusBound(v, e, y, beta, threshold);
          });
  } else if (name == "kb.elu") {
    // x > 0: x (exact). Else fl(alpha * expm1f(x)): 1 ulp, the product's
    // u, and a u of margin; Lipschitz max(1, |alpha|).
    double alpha = op.attrDouble("alpha", 1.0);
    unary([&](double v) { return eluRef(v, v, alpha); },
          [&](double v, double e, double y) {
            if (v - e > 0)
              return finish(y, e, 0, 0);
            return finish(y, std::max(1.0, std::fabs(alpha)) * e, 4 * u);
          });
  } else if (name == "kb.selu") {
    // scale x (the rounded constant and the product: 2u), or fl(alpha
    // scale) * expm1f(x) (the constant, 1 ulp, the product: 4u);
    // Lipschitz scale * alpha = 1.7581.
    unary(
        [](double v) {
          return eluRef(v, kSeluScale * v, kSeluAlpha * kSeluScale);
        },
        [](double v, double e, double y) {
          if (v - e > 0)
            return finish(y, kSeluScale * e, 2 * u);
          return finish(y, kSeluScale * kSeluAlpha * e, 4 * u);
        });
  } else if (name == "kb.mish") {
    unary([](double v) { return mishRef(v); },
          [](double v, double e, double y) { return mishBound(v, e, y); });
  } else {
    return false;
  }
  return true;
}

void checkActivationAttrs(const ProgramOp &op, const std::string &where) {
  using namespace manifest;
  if (!isActivationOp(op.op, false))
    return;
  std::string w = where + ".attrs";
  auto number = [&](const char *key, bool required) -> std::optional<double> {
    if (!op.attrs.contains(key)) {
      if (required)
        fail(where + " needs attrs." + key);
      return std::nullopt;
    }
    return asNumber(op.attrs[key], w + "." + key); // finite
  };
  auto ordered = [&](std::optional<double> lo, std::optional<double> hi,
                     const char *loKey, const char *hiKey) {
    if (lo && hi && *lo > *hi)
      fail(w + ": " + loKey + " " + shown(op.attrs[loKey]) + " is above " +
           hiKey + " " + shown(op.attrs[hiKey]));
  };
  if (op.op == "kb.softplus") {
    if (!(*number("beta", true) > 0))
      fail(w + ".beta " + shown(op.attrs["beta"]) + " must be positive");
    number("threshold", true);
  } else if (op.op == "kb.elu") {
    number("alpha", true);
  } else if (op.op == "kb.hardtanh") {
    ordered(number("min_val", true), number("max_val", true), "min_val",
            "max_val");
  } else if (op.op == "kb.clamp") {
    auto lo = number("min", false), hi = number("max", false);
    if (!lo && !hi)
      fail(where + " needs attrs.min or attrs.max (or both)");
    ordered(lo, hi, "min", "max");
  }
}

} // namespace kb::runtime
