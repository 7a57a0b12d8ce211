//===- ReferenceRows.cpp - float64 references for the row ops -------------===//
//
// kb.layer_norm, kb.rms_norm and kb.reduce (over the last axis, any one
// axis, or the whole tensor), in float64,
// with the bound on what a correct fp32 kernel of kb's (RowNorm.cpp) may
// err by: sums whose terms pass through at most kRowSumDepth rounded adds,
// a two-pass variance, rsqrt within 2 ulp. docs/tolerances.md, section
// "Norms and row reductions", derives each step.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Reference.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kb::runtime {

namespace {

constexpr double u = kFp32Unit;
constexpr double kFlush = 0x1p-125;
/// rsqrtf: 2 ulp (CUDA's table), at most 4u relative; taken twice.
constexpr double kRsqrtRel = 8 * u;

double finish(double y, double prop, double rel) {
  double e = prop + rel * (std::fabs(y) + prop) + kFlush;
  if (std::isnan(y) || std::isnan(e) || std::fabs(y) + e > kFltMax)
    return INFINITY;
  return e;
}

/// The summation depth of the op being evaluated (evalRowOp sets it).
thread_local double depth = kRowSumDepth;

/// |fl(sum) - sum| for terms whose magnitudes (value plus bound) add up to
/// `absSum`: each term passes through at most `depth` rounded adds.
double sumError(double absSum) { return depth * u * absSum; }

/// rsqrt(a) for a computed with error at most `ea`: its value and bound
/// (infinite where a may be 0 or below).
std::pair<double, double> rsqrtWithBound(double a, double ea) {
  double r = 1 / std::sqrt(a);
  if (!(a > 0) || !(ea < a) || !std::isfinite(r))
    return {r, INFINITY};
  double prop = r * (1 / std::sqrt(1 - ea / a) - 1);
  return {r, prop + kRsqrtRel * (r + prop)};
}

/// The normalized output y = d r (* w) (+ b) and its bound, from d (bound
/// ed), r (bound er) and the optional weight and bias (value, bound).
std::pair<double, double> affine(double d, double ed, double r, double er,
                                 const double *w, const double *ew,
                                 const double *b, const double *eb) {
  double p = d * r;
  double ep = std::fabs(d) * er + r * ed + ed * er;
  ep += u * (std::fabs(p) + ep);
  if (w) {
    double pw = p * *w;
    ep = std::fabs(*w) * ep + *ew * (std::fabs(p) + ep);
    ep += u * (std::fabs(pw) + ep);
    p = pw;
  }
  if (b) {
    double y = p + *b;
    return {y, finish(y, ep + *eb, u)};
  }
  return {p, finish(p, ep, 0)};
}

/// One row of a layer_norm (`centre`) or rms_norm: values v, bounds e.
void normRow(const double *v, const HostTensor &x, int64_t at, int64_t n,
             double eps, bool centre, const HostTensor *w,
             const HostTensor *b, double *y, double *ey) {
  double s = 0, absSum = 0, esum = 0;
  bool finite = true;
  for (int64_t j = 0; j < n; ++j) {
    double e = x.errAt(at + j);
    s += v[j];
    absSum += std::fabs(v[j]) + e;
    esum += e;
    finite = finite && std::isfinite(v[j]) && std::isfinite(e);
  }
  if (!finite) {
    std::fill(ey, ey + n, INFINITY);
    for (int64_t j = 0; j < n; ++j)
      y[j] = NAN;
    return;
  }
  double mu = 0, emu = 0;
  if (centre) {
    mu = s / n;
    emu = (esum + sumError(absSum)) / n;
    emu += 4 * u * (std::fabs(mu) + emu); // fp32 div: <= 2 ulp
  }
  // d_j = v_j - mu (for rms_norm: v_j, exact), its bound, and the sum of
  // squares with its bound.
  double q = 0, eqProp = 0, qMag = 0;
  std::vector<double> d(n), ed(n);
  for (int64_t j = 0; j < n; ++j) {
    double e = x.errAt(at + j);
    d[j] = v[j] - mu;
    ed[j] = centre ? e + emu + u * (std::fabs(d[j]) + e + emu) : e;
    q += d[j] * d[j];
    eqProp += 2 * std::fabs(d[j]) * ed[j] + ed[j] * ed[j];
    qMag += (std::fabs(d[j]) + ed[j]) * (std::fabs(d[j]) + ed[j]);
  }
  // Each square rounds once (u), the sum as sumError.
  double eq = eqProp + u * qMag + sumError(qMag);
  double var = q / n, evar = eq / n;
  evar += 4 * u * (var + evar);
  double a = var + eps, ea = evar + u * (a + evar);
  auto [r, er] = rsqrtWithBound(a, ea);
  for (int64_t j = 0; j < n; ++j) {
    const double *wv = w ? &w->data[j] : nullptr;
    double ewv = w ? w->errAt(j) : 0, ebv = b ? b->errAt(j) : 0;
    const double *bv = b ? &b->data[j] : nullptr;
    auto [yj, ej] = affine(d[j], ed[j], r, er, wv, &ewv, bv, &ebv);
    y[j] = yj;
    ey[j] = std::isfinite(er) ? ej : INFINITY;
  }
}

} // namespace

double rowSumDepth(int64_t n, int64_t threads, int64_t vector) {
  if (threads <= 0 || vector <= 0 || n <= 0)
    return kRowSumDepth;
  int64_t span = threads * vector;
  double perThread = double((n + span - 1) / span * vector);
  // Not capped: the online strategy (RowNormOnline.cpp) holds no limit on
  // the values a thread adds.
  return perThread + (threads > 32 ? 10 : 5);
}

bool isRowOp(const std::string &name) {
  return name == "kb.layer_norm" || name == "kb.rms_norm" ||
         name == "kb.reduce";
}

namespace {

/// kb.reduce over axis `axis` (ColumnReduce.cpp) or, with `all`, over
/// every element (WholeReduce.cpp): x viewed as [outer, R, inner]. The
/// summation depth is the op's (columnSumDepth / wholeSumDepth, set by
/// kb-run from the kernel's launch), else R: a sum in order, the deepest
/// any order reaches.
HostTensor evalAxisReduce(const ProgramOp &op, const HostTensor &x) {
  std::string kind = op.attrString("kind", "");
  if (kind != "sum" && kind != "mean" && kind != "max" && kind != "min")
    throw std::runtime_error("kb.reduce: unknown kind '" + kind + "'");
  bool all = op.attrs.value("all", false);
  bool keep = op.attrs.value("keepdim", false);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = all ? 0 : op.attrs.value("axis", rank - 1);
  if (axis < 0 || axis >= rank)
    throw std::runtime_error("kb.reduce: axis " + std::to_string(axis) +
                             " of a rank-" + std::to_string(rank) + " input");
  int64_t outer = 1, len = 1, inner = 1;
  HostTensor out;
  if (all) {
    len = static_cast<int64_t>(x.data.size());
    out.shape.assign(keep ? rank : 1, 1);
  } else {
    for (int64_t d = 0; d < axis; ++d)
      outer *= x.shape[d];
    len = x.shape[axis];
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= x.shape[d];
    out.shape = x.shape;
    if (keep)
      out.shape[axis] = 1;
    else
      out.shape.erase(out.shape.begin() + axis);
    if (out.shape.empty())
      out.shape.push_back(1);
  }
  depth = op.sumDepth > 0 ? op.sumDepth : static_cast<double>(len);
  out.data.assign(outer * inner, 0.0);
  out.err.assign(outer * inner, 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double y = kind == "sum" || kind == "mean"
                     ? 0.0
                     : x.data[o * len * inner + i];
      double absSum = 0, esum = 0, emax = 0;
      for (int64_t r = 0; r < len; ++r) {
        int64_t at = (o * len + r) * inner + i;
        double v = x.data[at], e = x.errAt(at);
        if (kind == "max")
          y = std::max(y, v);
        else if (kind == "min")
          y = std::min(y, v);
        else
          y += v;
        absSum += std::fabs(v) + e;
        esum += e;
        emax = std::max(emax, e);
      }
      double &ey = out.err[o * inner + i];
      if (kind == "max" || kind == "min") {
        ey = std::isfinite(y) ? emax : INFINITY;
      } else {
        double e = esum + sumError(absSum);
        if (kind == "mean") {
          y /= len;
          ey = finish(y, e / len, 4 * u);
        } else {
          ey = finish(y, e, 0);
        }
      }
      out.data[o * inner + i] = y;
    }
  return out;
}

} // namespace

double columnSumDepth(int64_t len, int64_t slices) {
  if (len <= 0 || slices <= 0)
    return static_cast<double>(std::max<int64_t>(len, 1));
  // A slice's rows in order, then the slices in order; + 2 of margin.
  return static_cast<double>((len + slices - 1) / slices + slices + 2);
}

double wholeSumDepth(int64_t total, int64_t grid, int64_t threads,
                     int64_t vector) {
  if (total <= 0 || grid <= 0 || threads <= 0 || vector <= 0)
    return static_cast<double>(std::max<int64_t>(total, 1));
  int64_t vectors = (total + vector - 1) / vector;
  int64_t perThread = (vectors + grid * threads - 1) / (grid * threads);
  // A thread's values in order, a block's tree (5 shuffle levels, 5 over
  // the warps), the last block's partials a thread in order, its tree
  // again; + 2 of margin.
  return static_cast<double>(perThread * vector + 10 +
                             (grid + threads - 1) / threads + 10 + 2);
}

HostTensor evalRowOp(const ProgramOp &op,
                     const std::vector<const HostTensor *> &in) {
  if (in.empty())
    throw std::runtime_error(op.op + ": no inputs");
  const HostTensor &x = *in[0];
  const int64_t n = x.lastDim();
  const int64_t rows = static_cast<int64_t>(x.data.size()) / n;
  depth = op.sumDepth > 0 ? op.sumDepth : kRowSumDepth;
  HostTensor out;
  if (op.op == "kb.reduce" &&
      (op.attrs.contains("axis") || op.attrs.value("all", false)))
    return evalAxisReduce(op, x);
  if (op.op == "kb.reduce") {
    std::string kind = op.attrString("kind", "");
    bool keep = op.attrs.value("keepdim", false);
    out.shape.assign(x.shape.begin(), x.shape.end() - 1);
    if (keep || out.shape.empty())
      out.shape.push_back(1);
    out.data.assign(rows, 0.0);
    out.err.assign(rows, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const double *v = &x.data[r * n];
      double y = 0, absSum = 0, esum = 0, emax = 0;
      if (kind == "max" || kind == "min") {
        y = v[0];
        for (int64_t j = 0; j < n; ++j) {
          y = kind == "max" ? std::max(y, v[j]) : std::min(y, v[j]);
          emax = std::max(emax, x.errAt(r * n + j));
        }
        // Exact in fp32: the max of values each within its bound is within
        // the largest bound of the max.
        out.data[r] = y;
        out.err[r] = std::isfinite(y) ? emax : INFINITY;
        continue;
      }
      if (kind != "sum" && kind != "mean")
        throw std::runtime_error("kb.reduce: unknown kind '" + kind + "'");
      for (int64_t j = 0; j < n; ++j) {
        double e = x.errAt(r * n + j);
        y += v[j];
        absSum += std::fabs(v[j]) + e;
        esum += e;
      }
      double e = esum + sumError(absSum);
      if (kind == "mean") {
        y /= n;
        e /= n;
        out.data[r] = y;
        out.err[r] = finish(y, e, 4 * u);
      } else {
        out.data[r] = y;
        out.err[r] = finish(y, e, 0);
      }
    }
    return out;
  }
  bool layer = op.op == "kb.layer_norm";
  if (!layer && op.op != "kb.rms_norm")
    throw std::runtime_error("no float64 reference for op '" + op.op + "'");
  size_t maxIn = layer ? 3 : 2;
  if (in.size() > maxIn)
    throw std::runtime_error(op.op + ": too many inputs");
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i]->data.size() != static_cast<size_t>(n))
      throw std::runtime_error(op.op + ": a weight or bias of length " +
                               std::to_string(in[i]->data.size()) +
                               " for rows of " + std::to_string(n));
  const HostTensor *w = in.size() > 1 ? in[1] : nullptr;
  const HostTensor *b = in.size() > 2 ? in[2] : nullptr;
  // eps is an f32 attribute: the kernel adds fp32(eps).
  double eps = static_cast<float>(op.attrDouble("eps", 1e-5));
  out.shape = x.shape;
  out.data.assign(x.data.size(), 0.0);
  out.err.assign(x.data.size(), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    normRow(&x.data[r * n], x, r * n, n, eps, layer, w, b, &out.data[r * n],
            &out.err[r * n]);
  return out;
}

} // namespace kb::runtime
