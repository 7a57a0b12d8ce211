//===- Calibrate.cpp - this GPU's measured ceilings, cached ---------------===//
//
// `kb-run --calibrate` measures the device's copy bandwidth and cuBLAS fp32
// and TF32 at 8192^3 and caches them per device name in
// $XDG_CACHE_HOME/kb/calibration.json (else ~/.cache), for the verdicts of
// later runs.
//
//===----------------------------------------------------------------------===//

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
  cublasHandle_t h;
  checkCublas(cublasCreate(&h), "cublasCreate");
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
  for (std::string prec : {"ieee", "tf32"}) {
    Timing t = timeWithEvents(
        [&] { runCublasGemm(h, prec, d, a.ptr, b.ptr, out.ptr); }, 2, 10, 0,
        nullptr);
    c[prec == "ieee" ? "cublas_fp32_tflops" : "cublas_tf32_tflops"] =
        d.flops() / (t.median * 1e-3) / 1e12;
  }
  cublasDestroy(h);
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
