//===- Reference.cpp - float64 references for kb's ops --------------------===//
//
// Straightforward float64 loops, written for obviousness rather than speed:
// they are the reference the fast kernels are checked against.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Reference.h"
#include "kb/Runtime/Philox.h"
#include "ReferenceActivations.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace kb::runtime {

HostTensor fromFloats(const std::vector<int64_t> &shape, const float *data) {
  HostTensor t;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  t.data.assign(data, data + n);
  return t;
}

namespace {

double gelu(double x, const std::string &approx) {
  if (approx == "erf")
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  // 0.5 x (1 + tanh(z)) = x / (1 + exp(-2 z)): the same function, written
  // without the cancellation of 1 + tanh(z) for z << 0 (which rounds to an
  // exact 0 in float64 around x = -7.3, where the true value is ~1e-16).
  const double k = std::sqrt(2.0 / M_PI);
  double z = k * (x + 0.044715 * x * x * x);
  return x / (1.0 + std::exp(-2.0 * z));
}

void requireSame(const ProgramOp &op, const HostTensor &a,
                 const HostTensor &b) {
  if (a.data.size() != b.data.size())
    throw std::runtime_error(op.op + ": operands of different sizes");
}

} // namespace

namespace {

constexpr double u = kFp32Unit;
/// Absolute error of a result flushed to zero (ftz) or of a fast division
/// whose denominator is beyond 2^126: below the smallest normal, 2^-126.
constexpr double kFlush = 0x1p-125;

/// Relative error of the kernel's exp of an fp32 argument t: __expf's
/// documented 2 + floor(1.173 |t|) ulp (an ulp is at most 2u relative),
/// which also covers expf's 2 ulp.
double expRel(double t) { return 2 * u * (2 + 1.173 * std::fabs(t)); }

/// Finishes one element's bound: `prop` is the propagated error of the exact
/// op on the perturbed inputs, `rel` the op's own relative rounding (applied
/// to |y| + prop), `flush` the absolute flush term.
double finish(double y, double prop, double rel, double flush = kFlush) {
  double e = prop + rel * (std::fabs(y) + prop) + flush;
  if (std::isnan(y) || std::isnan(e) || std::fabs(y) + e > kFltMax)
    return INFINITY; // fp32 may overflow (or the reference is not finite)
  return e;
}

/// max |tanh(x) - tanh(v)| over |x - v| <= e, exactly: tanh a - tanh b =
/// sinh(a - b) / (cosh a cosh b), largest on the side towards 0. Written
/// without the cancellation of 1 - tanh(d)^2, which is exactly 0 in float64
/// for |v| > 19 (the derivative there is 4 e^-2|v|, not 0).
double tanhSpread(double v, double e) {
  double num = std::sinh(e);
  if (!std::isfinite(num))
    return 2.0; // tanh lies in [-1, 1]
  double den = std::cosh(v) * std::cosh(std::fabs(v) - e);
  return std::min(2.0, num / den); // den = inf: the spread is below 1e-300
}

/// max |sigmoid(x) - sigmoid(v)| over |x - v| <= e, exactly: sigmoid(x) =
/// (1 + tanh(x/2)) / 2, so sigmoid(a) - sigmoid(b) = sinh((a - b)/2) /
/// (2 cosh(a/2) cosh(b/2)), largest on the side towards 0. For v << 0,
/// where sigmoid(v) ~ e^v, it is sigmoid(v) expm1(e): an absolute error in
/// v becomes the same relative error in the result. (The former
/// sigmoid(d)(1 - sigmoid(d)) e, d = |v| - e, is sound in exact arithmetic
/// but is exactly 0 in float64 for d > 36.7, where 1 + e^-d rounds to 1:
/// that left only the op's own rounding, and called a correct tf32
/// linear + swish with v ~ -75 WRONG.)
double sigmoidSpread(double v, double e) {
  double num = std::sinh(e / 2);
  if (!std::isfinite(num))
    return 1.0; // sigmoid lies in [0, 1]
  double den = 2 * std::cosh(v / 2) * std::cosh((std::fabs(v) - e) / 2);
  return std::min(1.0, num / den);
}

/// The largest |gelu'| (either form) on the real line, about 1.13.
constexpr double kGeluLipschitz = 1.2;
/// The largest |silu'| on the real line, 1.0998 (at x = 2.3994).
constexpr double kSiluLipschitz = 1.1;

/// kb.pow's integer exponents of magnitude at most this are computed by
/// multiplications (as the lowering does, Common.cpp's kMaxIntPow).
constexpr double kMaxIntPow = 32;

bool isIntPow(double c) {
  return c == std::trunc(c) && std::fabs(c) <= kMaxIntPow;
}

double powRef(double v, double c) {
  if (c == 0)
    return 1.0; // x^0 = 1, NaN included (as the kernel and PyTorch)
  return std::pow(v, c);
}

/// What softmax's and log_softmax's bounds read of a row: its max, its
/// largest input error, whether every value is finite, and sum_j exp(x_j -
/// max).
struct RowScan {
  double max = -std::numeric_limits<double>::infinity(), errMax = 0,
         expSum = 0;
  bool finite = true;
};

RowScan scanRow(const HostTensor &x, int64_t r, int64_t len) {
  RowScan rs;
  const double *row = &x.data[r * len];
  for (int64_t j = 0; j < len; ++j) {
    rs.max = std::max(rs.max, row[j]);
    rs.errMax = std::max(rs.errMax, x.errAt(r * len + j));
    rs.finite = rs.finite && std::isfinite(row[j]);
  }
  for (int64_t j = 0; j < len; ++j)
    rs.expSum += std::exp(row[j] - rs.max);
  return rs;
}

/// |x̂^c - v^c| for |x̂ - v| <= e. Integer c (square and multiply, n = |c|):
/// |x^n - v^n| <= n max(|x|, |v|)^(n-1) |x - v|, at most n - 1 rounded
/// products (+1 for a negative c's division), n u. Other c: powf (4 ulp, 8u),
/// defined for a positive base; the propagation is |c| t^(c-1) e at the end
/// of [v - e, v + e] where it is largest, and the bound is unbounded (not
/// checked) where that interval reaches 0 or below.
double powBound(double v, double e, double y, double c) {
  if (c == 0)
    return 0.0;
  double n = std::fabs(c);
  if (isIntPow(c)) {
    if (c > 0)
      return finish(y, n * std::pow(std::fabs(v) + e, n - 1) * e, n * u);
    if (std::fabs(v) <= e)
      return INFINITY; // the base may be 0
    return finish(y, n * std::pow(std::fabs(v) - e, -n - 1) * e, (n + 2) * u);
  }
  if (v - e <= 0)
    return (v == 0 && e == 0) ? 0.0 : INFINITY;
  double slope = n * std::max(std::pow(v - e, c - 1), std::pow(v + e, c - 1));
  return finish(y, slope * e, 8 * u);
}

void softmaxRows(const HostTensor &x, HostTensor &out) {
  const int64_t len = x.lastDim(), n = static_cast<int64_t>(x.data.size());
  // Rounded factors on one element's path (argument subtractions, exps,
  // online rescales, the partial-exchange factors, the final scaling): at
  // most about 2 log2(len) + 4 (docs/tolerances.md).
  const double factors =
      2 * std::ceil(std::log2(double(std::max<int64_t>(len, 2)))) + 4;
  const double sumRel = u * (2 * std::sqrt(double(len)) + 8);
  std::vector<double> rho(len);
  for (int64_t r = 0; r < n / len; ++r) {
    const double *row = &x.data[r * len];
    double *y = &out.data[r * len];
    double *ey = &out.err[r * len];
    const RowScan rs = scanRow(x, r, len);
    const double m = rs.max, emax = rs.errMax, s = rs.expSum;
    const bool finite = rs.finite;
    for (int64_t j = 0; j < len; ++j)
      y[j] = std::exp(row[j] - m) / s;
    if (!finite || !std::isfinite(emax) || emax > 600) {
      for (int64_t j = 0; j < len; ++j)
        ey[j] = INFINITY;
      continue;
    }
    // Input errors: y'_i / y_i lies in [exp(-e_i) / W, exp(e_i + ebar)],
    // ebar = sum_j y_j e_j, W = sum_j y_j exp(e_j).
    double ebar = 0, w = 0, sumTerms = 0;
    for (int64_t j = 0; j < len; ++j) {
      double e = x.errAt(r * len + j);
      ebar += y[j] * e;
      w += y[j] * std::exp(e);
      double tau = (m - row[j]) + e + emax; // |computed argument| at most
      rho[j] = u * (3.35 * tau + 5 * factors);
      sumTerms += y[j] * rho[j];
    }
    double epsS = sumTerms + sumRel;
    for (int64_t j = 0; j < len; ++j) {
      double e = x.errAt(r * len + j);
      double prop = std::max(std::expm1(e + ebar), 1 - std::exp(-e) / w);
      double rel = prop + rho[j] + epsS;
      ey[j] = std::min(rel * y[j] + kFlush, 1.0); // outputs lie in [0, 1]
    }
  }
}

/// kb.log_softmax: y_j = x_j - m - log(S), S = sum_k exp(x_k - m). Its
/// bound (docs/tolerances.md, "Log-softmax"): the inputs' errors move y_j by
/// at most e_j + log(W) (W = sum_k p_k exp(e_k), p the softmax), the
/// kernel's own rounding by u |x_j - m| (the subtraction), the relative
/// error of the computed S (softmax's eps_S: the exps and the adds) as an
/// absolute error of log(S), logf's 1 ulp on log(S) and the final
/// subtraction's rounding.
void logSoftmaxRows(const HostTensor &x, HostTensor &out) {
  const int64_t len = x.lastDim(), n = static_cast<int64_t>(x.data.size());
  const double factors =
      2 * std::ceil(std::log2(double(std::max<int64_t>(len, 2)))) + 4;
  const double sumRel = u * (2 * std::sqrt(double(len)) + 8);
  for (int64_t r = 0; r < n / len; ++r) {
    const double *row = &x.data[r * len];
    double *y = &out.data[r * len];
    double *ey = &out.err[r * len];
    const RowScan rs = scanRow(x, r, len);
    const double m = rs.max, emax = rs.errMax, s = rs.expSum;
    const bool finite = rs.finite;
    const double logS = std::log(s);
    for (int64_t j = 0; j < len; ++j)
      y[j] = (row[j] - m) - logS;
    if (!finite || !std::isfinite(emax) || emax > 600) {
      for (int64_t j = 0; j < len; ++j)
        ey[j] = INFINITY;
      continue;
    }
    double w = 0, sumTerms = 0;
    for (int64_t j = 0; j < len; ++j) {
      double e = x.errAt(r * len + j);
      double p = std::exp(row[j] - m) / s;
      w += p * std::exp(e);
      double tau = (m - row[j]) + e + emax;
      sumTerms += p * u * (3.35 * tau + 5 * factors);
    }
    const double epsS = sumTerms + sumRel;
    const double logErr = -std::log1p(-std::min(epsS, 0.5)) + 2 * u * logS;
    for (int64_t j = 0; j < len; ++j) {
      double e = x.errAt(r * len + j);
      ey[j] = e + std::log(w) + u * (m - row[j] + e + emax) + logErr +
              2 * u * std::fabs(y[j]) + kFlush;
    }
  }
}

} // namespace

void roundToType(HostTensor &t, DType type) {
  if (!isHalf(type))
    return;
  const double unit = unitRoundoff(type), floor = subnormalHalfStep(type),
               top = maxFinite(type);
  for (size_t i = 0; i < t.data.size(); ++i) {
    double x = t.data[i], e = t.errAt(i);
    if (e == 0) {
      // An exact value (an input, a relu of one): the kernel's f32 value is
      // this one, rounded once as the reference rounds it.
      t.data[i] = roundTo(type, x);
      if (std::isinf(t.data[i]) && std::isfinite(x)) {
        if (t.err.empty())
          t.err.assign(t.data.size(), 0.0);
        t.err[i] = INFINITY; // rounds to inf: no comparison says more
      }
      continue;
    }
    // |fl16(x') - x| <= |fl16(x') - x'| + |x' - x| <= u (|x| + e) + e, and
    // half a subnormal step below the normal range.
    double m = std::fabs(x) + e;
    t.err[i] = !std::isfinite(e) || m >= top ? INFINITY : e + unit * m + floor;
  }
}

double withOutputRounding(double bound, double value, DType out) {
  if (!isHalf(out))
    return bound;
  double m = std::fabs(value) + bound;
  return m >= maxFinite(out)
             ? INFINITY
             : bound + unitRoundoff(out) * m + subnormalHalfStep(out);
}

static HostTensor evalOpF32(const ProgramOp &op,
                            const std::vector<const HostTensor *> &in,
                            int64_t indexOffset);

/// kb.rotary: rows of the input (its leading axes flattened) are positions
/// r mod P of the P x head_dim / 2 tables (r counted from `indexOffset`,
/// the flat index of the input's first element: kb-run checks a kernel a
/// block of rows at a time); each pair (2i, 2i + 1) of a
/// head is rotated: y0 = x0 c - x1 s, y1 = x0 s + x1 c. The kernel rounds
/// the two products and the sum (or fuses one product into an FMA): the
/// bound propagates each input's and table entry's bound and adds 2u of
/// |x0 c| + |x1 s| for the products, then u of the result for the sum.
static HostTensor evalRotary(const ProgramOp &op,
                             const std::vector<const HostTensor *> &in,
                             int64_t indexOffset) {
  if (in.size() != 3)
    throw std::runtime_error("kb.rotary: expects the input, cos and sin");
  const HostTensor &x = *in[0], &cs = *in[1], &sn = *in[2];
  if (cs.shape.size() != 2 || sn.shape != cs.shape || x.shape.empty())
    throw std::runtime_error("kb.rotary: tables must be P x head_dim / 2");
  int64_t period = cs.shape[0], half = cs.shape[1], hd = 2 * half;
  int64_t last = x.lastDim();
  if (last % hd || indexOffset % last)
    throw std::runtime_error("kb.rotary: last dimension not a multiple of "
                             "head_dim, or a slice not of whole rows");
  HostTensor out;
  out.shape = x.shape;
  out.data.resize(x.data.size());
  out.err.assign(x.data.size(), 0.0);
  const int64_t n = static_cast<int64_t>(x.data.size());
  for (int64_t i = 0; i < n; i += 2) {
    int64_t t =
        (((i + indexOffset) / last) % period) * half + (i % last) % hd / 2;
    double x0 = x.data[i], x1 = x.data[i + 1], c = cs.data[t], s = sn.data[t];
    double e0 = x.errAt(i), e1 = x.errAt(i + 1), ec = cs.errAt(t),
           es = sn.errAt(t);
    double y[2] = {x0 * c - x1 * s, x0 * s + x1 * c};
    double mag = std::fabs(x0) * (std::fabs(c) + std::fabs(s)) +
                 std::fabs(x1) * (std::fabs(c) + std::fabs(s));
    // Both outputs: |c| e0 + |s| e1 (or swapped) <= (|c| + |s|) max(e0,
    // e1), the tables' errors times |x0| + |x1|.
    double prop = (std::fabs(c) + std::fabs(s)) * std::max(e0, e1) +
                  (std::fabs(x0) + std::fabs(x1)) * std::max(ec, es) +
                  std::max(e0, e1) * std::max(ec, es);
    bool finite = std::isfinite(e0) && std::isfinite(e1) &&
                  std::isfinite(ec) && std::isfinite(es);
    for (int l = 0; l < 2; ++l) {
      out.data[i + l] = y[l];
      out.err[i + l] = finite ? finish(y[l], prop + 2 * u * mag, u) : INFINITY;
    }
  }
  return out;
}

HostTensor evalOp(const ProgramOp &op,
                  const std::vector<const HostTensor *> &in,
                  int64_t indexOffset) {
  if (op.op == "kb.convert") {
    if (in.size() != 1)
      throw std::runtime_error("kb.convert: needs one input");
    HostTensor out = *in[0];
    roundToType(out, op.dtype);
    return out;
  }
  HostTensor out = evalOpF32(op, in, indexOffset);
  // 16-bit only at the store: arithmetic (and values kept in registers
  // between fused ops) is f32.
  if (op.toBuffer)
    roundToType(out, op.dtype);
  return out;
}

static HostTensor evalOpF32(const ProgramOp &op,
                            const std::vector<const HostTensor *> &in,
                            int64_t indexOffset) {
  if (in.empty())
    throw std::runtime_error(op.op + ": no inputs");
  if (isRowOp(op.op))
    return evalRowOp(op, in);
  const HostTensor &x = *in[0];
  HostTensor out;
  if (op.op == "kb.rotary")
    return evalRotary(op, in, indexOffset);
  if (op.op == "kb.split_sum") {
    // The partials added in order s = 0..S-1 in fp32: each partial sum
    // rounds once, so |fl - exact| <= sum_s e_s + (S - 1) u sum_s |p_s|
    // (recursive summation, docs/tolerances.md).
    if (x.shape.size() < 2)
      throw std::runtime_error("kb.split_sum: input of rank < 2");
    out.shape.assign(x.shape.begin() + 1, x.shape.end());
    int64_t splits = x.shape[0];
    int64_t per = static_cast<int64_t>(x.data.size()) / splits;
    out.data.assign(per, 0.0);
    out.err.assign(per, 0.0);
    for (int64_t i = 0; i < per; ++i) {
      double y = 0, mag = 0, e = 0;
      for (int64_t q = 0; q < splits; ++q) {
        double v = x.data[q * per + i];
        y += v;
        mag += std::fabs(v);
        e += x.errAt(q * per + i);
      }
      out.data[i] = y;
      out.err[i] = std::isfinite(e)
                       ? finish(y, e + double(splits - 1) * u * mag, 0)
                       : INFINITY;
    }
    return out;
  }
  out.shape = x.shape;
  out.data.resize(x.data.size());
  out.err.assign(x.data.size(), 0.0);
  const int64_t n = static_cast<int64_t>(x.data.size());
  // f(v, e) sets out.data[i] and out.err[i] from the input's value and bound.
  auto unaryBound = [&](auto f, auto bound) {
    for (int64_t i = 0; i < n; ++i) {
      double v = x.data[i], e = x.errAt(i);
      double y = f(v);
      out.data[i] = y;
      out.err[i] = std::isfinite(e) ? bound(v, e, y) : INFINITY;
    }
  };
  auto binaryBound = [&](auto f, auto bound) {
    if (in.size() != 2)
      throw std::runtime_error(op.op + ": expects two inputs");
    requireSame(op, x, *in[1]);
    const HostTensor &z = *in[1];
    for (int64_t i = 0; i < n; ++i) {
      double a = x.data[i], b = z.data[i], ea = x.errAt(i), eb = z.errAt(i);
      double y = f(a, b);
      out.data[i] = y;
      out.err[i] = std::isfinite(ea) && std::isfinite(eb)
                       ? bound(a, b, ea, eb, y)
                       : INFINITY;
    }
  };
  auto addBound = [](double, double, double ea, double eb, double y) {
    return finish(y, ea + eb, u);
  };
  const std::string &name = op.op;
  if (name == "kb.add")
    binaryBound([](double a, double b) { return a + b; }, addBound);
  else if (name == "kb.sub")
    binaryBound([](double a, double b) { return a - b; }, addBound);
  else if (name == "kb.mul")
    binaryBound([](double a, double b) { return a * b; },
                [](double a, double b, double ea, double eb, double y) {
                  return finish(
                      y, std::fabs(a) * eb + std::fabs(b) * ea + ea * eb, u);
                });
  else if (name == "kb.div")
    binaryBound([](double a, double b) { return a / b; },
                [](double a, double b, double ea, double eb, double y) {
                  if (std::fabs(b) <= eb)
                    return double(INFINITY); // the denominator may be 0
                  double prop = (ea + std::fabs(y) * eb) / (std::fabs(b) - eb);
                  return finish(y, prop, 4 * u);
                });
  else if (name == "kb.bias_add") {
    if (in.size() != 2 ||
        in[1]->data.size() != static_cast<size_t>(x.lastDim()))
      throw std::runtime_error("kb.bias_add: bias length does not match");
    int64_t last = x.lastDim();
    const HostTensor &bias = *in[1];
    for (int64_t i = 0; i < n; ++i) {
      double y = x.data[i] + bias.data[i % last];
      double ea = x.errAt(i), eb = bias.errAt(i % last);
      out.data[i] = y;
      out.err[i] = std::isfinite(ea) && std::isfinite(eb)
                       ? finish(y, ea + eb, u)
                       : INFINITY;
    }
  } else if (name == "kb.scale") {
    double f = op.attrDouble("factor", 1.0);
    // The kernel multiplies by fp32(factor): u for the constant, u for the
    // product.
    unaryBound([&](double v) { return v * f; },
               [&](double, double e, double y) {
                 return finish(y, std::fabs(f) * e, 2 * u);
               });
  } else if (name == "kb.relu")
    unaryBound([](double v) { return v > 0 ? v : 0.0; },
               [](double v, double e, double) { return v + e <= 0 ? 0.0 : e; });
  else if (name == "kb.tanh")
    unaryBound([](double v) { return std::tanh(v); },
               [](double v, double e, double y) {
                 return finish(y, tanhSpread(v, e), 4 * u); // tanhf: 2 ulp
               });
  else if (name == "kb.exp")
    unaryBound([](double v) { return std::exp(v); },
               [](double v, double e, double y) {
                 if (v + e > 88.7)
                   return double(INFINITY);
                 return finish(y, y * std::expm1(e), expRel(std::fabs(v) + e));
               });
  else if (name == "kb.sigmoid")
    unaryBound([](double v) { return 1.0 / (1.0 + std::exp(-v)); },
               [](double v, double e, double y) {
                 // 1 / (1 + exp(-x)): fast exp, an add, a fast division.
                 return finish(y, sigmoidSpread(v, e),
                               expRel(std::fabs(v) + e) + 5 * u);
               });
  else if (name == "kb.silu")
    unaryBound([](double v) { return v / (1.0 + std::exp(-v)); },
               [](double v, double e, double y) {
                 // x / (1 + exp(-x)): sigmoid's fast exp, add and fast
                 // division; |silu'| <= 1.0998 everywhere. Where 1 + exp(-x)
                 // passes 2^126 the fast division gives 0 (the true value
                 // is below |x| 2^-126).
                 return finish(y, kSiluLipschitz * e,
                               expRel(std::fabs(v) + e) + 5 * u,
                               kFlush * (1 + std::fabs(v)));
               });
  else if (name == "kb.add_scalar") {
    double c = op.attrDouble("value", 0.0);
    // The value is an f32 attribute: exact in the kernel; one rounded add.
    unaryBound([&](double v) { return v + c; },
               [](double, double e, double y) { return finish(y, e, u); });
  } else if (name == "kb.leaky_relu") {
    double s = op.attrDouble("slope", 0.01);
    unaryBound([&](double v) { return v >= 0 ? v : s * v; },
               [&](double v, double e, double y) {
                 if (v - e >= 0)
                   return e; // surely non-negative: exact
                 return finish(y, std::max(1.0, std::fabs(s)) * e, u);
               });
  } else if (name == "kb.pow") {
    double c = op.attrDouble("exponent", 1.0);
    unaryBound(
        [&](double v) { return powRef(v, c); },
        [&](double v, double e, double y) { return powBound(v, e, y, c); });
  } else if (name == "kb.gelu") {
    std::string approx = op.attrString("approx", "tanh");
    if (approx == "erf")
      unaryBound([](double v) { return gelu(v, "erf"); },
                 [](double v, double e, double y) {
                   // 0.5 x (1 + erf(x c)): erff 2 ulp and the rounded
                   // argument (together 6u |erf|), the add, the product.
                   double er = std::erf(v / std::sqrt(2.0));
                   double inner = 0.5 * std::fabs(v) *
                                  (6 * u * std::fabs(er) + u * (1 + er));
                   return finish(y, kGeluLipschitz * e + inner, u);
                 });
    else
      unaryBound([](double v) { return gelu(v, "tanh"); },
                 [](double v, double e, double y) {
                   // x / (1 + exp(t)), t = -2 sqrt(2/pi) (x + 0.044715 x^3)
                   // computed in five rounded steps (7u on t).
                   double vv = std::fabs(v) + e;
                   double t =
                       1.5957691216057308 * vv * (1 + 0.044715 * vv * vv);
                   // exp(t) / (1 + exp(t)) weighs exp's error in the
                   // denominator; t > 0 where x < 0 (unknown sign: 1).
                   double tk = v > e ? -t : t;
                   double wgt = 1 / (1 + std::exp(-std::max(tk, -700.0)));
                   double rel = (7 * u * t + expRel(t)) * wgt + 5 * u;
                   return finish(y, kGeluLipschitz * e, rel,
                                 kFlush * (1 + std::fabs(v)));
                 });
  } else if (name == "kb.dropout") {
    float p = static_cast<float>(op.attrDouble("p", 0.0));
    uint64_t seed = static_cast<uint64_t>(op.attrs.value("seed", int64_t(0)));
    double scale = 1.0 / (1.0 - static_cast<double>(p));
    for (int64_t i = 0; i < n; ++i) {
      bool keep = dropoutKeeps(static_cast<uint64_t>(i + indexOffset), p, seed);
      double e = x.errAt(i);
      out.data[i] = keep ? x.data[i] * scale : 0.0;
      // fp32(1 / (1 - p)): two roundings; the product: one.
      out.err[i] = !std::isfinite(e) ? INFINITY
                   : keep            ? finish(out.data[i], scale * e, 3 * u)
                                     : 0.0;
    }
  } else if (name == "kb.softmax") {
    softmaxRows(x, out);
  } else if (name == "kb.log_softmax") {
    logSoftmaxRows(x, out);
  } else if (evalActivation(op, in, out)) {
    // softplus ... maximum (ReferenceActivations.cpp)
  } else {
    throw std::runtime_error("no float64 reference for op '" + name + "'");
  }
  return out;
}

HostTensor evalMatmul(const HostTensor &a, const HostTensor &b, bool transB) {
  size_t r = a.shape.size();
  int64_t batch = r == 3 ? a.shape[0] : 1;
  int64_t m = a.shape[r - 2], k = a.shape[r - 1];
  int64_t n = transB ? b.shape[r - 2] : b.shape[r - 1];
  int64_t ldbT = transB ? b.shape[r - 1] : 0;
  HostTensor c;
  if (r == 3)
    c.shape.push_back(batch);
  c.shape.push_back(m);
  c.shape.push_back(n);
  c.data.assign(batch * m * n, 0.0);
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t i = 0; i < m; ++i) {
      double *crow = &c.data[(z * m + i) * n];
      for (int64_t p = 0; p < k; ++p) {
        double av = a.data[(z * m + i) * k + p];
        if (!transB) {
          const double *brow = &b.data[(z * k + p) * n];
          for (int64_t j = 0; j < n; ++j)
            crow[j] += av * brow[j];
        } else {
          for (int64_t j = 0; j < n; ++j)
            crow[j] += av * b.data[(z * n + j) * ldbT + p];
        }
      }
    }
  return c;
}

MatmulEntry matmulEntry(const float *a, const float *b, int64_t m, int64_t n,
                        int64_t k, bool transB, int64_t batch, int64_t i,
                        int64_t j, int64_t ldbT) {
  MatmulEntry e;
  if (ldbT == 0)
    ldbT = k;
  const float *arow = a + (batch * m + i) * k;
  for (int64_t p = 0; p < k; ++p) {
    double bv =
        transB ? b[(batch * n + j) * ldbT + p] : b[(batch * k + p) * n + j];
    double prod = static_cast<double>(arow[p]) * bv;
    e.value += prod;
    e.absSum += std::fabs(prod);
    e.prodNorm2 += prod * prod;
    e.partial1 += std::fabs(e.value);
    if (p % 8 == 7 || p == k - 1)
      e.partial8 += std::fabs(e.value);
  }
  e.prodNorm2 = std::sqrt(e.prodNorm2);
  return e;
}

Comparison compareWithBound(const float *got, const double *ref,
                            const std::vector<double> &err, int64_t n) {
  Comparison c;
  for (int64_t i = 0; i < n; ++i) {
    double e = err.empty() ? 0.0 : err[i];
    if (!std::isfinite(e)) {
      ++c.unbounded;
      continue;
    }
    ++c.checked;
    double g = got[i], r = ref[i];
    double d = std::fabs(g - r), allowed = kBoundSafety * e;
    bool bad = !(d <= allowed); // NaN fails
    if (!std::isnan(d)) {
      c.maxAbsErr = std::max(c.maxAbsErr, d);
      if (r != 0)
        c.maxRelErr = std::max(c.maxRelErr, d / std::fabs(r));
      if (d > 0)
        c.maxErrOverBound =
            std::max(c.maxErrOverBound, allowed > 0 ? d / allowed : INFINITY);
    } else {
      c.maxErrOverBound = INFINITY;
    }
    if (bad) {
      if (c.firstBad < 0) {
        c.firstBad = i;
        c.got = g;
        c.want = r;
        c.allowed = allowed;
      }
      ++c.bad;
    }
  }
  return c;
}

void mergeComparison(Comparison &all, const Comparison &p, int64_t offset) {
  all.checked += p.checked;
  all.bad += p.bad;
  all.unbounded += p.unbounded;
  all.maxAbsErr = std::max(all.maxAbsErr, p.maxAbsErr);
  all.maxRelErr = std::max(all.maxRelErr, p.maxRelErr);
  all.maxErrOverBound = std::max(all.maxErrOverBound, p.maxErrOverBound);
  if (all.firstBad < 0 && p.firstBad >= 0) {
    all.firstBad = p.firstBad + offset;
    all.got = p.got;
    all.want = p.want;
    all.allowed = p.allowed;
  }
}

Comparison compare(const float *got, const double *ref, int64_t n, double rtol,
                   double atol) {
  Comparison c;
  c.checked = n;
  for (int64_t i = 0; i < n; ++i) {
    double g = got[i], r = ref[i];
    double err = std::fabs(g - r);
    bool bad = !(err <= atol + rtol * std::fabs(r)); // NaN fails
    if (!std::isnan(err)) {
      c.maxAbsErr = std::max(c.maxAbsErr, err);
      if (r != 0)
        c.maxRelErr = std::max(c.maxRelErr, err / std::fabs(r));
    }
    if (bad) {
      if (c.firstBad < 0) {
        c.firstBad = i;
        c.got = g;
        c.want = r;
      }
      ++c.bad;
    }
  }
  return c;
}

double maxRowSumError(const float *got, int64_t n, int64_t rowLen) {
  double worst = 0;
  for (int64_t r = 0; r < n / rowLen; ++r) {
    double s = 0;
    for (int64_t j = 0; j < rowLen; ++j)
      s += got[r * rowLen + j];
    double e = std::fabs(s - 1.0);
    if (std::isnan(e))
      return e;
    worst = std::max(worst, e);
  }
  return worst;
}

double matmulErrorBound(const MatmulEntry &e, int64_t k,
                        const std::string &precision) {
  // Operand rounding: each product errs by at most `rho` relative. The
  // roundings are a common bias (at most rho |c|) plus independent parts of
  // standard deviation at most rho / sqrt(3) each: 6 sigmas of their sum.
  // Accumulation: every add into the fp32 accumulator errs by at most one
  // ulp (2u: the tensor cores truncate) of the partial sum, or by u (FFMA,
  // rounding to nearest), summed over the kernel's steps; a tree or split
  // order instead errs by at most depth * unit * sum |ab|.
  double tree = std::ceil(std::log2(double(std::max<int64_t>(k, 2)))) + 1;
  double rho, acc, partial;
  if (precision == "ieee") {
    rho = 0, acc = u, partial = e.partial1;
  } else if (precision == "tf32") {
    rho = 0x1p-10 + 0x1p-22, acc = 2 * u,
    partial = e.partial8; // rna: 2^-11 each
  } else if (precision == "tf32x3") {
    // big + small, small * small dropped. Each k tile's three products go
    // into fresh (truncating) accumulators, at most 3 BK / 8 <= 24 adds per
    // product, then into the running sum (steps of BK, within partial8).
    rho = 3 * 0x1p-22, acc = 2 * u, partial = e.partial8;
    tree += 24;
  } else if (precision == "cublas-tf32") {
    // cuBLAS's operand rounding is not documented: truncation (2^-10 each)
    // is the worst it can be.
    rho = 0x1p-9 + 0x1p-20, acc = 2 * u, partial = e.partial8;
  } else if (precision == "native") {
    // f16/bf16 operands: their products are exact in fp32 (11 + 11 and
    // 8 + 8 significand bits), accumulated in fp32 by truncating tensor-core
    // adds, k16 per wgmma (within the k8 steps' partial sums).
    rho = 0, acc = 2 * u, partial = e.partial8;
  } else if (precision == "cublas-native") {
    rho = 0, acc = 2 * u, partial = e.partial1; // any order
  } else if (precision == "cublas-ieee") {
    rho = 0, acc = 2 * u, partial = e.partial1; // any order, either rounding
  } else {
    throw std::runtime_error("no matmul error bound for precision '" +
                             precision + "'");
  }
  double operands =
      rho * (std::fabs(e.value) + 6 / std::sqrt(3.0) * e.prodNorm2);
  return operands + acc * (partial + tree * e.absSum) + kFlush;
}

} // namespace kb::runtime
