//===- Timing.cpp - time a checked program against its baselines ----------===//
//
// Only a program whose every kernel passed its check is timed: with CUDA
// events, the L2 flushed between runs, each kernel also alone when there
// are several; against cuBLAS at the same shape (a lone matmul) and the
// --baseline bundle (run, compared with this bundle's outputs, then timed
// the same way); then classified by the roofline (Verdict.cpp) and, for
// memory-bound programs, compared with a copy of the same bytes.
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"
#include "Run.h"

#include "kb/Runtime/Verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kb::runtime {

using nlohmann::json;

std::string fmtMs(const Timing &t) {
  char buf[160];
  snprintf(buf, sizeof buf, "median %.4f ms (min %.4f, max %.4f, %d runs)",
           t.median, t.min, t.max, t.runs);
  return buf;
}

json timingJson(const Timing &t) {
  return {{"median_ms", t.median},
          {"min_ms", t.min},
          {"max_ms", t.max},
          {"runs", t.runs}};
}

/// A lone matmul's cuBLAS fp32 and TF32 at the same shape, on the same
/// operands; returns the TFLOP/s of the one in the kernel's precision (0:
/// not a lone matmul).
static double timeCublas(RunState &s, const Options &o, DeviceBuffer &flush,
                         std::vector<std::pair<std::string, Timing>> &baselines,
                         json &report, double kbMedian, Progress &progress) {
  // A lone matmul, possibly behind a transpose of its B (kb-select-mma's
  // K-major B for wgmma): cuBLAS gets the program's own operands, so a
  // transposed B is timed in its original row-major layout.
  // Split-K adds a kb.split_sum of the matmul's partials after it.
  std::vector<ProgramOp> prog = s.manifest.program;
  bool splitK = prog.size() >= 2 && prog.back().op == "kb.split_sum" &&
                prog[prog.size() - 2].op == "kb.matmul" &&
                prog.back().inputs[0] == prog[prog.size() - 2].output;
  if (splitK)
    prog.pop_back();
  bool transposedB = prog.size() == 2 && prog[0].op == "kb.transpose" &&
                     prog[1].op == "kb.matmul" &&
                     prog[1].inputs[1] == prog[0].output;
  bool singleMatmul =
      (prog.size() == 1 && prog[0].op == "kb.matmul") || transposedB;
  if (!singleMatmul)
    return 0;
  progress.phase("timing cuBLAS");
  double computeCeiling = 0;
  const Kernel *mk = nullptr;
  for (const Kernel &k : s.manifest.kernels)
    if (!k.ops.empty() && s.manifest.program[k.ops.front()].op == "kb.matmul")
      mk = &k;
  if (!mk)
    return 0;
  MatmulDims d = matmulDims(s.manifest, *mk);
  const ProgramOp &op = prog.back();
  std::string bName = op.inputs[1];
  if (transposedB) {
    d.transB = false;
    bName = prog[0].inputs[0];
  }
  DeviceBuffer c(size_t(d.batch * d.m * d.n) * 4);
  // Every library route (the legacy call, cublasGemmEx, cuBLASLt's top
  // candidates, Baselines.cpp); the fastest is the baseline, all are
  // reported under cublas_routes.
  GemmRoutes libs;
  json routes = json::object();
  for (std::string prec : {"ieee", "tf32"}) {
    std::vector<GemmRoute> all =
        libs.timeAll(prec, d, s.dev.at(op.inputs[0]).ptr, s.dev.at(bName).ptr,
                     c.ptr, o.warmup, o.minRuns, o.minMillis, &flush);
    json list = json::array();
    for (const GemmRoute &r : all)
      list.push_back({{"route", r.name},
                      {"time", timingJson(r.time)},
                      {"kb_speedup", r.time.median / kbMedian}});
    routes[prec] = list;
    const GemmRoute &best = all.front();
    baselines.push_back(
        {(prec == "ieee" ? "cuBLAS fp32 (best of " : "cuBLAS TF32 (best of ") +
             std::to_string(all.size()) + " routes: " + best.name + ")",
         best.time});
    if ((d.precision == "tf32") == (prec == "tf32"))
      computeCeiling = d.flops() / (best.time.median * 1e-3) / 1e12;
  }
  report["cublas_routes"] = routes;
  return computeCeiling;
}

/// The --baseline bundle on this bundle's inputs: run, its outputs compared
/// with this bundle's, then timed the same way.
static Timing timeBaselineBundle(RunState &s, const Options &o,
                                 const Offline &off, const DeviceInfo &dev,
                                 DeviceBuffer &flush, Progress &progress) {
  progress.phase("checking and timing the baseline bundle");
  RunState b = prepare(*off.baseline, o, off.given, dev.smCount);
  for (const Buffer &buf : b.manifest.buffers)
    if (buf.role == "input" && s.host.count(buf.name)) {
      b.host[buf.name] = s.host.at(buf.name);
      b.dev.at(buf.name).upload(b.host[buf.name].data());
    }
  poisonOutputs(b);
  launchAll(b);
  check(driver().cuCtxSynchronize(), "running the baseline bundle");
  downloadAll(b);
  for (const Buffer &buf : b.manifest.buffers)
    if (buf.role == "output" && s.host.count(buf.name)) {
      const auto &x = s.host.at(buf.name), &y = b.host.at(buf.name);
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i)
        worst = std::max(worst, (double)std::fabs(x[i] - y[i]) /
                                    (1e-6 + std::fabs(y[i])));
      if (!(worst < 1e-3))
        throw std::runtime_error("the baseline bundle's output " + buf.name +
                                 " differs from this bundle's (max rel diff " +
                                 std::to_string(worst) +
                                 "): not the same program, not timed");
    }
  return timeWithEvents([&] { launchAll(b); }, o.warmup, o.minRuns, o.minMillis,
                        &flush);
}

/// The compute ceilings of a program with flops: cuBLAS at this shape in
/// this run (a lone matmul, `computeCeiling` > 0), else the cached
/// --calibrate measurement, else the H200 figures of performance-targets.md
/// (FFMA loop 55.8, mma.sync loop 324 TFLOP/s). The device's peak (the
/// calibration, else those figures) places the roofline's ridge whatever the
/// shape. Returns the device's peak; updates `computeCeiling`.
static double ceilings(const RunState &s, const json &calibration,
                       double &computeCeiling, json &report) {
  std::string prec = "ieee";
  for (const Kernel &k : s.manifest.kernels)
    if (!k.ops.empty() && s.manifest.program[k.ops.front()].op == "kb.matmul")
      prec = matmulDims(s.manifest, k).precision;
  std::string source = "cuBLAS, this run";
  std::string deviceSource = "H200 defaults (run kb-run --calibrate)";
  double deviceCeiling = prec == "ieee" ? 55.8 : 324.0;
  if (calibration.is_object()) {
    double calibrated = calibration.value(
        prec == "ieee" ? "cublas_fp32_tflops" : "cublas_tf32_tflops", 0.0);
    if (calibrated > 0) {
      deviceCeiling = calibrated;
      deviceSource =
          "calibration " + calibration.value("measured", std::string("?"));
    }
  }
  if (computeCeiling == 0) {
    computeCeiling = deviceCeiling;
    source = deviceSource;
  }
  report["compute_ceiling_source"] = source;
  report["compute_ceiling_tflops"] = computeCeiling;
  report["device_compute_tflops"] = deviceCeiling;
  report["device_compute_source"] = deviceSource;
  return deviceCeiling;
}

/// The same bytes moved by one device-to-device copy, timed like the
/// kernel (alone between events, after the flush): what any single pass of
/// this size can reach, launch, ramp-up and tail included. The 1 GiB copy
/// hides those; a 100 MB kernel cannot.
static void timeSameSizeCopy(double minBytes, double gbs, double copyBw,
                             DeviceBuffer &flush, json &report,
                             Progress &progress) {
  // Two more buffers of half the bytes each: on a GPU with less memory
  // free than that the reference is left out, not the report.
  try {
    progress.phase("timing a copy of the same bytes");
    Timing ct = timeCopyOfSize(minBytes, &flush);
    double sameBw = minBytes / (ct.median * 1e-3) / 1e9;
    report["copy_same_size"] = {{"time", timingJson(ct)},
                                {"gbs", sameBw},
                                {"fraction_of_copy", sameBw / copyBw}};
    report["fraction_of_same_size_copy"] = gbs / sameBw;
  } catch (const std::exception &e) {
    report["copy_same_size"] = {{"error", e.what()}};
  }
}

void timeAndCompare(RunState &s, const Options &o, const Offline &off,
                    const DeviceInfo &dev, const json &calibration, bool allOk,
                    json &report, Progress &progress) {
  double copyBw = measureCopyBandwidth();
  report["copy_bandwidth_gbs"] = copyBw;
  double minBytes = minimalBytes(s.manifest), flops = flopsOf(s.manifest);
  double moved = 0;
  for (auto &k : report["kernels"])
    moved += k["modelled_bytes"].get<double>();
  report["minimal_bytes"] = minBytes;
  report["modelled_bytes"] = moved;
  report["flops"] = flops;
  std::vector<std::pair<std::string, Timing>> baselines;
  if (allOk && !o.noTime) {
    DeviceBuffer flush(
        std::max<size_t>(size_t(dev.l2Bytes) * 4, size_t(256) << 20));
    progress.phase("timing the program");
    Timing t = timeWithEvents([&] { launchAll(s); }, o.warmup, o.minRuns,
                              o.minMillis, &flush);
    report["time"] = timingJson(t);
    // Several kernels: each one also alone (its inputs are what the last run
    // of the whole program left), to show where the time goes.
    if (s.manifest.kernels.size() > 1)
      for (size_t i = 0; i < s.manifest.kernels.size(); ++i)
        report["kernels"][i]["time_alone"] =
            timingJson(timeWithEvents([&] { launchOne(s, i); }, o.warmup,
                                      o.minRuns, o.minMillis, &flush));
    double gbs = minBytes / (t.median * 1e-3) / 1e9;
    double tflops = flops / (t.median * 1e-3) / 1e12;
    report["achieved_gbs"] = gbs;
    report["achieved_tflops"] = tflops;
    report["fraction_of_copy"] = gbs / copyBw;

    // Baselines in the same run.
    double computeCeiling =
        timeCublas(s, o, flush, baselines, report, t.median, progress);
    if (!o.baseline.empty()) {
      Timing bt = timeBaselineBundle(s, o, off, dev, flush, progress);
      baselines.push_back({"baseline " + o.baseline + " (" +
                               std::to_string(off.baseline->kernels.size()) +
                               " kernels)",
                           bt});
    }
    json bj = json::array();
    for (auto &[name, bt] : baselines)
      bj.push_back({{"name", name},
                    {"time", timingJson(bt)},
                    {"kb_speedup", bt.median / t.median}});
    report["baselines"] = bj;

    // Verdict: which ceiling applies, and how close the kernel came.
    double deviceCeiling =
        flops > 0 ? ceilings(s, calibration, computeCeiling, report) : 0;
    Verdict verdict = classify(flops, minBytes, gbs, tflops, copyBw,
                               computeCeiling, deviceCeiling);
    report["verdict"] = verdict.text;

    // Memory-bound programs only, by the verdict's ridge.
    if (verdict.memoryBound && minBytes > 0)
      timeSameSizeCopy(minBytes, gbs, copyBw, flush, report, progress);
  }
  progress.done();
}

} // namespace kb::runtime
