//===- Calibrate.cpp - this GPU's measured ceilings, cached ---------------===//
//
// `kb-run --calibrate` measures the device's copy bandwidth and cuBLAS fp32
// and TF32 at 8192^3 (the fastest of every library route, Baselines.cpp) and
// caches them per device name in $XDG_CACHE_HOME/kb/calibration.json (else
// ~/.cache), for the verdicts of later runs. Each is also recorded as the
// ceiling of the unit the library runs it on (`units`): FFMA for fp32;
// wgmma for TF32 on a Hopper GPU (9.0), mma.sync elsewhere. kb ships no
// hand-written kernel, so a unit no library route uses on this GPU
// (mma.sync on Hopper) is not measured: the verdict uses its nominal
// figure and says so (Verdict.h, unitCeiling).
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"
#include "Run.h"

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

int calibrate(const DeviceInfo &dev, const Options &o) {
  json c;
  c["copy_bandwidth_gbs"] = measureCopyBandwidth();
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
  c["units"] = units;
  if (hopper)
    c["units_not_measured"] = {
        {"mma_sync_tf32", "no library route runs mma.sync TF32 on this GPU "
                          "(cuBLAS runs wgmma); verdicts use the nominal "
                          "figure, labelled so"}};
  std::time_t now = std::time(nullptr);
  char when[64];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  c["measured"] = when;
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
