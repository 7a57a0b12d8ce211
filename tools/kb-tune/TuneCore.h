//===- TuneCore.h - kb-tune's space, model, search and database -*- C++ -*-===//
//
// The parts of kb-tune that need no MLIR and no GPU: the config space of
// each kernel family (a table of #kb.config fields), the static model that
// ranks compiled candidates, the reading of kb-run's JSON reports, the three
// search modes (exhaustive, random, guided: steered by the diagnosis lever
// of kb-run's report), the tie rule and the tuning database. kb-tune.cpp
// compiles the candidates through kb's passes; the unit tests
// (unittests/TuneTest.cpp) exercise this file alone.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TOOLS_KB_TUNE_TUNECORE_H
#define KB_TOOLS_KB_TUNE_TUNECORE_H

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kbtune {

using json = nlohmann::json;

/// Throws (a one-line message naming `what` and `path`) when `path` exists
/// and is not a regular file: a device (/dev/zero) or a FIFO, which would
/// be read forever or wait for a writer, or a folder.
void checkRegularFile(const std::string &path, const std::string &what);
/// `what` (an exception's text) as one line for a user: without the JSON
/// library's "[json.exception.parse_error.101] " prefix, newlines and other
/// control characters as spaces.
std::string oneLineError(const std::string &what);

enum class Family { Matmul, Softmax, Elementwise };
const char *familyName(Family f);

/// What the space and the model need to know about the tuned kernel.
struct Facts {
  Family family = Family::Elementwise;
  std::string chip = "sm_90a";
  /// The program's precision (matmul; "-" otherwise) and the precisions a
  /// candidate may use: the program's only, or every one when an accuracy
  /// budget is given.
  std::string precision = "-";
  std::vector<std::string> precisions;
  int64_t batch = 1, m = 0, n = 0, k = 0; // matmul
  int64_t rows = 0, cols = 0;             // softmax, elementwise: last dim
  bool fused = false;                     // a kb.fusion (epilogue, prologue)
  bool transposeB = false;                // matmul: B given N x K (nn.Linear)
  double minimalBytes = 0, flops = 0;     // the whole program's
  bool allows(const std::string &p) const;
};
json toJson(const Facts &f);
Facts factsFromJson(const json &j);

/// One candidate: #kb.config fields in table order (value text as in the
/// attribute: `[128, 256, 32]`, `4`, `"tma"`), and the matmul precision it
/// implies ("-" for other kernels).
struct Candidate {
  std::vector<std::pair<std::string, std::string>> fields;
  std::string precision = "-";
  std::string get(const std::string &field) const; // "" when absent
  std::string config() const;                      // "#kb.config<...>"
};

/// A row of the space table: `field` takes `values` in candidates of
/// `family` for which `when` holds, given the fields set before it. A field
/// named by several rows takes the union of the values of the rows that
/// hold; none: the field is left to the passes. Adding a field to the space
/// is adding a row.
struct FieldRow {
  Family family;
  std::string field;
  std::vector<std::string> values;
  std::function<bool(const Candidate &, const Facts &)> when;
  /// Values that depend on the candidate so far and the program (where
  /// set, they follow `values`), e.g. the splits that divide the k tiles.
  std::function<std::vector<std::string>(const Candidate &, const Facts &)>
      valuesOf = nullptr;
};
const std::vector<FieldRow> &spaceTable();
/// Every candidate of `facts`' family, in table order (the order the tie
/// rule breaks ties by).
std::vector<Candidate>
enumerateSpace(const Facts &facts,
               const std::vector<FieldRow> &table = spaceTable());
/// A short identity of the space (a hash of every candidate's config), so
/// that a database entry says which space it was tuned over.
std::string spaceId(const std::vector<Candidate> &space);

/// The SMs of a chip (sm_80: 108, the A100; sm_90, sm_90a: 132, the H100
/// and H200).
int smsOf(const std::string &chip);
/// A matmul candidate's output tiles per batch (its block's BM x BN over
/// M x N); 0 without a block.
int64_t outputTiles(const Candidate &c, const Facts &f);

/// The unit a matmul candidate names and the precision it implies.
std::string precisionOfUnit(const std::string &unit);

/// What the compiled candidate looks like, from the bundle kb's passes
/// wrote (ptxas -v in the manifest, the PTX itself).
struct Static {
  bool compiled = false;
  std::string pruned; // why it is not measured; "" for a survivor
  int registers = 0, spillBytes = 0, threads = 0, sharedBytes = 0;
  int64_t blocks = 0;
  bool tensorCores = false;
  int blocksPerSM = 0;
  double occupancy = 0;
  std::string limiter;
  double otherKernelBytes = 0; // bytes the other kernels (a transpose) move
  double modelMs = 0;
  int rank = -1; // 0: the model's fastest survivor
};
json toJson(const Static &s);
Static staticFromJson(const json &j);

/// The ceilings the model divides by: from `kb-run --calibrate`'s cache or
/// report (copy_bandwidth_gbs, cublas_fp32_tflops, cublas_tf32_tflops),
/// else the H200 figures of docs/performance.md.
struct Calibration {
  double copyGBs = 4244, fp32Tflops = 51, tf32Tflops = 356;
  /// kb's mma.sync kernel against the wgmma one (docs/performance.md: 166
  /// against 317 TFLOP/s at 4096^3): the fraction of the TF32 ceiling the
  /// model gives mma.sync.
  double mmaSyncFraction = 0.5;
  int sms = 132;
  /// The L2's bytes (kb-run --calibrate's `l2_bytes`; the H200's 50 MB).
  double l2Bytes = 50e6;
  std::string source = "nominal H200 (docs/performance.md)";
};
/// Reads a calibration: kb-run's cache (device name -> figures) or one
/// object of figures. Throws std::runtime_error with a message.
Calibration loadCalibration(const std::string &path);

/// The model's time for a compiled candidate, in ms: the larger of its
/// flops over its unit's ceiling and its bytes (minimal bytes from DRAM;
/// for a matmul also the tile loads from L2) over the bandwidth, each
/// derated by the waves of blocks over the SMs and by occupancy, plus the
/// other kernels' bytes and a launch.
double modelTime(const Facts &f, const Candidate &c, const Static &s,
                 const Calibration &cal);
/// Split-K's cost beyond the kernel: S x M x N partials (`outBytes` =
/// M x N x 4) written and read by kb.split_sum, which writes M x N, and the
/// sum's launch; in L2 where the partials fit (four fifths of `l2Bytes`).
double splitSumMs(int64_t split, double outBytes, double copyGBs,
                  double l2Bytes);
/// Fills `rank` of every survivor by model time (ties by index).
void rankByModel(std::vector<Static> &st);

/// One candidate's measurement, from its kb-run report.
struct Measured {
  std::string status; // ok, wrong, error, inaccurate
  double medianMs = 0, minMs = 0, maxMs = 0;
  int runs = 0;
  double relError = -1; // the largest relative error kb-run's checks saw
  std::string bound, cause, lever, text;
  std::vector<std::string> levers;
  std::string message;
  /// The noise of the median: how far another process measuring the same
  /// bundle may put it. From the runs, the fastest run's distance below the
  /// median over the square root of the runs (a standard error's scaling;
  /// a run can only be made slower by what else the machine does, so the
  /// slowest says nothing), and at least 0.5% of the median: on the H200
  /// the medians of 12 programs' candidates measured a day apart, in other
  /// processes, agreed within 0.08-0.37% (the median over each program's
  /// candidates; 2026-12-01 runs against 2026-12-02-tune5), while median -
  /// min alone was 0.3-3.2% of the median. With median - min as the noise,
  /// a 30 us candidate 5% slower than the fastest tied with it and, first
  /// in table order, won (odd 1023x1025x1027; skinny 64x8192x2048). Two
  /// candidates whose medians are within the smaller noise of the two are
  /// a tie.
  double noiseMs() const {
    double tail = std::max(0.0, medianMs - minMs);
    return std::max(tail / std::sqrt(double(std::max(runs, 1))),
                    0.005 * medianMs);
  }
};
json toJson(const Measured &m);
Measured measuredFromJson(const json &j);
/// Reads one kb-run report. With maxRelError >= 0 a candidate whose checks
/// saw a larger relative error is "inaccurate" (not a choice).
Measured parseReport(const json &report, double maxRelError);
/// The reports of a kb-run --json output: a multi-bundle object
/// ({"reports": [...]}), a list, or one report.
std::vector<json> reportsOf(const json &output);
/// kb-run's results as text: one JSON value (reportsOf's forms), or JSON
/// lines (kb-run --jsonl-out: one report a line), returned as
/// {"reports": [...]}. A last line cut short (the batch killed while
/// writing it) is dropped; a bad line before the last throws.
json parseResults(const std::string &text);

/// A tuning session: the space, what was compiled and measured, the rounds.
struct Entry {
  std::string id; // c0000, ...
  Candidate cand;
  Static st;
  std::optional<Measured> meas;
  int round = -1;  // the round it was measured in
  std::string key; // its tuning-database key
};
struct Plan {
  std::string program, mode = "guided";
  Facts facts;
  Calibration cal;
  int budget = 0; // candidates to time (guided, random)
  uint64_t seed = 1;
  double maxRelError = -1;
  std::vector<Entry> entries;
  std::vector<std::vector<int>> rounds;
  bool done = false;
  double compileSeconds = 0;
  std::string space;
  /// Where an exhaustive result is known (a database entry over the same
  /// space, or a replay's measurements): its best median.
  double exhaustiveBestMs = 0;
  std::string exhaustiveSource;
  /// Seconds since the epoch when the session started and when it last
  /// changed: wall time is their difference.
  double startedAt = 0, updatedAt = 0;
  /// kb's own choice (the program compiled without a hand-set config,
  /// bundle DIR/default), when it was measured: its median.
  double defaultMs = 0;
  /// kb's own config of the tuned kernel (DIR/default's manifest), where
  /// known: guided's first round breaks the model's ties towards it.
  std::string defaultConfig;
};
json toJson(const Plan &p);

/// The fields of a `#kb.config<...>` text, by name ("" when it is not one).
/// Every field as written, to compare with a candidate's by name; kb-run's
/// kb::runtime::parseConfigText reads the few typed fields its diagnosis
/// needs (and TuneCore links nothing but JSON).
std::map<std::string, std::string> configFields(const std::string &text);
/// How many of `c`'s set fields differ from the config `fields` (a field
/// the config lacks differs, except split = 1, which is no split).
int distanceTo(const Candidate &c,
               const std::map<std::string, std::string> &fields);
Plan planFromJson(const json &j);

std::vector<int> survivors(const Plan &p);
/// The default budget: a tenth of the survivors (rounded down), at least 1 (all
/// of them for exhaustive).
int defaultBudget(const Plan &p);
/// The first round of `p.mode`: every survivor (exhaustive), a seeded
/// sample of `budget` (random), the model's best half-budget (guided; where
/// the model times candidates alike, spread farthest first over them, then
/// nearest kb's own config, `Plan::defaultConfig`).
std::vector<int> firstBatch(const Plan &p);
/// The next round, given what was measured; empty when the search is done.
/// Guided: in a round of two or more, first the best's nearest untried
/// neighbour (one field changed); then the neighbours of the best so far
/// that its diagnosis levers point to (split_k, fewer_splits,
/// smaller_tiles / larger_tiles, mma_unit, fewer_stages / more_stages,
/// vector_width), nearest first; then its neighbours within two fields;
/// then the model's rank.
std::vector<int> nextBatch(const Plan &p);
/// Whether moving from `from` to `to` follows `lever`.
bool followsLever(const std::string &lever, const Candidate &from,
                  const Candidate &to);
/// Fields in which two candidates differ.
int distance(const Candidate &a, const Candidate &b);

/// The best measured candidate by the tie rule: the lowest median; medians
/// within the smaller noise of the two are a tie, won by the candidate
/// first in table order. -1 when none is measured ok. `ties` gets the
/// candidates tied with the winner.
int bestIndex(const Plan &p, std::vector<int> *ties = nullptr);

/// The tuning database: {"kind": "kb-tuning-db", "schema": 1, "entries":
/// [...]}, one entry per key.
json emptyDb();
/// Reads a database (an absent file is an empty one). Throws
/// std::runtime_error for a file that is not one.
json loadDb(const std::string &path);
/// The entry for the winner of `p`: key, config, timings and spread, ties.
json dbEntry(const Plan &p, int best, const std::vector<int> &ties,
             const std::string &chipName);
/// The model's pick, for a user without a GPU (`compile --pick-model`):
/// the surviving candidate of the program's own precision that the model
/// ranks first (an accuracy budget needs a measurement), or -1.
int modelPick(const Plan &p);
/// The database entry of the model's pick `pick`: mode "model", the
/// model's time, nothing measured.
json dbModelEntry(const Plan &p, int pick);
/// Puts `entry` in `db`, replacing only the entry with the same key.
void mergeDb(json &db, const json &entry);
const json *findDb(const json &db, const std::string &key);

/// A one-line summary of a session and its table (text).
std::string summaryText(const Plan &p);
json summaryJson(const Plan &p);

/// Replays a search over measurements already made (an exhaustive batch):
/// the mode only sees the candidates it chooses. Returns the summary of
/// the replay and its best-so-far curve.
json replay(const Plan &measured, const std::string &mode, int budget,
            uint64_t seed);

} // namespace kbtune

#endif
