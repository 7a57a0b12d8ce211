//===- Checks.cpp - validate each kernel of a bundle ----------------------===//
//
// Every kernel is checked on the inputs it actually read (downloaded after
// the run), so an error is pinned to the kernel that made it:
// - matmul: against cuBLAS in the same precision over every element, and
//   against float64 on sampled entries (error over sum |a_ik b_kj|);
// - elementwise chains and softmax: every element against the float64
//   reference, in parallel slices of rows; softmax row sums; dropout's mask
//   (exact, from the CPU Philox) and its zeroed fraction.
//
//===----------------------------------------------------------------------===//

#include "KbRun.h"

#include "kb/Runtime/Reference.h"

#include <cmath>
#include <cstring>
#include <random>
#include <thread>

namespace kb::runtime {

using nlohmann::json;

/// ||got - want|| / ||want||; NaN anywhere in got gives NaN.
template <typename T>
static double relativeFrobenius(const std::vector<float> &got, const std::vector<T> &want) {
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

static void addCublasGemm(cublasHandle_t h, const std::string &precision,
                          const MatmulDims &d, CUdeviceptr a, CUdeviceptr b,
                          CUdeviceptr c) {
  cublasMath_t mode = precision == "tf32" ? CUBLAS_TF32_TENSOR_OP_MATH
                                          : CUBLAS_PEDANTIC_MATH;
  checkCublas(cublasSetMathMode(h, mode), "cublasSetMathMode");
  float alpha = 1.0f, beta = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  checkCublas(cublasSgemmStridedBatched(
                  h, d.transB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, d.n, d.m,
                  d.k, &alpha, reinterpret_cast<const float *>(b),
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

MatmulDims matmulDims(const Manifest &m, const Kernel &k) {
  if (k.ops.empty() || m.program.at(k.ops.front()).op != "kb.matmul" ||
      m.program.at(k.ops.front()).inputs.size() != 2)
    throw std::runtime_error("internal: " + k.name + " is not a matmul kernel");
  const ProgramOp &op = m.program[k.ops.front()];
  const Buffer &a = m.buffer(op.inputs[0]);
  const Buffer &b = m.buffer(op.inputs[1]);
  MatmulDims d;
  size_t r = a.shape.size();
  d.batch = r == 3 ? a.shape[0] : 1;
  d.m = a.shape[r - 2];
  d.k = a.shape[r - 1];
  d.transB = op.attrs.value("transpose_b", false);
  d.n = d.transB ? b.shape[r - 2] : b.shape[r - 1];
  d.ldbT = d.transB ? b.shape[r - 1] : d.k;
  d.precision = op.attrString("precision", "ieee");
  return d;
}

/// C = A B by cuBLAS for the matmul `op`, in the kernel's precision (fp32
/// for ieee and tf32x3), copied to the host.
static std::vector<float> cublasReference(RunState &s, const MatmulDims &d,
                                          const ProgramOp &op, size_t elements) {
  DeviceBuffer ref(elements * 4);
  runCublasGemm(s.cublas, d.precision == "tf32" ? "tf32" : "ieee", d,
                s.dev.at(op.inputs[0]).ptr, s.dev.at(op.inputs[1]).ptr, ref.ptr);
  check(driver().cuCtxSynchronize(), "cuBLAS reference");
  std::vector<float> host(elements);
  ref.download(host.data());
  return host;
}

static KernelCheck checkMatmul(RunState &s, const Kernel &k) {
  KernelCheck c;
  c.kernel = k.name;
  MatmulDims d = matmulDims(s.manifest, k);
  c.method = "matmul " + d.precision + ": vs cuBLAS (same precision), and float64 on sampled entries";
  const ProgramOp &op = s.manifest.program[k.ops.front()];
  const std::vector<float> &a = s.host.at(op.inputs[0]);
  const std::vector<float> &b = s.host.at(op.inputs[1]);
  const std::vector<float> &got = s.host.at(k.args.back());
  double tol = matmulTolerance(d.precision);

  std::vector<float> want = cublasReference(s, d, op, got.size());
  double frob = relativeFrobenius(got, want);
  bool nan = std::isnan(frob);
  c.extra["cublas_relative_frobenius"] = frob;

  // float64 on sampled entries, corners and edges included.
  std::mt19937_64 rng(s.seed ^ 0x5eed);
  std::vector<std::array<int64_t, 3>> at = {
      {0, 0, 0}, {0, d.m - 1, d.n - 1}, {0, 0, d.n - 1}, {0, d.m - 1, 0},
      {d.batch - 1, d.m - 1, d.n - 1}};
  for (int i = 0; i < 1000; ++i)
    at.push_back({int64_t(rng() % d.batch), int64_t(rng() % d.m), int64_t(rng() % d.n)});
  double worst = 0, errSq = 0, refSq = 0;
  for (auto [z, i, j] : at) {
    MatmulEntry e = matmulEntry(a.data(), b.data(), d.m, d.n, d.k, d.transB, z, i, j, d.ldbT);
    double g = got[(z * d.m + i) * d.n + j];
    double err = std::fabs(g - e.value) / std::max(e.absSum, 1e-30);
    if (std::isnan(err))
      err = INFINITY;
    worst = std::max(worst, err);
    errSq += (g - e.value) * (g - e.value);
    refSq += e.value * e.value;
  }
  double relNorm = std::sqrt(errSq / std::max(refSq, 1e-300));
  c.extra["float64_samples"] = at.size();
  c.extra["float64_max_error_over_abs_sum"] = worst;
  c.extra["float64_relative_error"] = relNorm;
  c.maxErr = worst;
  // cuBLAS fp32 is itself about 1e-6 off float64, so a tf32x3 result is held
  // to float64 (its target), and to cuBLAS only loosely.
  double cublasTol = d.precision == "tf32x3" ? 1e-4 : tol;
  c.ok = !nan && frob <= cublasTol && worst <= tol &&
         (d.precision != "tf32x3" || relNorm <= 1e-5);
  char buf[320];
  snprintf(buf, sizeof buf,
           "vs cuBLAS %s: relative Frobenius %.2e; float64 on %zu entries: "
           "relative error %.2e, max |err|/sum|ab| %.2e (tolerance %.0e)",
           d.precision == "tf32" ? "tf32" : "fp32", frob, at.size(), relNorm,
           worst, tol);
  c.detail = buf;
  return c;
}

static KernelCheck checkChain(RunState &s, const Kernel &k) {
  const Manifest &m = s.manifest;
  KernelCheck c;
  c.kernel = k.name;
  const Buffer &out = m.buffer(k.args.back());
  int64_t last = out.shape.back();
  int64_t rows = out.elements() / last;
  bool softmax = kernelHasOp(m, k, "kb.softmax");
  bool dropout = kernelHasOp(m, k, "kb.dropout");
  c.method = softmax ? "softmax vs float64, every element; row sums"
                     : "elementwise chain vs float64, every element";
  if (dropout)
    c.method += "; dropout mask vs CPU Philox4x32-10";
  const std::vector<float> &got = s.host.at(out.name);

  unsigned workers = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  int64_t per = (rows + workers - 1) / workers;
  std::vector<Comparison> parts(workers);
  std::vector<int64_t> maskMismatch(workers, 0), zeros(workers, 0);
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
          if (b.elements() == out.elements()) {
            t.shape = {r1 - r0, last};
            t.data.assign(src + r0 * last, src + r1 * last);
          } else {
            t.shape = b.shape;
            t.data.assign(src, src + b.elements());
          }
          return vals[name] = std::move(t);
        };
        for (size_t i : k.ops) {
          const ProgramOp &op = m.program[i];
          std::vector<const HostTensor *> ins;
          for (const std::string &in : op.inputs)
            ins.push_back(&slice(in));
          vals[op.output] = evalOp(op, ins, r0 * last);
        }
        const HostTensor &ref = vals.at(out.name);
        const float *g = got.data() + r0 * last;
        double rtol = 2e-5, atol = softmax ? 1e-9 : 2e-6;
        parts[w] = compare(g, ref.data.data(), (r1 - r0) * last, rtol, atol);
        if (parts[w].firstBad >= 0)
          parts[w].firstBad += r0 * last;
        if (dropout)
          for (int64_t i = 0; i < (r1 - r0) * last; ++i) {
            zeros[w] += g[i] == 0.0f;
            // The float64 reference is exactly 0 only where the mask drops
            // the element: there the kernel must write exactly 0 too. Kept
            // elements are covered by the value comparison above (a kept
            // GELU output can underflow to 0 in f32).
            maskMismatch[w] += ref.data[i] == 0.0 && g[i] != 0.0f;
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
  for (auto &p : parts) {
    all.checked += p.checked;
    all.bad += p.bad;
    all.maxAbsErr = std::max(all.maxAbsErr, p.maxAbsErr);
    all.maxRelErr = std::max(all.maxRelErr, p.maxRelErr);
    if (all.firstBad < 0 && p.firstBad >= 0) {
      all.firstBad = p.firstBad;
      all.got = p.got;
      all.want = p.want;
    }
  }
  c.ok = all.ok();
  c.maxErr = all.maxRelErr;
  c.extra["elements"] = all.checked;
  c.extra["mismatches"] = all.bad;
  c.extra["max_abs_error"] = all.maxAbsErr;
  c.extra["max_rel_error"] = all.maxRelErr;
  char buf[512];
  snprintf(buf, sizeof buf, "%lld elements, max abs err %.2e, max rel err %.2e",
           (long long)all.checked, all.maxAbsErr, all.maxRelErr);
  c.detail = buf;
  if (all.bad) {
    snprintf(buf, sizeof buf, "; %lld outside tolerance, first at %lld: got %.8g, want %.8g",
             (long long)all.bad, (long long)all.firstBad, all.got, all.want);
    c.detail += buf;
  }
  // Row sums are 1 only when the softmax is the kernel's last op.
  if (softmax && m.program[k.ops.back()].op == "kb.softmax") {
    double rs = maxRowSumError(got.data(), out.elements(), last);
    c.extra["max_row_sum_error"] = rs;
    snprintf(buf, sizeof buf, "; row sums within %.1e of 1", rs);
    c.detail += buf;
    c.ok = c.ok && rs <= 1e-4;
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
    snprintf(buf, sizeof buf, "; dropout zeroed %.4f%% (p = %.4g), mask mismatches %lld",
             100 * frac, c.extra["p"].get<double>(), (long long)mm);
    c.detail += buf;
    c.ok = c.ok && mm == 0;
  }
  return c;
}

/// A matmul with a fused elementwise epilogue: cuBLAS (same precision) then
/// the epilogue in float64 over every element, and float64 matmul entries
/// through the epilogue on samples.
static KernelCheck checkMatmulEpilogue(RunState &s, const Kernel &k) {
  const Manifest &m = s.manifest;
  KernelCheck c;
  c.kernel = k.name;
  MatmulDims d = matmulDims(m, k);
  c.method = "matmul " + d.precision +
             " + epilogue: cuBLAS then the epilogue in float64, every element; "
             "float64 matmul entries through the epilogue on samples";
  const ProgramOp &mmOp = m.program[k.ops.front()];
  const Buffer &out = m.buffer(k.args.back());
  const std::vector<float> &got = s.host.at(out.name);
  double tol = matmulTolerance(d.precision);

  std::vector<float> prod = cublasReference(s, d, mmOp, got.size());
  std::map<std::string, HostTensor> vals;
  vals[mmOp.output] = fromFloats(out.shape, prod.data());
  auto input = [&](const std::string &name) -> const HostTensor & {
    if (!vals.count(name))
      vals[name] = fromFloats(m.buffer(name).shape, s.host.at(name).data());
    return vals.at(name);
  };
  double gain = 1;
  for (size_t i = 1; i < k.ops.size(); ++i) {
    const ProgramOp &op = m.program[k.ops[i]];
    std::vector<const HostTensor *> ins;
    for (const std::string &in : op.inputs)
      ins.push_back(&input(in));
    vals[op.output] = evalOp(op, ins);
    if (op.op == "kb.dropout")
      gain /= 1.0 - op.attrDouble("p", 0);
    if (op.op == "kb.scale")
      gain *= std::fabs(op.attrDouble("factor", 1));
  }
  const HostTensor &want = vals.at(out.name);
  double frob = relativeFrobenius(got, want.data);
  bool nan = std::isnan(frob);

  // Samples: float64 matmul entries pushed through the epilogue one by one.
  const std::vector<float> &a = s.host.at(mmOp.inputs[0]);
  const std::vector<float> &b = s.host.at(mmOp.inputs[1]);
  std::mt19937_64 rng(s.seed ^ 0xe91);
  double worst = 0;
  int samples = 500;
  for (int n = 0; n < samples; ++n) {
    int64_t z = rng() % d.batch, i = rng() % d.m, j = rng() % d.n;
    int64_t flat = (z * d.m + i) * d.n + j;
    MatmulEntry e = matmulEntry(a.data(), b.data(), d.m, d.n, d.k, d.transB, z, i, j, d.ldbT);
    std::map<std::string, HostTensor> one;
    one[mmOp.output] = HostTensor{{1}, {e.value}};
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
        double v = buf.elements() == out.elements() ? s.host.at(in)[flat] : s.host.at(in)[j];
        owned.push_back(HostTensor{{1}, {v}});
        ins.push_back(&owned.back());
      }
      one[op.output] = evalOp(op, ins, flat);
    }
    double r = one.at(out.name).data[0];
    double err = std::fabs(got[flat] - r) / std::max(e.absSum * gain, 1e-30);
    worst = std::max(worst, std::isnan(err) ? INFINITY : err);
  }
  c.extra["cublas_epilogue_relative_frobenius"] = frob;
  c.extra["float64_max_error_over_abs_sum"] = worst;
  c.maxErr = worst;
  c.ok = !nan && frob <= tol && worst <= tol;
  char buf[320];
  snprintf(buf, sizeof buf,
           "vs cuBLAS %s + float64 epilogue: relative Frobenius %.2e; float64 on %d "
           "entries: max |err|/sum|ab| %.2e (tolerance %.0e)",
           d.precision == "tf32" ? "tf32" : "fp32", frob, samples, worst, tol);
  c.detail = buf;
  return c;
}

/// A transpose moves values without arithmetic: every element must equal
/// its source exactly.
static KernelCheck checkTranspose(RunState &s, const Kernel &k) {
  KernelCheck c;
  c.kernel = k.name;
  c.method = "transpose: every element bit-identical to its source";
  const ProgramOp &op = s.manifest.program[k.ops.front()];
  const Buffer &in = s.manifest.buffer(op.inputs[0]);
  const std::vector<float> &x = s.host.at(op.inputs[0]);
  const std::vector<float> &got = s.host.at(k.args.back());
  size_t r = in.shape.size();
  int64_t batch = r == 3 ? in.shape[0] : 1, rows = in.shape[r - 2], cols = in.shape[r - 1];
  // The output's rows: `rows` long, or padded with zeros (kb.transpose pad).
  int64_t ld = s.manifest.buffer(op.output).shape.back();
  int64_t bad = 0, firstBad = -1;
  const float zero = 0.0f;
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < ld; ++i) {
        int64_t to = (z * cols + j) * ld + i;
        const float *want = i < rows ? &x[(z * rows + i) * cols + j] : &zero;
        if (std::memcmp(want, &got[to], sizeof(float)) != 0) {
          if (firstBad < 0)
            firstBad = to;
          ++bad;
        }
      }
  c.ok = bad == 0;
  c.maxErr = bad ? INFINITY : 0.0;
  c.extra["elements"] = batch * cols * ld;
  c.extra["mismatches"] = bad;
  char buf[200];
  snprintf(buf, sizeof buf, "%lld elements%s, %lld differ", (long long)(batch * cols * ld),
           ld != rows ? " (padding zeros included)" : "", (long long)bad);
  c.detail = buf;
  if (bad) {
    snprintf(buf, sizeof buf, "; first at output index %lld", (long long)firstBad);
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
  if (kernelHasOp(s.manifest, k, "kb.matmul")) {
    if (k.ops.size() != 1)
      return checkMatmulEpilogue(s, k);
    return checkMatmul(s, k);
  }
  return checkChain(s, k);
}

} // namespace kb::runtime
