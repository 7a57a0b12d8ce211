//===- Signals.cpp - what kb-run says about each kernel besides its time --===//
//
// The signals a profiler shows, from the manifest and the PTX alone: bytes
// moved by a simple model against the minimum, flops, registers, spills,
// shared memory, theoretical occupancy, tensor-core use; and, with
// --profile, the same kernels measured by Nsight Compute (ncu).
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "kb/Runtime/Occupancy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sstream>

namespace kb::runtime {

using nlohmann::json;

/// `s` in single quotes for /bin/sh.
static std::string shellQuote(const std::string &s) {
  std::string r = "'";
  for (char c : s)
    r += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return r + "'";
}

/// An attention's two products, 2 Sq Sk (D + Dv) a head, half of them
/// with `causal` (FlashAttention's convention: the masked half is skipped).
static double attentionFlops(const Manifest &m, const ProgramOp &op) {
  const auto &q = m.buffer(op.inputs[0]).shape;
  const auto &k = m.buffer(op.inputs[1]).shape;
  const auto &v = m.buffer(op.inputs[2]).shape;
  size_t r = q.size();
  double heads = 1;
  for (size_t i = 0; i + 2 < r; ++i)
    heads *= double(q[i]);
  double f = 2.0 * heads * double(q[r - 2]) * double(k[r - 2]) *
             double(q[r - 1] + v[r - 1]);
  return op.attrs.value("causal", false) ? f / 2 : f;
}

double flopsOf(const Manifest &m) {
  double f = 0;
  for (const Kernel &k : m.kernels)
    for (size_t i : k.ops)
      if (m.program[i].op == "kb.matmul")
        f += matmulDims(m, k).flops();
      else if (m.program[i].op == "kb.attention")
        f += attentionFlops(m, m.program[i]);
  return f;
}

double minimalBytes(const Manifest &m) {
  double b = 0;
  for (const Buffer &buf : m.buffers)
    if (buf.role != "scratch" && buf.isData())
      b += buf.bytes();
  return b;
}

json staticSignals(const RunState &s) {
  json kernels = json::array();
  for (size_t i = 0; i < s.manifest.kernels.size(); ++i) {
    const Kernel &k = s.manifest.kernels[i];
    int shared =
        k.resources.sharedStaticBytes + static_cast<int>(k.dynamicSharedBytes);
    Occupancy occ = theoreticalOccupancy(static_cast<int>(k.threads()),
                                         k.resources.registers, shared);
    std::string ptx =
        readRegularFile(s.manifest.filePath(k.ptx, k.name + ".ptx"),
                        BundleLimits::kernelFileBytes, k.name);
    bool wgmma = ptx.find("wgmma") != std::string::npos;
    bool mmaSync = ptx.find("mma.sync") != std::string::npos;
    bool tensorCores = mmaSync || wgmma;
    ConfigFields cfg = parseConfigText(k.config);
    kernels.push_back(
        {{"name", k.name},
         {"blocks", k.grid[0] * k.grid[1] * k.grid[2]},
         {"mma", cfg.mma},
         {"tensor_instructions", wgmma     ? "wgmma"
                                 : mmaSync ? "mma.sync"
                                           : "none"},
         {"grid", k.grid},
         {"block", k.block},
         {"cluster", k.cluster},
         {"max_active_clusters", s.maxClusters[i]},
         {"loaded_from", s.kernels[i].source},
         {"dependent_launch", k.dependentLaunch && s.dependentLaunch},
         {"registers", k.resources.registers},
         {"shared_bytes", shared},
         {"spill_bytes",
          k.resources.spillLoadBytes + k.resources.spillStoreBytes},
         {"occupancy", occ.fraction},
         {"occupancy_limiter", occ.limiter},
         {"driver_blocks_per_sm", s.blocksPerSM[i]},
         {"tensor_cores", tensorCores},
         {"modelled_bytes", modelledBytes(s.manifest, k)},
         {"config", k.config}});
  }
  return kernels;
}

std::string programUnit(const Manifest &m) {
  for (const Kernel &k : m.kernels)
    for (size_t i : k.ops)
      if (m.program[i].op == "kb.matmul" || m.program[i].op == "kb.attention") {
        std::string unit = parseConfigText(k.config).mma;
        if (!unit.empty())
          return unit;
        DType in = m.buffer(m.program[i].inputs[0]).dtype;
        if (isHalf(in))
          return std::string("wgmma_") + dtypeName(in);
        std::string prec = m.program[i].attrString("precision", "ieee");
        return prec == "tf32"     ? "mma_sync_tf32"
               : prec == "tf32x3" ? "mma_sync_tf32x3"
                                  : "ffma";
      }
  return "";
}

ProgramFacts programFacts(const Manifest &m, const json &report,
                          const DeviceInfo &dev, const Ceiling &unit) {
  ProgramFacts p;
  p.sms = dev.smCount;
  p.hopper = dev.major == 9 && dev.minor == 0;
  p.flops = flopsOf(m);
  p.minBytes = minimalBytes(m);
  for (const Buffer &b : m.buffers)
    if (b.role == "scratch")
      p.scratchBytes += 2.0 * b.bytes(); // written by one kernel, read by one
  p.copyGBs = report.value("copy_bandwidth_gbs", 0.0);
  p.unit = unit;
  p.timed = report.contains("time");
  if (p.timed) {
    p.timeMs = report.at("time").at("median_ms");
    p.achievedGBs = report.value("achieved_gbs", 0.0);
    p.achievedTflops = report.value("achieved_tflops", 0.0);
  }
  if (report.contains("copy_same_size") &&
      report.at("copy_same_size").contains("fraction_of_copy")) {
    p.sameSizeCopyFraction = report.at("copy_same_size").at("fraction_of_copy");
    p.overSameSizeCopy = report.value("fraction_of_same_size_copy", 0.0);
  }
  if (report.contains("compute_ceiling_source") &&
      report["compute_ceiling_source"] == "cuBLAS, this run")
    p.shapeTflops = report.value("compute_ceiling_tflops", 0.0);
  // .at(): a report read by --diagnose may lack what kb-run always writes.
  const json &kernels = report.at("kernels");
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    const json &kj = kernels.at(i);
    KernelFacts f;
    f.name = k.name;
    f.config = parseConfigText(k.config);
    for (size_t op : k.ops)
      f.matmul |= m.program[op].op == "kb.matmul";
    if (f.matmul) {
      MatmulDims d = matmulDims(m, k);
      f.batch = d.batch;
      f.m = d.m;
      f.n = d.n;
      f.k = d.k;
      if (p.precision.empty())
        p.precision = d.precision;
      f.unit = f.config.mma.empty() ? programUnit(m) : f.config.mma;
    }
    f.tensorInstructions = kj.value("tensor_cores", false);
    f.blocks = k.grid[0] * k.grid[1] * k.grid[2];
    f.threads = static_cast<int>(k.threads());
    f.registers = k.resources.registers;
    f.spillBytes = kj.value("spill_bytes", 0);
    f.sharedBytes = kj.value("shared_bytes", 0);
    Occupancy occ = theoreticalOccupancy(f.threads, f.registers, f.sharedBytes);
    f.blocksPerSM = occ.blocksPerSM;
    f.occupancy = occ.fraction;
    f.occupancyLimiter = occ.limiter;
    f.driverBlocksPerSM = kj.value("driver_blocks_per_sm", 0);
    f.modelledBytes = kj.value("modelled_bytes", 0.0);
    if (kj.contains("time_alone"))
      f.timeMs = kj.at("time_alone").at("median_ms");
    else if (m.kernels.size() == 1)
      f.timeMs = p.timeMs;
    if (kj.contains("ncu_dram_pct")) {
      f.hasNcu = true;
      f.ncuDramPct = kj.value("ncu_dram_pct", 0.0);
      f.ncuSmPct = kj.value("ncu_sm_pct", 0.0);
      f.ncuTensorPct = kj.value("ncu_tensor_pipe_pct", 0.0);
      f.ncuOccupancyPct = kj.value("ncu_achieved_occupancy_pct", 0.0);
    }
    p.movedBytes += f.modelledBytes;
    p.kernels.push_back(f);
  }
  return p;
}

/// Splits one CSV line (ncu quotes every field).
static std::vector<std::string> splitCsv(const std::string &line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted) {
      out.push_back(cur);
      cur.clear();
    } else
      cur += c;
  }
  out.push_back(cur);
  return out;
}

static std::string findNcu() {
  if (const char *e = std::getenv("KB_NCU"))
    return e;
  for (std::string p :
       {"/usr/local/cuda/bin/ncu", "/usr/bin/ncu", "/usr/local/bin/ncu"})
    if (std::filesystem::exists(p))
      return p;
  if (FILE *f = popen("command -v ncu 2>/dev/null", "r")) {
    char buf[512] = {0};
    std::string r = fgets(buf, sizeof buf, f) ? buf : "";
    pclose(f);
    while (!r.empty() && (r.back() == '\n' || r.back() == ' '))
      r.pop_back();
    if (!r.empty())
      return r;
  }
  std::error_code ec;
  for (auto &d :
       std::filesystem::directory_iterator("/opt/nvidia/nsight-compute", ec))
    if (std::filesystem::exists(d.path() / "ncu"))
      return (d.path() / "ncu").string();
  return "";
}

/// Runs this bundle's kernels once under ncu (a child kb-run with --no-time)
/// and returns, per kernel name, the metrics ncu measured.
static json profileWithNcu(const Options &o, const Manifest &m) {
  const char *metrics[] = {
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "launch__registers_per_thread",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
      "gpu__time_duration.sum"};
  std::string ncu = findNcu();
  if (ncu.empty())
    return {{"error",
             "ncu (Nsight Compute) not found: set KB_NCU or put ncu on PATH"}};
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string list, names;
  for (const char *mname : metrics)
    list += std::string(list.empty() ? "" : ",") + mname;
  for (const Kernel &k : m.kernels)
    names += (names.empty() ? "" : "|") + k.name;
  // Kernel names are PTX identifiers (the manifest checks it); paths are
  // quoted for the shell whatever they hold.
  std::string cmd =
      shellQuote(ncu) + " --clock-control none --csv --page raw --metrics " +
      list + " --kernel-name " + shellQuote("regex:^(" + names + ")$") + " " +
      shellQuote(self) + " " + shellQuote(o.bundle) +
      " --no-time --quiet --seed " + std::to_string(o.seed) + " 2>&1";
  FILE *f = popen(cmd.c_str(), "r");
  if (!f)
    return {{"error", "could not start ncu"}};
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f))
    out.append(buf, n);
  int rc = pclose(f);
  std::stringstream ss(out);
  std::string line;
  std::vector<std::string> header;
  json result = json::object();
  bool units = false;
  while (std::getline(ss, line)) {
    if (line.rfind("\"ID\"", 0) == 0) {
      header = splitCsv(line);
      units = true;
      continue;
    }
    if (header.empty() || line.empty() || line[0] != '"')
      continue;
    if (units) { // the row after the header gives units
      units = false;
      continue;
    }
    auto cells = splitCsv(line);
    std::string kernel;
    json row = json::object();
    for (size_t i = 0; i < cells.size() && i < header.size(); ++i) {
      if (header[i] == "Kernel Name")
        kernel = cells[i];
      for (const char *mname : metrics)
        if (header[i] == mname) {
          std::string v = cells[i];
          v.erase(std::remove(v.begin(), v.end(), ','), v.end());
          try {
            row[mname] = std::stod(v);
          } catch (...) {
            row[mname] = v;
          }
        }
    }
    if (!kernel.empty())
      result[kernel] = row;
  }
  if (result.empty()) {
    std::string tail = out.size() > 600 ? out.substr(out.size() - 600) : out;
    return {{"error", "ncu exited " + std::to_string(rc) +
                          " without kernel rows: " + tail}};
  }
  return result;
}

json addNcuSignals(const Options &o, const Manifest &m, json &kernels) {
  json prof = profileWithNcu(o, m);
  for (auto &k : kernels) {
    std::string name = k["name"];
    if (!prof.contains(name) || !prof[name].is_object())
      continue;
    const json &p = prof[name];
    double dram =
        p.value("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0.0);
    double sm =
        p.value("sm__throughput.avg.pct_of_peak_sustained_elapsed", 0.0);
    double tensor = p.value("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_"
                            "peak_sustained_active",
                            0.0);
    k["ncu_bound"] = dram >= sm ? "memory" : "compute";
    k["ncu_tensor_pipe_pct"] = tensor;
    // A few percent of "hmma pipe" activity shows up in kernels with no
    // tensor-core instruction at all (seen: 1.1% softmax, 2.9% fused
    // GELU); real use is tens of percent.
    k["ncu_tensor_cores"] = tensor > 5.0;
    k["ncu_registers"] = p.value("launch__registers_per_thread", 0.0);
    k["ncu_achieved_occupancy_pct"] =
        p.value("sm__warps_active.avg.pct_of_peak_sustained_active", 0.0);
    k["ncu_dram_pct"] = dram;
    k["ncu_sm_pct"] = sm;
  }
  return prof;
}

} // namespace kb::runtime
