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
  std::cerr << "\r\033[2Kkb-run: " << what << "..." << std::flush;
  shown = true;
}

void Progress::done() {
  if (on && shown)
    std::cerr << "\r\033[2K" << std::flush;
  shown = false;
}

namespace {

/// The one-line error every failure ends with; with --json also a JSON
/// object on stdout (and in --json-out).
int fail(const Options &o, Exit code, const char *kind,
         const std::string &message) {
  std::cerr << "kb-run: " << message << "\n";
  if (o.json || !o.jsonPath.empty()) {
    json j = {{"schema", kJsonSchema},  {"status", "error"},
              {"exit_code", int(code)}, {"error", kind},
              {"message", message},     {"bundle", o.bundle}};
    if (o.json)
      std::cout << j.dump(2) << "\n";
    if (!o.jsonPath.empty())
      std::ofstream(o.jsonPath) << j.dump(2) << "\n";
  }
  return int(code);
}

/// `kb-run --check`: the bundle, its files and the inputs, no GPU.
int checkOnly(const Options &o, const Offline &off) {
  const Manifest &m = off.manifest;
  size_t files = 0;
  for (const Kernel &k : m.kernels)
    files += k.cubin.empty() ? 1 : 2;
  if (o.json) {
    json j = {{"schema", kJsonSchema},
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
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "kb-run: " << o.bundle << ": OK (" << m.kernels.size()
              << " kernels, " << m.buffers.size() << " buffers, "
              << m.program.size() << " ops, " << files << " files"
              << (off.given.empty() ? "" : ", the --input arrays")
              << (off.baseline ? ", the baseline bundle" : "")
              << " checked; no GPU used)\n";
  }
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

int run(const Options &o) {
  // Everything that needs no GPU first: a bad bundle or input is exit 1 on
  // any machine.
  std::optional<Offline> off;
  if (!o.checkDevice && !o.calibrate) {
    off = validateOffline(o);
    if (o.checkOnly)
      return checkOnly(o, *off);
  }
  DeviceInfo dev = openDevice(o.device);
  if (o.calibrate)
    return calibrate(dev, o);
  json calibration = loadCalibration(dev.name);
  if (o.checkDevice) {
    std::cout << dev.name << " (" << dev.arch() << ", " << dev.smCount
              << " SMs)\n";
    return 0;
  }
  checkTarget(off->manifest.target, dev, "the bundle");
  if (off->baseline)
    checkTarget(off->baseline->target, dev, "the --baseline bundle");
  Progress progress(o.quiet);
  progress.phase("loading " + std::to_string(off->manifest.kernels.size()) +
                 " kernels");
  RunState s = prepare(off->manifest, o, off->given, dev.smCount);
  checkCublas(cublasCreate(&s.cublas), "cublasCreate");

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
  std::vector<KernelCheck> results = runAndCheck(s, report);
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
  timeAndCompare(s, o, *off, dev, calibration, allOk, report, progress);
  progress.done();

  // 4. Report.
  report["status"] = allOk ? "ok" : "wrong";
  report["exit_code"] = allOk ? int(Exit::Ok) : int(Exit::Wrong);
  return printReport(report, results, o, dev);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  CLI::App app{
      "kb-run: run a kb bundle on the GPU, check every kernel against a "
      "trusted reference, then time it against baselines and explain it"};
  app.set_version_flag("--version", "kb-run " KB_VERSION_STRING,
                       "Print kb's version and git commit, and exit");
  app.add_option(
      "bundle", o.bundle,
      "Bundle folder (or its manifest.json) from kb-opt --kb-compile");
  app.add_flag(
      "--json", o.json,
      "Print the report as JSON (docs/kb-run-json.md), also for errors");
  app.add_option("--json-out", o.jsonPath,
                 "Also write the JSON report to this file");
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
  app.add_flag(
      "--profile", o.profile,
      "Also run the kernels under Nsight Compute (ncu) and report DRAM and SM "
      "throughput, achieved occupancy and tensor-pipe activity next to kb's "
      "own signals");
  app.add_flag(
      "--calibrate", o.calibrate,
      "Measure this GPU's ceilings (copy bandwidth; cuBLAS fp32 and TF32 at "
      "8192^3) and cache them for the verdicts of later runs");
  app.add_flag("--check-device", o.checkDevice,
               "Print the GPU and exit (exit 2 if there is none)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version exit 0; every argument error is exit 1 (CLI11's
    // own codes, 104-109, are not kb-run's).
    if (e.get_exit_code() == 0)
      return app.exit(e);
    for (int i = 1; i < argc; ++i)
      o.json |= std::strcmp(argv[i], "--json") == 0;
    return fail(o, Exit::BadInput, "usage",
                std::string(e.what()) + " (see kb-run --help)");
  }
  if (o.bundle.empty() && !o.checkDevice && !o.calibrate)
    return fail(o, Exit::BadInput, "usage",
                "no bundle given (kb-run BUNDLE_DIR; see --help)");
  if (o.checkOnly && (o.checkDevice || o.calibrate))
    return fail(
        o, Exit::BadInput, "usage",
        "--check validates a bundle without a GPU; it does not combine with "
        "--check-device or --calibrate");
  try {
    return run(o);
  } catch (const DeviceError &e) {
    return fail(o, Exit::NoGpu, e.noDevice ? "no_gpu" : "device", e.what());
  } catch (const ManifestError &e) {
    return fail(o, Exit::BadInput, "bundle", e.what());
  } catch (const InputError &e) {
    return fail(o, Exit::BadInput, "input", e.what());
  } catch (const std::exception &e) {
    return fail(o, Exit::BadInput, "error", e.what());
  }
}
