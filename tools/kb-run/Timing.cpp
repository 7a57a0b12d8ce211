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
#include <optional>

namespace kb::runtime {

using nlohmann::json;

std::string fmtMs(const Timing &t) {
  char buf[160];
  snprintf(buf, sizeof buf, "median %.4f ms (min %.4f, max %.4f, %d runs)",
           t.median, t.min, t.max, t.runs);
  return buf;
}

json timingJson(const Timing &t) {
  json j = {{"median_ms", t.median},
            {"min_ms", t.min},
            {"max_ms", t.max},
            {"runs", t.runs}};
  if (t.board.valid())
    j["board"] = {{"watts", t.board.watts},
                  {"sm_mhz", t.board.smMhz},
                  {"limit_w", t.board.limitW},
                  {"seconds", t.board.seconds},
                  {"clock_samples", t.board.samples}};
  return j;
}

static BoardFacts boardFacts(const Timing &t) {
  return {t.board.watts, t.board.smMhz, t.board.limitW, t.median};
}

/// Runs a sample of kb-run --warm-l2 times back to back (timeWithEvents).
static int warmBatch(const Options &o) { return o.warmL2 ? 10 : 1; }

/// A lone matmul's cuBLAS fp32 and TF32 (a 16-bit one's: cuBLAS in its
/// types) at the same shape, on the same operands; returns the TFLOP/s of
/// the one in the kernel's precision (0: not a lone matmul).
static double timeCublas(RunState &s, const Options &o, Shared &shared,
                         DeviceBuffer *flush,
                         std::vector<std::pair<std::string, Timing>> &baselines,
                         json &report, double kbMedian, Progress &progress) {
  // A lone matmul, possibly behind a transpose of its B (kb-select-mma's
  // K-major B for wgmma) and pads of A's and B^T's rows (K % 4 != 0 on
  // wgmma): cuBLAS gets the program's own operands, so a transposed B is
  // timed in its original row-major layout and a padded one unpadded, on
  // the original K (matmulDims).
  // Split-K adds a kb.split_sum of the matmul's partials after it.
  std::vector<ProgramOp> prog = s.manifest.program;
  bool splitK = prog.size() >= 2 && prog.back().op == "kb.split_sum" &&
                prog[prog.size() - 2].op == "kb.matmul" &&
                prog.back().inputs[0] == prog[prog.size() - 2].output;
  if (splitK)
    prog.pop_back();
  if (prog.empty() || prog.back().op != "kb.matmul" || prog.size() > 3)
    return 0;
  const ProgramOp &op = prog.back();
  const ProgramOp *transposeOfB = nullptr;
  for (size_t i = 0; i + 1 < prog.size(); ++i) {
    const ProgramOp &p = prog[i];
    bool feeds = std::find(op.inputs.begin(), op.inputs.end(), p.output) !=
                 op.inputs.end();
    if (p.op == "kb.transpose" && feeds && p.output == op.inputs[1])
      transposeOfB = &p;
    else if (!(p.op == "kb.pad" && feeds))
      return 0;
  }
  progress.phase("timing cuBLAS");
  double computeCeiling = 0;
  const Kernel *mk = nullptr;
  for (const Kernel &k : s.manifest.kernels)
    if (!k.ops.empty() && s.manifest.program[k.ops.front()].op == "kb.matmul")
      mk = &k;
  if (!mk)
    return 0;
  MatmulDims d = matmulDims(s.manifest, *mk);
  // Split-K: the program's result is the sum's (its type, not the f32
  // partials').
  if (splitK)
    d.out = s.manifest.program.back().dtype;
  std::string aName = d.a, bName = d.b;
  if (transposeOfB) {
    d.transB = false;
    bName = transposeOfB->inputs[0];
  }
  DeviceBuffer c(size_t(d.batch * d.m * d.n) * dtypeBytes(d.out));
  // Every library route (the legacy call, cublasGemmEx, cuBLASLt's top
  // candidates, Baselines.cpp); the fastest is the baseline, all are
  // reported under cublas_routes.
  if (!shared.routes)
    shared.routes = std::make_shared<GemmRoutes>();
  GemmRoutes &libs = *shared.routes;
  json routes = json::object();
  // A 16-bit matmul's peers are the 16-bit routes only (cuBLAS in fp32 or
  // TF32 would read other operands).
  std::vector<std::string> precs = {"ieee", "tf32"};
  if (d.precision == "native")
    precs = {"native"};
  for (const std::string &prec : precs) {
    // The program's peers are the routes of its own precision (tf32x3's
    // are fp32's: its accuracy is fp32's).
    bool own = prec == "native" || (d.precision == "tf32") == (prec == "tf32");
    if (o.programRoutesOnly && !own)
      continue;
    std::vector<GemmRoute> all =
        libs.timeAll(prec, d, s.dev.at(aName).ptr, s.dev.at(bName).ptr, c.ptr,
                     o.warmup, o.minRuns, o.minMillis, flush, warmBatch(o));
    json list = json::array();
    for (const GemmRoute &r : all)
      list.push_back({{"route", r.name},
                      {"time", timingJson(r.time)},
                      {"kb_speedup", r.time.median / kbMedian}});
    // Keyed "ieee", "tf32", or the operands' type ("bf16", "f16").
    routes[prec == "native" ? dtypeName(d.in) : prec] = list;
    const GemmRoute &best = all.front();
    std::string what = prec == "ieee"   ? "fp32"
                       : prec == "tf32" ? "TF32"
                                        : dtypeName(d.in);
    baselines.push_back({"cuBLAS " + what + " (best of " +
                             std::to_string(all.size()) +
                             " routes: " + best.name + ")",
                         best.time});
    if (own)
      computeCeiling = d.flops() / (best.time.median * 1e-3) / 1e12;
  }
  report["cublas_routes"] = routes;
  return computeCeiling;
}

/// The --baseline bundle on this bundle's inputs: run, its outputs compared
/// with this bundle's, then timed the same way.
static Timing timeBaselineBundle(RunState &s, const Options &o,
                                 const Offline &off, const DeviceInfo &dev,
                                 DeviceBuffer *flush, Progress &progress) {
  progress.phase("checking and timing the baseline bundle");
  RunState b = prepare(*off.baseline, o, off.given, dev.smCount);
  for (const Buffer &buf : b.manifest.buffers)
    if (buf.role == "input" && s.host.count(buf.name)) {
      b.host[buf.name] = s.host.at(buf.name);
      uploadAs(b.dev.at(buf.name), buf.dtype, b.host[buf.name].data());
    }
  poisonOutputs(b);
  launchAll(b);
  check(driver().cuCtxSynchronize(), "running the baseline bundle");
  downloadAll(b);
  for (const Buffer &buf : b.manifest.buffers)
    if (buf.role == "output" && s.host.count(buf.name)) {
      double worst = 0, limit = 0;
      bool same = baselineOutputsAgree(s.host.at(buf.name), b.host.at(buf.name),
                                       buf.dtype, &worst, &limit);
      if (!same)
        throw std::runtime_error("the baseline bundle's output " + buf.name +
                                 " differs from this bundle's (max rel diff " +
                                 std::to_string(worst) +
                                 "): not the same program, not timed");
    }
  return timeWithEvents([&] { launchAll(b); }, o.warmup, o.minRuns, o.minMillis,
                        flush, warmBatch(o));
}

Ceiling programCeiling(const Manifest &m, const DeviceInfo &dev,
                       const json &calibration) {
  std::string unit = programUnit(m);
  if (unit.empty())
    return Ceiling{};
  bool hopper = dev.major == 9 && dev.minor == 0;
  Ceiling c = unitCeiling(unit, calibration, hopper);
  if (c.tflops > 0)
    return c;
  // A unit this kb-run does not know: the one the precision implies,
  // labelled so.
  std::string prec = "ieee";
  for (const ProgramOp &op : m.program)
    if (op.op == "kb.matmul") {
      prec = op.attrString("precision", "ieee");
      break;
    }
  c = unitCeiling(prec == "tf32"     ? "mma_sync_tf32"
                  : prec == "tf32x3" ? "mma_sync_tf32x3"
                                     : "ffma",
                  calibration, hopper);
  c.source = "mma unit '" + unit + "' unknown to this kb-run; " + c.source;
  return c;
}

/// The compute ceilings of a program with flops: what the verdict's
/// fraction is of (cuBLAS at this shape in this run, a lone matmul with
/// `computeCeiling` > 0; else the ceiling of the unit the matmul uses) and
/// the unit's ceiling, which places the roofline's ridge whatever the shape
/// (kb-run --calibrate's measurement of that unit, else the H200 figure of
/// docs/performance.md, labelled nominal). Never another unit's: a wgmma
/// kernel measured against the mma.sync loop read 103% while slower than
/// cuBLAS. Returns the unit's ceiling; updates `computeCeiling` and names
/// it in `computeName`.
static double ceilings(const Manifest &m, const Ceiling &unit,
                       double &computeCeiling, std::string &computeName,
                       json &report) {
  std::string prec = "ieee", in = "f32";
  for (const Kernel &k : m.kernels)
    if (!k.ops.empty() && m.program[k.ops.front()].op == "kb.matmul") {
      MatmulDims d = matmulDims(m, k);
      prec = d.precision;
      in = dtypeName(d.in);
    }
  std::string unitName = programUnit(m);
  std::string source = "cuBLAS, this run";
  // Named for the route it is: a 16-bit matmul's peer is cuBLAS in its type.
  computeName = std::string("cuBLAS ") +
                (prec == "tf32" ? "TF32" : prec == "native" ? in : "fp32") +
                " at this shape";
  if (computeCeiling == 0) {
    computeCeiling = unit.tflops;
    source = unit.source;
    computeName = "the " + unitName + " ceiling";
  }
  report["compute_ceiling_source"] = source;
  report["compute_ceiling_tflops"] = computeCeiling;
  report["compute_unit"] = unitName;
  report["device_compute_tflops"] = unit.tflops;
  report["device_compute_source"] = unit.source;
  report["device_compute_measured"] = unit.measured;
  return unit.tflops;
}

Verdict addVerdict(const Manifest &m, const DeviceInfo &dev,
                   const json &calibration, double cublasTflops, json &report) {
  double flops = report["flops"], minBytes = report["minimal_bytes"];
  double gbs = report["achieved_gbs"], tflops = report["achieved_tflops"];
  double copyBw = report["copy_bandwidth_gbs"];
  std::string computeName = "the compute ceiling";
  double computeCeiling = cublasTflops;
  double deviceCeiling = flops > 0
                             ? ceilings(m, programCeiling(m, dev, calibration),
                                        computeCeiling, computeName, report)
                             : 0;
  Verdict verdict = classify(flops, minBytes, gbs, tflops, copyBw,
                             computeCeiling, deviceCeiling, computeName);
  report["verdict"] = verdict.text;
  return verdict;
}

/// The same bytes moved by one device-to-device copy, timed like the
/// kernel (alone between events, after the flush): what any single pass of
/// this size can reach, launch, ramp-up and tail included. The 1 GiB copy
/// hides those; a 100 MB kernel cannot.
static void timeSameSizeCopy(double minBytes, double gbs, double copyBw,
                             DeviceBuffer *flush, json &report,
                             Progress &progress) {
  // Two more buffers of half the bytes each: on a GPU with less memory
  // free than that the reference is left out, not the report.
  try {
    progress.phase("timing a copy of the same bytes");
    // No flush buffer: kb-run --warm-l2, ten copies back to back a sample.
    Timing ct = timeCopyOfSize(minBytes, flush, flush ? 1 : 10);
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
                    const DeviceInfo &dev, Shared &shared, bool allOk,
                    json &report, Progress &progress) {
  // Once a process: a batch's bundles share the measurement.
  if (shared.copyGBs == 0)
    shared.copyGBs = measureCopyBandwidth();
  double copyBw = shared.copyGBs;
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
    // --warm-l2: no flush, each run finds what the last one left in L2
    // (a kernel between others of a model, rather than a cold start).
    std::optional<DeviceBuffer> flushBuffer;
    if (!o.warmL2)
      flushBuffer.emplace(
          std::max<size_t>(size_t(dev.l2Bytes) * 4, size_t(256) << 20));
    DeviceBuffer *flush = flushBuffer ? &*flushBuffer : nullptr;
    progress.phase("timing the program");
    Timing t = timeWithEvents([&] { launchAll(s); }, o.warmup, o.minRuns,
                              o.minMillis, flush, warmBatch(o));
    report["time"] = timingJson(t);
    report["time"]["l2"] = o.warmL2 ? "warm" : "flushed";
    // Several kernels: each one also alone (its inputs are what the last run
    // of the whole program left), to show where the time goes.
    if (s.manifest.kernels.size() > 1)
      for (size_t i = 0; i < s.manifest.kernels.size(); ++i)
        report["kernels"][i]["time_alone"] =
            timingJson(timeWithEvents([&] { launchOne(s, i); }, o.warmup,
                                      o.minRuns, o.minMillis, flush,
                                      warmBatch(o)));
    double gbs = minBytes / (t.median * 1e-3) / 1e9;
    double tflops = flops / (t.median * 1e-3) / 1e12;
    report["achieved_gbs"] = gbs;
    report["achieved_tflops"] = tflops;
    report["fraction_of_copy"] = gbs / copyBw;

    // Baselines in the same run (none with --no-baselines).
    double computeCeiling = o.noBaselines
                                ? 0
                                : timeCublas(s, o, shared, flush, baselines,
                                             report, t.median, progress);
    if (!o.baseline.empty() && !o.noBaselines) {
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
    // The board while kb and the fastest baseline with a reading ran (NVML;
    // none without).
    if (t.board.valid()) {
      const std::pair<std::string, Timing> *peer = nullptr;
      for (auto &b : baselines)
        if (b.second.board.valid() &&
            (!peer || b.second.median < peer->second.median))
          peer = &b;
      BoardFacts peerFacts = peer ? boardFacts(peer->second) : BoardFacts{};
      std::string note =
          boardNote(boardFacts(t), peerFacts, peer ? peer->first : "");
      // With the L2 flushed between runs the loop's power and clock are of
      // the flushes too (compare back to back: --warm-l2).
      if (!note.empty() && flush)
        note += " (over the whole loops, the L2 flushes between runs "
                "included)";
      if (!note.empty())
        report["board"] = {{"note", note},
                           {"baseline", peer ? peer->first : ""}};
    }

    // Verdict: which ceiling applies, and how close the kernel came.
    Verdict verdict =
        addVerdict(s.manifest, dev, shared.calibration, computeCeiling, report);

    // Memory-bound programs only, by the verdict's ridge.
    if (verdict.memoryBound && minBytes > 0 && !o.noBaselines)
      timeSameSizeCopy(minBytes, gbs, copyBw, flush, report, progress);
  }
  progress.done();
}

} // namespace kb::runtime
