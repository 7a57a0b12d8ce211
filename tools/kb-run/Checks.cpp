//===- Checks.cpp - validate each kernel of a bundle ----------------------===//
//
// Every kernel is checked on the inputs it actually read (downloaded after
// the run), so an error is pinned to the kernel that made it:
// - matmul: against float64 on sampled entries, each within its error
//   bound (which grows with K as the precision's does), and every element
//   against cuBLAS in the same precision within both results' bounds, on
//   the unpadded operands where a kb.pad lengthened A's or B^T's rows;
// - transpose and pad: every element bit-identical to its source
//   (CopyChecks.cpp);
// - elementwise chains and softmax: every element against the float64
//   reference within the fp32 error bound propagated through the chain, in
//   parallel slices of rows; softmax row sums within their elements'
//   bounds; dropout's mask (exact, from the CPU Philox) and its zeroed
//   fraction.
// A 16-bit result's bound grows by its rounding at the store; a 16-bit
// matmul's cuBLAS is cublasGemmStridedBatchedEx in its types.
// docs/tolerances.md derives every bound.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "kb/Runtime/Reference.h"

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

namespace kb::runtime {

using nlohmann::json;

/// ||got - want|| / ||want||; NaN anywhere in got gives NaN.
template <typename T>
static double relativeFrobenius(const std::vector<float> &got,
                                const std::vector<T> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double e = double(got[i]) - double(want[i]);
    num += e * e;
    den += double(want[i]) * double(want[i]);
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

static bool kernelHasOp(const Manifest &m, const Kernel &k, const char *name) {
  for (size_t i : k.ops)
    if (m.program[i].op == name)
      return true;
  return false;
}

cudaDataType_t cudaTypeOf(DType t) {
  return t == DType::BF16  ? CUDA_R_16BF
         : t == DType::F16 ? CUDA_R_16F
                           : CUDA_R_32F;
}

static void addCublasGemm(cublasHandle_t h, const std::string &precision,
                          const MatmulDims &d, CUdeviceptr a, CUdeviceptr b,
                          CUdeviceptr c) {
  if (precision == "native") {
    // 16-bit operands, fp32 accumulation, the bundle's result type.
    checkCublas(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    float alpha = 1.0f, beta = 0.0f;
    checkCublas(
        cublasGemmStridedBatchedEx(
            h, d.transB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, d.n, d.m, d.k,
            &alpha, reinterpret_cast<const void *>(b), cudaTypeOf(d.in),
            d.transB ? d.ldbT : d.n, d.transB ? d.n * d.ldbT : d.k * d.n,
            reinterpret_cast<const void *>(a), cudaTypeOf(d.in), d.k,
            d.m * d.k, &beta, reinterpret_cast<void *>(c), cudaTypeOf(d.out),
            d.n, d.m * d.n, d.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
    return;
  }
  cublasMath_t mode =
      precision == "tf32" ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH;
  checkCublas(cublasSetMathMode(h, mode), "cublasSetMathMode");
  float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  checkCublas(cublasSgemmStridedBatched(
                  h, d.transB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, d.n,
                  d.m, d.k, &alpha, reinterpret_cast<const float *>(b),
                  d.transB ? d.ldbT : d.n, d.transB ? d.n * d.ldbT : d.k * d.n,
                  reinterpret_cast<const float *>(a), d.k, d.m * d.k, &beta,
                  reinterpret_cast<float *>(c), d.n, d.m * d.n, d.batch),
              "cublasSgemmStridedBatched");
}

void runCublasGemm(cublasHandle_t h, const std::string &precision,
                   const MatmulDims &d, CUdeviceptr a, CUdeviceptr b,
                   CUdeviceptr c) {
  addCublasGemm(h, precision, d, a, b, c);
}

/// The precision cuBLAS's reference runs in: the kernel's (fp32 for ieee
/// and tf32x3, the 16-bit operands' for native).
static std::string cublasRun(const MatmulDims &d) {
  return d.precision == "tf32" || d.precision == "native" ? d.precision
                                                          : "ieee";
}

/// C = A B by cuBLAS for the matmul `op`, in the kernel's precision (fp32
/// for ieee and tf32x3, the operands' for native), copied to the host. Its
/// result in f32 whatever d.out is: a 16-bit C from cuBLAS may carry more
/// than its one rounding (a split-K kernel that sums rounded partials), and
/// the comparison below allows kb's rounding and the reference's.
static std::vector<float> cublasReference(RunState &s, const MatmulDims &d,
                                          CUdeviceptr a, CUdeviceptr b,
                                          size_t elements) {
  MatmulDims f = d;
  f.out = DType::F32;
  DeviceBuffer ref(elements * dtypeBytes(f.out));
  runCublasGemm(s.cublas, cublasRun(f), f, a, b, ref.ptr);
  check(driver().cuCtxSynchronize(), "cuBLAS reference");
  std::vector<float> host(elements);
  downloadAs(ref, f.out, host.data());
  return host;
}

/// The 2-norms of A's rows and of B's columns (per batch): their product
/// bounds sum_k |a_ik b_kj| (Cauchy-Schwarz), the scale a whole-output check
/// measures each entry's error bound on.
struct MatmulNorms {
  std::vector<double> rows, cols; // [batch][m], [batch][n]
  double scale(const MatmulDims &d, int64_t z, int64_t i, int64_t j) const {
    return rows[z * d.m + i] * cols[z * d.n + j];
  }
};

static MatmulNorms matmulNorms(const MatmulDims &d, const std::vector<float> &a,
                               const std::vector<float> &b) {
  MatmulNorms nm;
  nm.rows.assign(d.batch * d.m, 0.0);
  nm.cols.assign(d.batch * d.n, 0.0);
  for (int64_t z = 0; z < d.batch; ++z) {
    for (int64_t i = 0; i < d.m; ++i) {
      double sq = 0;
      for (int64_t p = 0; p < d.k; ++p) {
        double v = a[(z * d.m + i) * d.k + p];
        sq += v * v;
      }
      nm.rows[z * d.m + i] = std::sqrt(sq);
    }
    double *cols = &nm.cols[z * d.n];
    if (d.transB) {
      for (int64_t j = 0; j < d.n; ++j) {
        double sq = 0;
        for (int64_t p = 0; p < d.k; ++p) {
          double v = b[(z * d.n + j) * d.ldbT + p];
          sq += v * v;
        }
        cols[j] = sq;
      }
    } else {
      for (int64_t p = 0; p < d.k; ++p)
        for (int64_t j = 0; j < d.n; ++j) {
          double v = b[(z * d.k + p) * d.n + j];
          cols[j] += v * v;
        }
    }
    for (int64_t j = 0; j < d.n; ++j)
      cols[j] = std::sqrt(cols[j]);
  }
  return nm;
}

/// The sampled entries of a matmul check: corners and edges, then random.
static std::vector<std::array<int64_t, 3>>
sampleEntries(const MatmulDims &d, uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  std::vector<std::array<int64_t, 3>> at = {{0, 0, 0},
                                            {0, d.m - 1, d.n - 1},
                                            {0, 0, d.n - 1},
                                            {0, d.m - 1, 0},
                                            {d.batch - 1, d.m - 1, d.n - 1}};
  for (int i = 0; i < count; ++i)
    at.push_back(
        {int64_t(rng() % d.batch), int64_t(rng() % d.m), int64_t(rng() % d.n)});
  return at;
}

/// The precision cuBLAS's reference is computed in, for its error bound.
static std::string cublasPrecision(const MatmulDims &d) {
  return d.precision == "tf32"     ? "cublas-tf32"
         : d.precision == "native" ? "cublas-native"
                                   : "cublas-ieee";
}


/// The matmul check of C = A B (d's shape) on host operands a, b (device
/// copies da, db) against the kernel's result `got`.
static KernelCheck
checkMatmulOn(RunState &s, const Kernel &k, const MatmulDims &d,
              const std::vector<float> &a, const std::vector<float> &b,
              CUdeviceptr da, CUdeviceptr db, const std::vector<float> &got) {
  KernelCheck c;
  c.kernel = k.name;
  c.method = "matmul " + d.precision +
             ": float64 on sampled entries within the K-dependent error bound; "
             "every entry vs cuBLAS (same precision) within both bounds";

  // float64 on sampled entries, each within its own bound (docs/tolerances.md).
  MatmulNorms norms = matmulNorms(d, a, b);
  auto at = sampleEntries(d, s.seed ^ 0x5eed, 1000);
  double worstOverBound = 0, worstRel = 0, rateGot = 0, rateRef = 0, errSq = 0,
         refSq = 0;
  int64_t badSamples = 0;
  for (auto [z, i, j] : at) {
    MatmulEntry e = matmulEntry(a.data(), b.data(), d.m, d.n, d.k, d.transB, z,
                                i, j, d.ldbT);
    double g = got[(z * d.m + i) * d.n + j];
    double bound = matmulErrorBound(e, d.k, d.precision);
    double err = std::fabs(g - e.value);
    double stored = withOutputRounding(bound, e.value, d.out);
    double over = std::isnan(err) ? INFINITY : err / (kBoundSafety * stored);
    worstOverBound = std::max(worstOverBound, over);
    badSamples += !(over <= 1);
    worstRel = std::max(
        worstRel, std::isnan(err) ? INFINITY : err / std::max(e.absSum, 1e-30));
    // (An entry whose row or column is all zeros has scale 0 and is exact.)
    double scale = norms.scale(d, z, i, j);
    if (scale > 0) {
      rateGot = std::max(rateGot, bound / scale);
      rateRef = std::max(rateRef,
                         matmulErrorBound(e, d.k, cublasPrecision(d)) / scale);
    }
    errSq += (g - e.value) * (g - e.value);
    refSq += e.value * e.value;
  }

  // Every entry against cuBLAS: both may err by their bound, measured on
  // ||a_i|| ||b_j|| (>= sum_k |a_ik b_kj|) at the largest rate of the samples.
  std::vector<float> want = cublasReference(s, d, da, db, got.size());
  double frob = relativeFrobenius(got, want);
  int64_t badEntries = 0, firstBad = -1;
  double worstVsCublas = 0;
  for (int64_t z = 0; z < d.batch; ++z)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        int64_t idx = (z * d.m + i) * d.n + j;
        double allowed =
            kBoundSafety * (rateGot + rateRef) * norms.scale(d, z, i, j);
        // Both results rounded to a 16-bit type: each by its own rounding.
        if (isHalf(d.out))
          allowed += kBoundSafety *
                     (unitRoundoff(d.out) *
                          (std::fabs(got[idx]) + std::fabs(want[idx]) +
                           2 * allowed / kBoundSafety) +
                      2 * subnormalHalfStep(d.out));
        double err = std::fabs(double(got[idx]) - double(want[idx]));
        double over =
            std::isnan(err) ? INFINITY : (err == 0 ? 0 : err / allowed);
        worstVsCublas = std::max(worstVsCublas, over);
        if (!(over <= 1)) {
          if (firstBad < 0)
            firstBad = idx;
          ++badEntries;
        }
      }
  double relNorm = std::sqrt(errSq / std::max(refSq, 1e-300));
  c.extra["cublas_relative_frobenius"] = frob;
  c.extra["cublas_entries_outside_bound"] = badEntries;
  c.extra["cublas_max_error_over_bound"] = worstVsCublas;
  c.extra["float64_samples"] = at.size();
  c.extra["float64_samples_outside_bound"] = badSamples;
  c.extra["float64_max_error_over_bound"] = worstOverBound;
  c.extra["float64_max_error_over_abs_sum"] = worstRel;
  c.extra["float64_relative_error"] = relNorm;
  c.maxErr = worstRel;
  c.ok = badSamples == 0 && badEntries == 0;
  char buf[400];
  snprintf(
      buf, sizeof buf,
      "float64 on %zu entries: relative error %.2e, max |err|/sum|ab| %.2e, "
      "worst entry at %.2f of its bound (x%.0f); vs cuBLAS %s: relative "
      "Frobenius %.2e, worst entry at %.2f of its bound",
      at.size(), relNorm, worstRel, worstOverBound, kBoundSafety,
      d.precision == "tf32"     ? "tf32"
      : d.precision == "native" ? dtypeName(d.in)
                                : "fp32",
      frob, worstVsCublas);
  c.detail = buf;
  if (badEntries) {
    snprintf(buf, sizeof buf, "; %lld entries outside it, first at %lld",
             (long long)badEntries, (long long)firstBad);
    c.detail += buf;
  }
  return c;
}

static KernelCheck checkMatmul(RunState &s, const Kernel &k) {
  MatmulDims d = matmulDims(s.manifest, k);
  const ProgramOp &op = s.manifest.program[k.ops.front()];
  if (op.attrs.contains("split_chunk")) {
    // Split-K partials: slice q is A[:, q*chunk ..] B[q*chunk .., :] over
    // its chunk of K, checked as a matmul of its own (copies of the chunks).
    // Chunks of the matmul's K, which a kb.pad may have lengthened: a chunk
    // is clamped to the unpadded K (past it both operands are zeros).
    int64_t chunk = op.attrs["split_chunk"].get<int64_t>();
    const std::vector<float> &a = s.host.at(d.a);
    const std::vector<float> &b = s.host.at(d.b);
    const std::vector<float> &got = s.host.at(k.args.back());
    int64_t splits = s.manifest.buffer(k.args.back()).shape[0];
    KernelCheck all;
    all.kernel = k.name;
    all.ok = true;
    for (int64_t q = 0; q < splits; ++q) {
      int64_t k0 = q * chunk, kLen = std::min(chunk, d.k - k0);
      if (kLen <= 0) {
        // A chunk wholly in the padding: its partial sums zeros only.
        int64_t nonzero = 0;
        for (int64_t e = q * d.m * d.n; e < (q + 1) * d.m * d.n; ++e)
          nonzero += got[e] != 0.0f;
        if (nonzero && all.ok)
          all.detail = "split " + std::to_string(q) +
                       " (past K = " + std::to_string(d.k) +
                       ", all padding): " + std::to_string(nonzero) +
                       " entries not zero";
        all.ok &= nonzero == 0;
        continue;
      }
      MatmulDims dq = d;
      dq.k = kLen;
      dq.ldbT = kLen;
      std::vector<float> aq(d.m * kLen), bq(d.n * kLen);
      for (int64_t i = 0; i < d.m; ++i)
        std::memcpy(&aq[i * kLen], &a[i * d.k + k0], kLen * 4);
      if (d.transB)
        for (int64_t j = 0; j < d.n; ++j)
          std::memcpy(&bq[j * kLen], &b[j * d.ldbT + k0], kLen * 4);
      else
        std::memcpy(bq.data(), &b[k0 * d.n], kLen * d.n * 4);
      // Host copies are f32 values; the device copies are of the operands'
      // type (exact), as cuBLAS's reference reads them.
      int64_t eb = dtypeBytes(d.in);
      DeviceBuffer da(aq.size() * eb), db(bq.size() * eb);
      uploadAs(da, d.in, aq.data());
      uploadAs(db, d.in, bq.data());
      std::vector<float> gq(got.begin() + q * d.m * d.n,
                            got.begin() + (q + 1) * d.m * d.n);
      KernelCheck c = checkMatmulOn(s, k, dq, aq, bq, da.ptr, db.ptr, gq);
      if (q == 0 || !c.ok || c.maxErr > all.maxErr) {
        all.method = c.method;
        all.extra = c.extra;
        all.maxErr = std::max(all.maxErr, c.maxErr);
      }
      if (!c.ok && all.ok)
        all.detail = "split " + std::to_string(q) + ": " + c.detail;
      all.ok &= c.ok;
      if (q == 0 && c.ok)
        all.detail = c.detail;
    }
    all.method = "split-K partials (" + std::to_string(splits) +
                 " chunks of K, each): " + all.method;
    all.extra["splits"] = splits;
    return all;
  }
  return checkMatmulOn(s, k, d, s.host.at(d.a), s.host.at(d.b),
                       s.dev.at(d.a).ptr, s.dev.at(d.b).ptr,
                       s.host.at(k.args.back()));
}

static KernelCheck checkChain(RunState &s, const Kernel &k) {
  const Manifest &m = s.manifest;
  KernelCheck c;
  c.kernel = k.name;
  const Buffer &out = m.buffer(k.args.back());
  // A kb.reduce writes one value a row: its rows are its input's, each
  // `last` = 1 value of the output long.
  const bool reduce = kernelHasOp(m, k, "kb.reduce");
  // A reduce over another axis than the last, or over all of them: its
  // output's elements are not one a row of its input; checked whole, by one
  // worker (`rows` = 1, `last` = the output's elements).
  const ProgramOp *axisReduce = nullptr;
  for (size_t i : k.ops)
    if (m.program[i].op == "kb.reduce" &&
        (m.program[i].attrs.contains("axis") ||
         m.program[i].attrs.value("all", false)))
      axisReduce = &m.program[i];
  int64_t last = axisReduce ? out.elements() : reduce ? 1 : out.shape.back();
  int64_t rows = out.elements() / last;
  bool softmax = kernelHasOp(m, k, "kb.softmax");
  bool dropout = kernelHasOp(m, k, "kb.dropout");
  const bool rowNorm =
      kernelHasOp(m, k, "kb.layer_norm") || kernelHasOp(m, k, "kb.rms_norm");
  const bool logSoftmax = kernelHasOp(m, k, "kb.log_softmax");
  c.method = softmax
                 ? "softmax vs float64, every element within its propagated "
                   "fp32 error bound; row sums"
             : logSoftmax
                 ? "log_softmax vs float64, every element within its "
                   "propagated fp32 error bound"
             : axisReduce ? "reduction vs float64, every output value within "
                            "its fp32 error bound (the kernel's summation "
                            "depth)"
             : reduce ? "row reduction vs float64, every row within its "
                        "fp32 error bound"
             : rowNorm
                 ? "norm vs float64, every element within its propagated "
                   "fp32 error bound (two-pass variance, docs/tolerances.md)"
                 : "elementwise chain vs float64, every element within its "
                   "propagated fp32 error bound";
  if (dropout)
    c.method += "; dropout mask vs CPU Philox4x32-10";
  const std::vector<float> &got = s.host.at(out.name);

  unsigned workers =
      std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  int64_t per = (rows + workers - 1) / workers;
  std::vector<Comparison> parts(workers);
  std::vector<int64_t> maskMismatch(workers, 0), zeros(workers, 0),
      badRows(workers, 0);
  std::vector<double> rowSumErr(workers, 0.0), rowSumOver(workers, 0.0);
  // Row sums are 1 only when the softmax is the kernel's last op.
  const bool softmaxLast =
      softmax && m.program[k.ops.back()].op == "kb.softmax";
  std::vector<std::string> errors(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      int64_t r0 = w * per, r1 = std::min(rows, r0 + per);
      if (r0 >= r1)
        return;
      try {
        std::map<std::string, HostTensor> vals;
        auto slice = [&](const std::string &name) -> const HostTensor & {
          auto it = vals.find(name);
          if (it != vals.end())
            return it->second;
          const Buffer &b = m.buffer(name);
          const float *src = s.host.at(name).data();
          HostTensor t;
          bool partials = b.shape.size() == out.shape.size() + 1 &&
                          std::equal(out.shape.begin(), out.shape.end(),
                                     b.shape.begin() + 1);
          int64_t bLast = b.shape.back();
          if (axisReduce) {
            t.shape = b.shape;
            t.data.assign(src, src + b.elements());
          } else if (b.elements() == out.elements() && !reduce) {
            t.shape = {r1 - r0, last};
            t.data.assign(src + r0 * last, src + r1 * last);
          } else if (reduce && b.elements() == rows * bLast) {
            // The reduced input: these rows, each bLast long.
            t.shape = {r1 - r0, bLast};
            t.data.assign(src + r0 * bLast, src + r1 * bLast);
          } else if (partials) {
            // A split-K matmul's S partials: these rows of each.
            t.shape = {b.shape[0], r1 - r0, last};
            for (int64_t q = 0; q < b.shape[0]; ++q)
              t.data.insert(t.data.end(), src + (q * rows + r0) * last,
                            src + (q * rows + r1) * last);
          } else {
            t.shape = b.shape;
            t.data.assign(src, src + b.elements());
          }
          return vals[name] = std::move(t);
        };
        for (size_t i : k.ops) {
          ProgramOp op = m.program[i];
          std::vector<const HostTensor *> ins;
          for (const std::string &in : op.inputs)
            ins.push_back(&slice(in));
          // A row op's sums are as deep as its kernel's layout makes them.
          ConfigFields cf = parseConfigText(k.config);
          if (&m.program[i] == axisReduce && !ins.empty()) {
            const HostTensor &x = *ins[0];
            int64_t total = static_cast<int64_t>(x.data.size());
            int64_t rank = static_cast<int64_t>(x.shape.size());
            int64_t axis = op.attrs.value("axis", rank - 1);
            op.sumDepth =
                op.attrs.value("all", false)
                    ? wholeSumDepth(total, k.grid[0], k.threads(),
                                    std::max<int64_t>(1, cf.vector))
                : axis >= 0 && axis < rank
                    ? columnSumDepth(x.shape[axis],
                                     cf.block.empty() ? 1 : cf.block[0])
                    : 0;
          } else if (isRowOp(op.op) && !ins.empty())
            // block = [R]: R rows a block, one warp (32 threads) a row.
            op.sumDepth = rowSumDepth(ins[0]->lastDim(),
                                      cf.block.empty() ? k.threads() : 32,
                                      std::max<int64_t>(1, cf.vector));
          vals[op.output] = evalOp(op, ins, r0 * last);
        }
        const HostTensor &ref = vals.at(out.name);
        const float *g = got.data() + r0 * last;
        parts[w] =
            compareWithBound(g, ref.data.data(), ref.err, (r1 - r0) * last);
        if (parts[w].firstBad >= 0)
          parts[w].firstBad += r0 * last;
        // A row of a softmax sums to 1 within the sum of its elements'
        // bounds (the check sums in float64).
        for (int64_t r = 0; softmaxLast && r < r1 - r0; ++r) {
          double sum = 0, allowed = 1e-12;
          for (int64_t j = 0; j < last; ++j) {
            sum += g[r * last + j];
            allowed += kBoundSafety * ref.err[r * last + j];
          }
          double e = std::fabs(sum - 1);
          if (!std::isfinite(allowed))
            continue;
          rowSumErr[w] = std::max(rowSumErr[w], std::isnan(e) ? INFINITY : e);
          rowSumOver[w] =
              std::max(rowSumOver[w], std::isnan(e) ? INFINITY : e / allowed);
          badRows[w] += !(e <= allowed);
        }
        if (dropout)
          for (int64_t i = 0; i < (r1 - r0) * last; ++i) {
            zeros[w] += g[i] == 0.0f;
            // Where the mask drops the element the reference is exactly 0
            // with a bound of exactly 0 (also where a relu clamps a surely
            // negative value): there the kernel must write exactly 0 too.
            // A reference that is 0 with a bound (a relu of a value within
            // its error of 0, a kept GELU output that underflows) is left
            // to the value comparison above.
            maskMismatch[w] +=
                ref.data[i] == 0.0 && ref.errAt(i) == 0.0 && g[i] != 0.0f;
          }
      } catch (const std::exception &e) {
        errors[w] = e.what();
      }
    });
  }
  for (auto &t : threads)
    t.join();
  for (auto &e : errors)
    if (!e.empty())
      throw std::runtime_error(k.name + ": " + e);
  Comparison all;
  for (auto &p : parts)
    mergeComparison(all, p, 0); // firstBad is already global
  c.ok = all.ok();
  c.uncheckable = all.bad == 0 && all.checked == 0 && all.unbounded > 0;
  c.maxErr = all.maxRelErr;
  c.extra["elements"] = all.checked;
  c.extra["mismatches"] = all.bad;
  c.extra["unbounded_elements"] = all.unbounded;
  c.extra["max_abs_error"] = all.maxAbsErr;
  c.extra["max_rel_error"] = all.maxRelErr;
  c.extra["max_error_over_bound"] = all.maxErrOverBound;
  char buf[512];
  snprintf(
      buf, sizeof buf,
      "%lld elements, max abs err %.2e, max rel err %.2e, worst element at "
      "%.2f of its bound (x%.0f)",
      (long long)all.checked, all.maxAbsErr, all.maxRelErr, all.maxErrOverBound,
      kBoundSafety);
  c.detail = buf;
  if (all.unbounded) {
    snprintf(buf, sizeof buf, "; %lld unchecked (fp32 may overflow there)",
             (long long)all.unbounded);
    c.detail += buf;
  }
  if (all.bad) {
    snprintf(buf, sizeof buf,
             "; %lld outside their bound, first at %lld: got %.8g, want %.8g, "
             "allowed +-%.2e",
             (long long)all.bad, (long long)all.firstBad, all.got, all.want,
             all.allowed);
    c.detail += buf;
  }
  if (softmaxLast) {
    double rs = 0, over = 0;
    int64_t bad = 0;
    for (unsigned w = 0; w < workers; ++w) {
      rs = std::max(rs, rowSumErr[w]);
      over = std::max(over, rowSumOver[w]);
      bad += badRows[w];
    }
    c.extra["max_row_sum_error"] = rs;
    c.extra["row_sums_outside_bound"] = bad;
    snprintf(buf, sizeof buf,
             "; row sums within %.1e of 1 (%.2f of their bound)", rs, over);
    c.detail += buf;
    c.ok = c.ok && bad == 0;
  }
  if (dropout) {
    int64_t z = 0, mm = 0;
    for (unsigned w = 0; w < workers; ++w) {
      z += zeros[w];
      mm += maskMismatch[w];
    }
    double frac = double(z) / out.elements();
    c.extra["zero_fraction"] = frac;
    c.extra["mask_mismatches"] = mm;
    for (size_t i : k.ops)
      if (m.program[i].op == "kb.dropout")
        c.extra["p"] = m.program[i].attrDouble("p", 0);
    snprintf(buf, sizeof buf,
             "; dropout zeroed %.4f%% (p = %.4g), mask mismatches %lld",
             100 * frac, c.extra["p"].get<double>(), (long long)mm);
    c.detail += buf;
    c.ok = c.ok && mm == 0;
  }
  return c;
}

/// A matmul with a fused elementwise epilogue: float64 matmul entries
/// through the epilogue on samples, each within the matmul's bound
/// propagated through the epilogue; and every element against cuBLAS (same
/// precision) then the epilogue in float64, the two products' distance
/// bound propagated the same way.
static KernelCheck checkMatmulEpilogue(RunState &s, const Kernel &k) {
  const Manifest &m = s.manifest;
  KernelCheck c;
  c.kernel = k.name;
  MatmulDims d = matmulDims(m, k);
  c.method = "matmul " + d.precision +
             " + epilogue: float64 matmul entries through the epilogue on "
             "samples (none with a kb.rotary), and cuBLAS then the epilogue "
             "in float64 on every element, each within the matmul's "
             "K-dependent bound propagated through the epilogue";
  const ProgramOp &mmOp = m.program[k.ops.front()];
  const Buffer &out = m.buffer(k.args.back());
  const std::vector<float> &got = s.host.at(out.name);
  const std::vector<float> &a = s.host.at(d.a);
  const std::vector<float> &b = s.host.at(d.b);
  MatmulNorms norms = matmulNorms(d, a, b);

  // Samples: float64 matmul entries pushed through the epilogue one by one.
  // (Not with a kb.rotary: an element needs its pair's and its row's table
  // entries; the every-element check below covers it.)
  bool rotary = false;
  for (size_t q = 1; q < k.ops.size(); ++q)
    rotary |= m.program[k.ops[q]].op == "kb.rotary";
  auto at = rotary ? decltype(sampleEntries(d, 0, 0))()
                   : sampleEntries(d, s.seed ^ 0xe91, 500);
  double worst = 0, worstRel = 0, rateGot = 0, rateRef = 0;
  int64_t badSamples = 0;
  for (auto [z, i, j] : at) {
    int64_t flat = (z * d.m + i) * d.n + j;
    MatmulEntry e = matmulEntry(a.data(), b.data(), d.m, d.n, d.k, d.transB, z,
                                i, j, d.ldbT);
    double bound = matmulErrorBound(e, d.k, d.precision);
    double scale = norms.scale(d, z, i, j);
    if (scale > 0) {
      rateGot = std::max(rateGot, bound / scale);
      rateRef = std::max(rateRef,
                         matmulErrorBound(e, d.k, cublasPrecision(d)) / scale);
    }
    std::map<std::string, HostTensor> one;
    one[mmOp.output] = HostTensor{{1}, {e.value}, {bound}};
    for (size_t q = 1; q < k.ops.size(); ++q) {
      const ProgramOp &op = m.program[k.ops[q]];
      std::vector<HostTensor> owned;
      owned.reserve(op.inputs.size());
      std::vector<const HostTensor *> ins;
      for (const std::string &in : op.inputs) {
        if (one.count(in)) {
          ins.push_back(&one.at(in));
          continue;
        }
        const Buffer &buf = m.buffer(in);
        double v = buf.elements() == out.elements() ? s.host.at(in)[flat]
                                                    : s.host.at(in)[j];
        owned.push_back(HostTensor{{1}, {v}, {}});
        ins.push_back(&owned.back());
      }
      one[op.output] = evalOp(op, ins, flat);
    }
    const HostTensor &r = one.at(out.name);
    Comparison cmp = compareWithBound(&got[flat], r.data.data(), r.err, 1);
    badSamples += cmp.bad;
    worst = std::max(worst, cmp.bad ? std::max(cmp.maxErrOverBound, 1.0)
                                    : cmp.maxErrOverBound);
    double err = std::fabs(got[flat] - r.data[0]) / std::max(e.absSum, 1e-30);
    worstRel = std::max(worstRel, std::isnan(err) ? INFINITY : err);
  }

  // Every element: cuBLAS's product, whose distance to the kernel's is at
  // most both bounds, through the epilogue in float64.
  // (In f32: the matmul's value is held in f32 registers until the
  // epilogue's store rounds it.)
  MatmulDims d32 = d;
  d32.out = DType::F32;
  std::vector<float> prod = cublasReference(s, d32, s.dev.at(d.a).ptr,
                                            s.dev.at(d.b).ptr, got.size());
  std::map<std::string, HostTensor> vals;
  HostTensor p0 = fromFloats(out.shape, prod.data());
  p0.err.resize(p0.data.size());
  for (int64_t z = 0; z < d.batch; ++z)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j)
        p0.err[(z * d.m + i) * d.n + j] =
            (rateGot + rateRef) * norms.scale(d, z, i, j);
  vals[mmOp.output] = std::move(p0);
  auto input = [&](const std::string &name) -> const HostTensor & {
    if (!vals.count(name))
      vals[name] = fromFloats(m.buffer(name).shape, s.host.at(name).data());
    return vals.at(name);
  };
  for (size_t i = 1; i < k.ops.size(); ++i) {
    const ProgramOp &op = m.program[k.ops[i]];
    std::vector<const HostTensor *> ins;
    for (const std::string &in : op.inputs)
      ins.push_back(&input(in));
    vals[op.output] = evalOp(op, ins);
  }
  const HostTensor &want = vals.at(out.name);
  double frob = relativeFrobenius(got, want.data);
  Comparison all = compareWithBound(got.data(), want.data.data(), want.err,
                                    static_cast<int64_t>(got.size()));
  c.extra["cublas_epilogue_relative_frobenius"] = frob;
  c.extra["cublas_epilogue_outside_bound"] = all.bad;
  c.extra["cublas_epilogue_unbounded"] = all.unbounded;
  c.extra["cublas_epilogue_max_error_over_bound"] = all.maxErrOverBound;
  c.extra["float64_samples_outside_bound"] = badSamples;
  c.extra["float64_max_error_over_bound"] = worst;
  c.extra["float64_max_error_over_abs_sum"] = worstRel;
  c.maxErr = worstRel;
  c.ok = badSamples == 0 && all.ok();
  c.uncheckable = badSamples == 0 && all.bad == 0 && all.checked == 0 &&
                  all.unbounded > 0;
  char buf[400];
  snprintf(
      buf, sizeof buf,
      "float64 on %zu entries through the epilogue: worst at %.2f of its "
      "bound (x%.0f), max |err|/sum|ab| %.2e; cuBLAS %s + float64 epilogue: "
      "relative Frobenius %.2e, worst element at %.2f of its bound",
      at.size(), worst, kBoundSafety, worstRel,
      d.precision == "tf32" ? "tf32" : "fp32", frob, all.maxErrOverBound);
  c.detail = buf;
  if (all.bad) {
    snprintf(buf, sizeof buf,
             "; %lld outside it, first at %lld: got %.8g, want %.8g",
             (long long)all.bad, (long long)all.firstBad, all.got, all.want);
    c.detail += buf;
  }
  if (all.unbounded) {
    snprintf(buf, sizeof buf, "; %lld unchecked (fp32 may overflow there)",
             (long long)all.unbounded);
    c.detail += buf;
  }
  return c;
}

KernelCheck checkKernel(RunState &s, const Kernel &k) {
  if (k.ops.empty()) {
    KernelCheck c;
    c.kernel = k.name;
    c.method = "none";
    c.detail = "the manifest records no ops for this kernel: cannot be checked";
    return c;
  }
  if (kernelHasOp(s.manifest, k, "kb.transpose"))
    return checkTranspose(s, k);
  if (kernelHasOp(s.manifest, k, "kb.pad"))
    return checkPad(s, k);
  if (kernelHasOp(s.manifest, k, "kb.attention"))
    return checkAttention(s, k);
  if (kernelHasOp(s.manifest, k, "kb.matmul")) {
    if (k.ops.size() != 1)
      return checkMatmulEpilogue(s, k);
    return checkMatmul(s, k);
  }
  return checkChain(s, k);
}

} // namespace kb::runtime
