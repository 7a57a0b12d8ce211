//===- AttentionCheck.cpp - the check of a kb.attention kernel ------------===//
//
// A kb.attention kernel's output (and its log-sum-exp, where it writes one)
// against the float64 reference of lib/Runtime/ReferenceAttention.cpp, on
// every query row of a small problem and on 512 rows of a large one (the
// first and the last row of every head among them, with rows drawn from the
// run's seed), each element within kBoundSafety times its bound
// (docs/tolerances.md, "Attention").
//
//===----------------------------------------------------------------------===//

#include "KbRun.h"

#include "kb/Runtime/Reference.h"
#include "kb/Runtime/ReferenceAttention.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace kb::runtime {

/// The problem the manifest's kb.attention op describes.
static AttentionProblem attentionProblem(const Manifest &m,
                                         const ProgramOp &op) {
  const auto &q = m.buffer(op.inputs[0]).shape;
  const auto &k = m.buffer(op.inputs[1]).shape;
  const auto &v = m.buffer(op.inputs[2]).shape;
  size_t r = q.size();
  AttentionProblem p;
  p.bthd = op.attrs.value("bthd", false);
  size_t seq = p.bthd ? 1 : r - 2;
  p.batch = 1;
  for (size_t i = 0; i < r - 1; ++i)
    if (i != seq)
      p.batch *= q[i];
  p.heads = p.bthd ? q[2] : 1;
  p.sq = q[seq], p.d = q[r - 1], p.sk = k[seq], p.dv = v[r - 1];
  p.scale = op.attrDouble("scale", 1.0);
  p.causal = op.attrs.value("causal", false);
  p.maskPerHead = op.inputs.size() > 3 &&
                  m.buffer(op.inputs[3]).shape.size() == r;
  p.type = m.buffer(op.inputs[0]).dtype;
  p.precision = op.attrString("precision", isHalf(p.type) ? "native" : "tf32");
  return p;
}

KernelCheck checkAttention(RunState &s, const Kernel &k) {
  const Manifest &m = s.manifest;
  KernelCheck c;
  c.kernel = k.name;
  const ProgramOp &op = m.program[k.ops.front()];
  AttentionProblem p = attentionProblem(m, op);
  c.method = "attention " + p.precision +
             ": float64 softmax(scale q k^T + mask) v of query rows, each "
             "element within its bound (scores in the precision, K = D; "
             "P V, K = Sk)";
  // The rows: all of a small problem, else the first and last of each head
  // and random ones up to 512.
  int64_t total = p.batch * p.sq;
  std::vector<int64_t> rows;
  if (total <= 4096) {
    for (int64_t r = 0; r < total; ++r)
      rows.push_back(r);
  } else {
    for (int64_t b = 0; b < p.batch && rows.size() < 256; ++b)
      rows.insert(rows.end(), {b * p.sq, b * p.sq + p.sq - 1});
    std::mt19937_64 gen(s.seed ^ 0xa77e);
    std::uniform_int_distribution<int64_t> pick(0, total - 1);
    while (rows.size() < 512)
      rows.push_back(pick(gen));
  }
  auto widen = [&](const std::string &name) {
    const std::vector<float> &f = s.host.at(name);
    return std::vector<double>(f.begin(), f.end());
  };
  std::vector<double> q = widen(op.inputs[0]), kk = widen(op.inputs[1]),
                      v = widen(op.inputs[2]), mask;
  if (op.inputs.size() > 3)
    mask = widen(op.inputs[3]);
  AttentionRows ref = evalAttentionRows(p, q.data(), kk.data(), v.data(),
                                        mask.empty() ? nullptr : mask.data(),
                                        rows);
  const std::vector<float> &got = s.host.at(op.output);
  Comparison all;
  for (size_t i = 0; i < rows.size(); ++i) {
    // Row r of head b (b * Sq + i) lies at outputRow(r) of a bthd output.
    int64_t at = p.outputRow(rows[i]);
    Comparison one =
        compareWithBound(&got[at * p.dv], &ref.out[i * p.dv],
                         std::vector<double>(ref.outErr.begin() + i * p.dv,
                                             ref.outErr.begin() +
                                                 (i + 1) * p.dv),
                         p.dv);
    mergeComparison(all, one, at * p.dv);
  }
  c.extra["rows_checked"] = rows.size();
  c.extra["outside_bound"] = all.bad;
  c.extra["max_error_over_bound"] = all.maxErrOverBound;
  bool ok = all.ok();
  std::string lseName = op.attrString("lse_output", "");
  if (!lseName.empty()) {
    const std::vector<float> &gl = s.host.at(lseName);
    Comparison lc;
    for (size_t i = 0; i < rows.size(); ++i)
      mergeComparison(lc,
                      compareWithBound(&gl[rows[i]], &ref.lse[i],
                                       {ref.lseErr[i]}, 1),
                      rows[i]);
    c.extra["lse_outside_bound"] = lc.bad;
    c.extra["lse_max_error_over_bound"] = lc.maxErrOverBound;
    ok = ok && lc.bad == 0;
  }
  c.ok = ok;
  c.uncheckable = all.bad == 0 && all.checked == 0 && all.unbounded > 0;
  c.extra["unbounded_elements"] = all.unbounded;
  c.maxErr = all.maxAbsErr;
  char buf[240];
  snprintf(buf, sizeof buf,
           "%zu of %lld query rows, %lld elements outside the bound (worst "
           "uses %.3g of its bound)",
           rows.size(), (long long)total, (long long)all.bad,
           all.maxErrOverBound);
  c.detail = buf;
  return c;
}

} // namespace kb::runtime
