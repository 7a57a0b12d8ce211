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
// This file holds the command line, the exit codes and the order of the
// phases; each phase is a file of its own (Run.h). A bundle is untrusted
// input: everything that needs no GPU is checked first (Validate.cpp), so
// `kb-run --check` and CI find it.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "kb/Version.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>

#include <unistd.h>

using namespace kb::runtime;
using nlohmann::json;

Progress::Progress(bool quiet) : on(!quiet && ::isatty(2)) {}

void Progress::phase(const std::string &what) {
  if (!on)
    return;
  std::cerr << "\r\033[2Kkb-run: " << prefix << what << "..." << std::flush;
  shown = true;
}

void Progress::done() {
  if (on && shown)
    std::cerr << "\r\033[2K" << std::flush;
  shown = false;
}

namespace {

/// A failure's exit code, class and one-line message.
struct Failure {
  Exit code = Exit::BadInput;
  std::string kind, message;
};

/// The failure an exception stands for (docs/kb-run-json.md's table).
Failure describe(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const DeviceError &d) {
    return {Exit::NoGpu, d.noDevice ? "no_gpu" : "device", d.what()};
  } catch (const ManifestError &m) {
    return {Exit::BadInput, "bundle", m.what()};
  } catch (const InputError &i) {
    return {Exit::BadInput, "input", i.what()};
  } catch (const std::exception &x) {
    return {Exit::BadInput, "error", x.what()};
  } catch (...) {
    return {Exit::BadInput, "error", "an unknown failure"};
  }
}

json errorJson(const std::string &bundle, const Failure &f) {
  return {{"schema", kJsonSchema},    {"status", "error"},
          {"exit_code", int(f.code)}, {"error", f.kind},
          {"message", f.message},     {"bundle", bundle}};
}

/// The one-line error every failure ends with; with --json also a JSON
/// object on stdout (and in --json-out).
int fail(const Options &o, Exit code, const char *kind,
         const std::string &message) {
  std::cerr << "kb-run: " << message << "\n";
  if (o.json || !o.jsonPath.empty()) {
    json j = errorJson(o.bundle, {code, kind, message});
    if (o.json)
      std::cout << j.dump(2) << "\n";
    if (!o.jsonPath.empty())
      std::ofstream(o.jsonPath) << j.dump(2) << "\n";
  }
  return int(code);
}

/// `kb-run --check`'s object for a valid bundle.
json checkJson(const Options &o, const Offline &off) {
  const Manifest &m = off.manifest;
  size_t files = 0;
  for (const Kernel &k : m.kernels)
    files += k.cubin.empty() ? 1 : 2;
  return {{"schema", kJsonSchema},
          {"status", "ok"},
          {"exit_code", 0},
          {"check", true},
          {"bundle", o.bundle},
          {"target", m.target},
          {"compiler", m.compiler},
          {"kernels", m.kernels.size()},
          {"buffers", m.buffers.size()},
          {"ops", m.program.size()},
          {"files", files},
          {"inputs_given", off.given.size()}};
}

/// `kb-run --check`'s line for a valid bundle.
void printCheck(const Options &o, const Offline &off) {
  const Manifest &m = off.manifest;
  size_t files = 0;
  for (const Kernel &k : m.kernels)
    files += k.cubin.empty() ? 1 : 2;
  std::cout << "kb-run: " << o.bundle << ": OK (" << m.kernels.size()
            << " kernels, " << m.buffers.size() << " buffers, "
            << m.program.size() << " ops, " << files << " files"
            << (off.given.empty() ? "" : ", the --input arrays")
            << (off.baseline ? ", the baseline bundle" : "")
            << " checked; no GPU used)\n";
}

/// `kb-run --check`: the bundle, its files and the inputs, no GPU.
int checkOnly(const Options &o, const Offline &off) {
  if (o.json)
    std::cout << checkJson(o, off).dump(2) << "\n";
  else
    printCheck(o, off);
  return 0;
}

/// A bundle built for a chip this GPU cannot run is refused (exit 2) before
/// any kernel is loaded: sm_90a code (wgmma, TMA) runs only on compute
/// capability 9.0 exactly; sm_XY code needs X.Y or newer.
static void checkTarget(const std::string &target, const DeviceInfo &dev,
                        const std::string &what) {
  std::string why = targetCannotRun(target, dev.major, dev.minor);
  if (!why.empty())
    throw DeviceError(
        what + " " + why + " (this GPU: " + dev.name + ", " + dev.arch() +
        "); recompile with chip=" + dev.arch() +
        (dev.major * 10 + dev.minor >= 90 ? " or chip=sm_90a" : ""));
}

/// The diagnosis of a program whose checks passed (timed or not), and the
/// verdict's latency text given its cause.
void addDiagnosis(const Manifest &m, const DeviceInfo &dev,
                  const json &calibration, json &report) {
  Ceiling unit = programCeiling(m, dev, calibration);
  Diagnosis d = diagnose(programFacts(m, report, dev, unit));
  report["diagnosis"] = diagnosisJson(d);
  if (report.contains("verdict"))
    report["verdict"] = verdictWithCause(report["verdict"], d);
}

/// One validated bundle on the open device: checks, signals, timing,
/// diagnosis. Returns the report (status and exit_code set); throws on a
/// device or bundle failure.
json runBundle(const Options &o, const Offline &off, const DeviceInfo &dev,
               Shared &shared, std::vector<KernelCheck> &results,
               Progress &progress) {
  checkTarget(off.manifest.target, dev, "the bundle");
  if (off.baseline)
    checkTarget(off.baseline->target, dev, "the --baseline bundle");
  progress.phase("loading " + std::to_string(off.manifest.kernels.size()) +
                 " kernels");
  RunState s = prepare(off.manifest, o, off.given, dev.smCount);
  // The modules go when the bundle is done, also when it fails.
  struct Unload {
    RunState &s;
    ~Unload() { unloadKernels(s); }
  } unload{s};
  s.cublas = shared.cublas;

  json report;
  report["schema"] = kJsonSchema;
  report["bundle"] = o.bundle;
  report["compiler"] = s.manifest.compiler;
  report["device"] = {
      {"name", dev.name}, {"arch", dev.arch()}, {"sms", dev.smCount}};
  if (s.manifest.target.rfind(dev.arch(), 0) != 0) {
    progress.done();
    std::cerr << "kb-run: note: bundle targets " << s.manifest.target
              << ", device is " << dev.arch() << "\n";
  }

  // 1. Run once on poisoned outputs, then check every kernel.
  progress.phase("running and checking the kernels");
  results = runAndCheck(s, report);
  bool allOk = report["ok"];
  if (!o.saveDir.empty())
    saveOutputs(o, s);

  // 2. Static signals per kernel (and ncu's, with --profile).
  json kernels = staticSignals(s);
  if (o.profile && allOk) {
    progress.phase("profiling with ncu");
    report["ncu"] = addNcuSignals(o, s.manifest, kernels);
  }
  report["kernels"] = kernels;

  // 3. Time, only when every check passed.
  progress.phase("measuring the copy bandwidth");
  timeAndCompare(s, o, off, dev, shared, allOk, report, progress);
  progress.done();

  // 4. Why, and what to change.
  if (allOk)
    addDiagnosis(s.manifest, dev, shared.calibration, report);
  report["status"] = allOk ? "ok" : "wrong";
  report["exit_code"] = allOk ? int(Exit::Ok) : int(Exit::Wrong);
  return report;
}

/// `kb-run --diagnose REPORT [BUNDLE]`: the verdict and diagnosis this
/// kb-run gives a report an earlier run wrote (its numbers, its device, the
/// calibration cached here for that device), with the report's bundle (or
/// BUNDLE), no GPU. The report comes back with those fields replaced.
int diagnoseOnly(const Options &o) {
  const std::string &path = o.diagnoseReport;
  std::ifstream in(path);
  if (!in)
    throw InputError("--diagnose " + path + ": cannot open it");
  json report;
  try {
    report = json::parse(in);
  } catch (const json::exception &) {
    throw InputError("--diagnose " + path + ": not valid JSON");
  }
  if (!report.is_object() || !report.contains("schema") ||
      report["schema"] != kJsonSchema || !report.contains("kernels"))
    throw InputError("--diagnose " + path +
                     ": not a kb-run report of schema 1 (one bundle's)");
  if (report.value("status", std::string()) != "ok")
    throw InputError("--diagnose " + path +
                     ": its status is not \"ok\": nothing to diagnose");
  Options ob = o;
  if (ob.bundle.empty())
    ob.bundle = report.value("bundle", std::string());
  Offline off = validateOffline(ob);
  const Manifest &m = off.manifest;
  const json &kernels = report["kernels"];
  bool same = kernels.is_array() && kernels.size() == m.kernels.size();
  for (size_t i = 0; same && i < m.kernels.size(); ++i)
    same = kernels[i].is_object() && kernels[i].contains("name") &&
           kernels[i]["name"] == m.kernels[i].name;
  if (!same)
    throw InputError("--diagnose " + path + ": its kernels are not those of " +
                     ob.bundle);
  const json &d = report.value("device", json::object());
  DeviceInfo dev;
  dev.name = d.value("name", std::string());
  dev.smCount = d.value("sms", 0);
  std::string arch = d.value("arch", std::string());
  int cc = 0;
  if (arch.rfind("sm_", 0) == 0)
    try {
      cc = std::stoi(arch.substr(3));
    } catch (const std::exception &) {
    }
  if (dev.name.empty() || dev.smCount <= 0 || cc <= 0)
    throw InputError("--diagnose " + path +
                     ": its device {name, arch, sms} is missing or malformed");
  dev.major = cc / 10;
  dev.minor = cc % 10;
  json calibration = loadCalibration(dev.name);
  if (report.contains("time")) {
    double cublas = report.value("compute_ceiling_source", std::string()) ==
                            "cuBLAS, this run"
                        ? report.value("compute_ceiling_tflops", 0.0)
                        : 0.0;
    addVerdict(m, dev, calibration, cublas, report);
  }
  addDiagnosis(m, dev, calibration, report);
  report["bundle"] = ob.bundle;
  report["diagnosed_by"] = "kb-run " KB_VERSION_STRING;
  if (o.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    std::cout << "kb-run: " << ob.bundle << " as measured on " << dev.name
              << " (" << path << ")\n";
    if (report.contains("verdict"))
      std::cout << "  verdict: " << report["verdict"].get<std::string>()
                << "\n";
    std::cout << "  diagnosis: "
              << report["diagnosis"]["text"].get<std::string>() << "\n";
  }
  if (!o.jsonPath.empty())
    std::ofstream(o.jsonPath) << report.dump(2) << "\n";
  return 0;
}

/// The device, the shared cuBLAS handle and the calibration.
DeviceInfo openShared(const Options &o, Shared &shared) {
  DeviceInfo dev = openDevice(o.device);
  shared.calibration = loadCalibration(dev.name);
  checkCublas(cublasCreate(&shared.cublas), "cublasCreate");
  return dev;
}

int run(const Options &o) {
  // Everything that needs no GPU first: a bad bundle or input is exit 1 on
  // any machine.
  std::optional<Offline> off;
  if (!o.checkDevice && !o.calibrate) {
    off = validateOffline(o);
    if (o.checkOnly)
      return checkOnly(o, *off);
  }
  // --calibrate's unit bundles, checked before the GPU is looked for.
  std::vector<UnitBundle> units = parseUnitBundles(o.unitBundles);
  std::vector<Offline> unitOffs;
  for (const UnitBundle &u : units) {
    Options ou = o;
    ou.bundle = u.dir;
    unitOffs.push_back(validateOffline(ou));
    checkUnitBundle(u, unitOffs.back().manifest);
  }
  DeviceInfo dev = openDevice(o.device);
  if (o.calibrate) {
    json c = measureCeilings(dev, o);
    if (!units.empty()) {
      Shared shared;
      checkCublas(cublasCreate(&shared.cublas), "cublasCreate");
      Progress progress(o.quiet);
      for (size_t i = 0; i < units.size(); ++i) {
        Options ou = o;
        ou.bundle = units[i].dir;
        ou.noBaselines = true;
        progress.prefix = units[i].unit + " (" + units[i].dir + "): ";
        std::vector<KernelCheck> results;
        json report =
            runBundle(ou, unitOffs[i], dev, shared, results, progress);
        addUnitKernel(c, units[i], unitOffs[i].manifest, report);
      }
    }
    return saveCalibration(dev, c);
  }
  if (o.checkDevice) {
    std::cout << dev.name << " (" << dev.arch() << ", " << dev.smCount
              << " SMs)\n";
    return 0;
  }
  Shared shared;
  shared.calibration = loadCalibration(dev.name);
  checkCublas(cublasCreate(&shared.cublas), "cublasCreate");
  Progress progress(o.quiet);
  std::vector<KernelCheck> results;
  json report = runBundle(o, *off, dev, shared, results, progress);
  return printReport(report, results, o, dev);
}

/// Several bundles in one process (docs/kb-run-json.md, "A batch"): each
/// validated first, then run one after the other on one context, one
/// cuBLAS handle and one copy-bandwidth measurement. A bundle that fails
/// gets its error object in its slot; the others still run.
int runBatch(const Options &o) {
  size_t n = o.bundles.size();
  std::vector<json> slots(n);
  std::vector<std::optional<Offline>> offs(n);
  auto slotOptions = [&](size_t i) {
    Options oi = o;
    oi.bundle = o.bundles[i];
    oi.jsonPath.clear();
    return oi;
  };
  // --jsonl-out: a slot's line as soon as it is final.
  std::ofstream lines;
  if (!o.jsonlPath.empty()) {
    lines.open(o.jsonlPath, std::ios::trunc);
    if (!lines)
      throw InputError("--jsonl-out " + o.jsonlPath + ": cannot write it");
  }
  auto emit = [&](size_t i, double wallS) {
    if (!lines.is_open())
      return;
    json line = slots[i];
    line["wall_s"] = wallS;
    lines << line.dump() << "\n" << std::flush;
  };
  auto failSlot = [&](size_t i, std::exception_ptr e) {
    Failure f = describe(e);
    std::cerr << "kb-run: " << o.bundles[i] << ": " << f.message << "\n";
    slots[i] = errorJson(o.bundles[i], f);
  };
  using Clock = std::chrono::steady_clock;
  auto secondsSince = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  for (size_t i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    try {
      offs[i] = validateOffline(slotOptions(i));
      if (o.checkOnly) {
        Options oi = slotOptions(i);
        slots[i] = checkJson(oi, *offs[i]);
        if (!o.json)
          printCheck(oi, *offs[i]);
        emit(i, secondsSince(t0));
      }
    } catch (...) {
      failSlot(i, std::current_exception());
      emit(i, secondsSince(t0));
    }
  }
  if (!o.checkOnly) {
    Shared shared;
    std::optional<DeviceInfo> dev;
    std::exception_ptr noDevice;
    try {
      dev = openShared(o, shared);
    } catch (...) {
      noDevice = std::current_exception();
    }
    Progress progress(o.quiet);
    for (size_t i = 0; i < n; ++i) {
      if (!offs[i])
        continue;
      auto t0 = Clock::now();
      if (!dev) {
        failSlot(i, noDevice);
        emit(i, 0);
        continue;
      }
      Options oi = slotOptions(i);
      progress.prefix = "[" + std::to_string(i + 1) + "/" + std::to_string(n) +
                        "] " + oi.bundle + ": ";
      try {
        std::vector<KernelCheck> results;
        slots[i] = runBundle(oi, *offs[i], *dev, shared, results, progress);
        if (!o.json) {
          Options text = oi;
          text.json = false;
          printReport(slots[i], results, text, *dev);
        }
      } catch (...) {
        progress.done();
        failSlot(i, std::current_exception());
      }
      emit(i, secondsSince(t0));
    }
  }
  // The batch's code: the largest of its slots'; its status that slot's.
  int code = 0;
  size_t ok = 0, wrong = 0, errors = 0;
  for (const json &r : slots) {
    code = std::max(code, r["exit_code"].get<int>());
    std::string st = r["status"];
    ok += st == "ok";
    wrong += st == "wrong";
    errors += st == "error";
  }
  std::string status = errors ? "error" : wrong ? "wrong" : "ok";
  json batch = {{"schema", kJsonSchema},
                {"status", status},
                {"exit_code", code},
                {"batch", true},
                {"reports", slots}};
  if (o.json)
    std::cout << batch.dump(2) << "\n";
  else
    std::cout << "kb-run: batch of " << n << " bundles: " << ok << " ok, "
              << wrong << " wrong, " << errors << " failed\n";
  if (!o.jsonPath.empty())
    std::ofstream(o.jsonPath) << batch.dump(2) << "\n";
  return code;
}

/// --batch FILE (`-`: stdin): one bundle folder a line, relative to the
/// working directory; blank lines and lines starting with '#' are skipped;
/// surrounding blanks are not part of the path.
std::vector<std::string> readBatchFile(const std::string &path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file)
      throw InputError("--batch " + path + ": cannot open it");
  }
  std::istream &in = path == "-" ? std::cin : file;
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos || line[b] == '#')
      continue;
    size_t e = line.find_last_not_of(" \t\r");
    out.push_back(line.substr(b, e - b + 1));
  }
  return out;
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{
      "kb-run: run a kb bundle on the GPU, check every kernel against a "
      "trusted reference, then time it against baselines and explain it"};
  app.set_version_flag("--version", "kb-run " KB_VERSION_STRING,
                       "Print kb's version and git commit, and exit");
  app.add_option("bundle", o.bundles,
                 "Bundle folder (or its manifest.json) from kb-opt "
                 "--kb-compile; several: a batch, run in one process "
                 "(docs/kb-run-json.md)");
  app.add_option("--batch", o.batchFile,
                 "Also run the bundles listed in this file ('-': stdin), one "
                 "folder a line ('#' starts a comment), as one batch");
  app.add_option("--diagnose", o.diagnoseReport,
                 "REPORT.json [BUNDLE]: print the verdict and diagnosis this "
                 "kb-run gives a report an earlier kb-run --json wrote (with "
                 "its bundle, or BUNDLE), without a GPU");
  app.add_flag("--no-baselines", o.noBaselines,
               "Time only the bundle: no cuBLAS routes, no --baseline "
               "bundle, no copy of the same bytes (a tuning batch)");
  app.add_option_function<std::string>(
         "--routes",
         [&](const std::string &v) { o.programRoutesOnly = v == "program"; },
         "Which cuBLAS routes to time for a matmul: 'all' (fp32 and TF32, "
         "the default) or 'program' (only those of the program's precision, "
         "its peers; the other precision's 9-10 routes, each timed for at "
         "least --min-ms, are skipped: for a suite)")
      ->check(CLI::IsMember({"all", "program"}));
  app.add_flag(
      "--json", o.json,
      "Print the report as JSON (docs/kb-run-json.md), also for errors");
  app.add_option("--json-out", o.jsonPath,
                 "Also write the JSON report to this file");
  app.add_option("--jsonl-out", o.jsonlPath,
                 "Run as a batch and write each bundle's report to this file "
                 "as it finishes, one JSON line each with its wall_s (a "
                 "batch stopped part way keeps the finished reports)");
  app.add_flag("--check", o.checkOnly,
               "Check the bundle, its files and the --input arrays without a "
               "GPU, and exit "
               "(0: valid, 1: not)");
  app.add_flag("--quiet,-q", o.quiet, "No progress line on stderr");
  app.add_option("--seed", o.seed, "Seed of the random inputs")
      ->capture_default_str();
  app.add_option("--input", o.inputs,
                 "NAME=FILE.npy: use this float32 array for an input");
  app.add_option("--save-outputs", o.saveDir,
                 "Write each output buffer as NAME.npy into this folder");
  app.add_option("--baseline", o.baseline,
                 "Another bundle of the same program (e.g. compiled with "
                 "fuse=false) to time in the same run");
  app.add_option("--device", o.device, "GPU ordinal")->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs before timing")
      ->capture_default_str();
  app.add_option("--min-runs", o.minRuns, "Timed runs at least")
      ->capture_default_str();
  app.add_option("--min-ms", o.minMillis,
                 "Keep timing until this much kernel time")
      ->capture_default_str();
  app.add_flag("--no-time", o.noTime, "Check only; do not time");
  app.add_flag("--warm-l2", o.warmL2,
               "Time without writing a buffer of 4x L2 before each run: runs "
               "go back to back, 10 between two events a sample, each "
               "finding what the last one left in L2, as a kernel between "
               "others of a model does (kb's and every baseline's); by "
               "default L2 is flushed, a cold start");
  app.add_flag("--no-dependent-launch", o.noDependentLaunch,
               "Launch each kernel only after the one before it ends, "
               "ignoring the bundle's dependent_launch (by default such a "
               "kernel, compiled for sm_90 or later, is scheduled while the "
               "one before it ends: programmatic dependent launch)");
  app.add_flag(
      "--profile", o.profile,
      "Also run the kernels under Nsight Compute (ncu) and report DRAM and SM "
      "throughput, achieved occupancy and tensor-pipe activity next to kb's "
      "own signals");
  app.add_flag(
      "--calibrate", o.calibrate,
      "Measure this GPU's ceilings (copy bandwidth; cuBLAS fp32 and TF32 at "
      "8192^3, the best route each, as the FFMA and wgmma (Hopper) or "
      "mma.sync ceilings) and cache them for the verdicts of later runs");
  app.add_option(
      "--unit-bundle", o.unitBundles,
      "UNIT=BUNDLE_DIR (with --calibrate): time kb's own kernel for a matmul "
      "unit (a lone matmul bundle whose #kb.config names it, e.g. "
      "mma_sync_tf32) as that unit's ceiling where no library route runs it");
  app.add_flag("--check-device", o.checkDevice,
               "Print the GPU and exit (exit 2 if there is none)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version exit 0; every argument error is exit 1 (CLI11's
    // own codes, 104-109, are not kb-run's).
    if (e.get_exit_code() == 0)
      return app.exit(e);
    if (o.bundles.size() == 1)
      o.bundle = o.bundles[0];
    for (int i = 1; i < argc; ++i)
      o.json |= std::strcmp(argv[i], "--json") == 0;
    return fail(o, Exit::BadInput, "usage",
                std::string(e.what()) + " (see kb-run --help)");
  }
  o.batch =
      o.bundles.size() > 1 || !o.batchFile.empty() || !o.jsonlPath.empty();
  if (o.bundles.size() == 1)
    o.bundle = o.bundles[0];
  if (!o.batchFile.empty()) {
    try {
      for (std::string &b : readBatchFile(o.batchFile))
        o.bundles.push_back(b);
    } catch (const InputError &e) {
      return fail(o, Exit::BadInput, "input", e.what());
    }
  }
  if (!o.diagnoseReport.empty() &&
      (o.batch || o.checkOnly || o.checkDevice || o.calibrate))
    return fail(o, Exit::BadInput, "usage",
                "--diagnose takes one report and at most one bundle; it does "
                "not combine with a batch, --check, --check-device or "
                "--calibrate");
  if (!o.unitBundles.empty() && !o.calibrate)
    return fail(o, Exit::BadInput, "usage",
                "--unit-bundle names a unit's kernel for --calibrate; give "
                "--calibrate with it");
  if (o.bundles.empty() && !o.checkDevice && !o.calibrate &&
      o.diagnoseReport.empty())
    return fail(o, Exit::BadInput, "usage",
                o.batchFile.empty()
                    ? "no bundle given (kb-run BUNDLE_DIR; see --help)"
                    : "--batch " + o.batchFile + " lists no bundle");
  if (o.batch && !o.checkDevice && !o.calibrate &&
      (!o.inputs.empty() || !o.saveDir.empty() || !o.baseline.empty()))
    return fail(o, Exit::BadInput, "usage",
                "--input, --save-outputs and --baseline name one bundle's "
                "buffers or program; they do not combine with a batch");
  if (o.checkOnly && (o.checkDevice || o.calibrate))
    return fail(
        o, Exit::BadInput, "usage",
        "--check validates a bundle without a GPU; it does not combine with "
        "--check-device or --calibrate");
  try {
    if (!o.diagnoseReport.empty())
      return diagnoseOnly(o);
    if (o.batch && !o.checkDevice && !o.calibrate)
      return runBatch(o);
    return run(o);
  } catch (...) {
    Failure f = describe(std::current_exception());
    return fail(o, f.code, f.kind.c_str(), f.message);
  }
}
