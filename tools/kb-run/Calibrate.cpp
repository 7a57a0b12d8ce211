//===- Calibrate.cpp - this GPU's measured ceilings, cached ---------------===//
//
// `kb-run --calibrate` measures the device's copy bandwidth and cuBLAS fp32
// and TF32 at 8192^3 (the fastest of every library route, Baselines.cpp) and
// caches them per device name in $XDG_CACHE_HOME/kb/calibration.json (else
// ~/.cache), for the verdicts of later runs. Each is also recorded as the
// ceiling of the unit the library runs it on (`units`): FFMA for fp32;
// wgmma for TF32 on a Hopper GPU (9.0), mma.sync elsewhere.
//
// A unit no library route runs on this GPU (mma.sync on Hopper: cuBLAS runs
// wgmma) is measured with kb's own kernel for it when one is given,
// `--unit-bundle mma_sync_tf32=DIR`: a bundle compiled by kb's passes (one
// matmul kernel whose #kb.config names that unit), checked like any bundle
// and timed; its TFLOP/s is the unit's ceiling, with the bundle, shape and
// config as its source. Without one the unit is listed in
// `units_not_measured` and the verdicts use its nominal figure, labelled so
// (Verdict.h, unitCeiling). A unit a library route measured keeps that
// figure; kb's kernel is then recorded next to it (`kb_kernel`).
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"
#include "Run.h"

#include "kb/Version.h"

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace kb::runtime {

using nlohmann::json;

static std::string calibrationPath() {
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  std::string dir = xdg && *xdg ? std::string(xdg)
                                : std::string(home ? home : "/tmp") + "/.cache";
  return dir + "/kb/calibration.json";
}

/// The cached ceilings of `device`, or null.
json loadCalibration(const std::string &device) {
  std::ifstream in(calibrationPath());
  if (!in)
    return nullptr;
  try {
    json j = json::parse(in);
    if (j.contains(device))
      return j[device];
  } catch (...) {
  }
  return nullptr;
}

std::vector<UnitBundle> parseUnitBundles(const std::vector<std::string> &args) {
  std::vector<UnitBundle> out;
  for (const std::string &a : args) {
    size_t eq = a.find('=');
    std::string unit = a.substr(0, eq);
    if (eq == std::string::npos || unit.empty() || eq + 1 == a.size())
      throw InputError("--unit-bundle " + a + ": expected UNIT=BUNDLE_DIR");
    if (unitCeiling(unit, nullptr, true).tflops <= 0)
      throw InputError("--unit-bundle " + a + ": unknown unit '" + unit +
                       "' (ffma, mma_sync_tf32, mma_sync_tf32x3, wgmma_tf32, "
                       "wgmma_bf16, wgmma_f16, mma_sync_bf16, mma_sync_f16)");
    for (const UnitBundle &u : out)
      if (u.unit == unit)
        throw InputError("--unit-bundle: " + unit + " given twice");
    out.push_back({unit, a.substr(eq + 1)});
  }
  return out;
}

void checkUnitBundle(const UnitBundle &u, const Manifest &m) {
  std::string what = "--unit-bundle " + u.unit + "=" + u.dir + ": ";
  if (m.kernels.size() != 1 || m.kernels[0].ops.size() != 1 ||
      m.program.at(m.kernels[0].ops[0]).op != "kb.matmul")
    throw InputError(what + "not a lone matmul kernel (" +
                     std::to_string(m.kernels.size()) +
                     " kernels): a unit's ceiling is one matmul kernel's "
                     "rate");
  std::string unit = parseConfigText(m.kernels[0].config).mma;
  if (unit != u.unit)
    throw InputError(
        what + "its kernel's #kb.config names " +
        (unit.empty() ? std::string("no mma unit") : "mma = \"" + unit + "\"") +
        ", not " + u.unit);
}

json measureCeilings(const DeviceInfo &dev, const Options &o) {
  json c;
  c["copy_bandwidth_gbs"] = measureCopyBandwidth();
  c["l2_bytes"] = dev.l2Bytes; // the device's, for kb-tune's split-K model
  MatmulDims d;
  d.m = d.n = d.k = 8192;
  DeviceBuffer a(d.m * d.k * 4), b(d.k * d.n * 4), out(d.m * d.n * 4);
  std::vector<float> host(d.m * d.k);
  Buffer spec;
  spec.name = "calibration";
  fillRandom(host, spec, o.seed);
  a.upload(host.data());
  b.upload(host.data());
  bool hopper = dev.major == 9 && dev.minor == 0;
  json units = json::object();
  GemmRoutes routes;
  for (std::string prec : {"ieee", "tf32"}) {
    std::vector<GemmRoute> all =
        routes.timeAll(prec, d, a.ptr, b.ptr, out.ptr, 2, 10, 0, nullptr);
    const GemmRoute &best = all.front();
    double tflops = d.flops() / (best.time.median * 1e-3) / 1e12;
    c[prec == "ieee" ? "cublas_fp32_tflops" : "cublas_tf32_tflops"] = tflops;
    std::string unit = prec == "ieee" ? "ffma"
                       : hopper       ? "wgmma_tf32"
                                      : "mma_sync_tf32";
    units[unit] = {
        {"tflops", tflops},
        {"source", std::string(prec == "ieee" ? "cuBLAS fp32" : "cuBLAS TF32") +
                       " 8192^3 (" + unit + "), best of " +
                       std::to_string(all.size()) + " routes: " + best.name}};
  }
  // The 16-bit tensor cores (wgmma f16/bf16 on Hopper): cuBLAS at 8192^3,
  // 16-bit operands and result, fp32 accumulation.
  for (DType t : {DType::BF16, DType::F16}) {
    if (!hopper)
      break;
    MatmulDims h = d;
    h.precision = "native";
    h.in = h.out = t;
    DeviceBuffer a16(d.m * d.k * 2), b16(d.k * d.n * 2), out16(d.m * d.n * 2);
    uploadAs(a16, t, host.data());
    uploadAs(b16, t, host.data());
    std::vector<GemmRoute> all = routes.timeAll("native", h, a16.ptr, b16.ptr,
                                                out16.ptr, 2, 10, 0, nullptr);
    const GemmRoute &best = all.front();
    std::string unit = std::string("wgmma_") + dtypeName(t);
    units[unit] = {{"tflops", h.flops() / (best.time.median * 1e-3) / 1e12},
                   {"source", std::string("cuBLAS ") + dtypeName(t) +
                                  " 8192^3 (" + unit + "), best of " +
                                  std::to_string(all.size()) +
                                  " routes: " + best.name}};
  }
  c["units"] = units;
  if (hopper)
    c["units_not_measured"] = {
        {"mma_sync_tf32",
         "no library route runs mma.sync TF32 on this GPU (cuBLAS runs "
         "wgmma) and no kb kernel was given (--unit-bundle "
         "mma_sync_tf32=DIR); verdicts use the nominal figure, labelled so"}};
  return c;
}

void addUnitKernel(json &c, const UnitBundle &u, const Manifest &m,
                   const json &report) {
  std::string what = "--unit-bundle " + u.unit + "=" + u.dir + ": ";
  if (report.value("status", std::string()) != "ok")
    throw std::runtime_error(what + "its checks failed: no ceiling from a "
                                    "kernel that computes a wrong result");
  if (!report.contains("time") || !report.contains("achieved_tflops"))
    throw std::runtime_error(what + "not timed");
  const json &t = report["time"];
  const ProgramOp &op = m.program.at(m.kernels[0].ops[0]);
  MatmulDims d = matmulDims(m, m.kernels[0]);
  char text[160];
  snprintf(text, sizeof text, "%s matmul b%lld %lldx%lldx%lld",
           op.attrString("precision", "?").c_str(), (long long)d.batch,
           (long long)d.m, (long long)d.n, (long long)d.k);
  char rate[64];
  snprintf(rate, sizeof rate, "median %.4f ms of %d runs",
           t.value("median_ms", 0.0), t.value("runs", 0));
  json kernel = {{"tflops", report["achieved_tflops"]},
                 {"source", "kb's " + u.unit + " kernel, " + text + ", " +
                                m.kernels[0].config + " (bundle " + u.dir +
                                ", " + m.compiler + "): " + rate},
                 {"bundle", u.dir},
                 {"config", m.kernels[0].config},
                 {"median_ms", t.value("median_ms", 0.0)},
                 {"runs", t.value("runs", 0)}};
  json &units = c["units"];
  if (units.contains(u.unit)) {
    // A library route measured it: that stays the ceiling.
    units[u.unit]["kb_kernel"] = kernel;
    return;
  }
  units[u.unit] = kernel;
  if (c.contains("units_not_measured")) {
    c["units_not_measured"].erase(u.unit);
    if (c["units_not_measured"].empty())
      c.erase("units_not_measured");
  }
}

int saveCalibration(const DeviceInfo &dev, json c) {
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c["measured"] = when;
  c["measured_by"] = "kb-run " KB_VERSION_STRING;
  json all = json::object();
  {
    std::ifstream in(calibrationPath());
    if (in)
      try {
        all = json::parse(in);
      } catch (...) {
      }
  }
  all[dev.name] = c;
  std::filesystem::create_directories(
      std::filesystem::path(calibrationPath()).parent_path());
  std::ofstream(calibrationPath()) << all.dump(2) << "\n";
  std::cout << "kb-run: calibrated " << dev.name << " -> " << calibrationPath()
            << "\n"
            << c.dump(2) << "\n";
  return 0;
}

} // namespace kb::runtime
