//===- KbTune.h - kb-tune's own parts ---------------------------*- C++ -*-===//
//
// What kb-tune.cpp (the command line), TuneCompile.cpp (the program and
// its candidates through kb's passes) and TuneRun.cpp (kb-run, ingest,
// the outcome) share: the options, the program, progress and the
// messages. Private to tools/kb-tune; the MLIR-free core is TuneCore.h.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TOOLS_KB_TUNE_KBTUNE_H
#define KB_TOOLS_KB_TUNE_KBTUNE_H

#include "TuneCore.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace kbtune {

/// Seconds since the epoch.
double now();
/// Prints `kb-tune: MSG` (one line) and exits with `code`.
[[noreturn]] void die(const std::string &msg, int code = 1);
/// Dies, naming the file, unless `path` is a regular file (or absent).
void requireRegularFile(const std::string &path, const std::string &what);
json readJson(const std::string &path);
/// kb-run's results: one JSON value or JSON lines (--jsonl-out).
json readResults(const std::string &path);
void writeJson(const std::string &path, const json &j);

/// One line of progress on stderr: rewritten in place on a terminal, every
/// tenth step otherwise.
struct Progress {
  bool quiet = false, tty = isatty(2);
  void step(int i, int n, const std::string &what) {
    if (quiet)
      return;
    if (tty)
      std::cerr << "\rkb-tune: " << what << " " << i << "/" << n << "   "
                << std::flush;
    else if (i == n || i % 10 == 0)
      std::cerr << "kb-tune: " << what << " " << i << "/" << n << "\n";
    if (tty && i == n)
      std::cerr << "\n";
  }
};

// --- The program and its candidates, through kb's passes -----------------

struct Program {
  std::unique_ptr<mlir::MLIRContext> ctx;
  mlir::OwningOpRef<mlir::ModuleOp> fused; // after kb-fuse-elementwise
  int kernel = -1;             // index among the function's kernels
  Facts facts;
};

struct Options {
  std::string program, out, mode = "guided", chip = "sm_90a", calibration, db,
                            kbRun, results, device, only;
  int budget = 0, kernel = -1, limit = 0, seeds = 1;
  uint64_t seed = 1;
  double maxRelError = -1;
  bool keepSpills = false, json = false, quiet = false, profile = false,
       pickModel = false;
};

/// Parses `path`, fuses it and finds the kernel to tune and its facts.
Program loadProgram(const std::string &path, const std::string &chip,
                    int kernel, double maxRelError);
/// kb's own config of the tuned kernel in the bundle `dir` ("" where there
/// is none, or no bundle).
std::string tunedKernelConfig(const std::string &dir, Family family);
/// The space, narrowed to the configs that `--only` matches.
std::vector<Candidate> spaceOf(const Options &o, const Facts &f);
std::string idOf(int i);
/// Writes the batch of `round`: its bundles copied to DIR/cNNNN (the
/// previous batch removed) and DIR/batch.txt listing them.
void writeBatch(const std::string &dir, const Plan &p,
                const std::vector<int> &batch);
/// Compiles every candidate of the space, prunes and ranks them.
Plan compileAll(const Options &o, Program &prog);

// --- kb-run, ingest and the outcome (TuneRun.cpp) -------------------------

void printOutcome(const Options &o, const Plan &p);
/// The candidate (its folder's name) kb-run report `rep`, the j-th of n,
/// measured.
std::string candidateIdOf(const json &rep, size_t j, size_t n,
                          const std::vector<std::string> &order);
/// Records `output` (kb-run's JSON) for the current round; then the next
/// round's batch or, when the search is done, the choice.
void ingest(const Options &o, const std::string &dir, Plan &p,
            const json &output);
Plan loadPlan(const std::string &dir);
void checkMode(const std::string &mode);
/// Runs kb-run on `dirs`; its JSON output, or exits when there is no GPU.
json runKbRun(const Options &o, const std::vector<std::string> &dirs,
              const std::string &planDir, bool noBaselines = true);
/// compile --pick-model: the model's pick into the database `o.db`.
void writeModelPick(const Options &o, const Plan &p);
std::string defaultKbRun(const char *argv0);

} // namespace kbtune

#endif // KB_TOOLS_KB_TUNE_KBTUNE_H
