//===- kb-run.cpp - execute, check, time and explain a kb bundle ----------===//
//
// kb-run loads a bundle written by `kb-opt --kb-compile`, fills its inputs
// (seeded random, or .npy), runs its kernels, checks every kernel against a
// trusted reference (Checks.cpp), and only then times the program with CUDA
// events against baselines measured in the same run (cuBLAS for matmul, the
// unfused bundle given with --baseline). It explains the result with the
// signals a profiler shows: bytes moved against the minimum, achieved
// bandwidth and throughput against the ceilings, registers, spills, shared
// memory, occupancy, tensor-core use and a verdict. No MLIR is linked in.
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"
#include "KbRun.h"

#include "kb/Runtime/Npy.h"
#include "kb/Runtime/Occupancy.h"
#include "kb/Runtime/Verdict.h"

#include <CLI/CLI.hpp>

#include <ctime>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

using namespace kb::runtime;
using nlohmann::json;

namespace {

struct Options {
  std::string bundle, baseline, saveDir, jsonPath;
  std::vector<std::string> inputs;
  bool json = false, checkDevice = false, noTime = false, profile = false;
  bool calibrate = false;
  uint64_t seed = 1234;
  int device = 0, warmup = 3, minRuns = 20;
  double minMillis = 200;
};

/// Fills `v` with seeded normal or uniform values, in parallel slices whose
/// seeds depend only on (seed, buffer name, slice), so runs are repeatable.
void fillRandom(std::vector<float> &v, const Buffer &b, uint64_t seed) {
  const int64_t chunk = 1 << 20;
  int64_t n = static_cast<int64_t>(v.size());
  int64_t chunks = (n + chunk - 1) / chunk;
  unsigned workers = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> ts;
  uint64_t h = std::hash<std::string>()(b.name) ^ (seed * 0x9E3779B97F4A7C15ull);
  for (unsigned w = 0; w < workers; ++w)
    ts.emplace_back([&, w] {
      for (int64_t c = w; c < chunks; c += workers) {
        std::mt19937_64 rng(h + c * 0x632BE59BD9B4E019ull);
        int64_t end = std::min(n, (c + 1) * chunk);
        if (b.dist == "uniform") {
          std::uniform_real_distribution<float> d(b.mean - b.std, b.mean + b.std);
          for (int64_t i = c * chunk; i < end; ++i)
            v[i] = d(rng);
        } else {
          std::normal_distribution<float> d(b.mean, b.std);
          for (int64_t i = c * chunk; i < end; ++i)
            v[i] = d(rng);
        }
      }
    });
  for (auto &t : ts)
    t.join();
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Loads a bundle's kernels, allocates its buffers and fills the inputs.
RunState prepare(const std::string &path, const Options &o,
                 const std::map<std::string, NpyArray> &given, int smCount) {
  RunState s;
  s.manifest = Manifest::load(path);
  s.seed = o.seed;
  for (const Kernel &k : s.manifest.kernels) {
    namespace fs = std::filesystem;
    std::string ptx = (fs::path(s.manifest.dir) / k.ptx).string();
    std::string cubin = k.cubin.empty() ? "" : (fs::path(s.manifest.dir) / k.cubin).string();
    if (!fs::exists(ptx))
      throw ManifestError("manifest: kernel " + k.name + " names " + ptx +
                          ", which does not exist");
    s.kernels.push_back(loadKernel(cubin, ptx, k.name, k.dynamicSharedBytes,
                                   static_cast<int>(k.clusterBlocks())));
    s.maxClusters.push_back(
        k.clusterBlocks() > 1
            ? maxActiveClusters(s.kernels.back(), k.grid.data(), k.block.data(),
                                k.cluster.data(), static_cast<int>(k.dynamicSharedBytes))
            : 0);
    if (k.clusterBlocks() > 1 && s.maxClusters.back() == 0)
      throw DeviceError("kernel " + k.name + " cannot launch: a cluster of " +
                        std::to_string(k.clusterBlocks()) + " blocks of " +
                        std::to_string(k.threads()) + " threads (" +
                        std::to_string(k.resources.registers) +
                        " registers each) does not fit on this device");
    int perSM = 0;
    check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
              &perSM, s.kernels.back().function, static_cast<int>(k.threads()),
              k.dynamicSharedBytes),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    s.blocksPerSM.push_back(perSM);
    if (k.coResidentBlocks > 1) {
      int64_t resident = int64_t(perSM) * smCount;
      if (resident < k.coResidentBlocks)
        throw DeviceError("kernel " + k.name + " needs " +
                          std::to_string(k.coResidentBlocks) +
                          " blocks resident at once (they wait for each other); this "
                          "device holds " + std::to_string(resident) +
                          ": compile with fewer blocks per row (#kb.config cluster)");
    }
  }
  for (const Buffer &b : s.manifest.buffers) {
    s.dev.emplace(b.name, DeviceBuffer(b.bytes()));
    std::vector<float> &h = s.host[b.name];
    h.resize(b.elements());
    // A workspace starts zero; its kernel leaves it zero after every launch.
    if (b.role == "workspace")
      s.dev.at(b.name).fillBytes(0);
    if (b.role != "input")
      continue;
    auto it = given.find(b.name);
    if (it != given.end()) {
      if (it->second.shape != b.shape)
        throw ManifestError("--input " + b.name + ": the .npy shape does not match the buffer's");
      h = it->second.data;
    } else {
      fillRandom(h, b, o.seed);
    }
    s.dev.at(b.name).upload(h.data());
  }
  // Tensor maps, once every buffer has its address.
  for (const Buffer &b : s.manifest.buffers) {
    if (b.role != "tensor_map")
      continue;
    const TensorMapSpec &tm = b.tensorMap;
    auto bytes = encodeTensorMap(s.dev.at(tm.of).ptr, s.manifest.buffer(tm.of).shape,
                                 tm.dims, tm.box);
    std::memcpy(s.host.at(b.name).data(), bytes.data(), bytes.size());
    s.dev.at(b.name).upload(bytes.data());
  }
  return s;
}

void poisonOutputs(RunState &s) {
  for (const Buffer &b : s.manifest.buffers)
    if (b.role != "input" && b.isData())
      s.dev.at(b.name).fillBytes(0xFF); // NaN: an unwritten element fails
}

void launchOne(RunState &s, size_t i) {
  const Kernel &k = s.manifest.kernels[i];
  std::vector<CUdeviceptr> args;
  for (const std::string &a : k.args)
    args.push_back(s.dev.at(a).ptr);
  launch(s.kernels[i], k.grid.data(), k.block.data(), k.cluster.data(),
         static_cast<int>(k.dynamicSharedBytes), args);
}

void launchAll(RunState &s) {
  for (size_t i = 0; i < s.manifest.kernels.size(); ++i)
    launchOne(s, i);
}

void downloadAll(RunState &s) {
  for (const Buffer &b : s.manifest.buffers)
    s.dev.at(b.name).download(s.host.at(b.name).data());
}

/// Bytes the kernels move, by a simple model: each argument once, softmax
/// 'online' reads its input twice, matmul re-reads A per column of tiles and
/// B per row of tiles.
double modelledBytes(const Manifest &m, const Kernel &k) {
  double bytes = 0;
  std::smatch match;
  bool online = k.config.find("\"online\"") != std::string::npos;
  bool matmul = false;
  for (size_t i : k.ops)
    matmul |= m.program[i].op == "kb.matmul";
  if (matmul && std::regex_search(k.config, match, std::regex("block = \\[(\\d+), (\\d+)"))) {
    MatmulDims d = matmulDims(m, k);
    double bm = std::stod(match[1]), bn = std::stod(match[2]);
    return 4.0 * d.batch *
           (d.m * d.k * std::ceil(d.n / bn) + d.k * d.n * std::ceil(d.m / bm) + d.m * d.n);
  }
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (!m.buffer(k.args[i]).isData())
      continue; // a few counters per row or a tensor map, not the data
    double b = m.buffer(k.args[i]).bytes();
    bytes += (online && i == 0) ? 2 * b : b;
  }
  return bytes;
}

double flopsOf(const Manifest &m) {
  double f = 0;
  for (const Kernel &k : m.kernels)
    for (size_t i : k.ops)
      if (m.program[i].op == "kb.matmul")
        f += matmulDims(m, k).flops();
  return f;
}

double minimalBytes(const Manifest &m) {
  double b = 0;
  for (const Buffer &buf : m.buffers)
    if (buf.role != "scratch" && buf.isData())
      b += buf.bytes();
  return b;
}

std::string fmtMs(const Timing &t) {
  char buf[160];
  snprintf(buf, sizeof buf, "median %.4f ms (min %.4f, max %.4f, %d runs)", t.median,
           t.min, t.max, t.runs);
  return buf;
}

json timingJson(const Timing &t) {
  return {{"median_ms", t.median}, {"min_ms", t.min}, {"max_ms", t.max}, {"runs", t.runs}};
}

/// Splits one CSV line (ncu quotes every field).
std::vector<std::string> splitCsv(const std::string &line) {
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

std::string findNcu() {
  if (const char *e = std::getenv("KB_NCU"))
    return e;
  for (std::string p : {"/usr/local/cuda/bin/ncu", "/usr/bin/ncu", "/usr/local/bin/ncu"})
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
  for (auto &d : std::filesystem::directory_iterator("/opt/nvidia/nsight-compute", ec))
    if (std::filesystem::exists(d.path() / "ncu"))
      return (d.path() / "ncu").string();
  return "";
}

/// Runs this bundle's kernels once under ncu (a child kb-run with --no-time)
/// and returns, per kernel name, the metrics ncu measured.
json profileWithNcu(const Options &o, const Manifest &m) {
  const char *metrics[] = {
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "launch__registers_per_thread",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
      "gpu__time_duration.sum"};
  std::string ncu = findNcu();
  if (ncu.empty())
    return {{"error", "ncu (Nsight Compute) not found: set KB_NCU or put ncu on PATH"}};
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string list, names;
  for (const char *mname : metrics)
    list += std::string(list.empty() ? "" : ",") + mname;
  for (const Kernel &k : m.kernels)
    names += (names.empty() ? "" : "|") + k.name;
  std::string cmd = "'" + ncu + "' --clock-control none --csv --page raw --metrics " + list +
                    " --kernel-name 'regex:^(" + names + ")$' '" + self + "' '" + o.bundle +
                    "' --no-time --seed " + std::to_string(o.seed) + " 2>&1";
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
    return {{"error", "ncu exited " + std::to_string(rc) + " without kernel rows: " + tail}};
  }
  return result;
}

std::string calibrationPath() {
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  const char *home = std::getenv("HOME");
  std::string dir = xdg && *xdg ? std::string(xdg) : std::string(home ? home : "/tmp") + "/.cache";
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
    Timing t = timeWithEvents([&] { runCublasGemm(h, prec, d, a.ptr, b.ptr, out.ptr); },
                              2, 10, 0, nullptr);
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
      try { all = json::parse(in); } catch (...) {}
  }
  all[dev.name] = c;
  std::filesystem::create_directories(std::filesystem::path(calibrationPath()).parent_path());
  std::ofstream(calibrationPath()) << all.dump(2) << "\n";
  std::cout << "kb-run: calibrated " << dev.name << " -> " << calibrationPath() << "\n"
            << c.dump(2) << "\n";
  return 0;
}

int run(const Options &o) {
  if (!o.checkDevice && !o.calibrate)
    Manifest::load(o.bundle); // a bad bundle is reported before the GPU is looked for
  DeviceInfo dev = openDevice(o.device);
  if (o.calibrate)
    return calibrate(dev, o);
  json calibration = loadCalibration(dev.name);
  if (o.checkDevice) {
    std::cout << dev.name << " (" << dev.arch() << ", " << dev.smCount << " SMs)\n";
    return 0;
  }
  std::map<std::string, NpyArray> given;
  for (const std::string &spec : o.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos)
      throw ManifestError("--input expects NAME=FILE.npy, got '" + spec + "'");
    given[spec.substr(0, eq)] = readNpy(spec.substr(eq + 1));
  }
  RunState s = prepare(o.bundle, o, given, dev.smCount);
  for (auto &[name, arr] : given)
    if (!s.manifest.hasBuffer(name) || s.manifest.buffer(name).role != "input")
      throw ManifestError("--input " + name + ": the bundle has no input buffer of that name");
  checkCublas(cublasCreate(&s.cublas), "cublasCreate");

  json report;
  report["bundle"] = o.bundle;
  report["device"] = {{"name", dev.name}, {"arch", dev.arch()}, {"sms", dev.smCount}};
  if (s.manifest.target.rfind(dev.arch(), 0) != 0)
    std::cerr << "kb-run: note: bundle targets " << s.manifest.target << ", device is "
              << dev.arch() << "\n";

  // 1. Run once on poisoned outputs, then check every kernel.
  poisonOutputs(s);
  launchAll(s);
  check(driver().cuCtxSynchronize(), "running the kernels");
  downloadAll(s);
  bool allOk = true;
  json checks = json::array();
  std::vector<KernelCheck> results;
  for (const Kernel &k : s.manifest.kernels) {
    KernelCheck c = checkKernel(s, k);
    allOk &= c.ok;
    results.push_back(c);
    json cj = c.extra;
    cj["kernel"] = c.kernel;
    cj["method"] = c.method;
    cj["ok"] = c.ok;
    cj["detail"] = c.detail;
    checks.push_back(cj);
  }
  report["checks"] = checks;
  report["ok"] = allOk;
  if (!o.saveDir.empty()) {
    std::filesystem::create_directories(o.saveDir);
    for (const Buffer &b : s.manifest.buffers)
      if (b.role == "output")
        writeNpy((std::filesystem::path(o.saveDir) / (b.name + ".npy")).string(),
                 b.shape, s.host.at(b.name).data());
  }

  // 2. Static signals per kernel.
  json kernels = json::array();
  for (size_t i = 0; i < s.manifest.kernels.size(); ++i) {
    const Kernel &k = s.manifest.kernels[i];
    int shared = k.resources.sharedStaticBytes + static_cast<int>(k.dynamicSharedBytes);
    Occupancy occ = theoreticalOccupancy(static_cast<int>(k.threads()),
                                         k.resources.registers, shared);
    std::string ptx = readText((std::filesystem::path(s.manifest.dir) / k.ptx).string());
    bool tensorCores = ptx.find("mma.sync") != std::string::npos ||
                       ptx.find("wgmma") != std::string::npos;
    kernels.push_back({{"name", k.name},
                       {"grid", k.grid},
                       {"block", k.block},
                       {"cluster", k.cluster},
                       {"max_active_clusters", s.maxClusters[i]},
                       {"loaded_from", s.kernels[i].source},
                       {"registers", k.resources.registers},
                       {"shared_bytes", shared},
                       {"spill_bytes", k.resources.spillLoadBytes + k.resources.spillStoreBytes},
                       {"occupancy", occ.fraction},
                       {"occupancy_limiter", occ.limiter},
                       {"driver_blocks_per_sm", s.blocksPerSM[i]},
                       {"tensor_cores", tensorCores},
                       {"modelled_bytes", modelledBytes(s.manifest, k)},
                       {"config", k.config}});
  }
  if (o.profile && allOk) {
    json prof = profileWithNcu(o, s.manifest);
    report["ncu"] = prof;
    for (auto &k : kernels) {
      std::string name = k["name"];
      if (!prof.contains(name) || !prof[name].is_object())
        continue;
      const json &p = prof[name];
      double dram = p.value("dram__throughput.avg.pct_of_peak_sustained_elapsed", 0.0);
      double sm = p.value("sm__throughput.avg.pct_of_peak_sustained_elapsed", 0.0);
      double tensor = p.value("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", 0.0);
      k["ncu_bound"] = dram >= sm ? "memory" : "compute";
      k["ncu_tensor_pipe_pct"] = tensor;
      // A few percent of "hmma pipe" activity shows up in kernels with no
      // tensor-core instruction at all (seen: 1.1% softmax, 2.9% fused
      // GELU); real use is tens of percent.
      k["ncu_tensor_cores"] = tensor > 5.0;
      k["ncu_registers"] = p.value("launch__registers_per_thread", 0.0);
      k["ncu_achieved_occupancy_pct"] = p.value("sm__warps_active.avg.pct_of_peak_sustained_active", 0.0);
      k["ncu_dram_pct"] = dram;
      k["ncu_sm_pct"] = sm;
    }
  }
  report["kernels"] = kernels;

  // 3. Time, only when every check passed.
  double copyBw = measureCopyBandwidth();
  report["copy_bandwidth_gbs"] = copyBw;
  double minBytes = minimalBytes(s.manifest), flops = flopsOf(s.manifest);
  double moved = 0;
  for (auto &k : kernels)
    moved += k["modelled_bytes"].get<double>();
  report["minimal_bytes"] = minBytes;
  report["modelled_bytes"] = moved;
  report["flops"] = flops;
  std::vector<std::pair<std::string, Timing>> baselines;
  if (allOk && !o.noTime) {
    DeviceBuffer flush(std::max<size_t>(size_t(dev.l2Bytes) * 4, size_t(256) << 20));
    Timing t = timeWithEvents([&] { launchAll(s); }, o.warmup, o.minRuns,
                              o.minMillis, &flush);
    report["time"] = timingJson(t);
    // Several kernels: each one also alone (its inputs are what the last run
    // of the whole program left), to show where the time goes.
    if (s.manifest.kernels.size() > 1)
      for (size_t i = 0; i < s.manifest.kernels.size(); ++i)
        report["kernels"][i]["time_alone"] = timingJson(timeWithEvents(
            [&] { launchOne(s, i); }, o.warmup, o.minRuns, o.minMillis, &flush));
    double gbs = minBytes / (t.median * 1e-3) / 1e9;
    double tflops = flops / (t.median * 1e-3) / 1e12;
    report["achieved_gbs"] = gbs;
    report["achieved_tflops"] = tflops;
    report["fraction_of_copy"] = gbs / copyBw;

    // Baselines in the same run.
    // A lone matmul, possibly behind a transpose of its B (kb-select-mma's
    // K-major B for wgmma): cuBLAS gets the program's own operands, so a
    // transposed B is timed in its original row-major layout.
    const auto &prog = s.manifest.program;
    bool transposedB = prog.size() == 2 && prog[0].op == "kb.transpose" &&
                       prog[1].op == "kb.matmul" && prog[1].inputs[1] == prog[0].output;
    bool singleMatmul = (prog.size() == 1 && prog[0].op == "kb.matmul") || transposedB;
    double computeCeiling = 0;
    if (singleMatmul) {
      const Kernel &k = s.manifest.kernels.back();
      MatmulDims d = matmulDims(s.manifest, k);
      const ProgramOp &op = prog.back();
      std::string bName = op.inputs[1];
      if (transposedB) {
        d.transB = false;
        bName = prog[0].inputs[0];
      }
      DeviceBuffer c(s.dev.at(k.args.back()).bytes);
      // Every library route (legacy call, cublasGemmEx, cuBLASLt's top
      // candidates); the fastest is the baseline, the rest are reported.
      GemmRoutes libs;
      json routes = json::object();
      for (std::string prec : {"ieee", "tf32"}) {
        std::vector<GemmRoute> all =
            libs.timeAll(prec, d, s.dev.at(op.inputs[0]).ptr, s.dev.at(bName).ptr, c.ptr,
                         o.warmup, o.minRuns, o.minMillis, &flush);
        json list = json::array();
        for (const GemmRoute &r : all)
          list.push_back({{"route", r.name}, {"time", timingJson(r.time)},
                          {"kb_speedup", r.time.median / t.median}});
        routes[prec] = list;
        const GemmRoute &best = all.front();
        baselines.push_back({(prec == "ieee" ? "cuBLAS fp32 (best of " : "cuBLAS TF32 (best of ") +
                                 std::to_string(all.size()) + " routes: " + best.name + ")",
                             best.time});
        if ((d.precision == "tf32") == (prec == "tf32"))
          computeCeiling = d.flops() / (best.time.median * 1e-3) / 1e12;
      }
      report["cublas_routes"] = routes;
    }
    if (!o.baseline.empty()) {
      RunState b = prepare(o.baseline, o, given, dev.smCount);
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
            worst = std::max(worst, (double)std::fabs(x[i] - y[i]) / (1e-6 + std::fabs(y[i])));
          if (!(worst < 1e-3))
            throw std::runtime_error("the baseline bundle's output " + buf.name +
                                     " differs from this bundle's (max rel diff " +
                                     std::to_string(worst) +
                                     "): not the same program, not timed");
        }
      Timing bt = timeWithEvents([&] { launchAll(b); }, o.warmup, o.minRuns,
                                 o.minMillis, &flush);
      baselines.push_back({"baseline " + o.baseline + " (" +
                               std::to_string(b.manifest.kernels.size()) + " kernels)",
                           bt});
    }
    json bj = json::array();
    for (auto &[name, bt] : baselines)
      bj.push_back({{"name", name}, {"time", timingJson(bt)},
                    {"kb_speedup", bt.median / t.median}});
    report["baselines"] = bj;

    // Verdict: which ceiling applies, and how close the kernel came.
    double deviceCeiling = 0;
    if (flops > 0) {
      std::string prec = "ieee";
      for (const Kernel &k : s.manifest.kernels)
        if (!k.ops.empty() && s.manifest.program[k.ops.front()].op == "kb.matmul")
          prec = matmulDims(s.manifest, k).precision;
      // The ceiling: cuBLAS at this shape in this run (single matmul), else
      // the cached --calibrate measurement, else the H200 figures of
      // performance-targets.md (FFMA loop 55.8, mma.sync loop 324 TFLOP/s).
      // The device's peak (the calibration, else those figures) places the
      // roofline's ridge whatever the shape.
      std::string source = "cuBLAS, this run";
      std::string deviceSource = "H200 defaults (run kb-run --calibrate)";
      deviceCeiling = prec == "ieee" ? 55.8 : 324.0;
      if (calibration.is_object()) {
        double calibrated = calibration.value(
            prec == "ieee" ? "cublas_fp32_tflops" : "cublas_tf32_tflops", 0.0);
        if (calibrated > 0) {
          deviceCeiling = calibrated;
          deviceSource = "calibration " + calibration.value("measured", std::string("?"));
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
    }
    Verdict verdict =
        classify(flops, minBytes, gbs, tflops, copyBw, computeCeiling, deviceCeiling);
    report["verdict"] = verdict.text;

    // The same bytes moved by one device-to-device copy, timed like the
    // kernel (alone between events, after the flush): what any single pass
    // of this size can reach, launch, ramp-up and tail included. The 1 GiB
    // copy above hides those; a 100 MB kernel cannot. Memory-bound programs
    // only, by the verdict's ridge.
    if (verdict.memoryBound && minBytes > 0) {
      // Two more buffers of half the bytes each: on a GPU with less memory
      // free than that the reference is left out, not the report.
      try {
        Timing ct = timeCopyOfSize(minBytes, &flush);
        double sameBw = minBytes / (ct.median * 1e-3) / 1e9;
        report["copy_same_size"] = {{"time", timingJson(ct)}, {"gbs", sameBw},
                                    {"fraction_of_copy", sameBw / copyBw}};
        report["fraction_of_same_size_copy"] = gbs / sameBw;
      } catch (const std::exception &e) {
        report["copy_same_size"] = {{"error", e.what()}};
      }
    }
  }

  // 4. Report.
  if (!o.jsonPath.empty()) {
    std::ofstream out(o.jsonPath);
    out << report.dump(2) << "\n";
  }
  if (o.json) {
    std::cout << report.dump(2) << "\n";
    return allOk ? 0 : 3;
  }
  std::cout << "kb-run " << o.bundle << " on " << dev.name << " (" << dev.arch() << ", "
            << dev.smCount << " SMs)\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const json &k = kernels[i];
    printf("  kernel %-36s grid %lldx%lldx%lld block %lld  regs %d  smem %d B  spills %d B  "
           "occupancy %.0f%% (%s)  tensor cores: %s\n",
           k["name"].get<std::string>().c_str(), (long long)k["grid"][0].get<int64_t>(),
           (long long)k["grid"][1].get<int64_t>(), (long long)k["grid"][2].get<int64_t>(),
           (long long)k["block"][0].get<int64_t>(), k["registers"].get<int>(),
           k["shared_bytes"].get<int>(), k["spill_bytes"].get<int>(),
           100 * k["occupancy"].get<double>(), k["occupancy_limiter"].get<std::string>().c_str(),
           k["tensor_cores"].get<bool>() ? "yes" : "no");
    if (k["max_active_clusters"].get<int>() > 0)
      printf("    clusters of %lldx%lldx%lld blocks, at most %d resident at once\n",
             (long long)k["cluster"][0].get<int64_t>(), (long long)k["cluster"][1].get<int64_t>(),
             (long long)k["cluster"][2].get<int64_t>(), k["max_active_clusters"].get<int>());
    printf("    check: %s: %s\n", results[i].ok ? "OK" : "WRONG", results[i].detail.c_str());
    if (k.contains("ncu_bound"))
      printf("    ncu: DRAM %.0f%%, SM %.0f%% of peak -> %s-bound; achieved occupancy %.0f%%; "
             "registers %.0f (ptxas: %d); tensor pipe %.1f%% (%s; kb: %s)\n",
             k["ncu_dram_pct"].get<double>(), k["ncu_sm_pct"].get<double>(),
             k["ncu_bound"].get<std::string>().c_str(),
             k["ncu_achieved_occupancy_pct"].get<double>(), k["ncu_registers"].get<double>(),
             k["registers"].get<int>(), k["ncu_tensor_pipe_pct"].get<double>(),
             k["ncu_tensor_cores"].get<bool>() ? "used" : "idle",
             k["tensor_cores"].get<bool>() ? "used" : "idle");
  }
  if (report.contains("ncu") && report["ncu"].contains("error"))
    std::cout << "  ncu: " << report["ncu"]["error"].get<std::string>() << "\n";
  if (!allOk) {
    std::cout << "  RESULT WRONG: a kernel failed its check; no time is reported\n";
    return 3;
  }
  if (o.noTime)
    return 0;
  printf("  time: %s, L2 flushed between runs\n", fmtMs(Timing{
      report["time"]["median_ms"], report["time"]["min_ms"], report["time"]["max_ms"],
      report["time"]["runs"]}).c_str());
  for (const json &k : report["kernels"])
    if (k.contains("time_alone"))
      printf("    %s alone: median %.4f ms (%.0f%% of the whole)\n",
             k["name"].get<std::string>().c_str(), k["time_alone"]["median_ms"].get<double>(),
             100 * k["time_alone"]["median_ms"].get<double>() /
                 report["time"]["median_ms"].get<double>());
  printf("  bytes: minimal %.1f MB, kernels move about %.1f MB (%.2fx); %.0f GB/s = %.0f%% of "
         "copy (%.0f GB/s, this run)\n",
         minBytes / 1e6, moved / 1e6, moved / minBytes, report["achieved_gbs"].get<double>(),
         100 * report["fraction_of_copy"].get<double>(), copyBw);
  if (report.contains("copy_same_size") && report["copy_same_size"].contains("error")) {
    printf("  a copy of the same bytes: not timed (%s)\n",
           report["copy_same_size"]["error"].get<std::string>().c_str());
  } else if (report.contains("copy_same_size")) {
    const json &c = report["copy_same_size"];
    printf("  a copy of the same bytes, timed the same way: %.4f ms = %.0f%% of the 1 GiB copy's "
           "rate; kb at %.0f%% of it\n",
           c["time"]["median_ms"].get<double>(), 100 * c["fraction_of_copy"].get<double>(),
           100 * report["fraction_of_same_size_copy"].get<double>());
  }
  if (flops > 0)
    printf("  compute: %.1f TFLOP/s\n", report["achieved_tflops"].get<double>());
  for (auto &b : report["baselines"])
    printf("  vs %s: %s -> kb is %.2fx %s\n", b["name"].get<std::string>().c_str(),
           fmtMs(Timing{b["time"]["median_ms"], b["time"]["min_ms"], b["time"]["max_ms"],
                        b["time"]["runs"]}).c_str(),
           b["kb_speedup"].get<double>(), "its speed");
  printf("  verdict: %s\n", report["verdict"].get<std::string>().c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{"kb-run: run a kb bundle on the GPU, check every kernel against a "
               "trusted reference, then time it against baselines and explain it"};
  app.add_option("bundle", o.bundle, "Bundle folder (or its manifest.json) from kb-opt --kb-compile");
  app.add_flag("--json", o.json, "Print the full report as JSON");
  app.add_option("--json-out", o.jsonPath, "Also write the JSON report to this file");
  app.add_option("--seed", o.seed, "Seed of the random inputs")->capture_default_str();
  app.add_option("--input", o.inputs, "NAME=FILE.npy: use this float32 array for an input");
  app.add_option("--save-outputs", o.saveDir, "Write each output buffer as NAME.npy into this folder");
  app.add_option("--baseline", o.baseline,
                 "Another bundle of the same program (e.g. compiled with fuse=false) to time in the same run");
  app.add_option("--device", o.device, "GPU ordinal")->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs before timing")->capture_default_str();
  app.add_option("--min-runs", o.minRuns, "Timed runs at least")->capture_default_str();
  app.add_option("--min-ms", o.minMillis, "Keep timing until this much kernel time")->capture_default_str();
  app.add_flag("--no-time", o.noTime, "Check only; do not time");
  app.add_flag("--profile", o.profile,
               "Also run the kernels under Nsight Compute (ncu) and report DRAM and SM "
               "throughput, achieved occupancy and tensor-pipe activity next to kb's own signals");
  app.add_flag("--calibrate", o.calibrate,
               "Measure this GPU's ceilings (copy bandwidth; cuBLAS fp32 and TF32 at "
               "8192^3) and cache them for the verdicts of later runs");
  app.add_flag("--check-device", o.checkDevice, "Print the GPU and exit (exit 2 if there is none)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e);
  }
  if (o.bundle.empty() && !o.checkDevice && !o.calibrate) {
    std::cerr << "kb-run: no bundle given (kb-run BUNDLE_DIR; see --help)\n";
    return 1;
  }
  try {
    return run(o);
  } catch (const DeviceError &e) {
    std::cerr << "kb-run: " << e.what() << "\n";
    return 2;
  } catch (const ManifestError &e) {
    std::cerr << "kb-run: " << e.what() << "\n";
    return 1;
  } catch (const std::exception &e) {
    std::cerr << "kb-run: " << e.what() << "\n";
    return 1;
  }
}
