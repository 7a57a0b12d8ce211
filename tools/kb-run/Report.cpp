//===- Report.cpp - kb-run's report, as JSON and as text ------------------===//
//
// The report is one JSON object (docs/kb-run-json.md); --json prints it,
// --json-out writes it; otherwise the same facts are printed as text, a
// line per kernel, its check, then the time, bytes, baselines, verdict and
// diagnosis (the cause and its lever).
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include <cstdio>
#include <fstream>
#include <iostream>

namespace kb::runtime {

using nlohmann::json;

int printReport(const json &report, const std::vector<KernelCheck> &results,
                const Options &o, const DeviceInfo &dev) {
  bool allOk = report["ok"].get<bool>();
  const json &kernels = report["kernels"];
  double minBytes = report["minimal_bytes"], moved = report["modelled_bytes"];
  double flops = report["flops"], copyBw = report["copy_bandwidth_gbs"];
  if (!o.jsonPath.empty()) {
    std::ofstream out(o.jsonPath);
    out << report.dump(2) << "\n";
  }
  if (o.json) {
    std::cout << report.dump(2) << "\n";
    return allOk ? 0 : 3;
  }
  std::cout << "kb-run " << o.bundle << " on " << dev.name << " (" << dev.arch()
            << ", " << dev.smCount << " SMs)\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const json &k = kernels[i];
    printf("  kernel %-36s grid %lldx%lldx%lld block %lld  regs %d  smem %d B  "
           "spills %d B  "
           "occupancy %.0f%% (%s)  tensor cores: %s\n",
           k["name"].get<std::string>().c_str(),
           (long long)k["grid"][0].get<int64_t>(),
           (long long)k["grid"][1].get<int64_t>(),
           (long long)k["grid"][2].get<int64_t>(),
           (long long)k["block"][0].get<int64_t>(), k["registers"].get<int>(),
           k["shared_bytes"].get<int>(), k["spill_bytes"].get<int>(),
           100 * k["occupancy"].get<double>(),
           k["occupancy_limiter"].get<std::string>().c_str(),
           k["tensor_cores"].get<bool>() ? "yes" : "no");
    if (k["max_active_clusters"].get<int>() > 0)
      printf("    clusters of %lldx%lldx%lld blocks, at most %d resident at "
             "once\n",
             (long long)k["cluster"][0].get<int64_t>(),
             (long long)k["cluster"][1].get<int64_t>(),
             (long long)k["cluster"][2].get<int64_t>(),
             k["max_active_clusters"].get<int>());
    printf("    check: %s: %s\n", results[i].ok ? "OK" : "WRONG",
           results[i].detail.c_str());
    if (k.contains("ncu_bound"))
      printf("    ncu: DRAM %.0f%%, SM %.0f%% of peak -> %s-bound; achieved "
             "occupancy %.0f%%; "
             "registers %.0f (ptxas: %d); tensor pipe %.1f%% (%s; kb: %s)\n",
             k["ncu_dram_pct"].get<double>(), k["ncu_sm_pct"].get<double>(),
             k["ncu_bound"].get<std::string>().c_str(),
             k["ncu_achieved_occupancy_pct"].get<double>(),
             k["ncu_registers"].get<double>(), k["registers"].get<int>(),
             k["ncu_tensor_pipe_pct"].get<double>(),
             k["ncu_tensor_cores"].get<bool>() ? "used" : "idle",
             k["tensor_cores"].get<bool>() ? "used" : "idle");
  }
  if (report.contains("ncu") && report["ncu"].contains("error"))
    std::cout << "  ncu: " << report["ncu"]["error"].get<std::string>() << "\n";
  if (!allOk) {
    std::cout
        << "  RESULT WRONG: a kernel failed its check; no time is reported\n";
    return 3;
  }
  auto diagnosis = [&] {
    if (report.contains("diagnosis"))
      printf("  diagnosis: %s\n",
             report["diagnosis"]["text"].get<std::string>().c_str());
  };
  if (o.noTime) {
    diagnosis();
    return 0;
  }
  printf("  time: %s, %s\n",
         fmtMs(Timing{report["time"]["median_ms"], report["time"]["min_ms"],
                      report["time"]["max_ms"], report["time"]["runs"]})
             .c_str(),
         report["time"].value("l2", "flushed") == "warm"
             ? "L2 warm (not flushed between runs)"
             : "L2 flushed between runs");
  for (const json &k : report["kernels"])
    if (k.contains("time_alone"))
      printf("    %s alone: median %.4f ms (%.0f%% of the whole)\n",
             k["name"].get<std::string>().c_str(),
             k["time_alone"]["median_ms"].get<double>(),
             100 * k["time_alone"]["median_ms"].get<double>() /
                 report["time"]["median_ms"].get<double>());
  printf("  bytes: minimal %.1f MB, kernels move about %.1f MB (%.2fx); %.0f "
         "GB/s = %.0f%% of "
         "copy (%.0f GB/s, this run)\n",
         minBytes / 1e6, moved / 1e6, moved / minBytes,
         report["achieved_gbs"].get<double>(),
         100 * report["fraction_of_copy"].get<double>(), copyBw);
  if (report.contains("copy_same_size") &&
      report["copy_same_size"].contains("error")) {
    printf("  a copy of the same bytes: not timed (%s)\n",
           report["copy_same_size"]["error"].get<std::string>().c_str());
  } else if (report.contains("copy_same_size")) {
    const json &c = report["copy_same_size"];
    printf("  a copy of the same bytes, timed the same way: %.4f ms = %.0f%% "
           "of the 1 GiB copy's "
           "rate; kb at %.0f%% of it\n",
           c["time"]["median_ms"].get<double>(),
           100 * c["fraction_of_copy"].get<double>(),
           100 * report["fraction_of_same_size_copy"].get<double>());
  }
  if (flops > 0)
    printf("  compute: %.1f TFLOP/s\n",
           report["achieved_tflops"].get<double>());
  for (auto &b : report["baselines"])
    printf("  vs %s: %s -> kb is %.2fx %s\n",
           b["name"].get<std::string>().c_str(),
           fmtMs(Timing{b["time"]["median_ms"], b["time"]["min_ms"],
                        b["time"]["max_ms"], b["time"]["runs"]})
               .c_str(),
           b["kb_speedup"].get<double>(), "its speed");
  if (report.contains("board"))
    printf("  board: %s\n", report["board"]["note"].get<std::string>().c_str());
  printf("  verdict: %s\n", report["verdict"].get<std::string>().c_str());
  diagnosis();
  return 0;
}

} // namespace kb::runtime
