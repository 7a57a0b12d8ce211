//===- Reference.cpp - float64 references for kb's ops --------------------===//
//
// Straightforward float64 loops, written for obviousness rather than speed:
// they are the reference the fast kernels are checked against.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Reference.h"
#include "kb/Runtime/Philox.h"

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

void requireSame(const ProgramOp &op, const HostTensor &a, const HostTensor &b) {
  if (a.data.size() != b.data.size())
    throw std::runtime_error(op.op + ": operands of different sizes");
}

} // namespace

HostTensor evalOp(const ProgramOp &op, const std::vector<const HostTensor *> &in,
                  int64_t indexOffset) {
  if (in.empty())
    throw std::runtime_error(op.op + ": no inputs");
  const HostTensor &x = *in[0];
  HostTensor out;
  out.shape = x.shape;
  out.data.resize(x.data.size());
  const int64_t n = static_cast<int64_t>(x.data.size());
  auto unary = [&](auto f) {
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = f(x.data[i]);
  };
  auto binary = [&](auto f) {
    if (in.size() != 2)
      throw std::runtime_error(op.op + ": expects two inputs");
    requireSame(op, x, *in[1]);
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = f(x.data[i], in[1]->data[i]);
  };
  const std::string &name = op.op;
  if (name == "kb.add")
    binary([](double a, double b) { return a + b; });
  else if (name == "kb.sub")
    binary([](double a, double b) { return a - b; });
  else if (name == "kb.mul")
    binary([](double a, double b) { return a * b; });
  else if (name == "kb.div")
    binary([](double a, double b) { return a / b; });
  else if (name == "kb.bias_add") {
    if (in.size() != 2 || in[1]->data.size() != static_cast<size_t>(x.lastDim()))
      throw std::runtime_error("kb.bias_add: bias length does not match");
    int64_t last = x.lastDim();
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = x.data[i] + in[1]->data[i % last];
  } else if (name == "kb.scale") {
    double f = op.attrDouble("factor", 1.0);
    unary([&](double v) { return v * f; });
  } else if (name == "kb.relu")
    unary([](double v) { return v > 0 ? v : 0.0; });
  else if (name == "kb.tanh")
    unary([](double v) { return std::tanh(v); });
  else if (name == "kb.exp")
    unary([](double v) { return std::exp(v); });
  else if (name == "kb.sigmoid")
    unary([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
  else if (name == "kb.gelu") {
    std::string approx = op.attrString("approx", "tanh");
    unary([&](double v) { return gelu(v, approx); });
  } else if (name == "kb.dropout") {
    float p = static_cast<float>(op.attrDouble("p", 0.0));
    uint64_t seed = static_cast<uint64_t>(op.attrs.value("seed", int64_t(0)));
    double scale = 1.0 / (1.0 - static_cast<double>(p));
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = dropoutKeeps(static_cast<uint64_t>(i + indexOffset), p, seed)
                        ? x.data[i] * scale
                        : 0.0;
  } else if (name == "kb.softmax") {
    int64_t len = x.lastDim();
    for (int64_t r = 0; r < n / len; ++r) {
      const double *row = &x.data[r * len];
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j)
        m = std::max(m, row[j]);
      double s = 0;
      for (int64_t j = 0; j < len; ++j)
        s += std::exp(row[j] - m);
      for (int64_t j = 0; j < len; ++j)
        out.data[r * len + j] = std::exp(row[j] - m) / s;
    }
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
  MatmulEntry e{0.0, 0.0};
  if (ldbT == 0)
    ldbT = k;
  const float *arow = a + (batch * m + i) * k;
  for (int64_t p = 0; p < k; ++p) {
    double bv = transB ? b[(batch * n + j) * ldbT + p] : b[(batch * k + p) * n + j];
    double prod = static_cast<double>(arow[p]) * bv;
    e.value += prod;
    e.absSum += std::fabs(prod);
  }
  return e;
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

double matmulTolerance(const std::string &precision) {
  if (precision == "tf32")
    return 2e-3; // 10-bit mantissa operands: about 2^-11 each
  if (precision == "tf32x3")
    return 1e-5;
  return 1e-5; // fp32 accumulation over K
}

} // namespace kb::runtime
