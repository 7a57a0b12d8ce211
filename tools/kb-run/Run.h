//===- Run.h - kb-run's phases, one file each (tool-private) ----*- C++ -*-===//
//
// kb-run's work, split by job: the checks that need no GPU (Validate.cpp),
// loading and filling a bundle on the device (Prepare.cpp), the static
// signals and ncu (Signals.cpp), timing, baselines and the verdict
// (Timing.cpp), the device's cached ceilings (Calibrate.cpp), and the text
// report (Report.cpp). kb-run.cpp holds the command line and the order of
// the phases.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TOOLS_KBRUN_RUN_H
#define KB_TOOLS_KBRUN_RUN_H

#include "KbRun.h"

#include "kb/Runtime/Npy.h"
#include "kb/Runtime/Verdict.h"

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb::runtime {

/// The version of the JSON kb-run prints (docs/kb-run-json.md).
constexpr int kJsonSchema = 1;

/// Exit codes (docs/kb-run-json.md): 1 bad bundle, input or arguments;
/// 2 no GPU or driver (or the driver failed); 3 a kernel's result is wrong.
enum class Exit : int { Ok = 0, BadInput = 1, NoGpu = 2, Wrong = 3 };

/// A bad command line or --input (exit 1), as opposed to a bad bundle.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  /// The bundle of this run (in a batch, the one being run).
  std::string bundle, baseline, saveDir, jsonPath;
  /// Every bundle given (positional, then --batch FILE's lines).
  std::vector<std::string> bundles;
  std::string batchFile;
  /// --jsonl-out FILE: each bundle's report (with wall_s) one line each,
  /// written and flushed as it finishes, so a batch stopped part way keeps
  /// what it measured.
  std::string jsonlPath;
  std::vector<std::string> inputs;
  bool json = false, checkDevice = false, noTime = false, profile = false;
  bool calibrate = false, checkOnly = false, quiet = false;
  /// --no-dependent-launch: launch every kernel after the one before it
  /// ends, ignoring the manifest's dependent_launch (an A/B of its gain).
  bool noDependentLaunch = false;
  /// --unit-bundle UNIT=DIR (with --calibrate).
  std::vector<std::string> unitBundles;
  /// --diagnose REPORT: this kb-run's verdict and diagnosis of a report
  /// kb-run wrote (with its bundle), no GPU.
  std::string diagnoseReport;
  /// No cuBLAS routes, --baseline bundle or same-size copy timed: only the
  /// bundle itself (a tuning batch).
  bool noBaselines = false;
  /// --routes program: time only the cuBLAS routes of the program's own
  /// precision (its peers), not those of the other one (a suite run).
  bool programRoutesOnly = false;
  /// Several bundles in one process: one object with `reports`.
  bool batch = false;
  /// --warm-l2: time without the L2 flush between runs.
  bool warmL2 = false;
  uint64_t seed = 1234;
  int device = 0, warmup = 3, minRuns = 20;
  double minMillis = 200;
};

/// A progress line on stderr for phases that take a while; only when stderr
/// is a terminal and --quiet is not given. Each phase overwrites the last.
class Progress {
public:
  explicit Progress(bool quiet);
  ~Progress() { done(); }
  void phase(const std::string &what);
  void done();
  /// Shown before each phase (a batch's "[3/40] BUNDLE: ").
  std::string prefix;

private:
  bool on = false, shown = false;
};

class GemmRoutes;

/// What the bundles of one process share: the cuBLAS handle of the checks,
/// the library routes of the baselines (made on first use), the copy
/// bandwidth (measured once), and the device's calibration.
struct Shared {
  cublasHandle_t cublas = nullptr;
  std::shared_ptr<GemmRoutes> routes;
  double copyGBs = 0;
  nlohmann::json calibration;
};

/// Everything that can be checked without a GPU: the manifest and its
/// files, --input arrays against the input buffers, the baseline bundle,
/// and the names --save-outputs would write.
struct Offline {
  Manifest manifest;
  std::map<std::string, NpyArray> given;
  std::optional<Manifest> baseline;
};

// Validate.cpp
Offline validateOffline(const Options &o);
/// The file --save-outputs writes for an output buffer: DIR/NAME.npy, or an
/// InputError when NAME would leave DIR (a '/', '..', a leading '.').
std::string saveOutputPath(const std::string &dir, const std::string &name);
/// Writes each output buffer into o.saveDir.
void saveOutputs(const Options &o, const RunState &s);

// Prepare.cpp
/// Fills `v` with seeded f32 draws, each rounded to the buffer's type.
void fillRandom(std::vector<float> &v, const Buffer &b, uint64_t seed);
/// Copies f32 host values to a device buffer of type `t` (a 16-bit one gets
/// them rounded to nearest even: exact for values of that type; f32 and i32
/// are copied as they are), and back (exact).
void uploadAs(DeviceBuffer &d, DType t, const float *host);
void downloadAs(const DeviceBuffer &d, DType t, float *host);
/// Loads a (validated) bundle's kernels, allocates its buffers and fills the
/// inputs, from `given` or seeded random.
RunState prepare(const Manifest &m, const Options &o,
                 const std::map<std::string, NpyArray> &given, int smCount);
void poisonOutputs(RunState &s);
void launchOne(RunState &s, size_t i);
void launchAll(RunState &s);
void downloadAll(RunState &s);
/// Unloads the bundle's modules (a batch runs many bundles in one context).
void unloadKernels(RunState &s);
/// Runs once on poisoned outputs and checks every kernel; fills
/// report["checks"] and report["ok"].
std::vector<KernelCheck> runAndCheck(RunState &s, nlohmann::json &report);

// Signals.cpp
double flopsOf(const Manifest &m);
double minimalBytes(const Manifest &m);
/// Per kernel: launch sizes, registers, shared memory, occupancy, tensor
/// cores, modelled bytes.
nlohmann::json staticSignals(const RunState &s);
/// Runs the kernels under ncu and adds its metrics to `kernels`; returns
/// what ncu gave (or {"error": ...}).
nlohmann::json addNcuSignals(const Options &o, const Manifest &m,
                             nlohmann::json &kernels);
/// The matmul unit of a program: its (first) matmul kernel's #kb.config
/// `mma`, else the one its precision implies ("ffma" for ieee,
/// "mma_sync_tf32", "mma_sync_tf32x3"); "" without a matmul.
std::string programUnit(const Manifest &m);
/// The diagnosis's facts from the bundle and its report (kernels[] as
/// staticSignals wrote them, time, achieved rates, ncu's counters).
ProgramFacts programFacts(const Manifest &m, const nlohmann::json &report,
                          const DeviceInfo &dev, const Ceiling &unit);

// Timing.cpp
nlohmann::json timingJson(const Timing &t);
std::string fmtMs(const Timing &t);
/// The ceiling of the unit the program's matmul uses on this device (0
/// without a matmul).
Ceiling programCeiling(const Manifest &m, const DeviceInfo &dev,
                       const nlohmann::json &calibration);
/// The verdict of a timed report from its numbers (flops, minimal_bytes,
/// achieved_gbs, achieved_tflops, copy_bandwidth_gbs): for programs with
/// flops the compute_* and device_compute_* fields, then `verdict`.
/// `cublasTflops` > 0: cuBLAS at this shape in this run, what the fraction
/// is of; else the ceiling of the unit the matmul uses.
Verdict addVerdict(const Manifest &m, const DeviceInfo &dev,
                   const nlohmann::json &calibration, double cublasTflops,
                   nlohmann::json &report);
/// Times the program (only when every check passed and timing is on),
/// against cuBLAS and the --baseline bundle (neither with --no-baselines),
/// and classifies the result.
void timeAndCompare(RunState &s, const Options &o, const Offline &off,
                    const DeviceInfo &dev, Shared &shared, bool allOk,
                    nlohmann::json &report, Progress &progress);

// Calibrate.cpp
nlohmann::json loadCalibration(const std::string &device);
/// `--unit-bundle UNIT=DIR`: kb's own kernel for a matmul unit, timed by
/// --calibrate as that unit's ceiling where no library route runs it.
struct UnitBundle {
  std::string unit, dir;
};
/// The --unit-bundle arguments; an InputError for a malformed one, an
/// unknown unit or a unit given twice.
std::vector<UnitBundle> parseUnitBundles(const std::vector<std::string> &args);
/// A unit bundle must be one matmul kernel whose #kb.config names the unit
/// (an InputError otherwise); no GPU needed.
void checkUnitBundle(const UnitBundle &u, const Manifest &m);
/// The copy bandwidth and the cuBLAS fp32 and TF32 ceilings at 8192^3
/// (the calibration object, not yet saved).
nlohmann::json measureCeilings(const DeviceInfo &dev, const Options &o);
/// Records a unit bundle's run (its report, status ok and timed) as the
/// unit's ceiling in `calibration`, or next to a library route's
/// measurement of it (`kb_kernel`); throws std::runtime_error when its
/// checks failed or it was not timed.
void addUnitKernel(nlohmann::json &calibration, const UnitBundle &u,
                   const Manifest &m, const nlohmann::json &report);
/// Stamps and caches the calibration of `dev`, and prints it.
int saveCalibration(const DeviceInfo &dev, nlohmann::json calibration);

// Report.cpp
/// The human-readable report; returns the exit code.
int printReport(const nlohmann::json &report,
                const std::vector<KernelCheck> &results, const Options &o,
                const DeviceInfo &dev);

} // namespace kb::runtime

#endif
