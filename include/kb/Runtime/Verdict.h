//===- Verdict.h - which ceiling binds a measured program, and why -*- C++
//-*-===//
//
// kb-run's verdict: from a program's flops and minimal bytes, its measured
// rate and the two ceilings of this run (the copy bandwidth, and a compute
// ceiling for matmuls), whether it is memory- or compute-bound by the
// roofline's ridge, how close it came, and one line saying so.
//
// kb-run's diagnosis: from the static facts of each kernel (grid against
// the SMs, registers, spills, shared memory, occupancy, the mma unit its
// #kb.config names, bytes moved against the minimum) and, where present,
// the timing and ncu's counters, which ceiling binds ("memory", "compute"
// or "latency"), the cause (an id, docs/kb-run-json.md) and the levers that
// address it, most promising first. kb-tune steers by the levers.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_VERDICT_H
#define KB_RUNTIME_VERDICT_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kb::runtime {

struct Verdict {
  bool memoryBound = true;
  /// Of the binding ceiling: achieved GB/s over the copy bandwidth, or
  /// achieved TFLOP/s over the compute ceiling.
  double fraction = 0;
  /// flop per byte at which the two ceilings meet (0 without flops).
  double ridge = 0;
  std::string text;
};

/// `flops` 0: a program without arithmetic worth a roofline (elementwise,
/// softmax), judged against the copy bandwidth alone. Below a quarter of
/// the binding ceiling the text says latency-bound.
/// `computeTflops` is what the fraction is of (cuBLAS at the program's own
/// shape, when kb-run timed it, else the ceiling of the unit the kernel
/// uses); `deviceTflops` the ceiling of that unit on this device
/// (calibrated or nominal), which places the ridge: the ridge belongs to
/// the machine, not to one shape. 0: the same as `computeTflops`. Where
/// even `computeTflops` is below a quarter of the device's peak, the shape
/// is too small for the device and the text says latency-bound.
/// `computeName` names what the fraction is of in the text ("the compute
/// ceiling", "cuBLAS TF32 at this shape", "the wgmma_tf32 ceiling").
Verdict classify(double flops, double minBytes, double achievedGBs,
                 double achievedTflops, double copyGBs, double computeTflops,
                 double deviceTflops = 0,
                 const std::string &computeName = "the compute ceiling");

//===----------------------------------------------------------------------===//
// Ceilings of the arithmetic units
//===----------------------------------------------------------------------===//

/// A compute ceiling and where it comes from. `measured`: by kb-run
/// --calibrate on this device; otherwise a nominal H200 figure
/// (docs/performance.md), and `source` says so.
struct Ceiling {
  double tflops = 0;
  std::string source;
  bool measured = false;
};

/// The ceiling of a matmul unit ("ffma", "mma_sync_tf32", "mma_sync_tf32x3",
/// "wgmma_tf32"; as #kb.config's `mma` names it) in useful flops: from
/// `calibration` (kb-run --calibrate's object for this device, or null),
/// else nominal. Calibration keys: `units.<unit>.tflops` (and `.source`);
/// a calibration written before units were recorded gives ffma from
/// `cublas_fp32_tflops` and, on a Hopper GPU (`hopper`), wgmma_tf32 from
/// `cublas_tf32_tflops` (cuBLAS TF32 runs wgmma there), elsewhere
/// mma_sync_tf32. mma_sync_tf32x3 is a third of mma_sync_tf32 (three
/// mma.sync per product); gemv (fp32 FMAs) takes ffma's. An unknown unit:
/// {0, "unknown unit"}.
Ceiling unitCeiling(const std::string &unit, const nlohmann::json &calibration,
                    bool hopper);

//===----------------------------------------------------------------------===//
// #kb.config fields, from the text the manifest records
//===----------------------------------------------------------------------===//

struct ConfigFields {
  std::vector<int64_t> block; // [BM, BN, BK] for a matmul
  std::string mma, strategy, copy;
  int64_t stages = 0, vector = 0, threads = 0, cluster = 0;
  /// split-K's chunks (0: no split field).
  int64_t split = 0;
};

/// The fields of a `#kb.config<...>` text; absent or malformed fields stay
/// empty / 0 (the text is untrusted bundle content).
ConfigFields parseConfigText(const std::string &config);

//===----------------------------------------------------------------------===//
// Diagnosis
//===----------------------------------------------------------------------===//

/// Lever ids (docs/kb-run-json.md): "split_k", "fewer_splits",
/// "smaller_tiles", "larger_tiles", "fusion", "mma_unit", "fewer_stages",
/// "more_stages", "vector_width"; "none" where no lever applies.
struct KernelFacts {
  std::string name;
  /// #kb.config's mma unit ("" for a kernel without a matmul).
  std::string unit;
  bool matmul = false;
  /// What the PTX holds: wgmma or mma.sync instructions.
  bool tensorInstructions = false;
  int64_t blocks = 0;
  int threads = 0, registers = 0, spillBytes = 0, sharedBytes = 0;
  /// Theoretical occupancy (Occupancy.h) and the driver's blocks per SM
  /// (0: unknown; then the theoretical one is used).
  int blocksPerSM = 0, driverBlocksPerSM = 0;
  double occupancy = 0;
  std::string occupancyLimiter;
  ConfigFields config;
  /// A matmul's shape (batch, M, N, K).
  int64_t batch = 1, m = 0, n = 0, k = 0;
  double modelledBytes = 0;
  /// This kernel's time alone, or the program's for a lone kernel (ms; 0:
  /// not timed).
  double timeMs = 0;
  bool hasNcu = false;
  double ncuDramPct = 0, ncuSmPct = 0, ncuTensorPct = 0, ncuOccupancyPct = 0;
};

struct ProgramFacts {
  int sms = 0;
  /// Compute capability 9.0: wgmma (chip=sm_90a) can run here.
  bool hopper = false;
  double flops = 0, minBytes = 0, movedBytes = 0;
  /// Bytes of intermediates (scratch buffers) written by one kernel and
  /// read by another: what fusing them would save.
  double scratchBytes = 0;
  /// The matmul's precision ("ieee", "tf32", "tf32x3"; "" without one).
  std::string precision;
  /// Copy bandwidth of this run (GB/s).
  double copyGBs = 0;
  bool timed = false;
  double timeMs = 0, achievedGBs = 0, achievedTflops = 0;
  /// The ceiling of the unit the matmul kernel uses (0 without flops).
  Ceiling unit;
  /// cuBLAS at this shape in the matmul's precision (0: not timed).
  double shapeTflops = 0;
  /// A copy of the minimal bytes timed like the program: its GB/s over the
  /// copy bandwidth, and the program's GB/s over its (0: not timed).
  double sameSizeCopyFraction = 0, overSameSizeCopy = 0;
  std::vector<KernelFacts> kernels;
};

/// One cause found, with its levers (most promising first; empty: none).
struct Finding {
  std::string cause, kernel, text;
  std::vector<std::string> levers;
};

struct Diagnosis {
  /// "memory", "compute" or "latency".
  std::string bound;
  /// The primary cause and its first lever ("none" when it has none).
  std::string cause, lever;
  /// The levers of every finding, primary first, without repeats or "none".
  std::vector<std::string> levers;
  /// One line: the bound, the cause and the lever.
  std::string text;
  /// Of the binding ceiling (copy bandwidth, or the unit's ceiling); 0 when
  /// not timed.
  double fraction = 0;
  /// The kernel the primary cause is about ("" for the whole program).
  std::string kernel;
  /// Every cause found, primary first.
  std::vector<Finding> findings;
};

/// The rules of docs/kb-run-json.md ("diagnosis"), in their order.
Diagnosis diagnose(const ProgramFacts &p);

/// {"bound", "cause", "lever", "levers", "text", "fraction", "kernel",
///  "findings": [{"cause", "kernel", "levers", "text"}]}.
nlohmann::json diagnosisJson(const Diagnosis &d);

/// The verdict's text with the diagnosis's cause appended where the verdict
/// says latency-bound ("...; cause: <text>"), so that no latency verdict
/// comes without one.
std::string verdictWithCause(const std::string &verdict, const Diagnosis &d);

/// The board while one program was timed (kb-run's NVML reading): mean
/// power, median SM clock, the enforced power limit, and the program's
/// median time.
struct BoardFacts {
  double watts = 0, smMhz = 0, limitW = 0, ms = 0;
  bool valid() const { return watts > 0 && smMhz > 0 && ms > 0; }
};

/// One sentence on the board while kb and its fastest baseline ran ("" when
/// kb's reading is missing): power against the limit and SM clock of each;
/// where both ran at the power limit (within 5%), time x clock of each (the
/// cycles, roughly) against the other's, since there the clock the power
/// allows, not only the cycles, sets the time.
std::string boardNote(const BoardFacts &kb, const BoardFacts &peer,
                      const std::string &peerName);

} // namespace kb::runtime

#endif // KB_RUNTIME_VERDICT_H
