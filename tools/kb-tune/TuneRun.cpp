//===- TuneRun.cpp - kb-tune's kb-run, ingest and outcome -----------------===//
//
// The messages and files kb-tune reads and writes, kb-run run on a batch
// (its stderr kept aside), the ingest of its reports into the plan and
// the database, and the outcome printed.
//
//===----------------------------------------------------------------------===//

#include "KbTune.h"


#include "kb/Conversion/Passes.h"
#include "kb/Dialect/KB/IR/KBDialect.h"
#include "kb/Runtime/Occupancy.h"
#include "kb/Transforms/Passes.h"
#include "kb/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace mlir;
using namespace kbtune;
namespace fs = std::filesystem;

namespace kbtune {


double now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void die(const std::string &msg, int code) {
  std::cerr << "kb-tune: " << oneLineError(msg) << "\n";
  std::exit(code);
}

/// Dies, naming the file, unless `path` is a regular file (or absent).
void requireRegularFile(const std::string &path, const std::string &what) {
  try {
    checkRegularFile(path, what);
  } catch (const std::exception &e) {
    die(e.what());
  }
}

json readJson(const std::string &path) {
  requireRegularFile(path, "input");
  std::ifstream in(path);
  if (!in)
    die("cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const std::exception &e) {
    die("'" + path + "' is not JSON: " + e.what());
  }
}

/// kb-run's results: one JSON value or JSON lines (--jsonl-out).
json readResults(const std::string &path) {
  requireRegularFile(path, "results");
  std::ifstream in(path);
  if (!in)
    die("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parseResults(text.str());
  } catch (const std::exception &e) {
    die("'" + path + "': " + e.what());
  }
}

void writeJson(const std::string &path, const json &j) {
  std::ofstream out(path);
  out << j.dump(1) << "\n";
  if (!out)
    die("cannot write '" + path + "'");
}

void printOutcome(const Options &o, const Plan &p) {
  if (o.json)
    std::cout << summaryJson(p).dump(1) << "\n";
  else
    std::cout << summaryText(p);
}

/// Records `output` (kb-run's JSON) for the current round; then the next
/// round's batch or, when the search is done, the choice (and the database
/// entry).
/// The candidate (its folder's name: c0042, default) kb-run report `rep`,
/// the j-th of n, measured: the last component of its `bundle`, or, for
/// reports that name no bundle, `order[j]` when there is one report per
/// entry of the batch's order.
std::string candidateIdOf(const json &rep, size_t j, size_t n,
                          const std::vector<std::string> &order) {
  std::string bundle = rep.is_object() ? rep.value("bundle", "") : "";
  while (!bundle.empty() && bundle.back() == '/')
    bundle.pop_back();
  if (bundle.empty())
    return n == order.size() ? order[j] : "";
  return fs::path(bundle).filename().string();
}

void ingest(const Options &o, const std::string &dir, Plan &p,
            const json &output) {
  if (p.rounds.empty() || p.done)
    die("'" + dir + "' has no batch waiting for results");
  const std::vector<int> &batch = p.rounds.back();
  int r = int(p.rounds.size()) - 1;
  std::vector<json> reports = reportsOf(output);
  std::string device = o.device;
  int matched = 0;
  // The batch in batch.txt's order, for reports that name no bundle.
  std::vector<std::string> order;
  if (r == 0 && fs::exists(dir + "/default"))
    order.push_back("default");
  for (int i : batch)
    order.push_back(p.entries[i].id);
  for (size_t j = 0; j < reports.size(); ++j) {
    const json &rep = reports[j];
    int idx = -1;
    std::string id = candidateIdOf(rep, j, reports.size(), order);
    if (id == "default") {
      Measured d = parseReport(rep, -1);
      if (d.status == "ok")
        p.defaultMs = d.medianMs;
      continue;
    }
    for (int i : batch)
      if (p.entries[i].id == id)
        idx = i;
    if (idx < 0)
      continue;
    p.entries[idx].meas = parseReport(rep, p.maxRelError);
    p.entries[idx].round = r;
    ++matched;
    if (device.empty() && rep.is_object() && rep.contains("device") &&
        rep["device"].is_object())
      device = rep["device"].value("name", "");
  }
  if (matched == 0)
    die("no report in the results names a bundle of this batch (" +
        std::to_string(batch.size()) + " bundles: " + dir + "/batch.txt)");
  for (int i : batch)
    if (!p.entries[i].meas) {
      Measured m;
      m.status = "not_measured";
      m.message = "no report for this bundle (the batch stopped before it)";
      p.entries[i].meas = m;
      p.entries[i].round = r;
    }
  p.updatedAt = now();
  std::vector<int> next = nextBatch(p);
  if (!next.empty()) {
    p.rounds.push_back(next);
    writeBatch(dir, p, next);
    writeJson(dir + "/plan.json", toJson(p));
    if (!o.quiet)
      std::cerr << "kb-tune: round " << p.rounds.size() - 1 << ": "
                << next.size() << " candidates in " << dir
                << "/batch.txt; measure with: kb-run --json --no-baselines "
                   "$(cat "
                << dir << "/batch.txt) > results.json; then: kb-tune ingest "
                << dir << " results.json\n";
    return;
  }
  p.done = true;
  writeBatch(dir, p, {});
  std::vector<int> ties;
  int best = bestIndex(p, &ties);
  if (p.mode == "exhaustive" && best >= 0) {
    p.exhaustiveBestMs = p.entries[best].meas->medianMs;
    p.exhaustiveSource = "this run";
  }
  json result = summaryJson(p);
  if (best >= 0) {
    result["key"] = p.entries[best].key;
    if (p.entries[best].cand.precision != p.facts.precision)
      result["precision_changed"] = {
          {"from", p.facts.precision},
          {"to", p.entries[best].cand.precision},
          {"rel_error", p.entries[best].meas->relError},
          {"max_rel_error", p.maxRelError}};
    if (!o.db.empty()) {
      try {
        json db = loadDb(o.db);
        json entry = dbEntry(p, best, ties, device.empty() ? "?" : device);
        const json *old = findDb(db, entry["key"]);
        if (old && old->value("mode", "") == "exhaustive" &&
            p.mode != "exhaustive" && old->value("space", "") == p.space)
          std::cerr << "kb-tune: the database keeps its exhaustive entry for "
                    << entry["key"].get<std::string>() << "\n";
        else {
          mergeDb(db, entry);
          writeJson(o.db, db);
        }
      } catch (const std::exception &e) {
        die(e.what());
      }
    }
  }
  writeJson(dir + "/result.json", result);
  writeJson(dir + "/plan.json", toJson(p));
}

Plan loadPlan(const std::string &dir) {
  json j = readJson(dir + "/plan.json");
  try {
    return planFromJson(j);
  } catch (const std::exception &e) {
    die("'" + dir + "/plan.json': " + e.what());
  }
}

void checkMode(const std::string &mode) {
  if (mode != "exhaustive" && mode != "random" && mode != "guided")
    die("--mode must be exhaustive, random or guided, got '" + mode + "'");
}

/// Runs kb-run on `dirs`; its JSON output, or exits when there is no GPU.
json runKbRun(const Options &o, const std::vector<std::string> &dirs,
              const std::string &planDir, bool noBaselines) {
  std::string cmd =
      o.kbRun + " --json --quiet" + (noBaselines ? " --no-baselines" : "") +
      (o.profile ? " --profile" : "");
  for (const std::string &d : dirs)
    cmd += " '" + d + "'";
  // kb-run's stderr is kept aside: without a GPU a batch says so once per
  // bundle there, and kb-tune says it once below instead.
  std::string errPath = planDir + "/kb-run.stderr";
  cmd += " 2>'" + errPath + "'";
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe)
    die("cannot run '" + o.kbRun + "'");
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    out.append(buf, n);
  pclose(pipe);
  std::string err;
  {
    std::ifstream in(errPath);
    std::stringstream text;
    text << in.rdbuf();
    err = text.str();
  }
  std::error_code ec;
  fs::remove(errPath, ec);
  json j;
  try {
    j = json::parse(out);
  } catch (...) {
    std::cerr << err;
    die("kb-run printed no JSON (" + o.kbRun + ")");
  }
  // A kb-run that knows no --no-baselines (nor several bundles): one
  // bundle per process, with its baselines.
  if (noBaselines && j.is_object() && j.value("error", "") == "usage") {
    json reports = json::array();
    for (const std::string &d : dirs)
      reports.push_back(runKbRun(o, {d}, planDir, false));
    return {{"schema", 1}, {"reports", reports}};
  }
  // No GPU: kb-run says so at the top, or (a batch) in its reports.
  json noGpu = j;
  if (j.is_object() && j.contains("reports") && j["reports"].is_array())
    for (const json &r : j["reports"])
      if (r.is_object() && r.value("error", "") == "no_gpu")
        noGpu = r;
  bool gpuMissing = noGpu.is_object() && noGpu.value("error", "") == "no_gpu";
  if (!gpuMissing)
    std::cerr << err;
  if (gpuMissing)
    die("no GPU here (kb-run: " + noGpu.value("message", "") +
            "). The candidates are compiled in " + planDir +
            ": measure them where the GPU is with `kb-run --json "
            "--no-baselines $(cat " +
            planDir + "/batch.txt) > results.json`, then `kb-tune ingest " +
            planDir + " results.json`",
        2);
  if (dirs.size() > 1 && !(j.is_object() && j.contains("reports"))) {
    // A kb-run that measures one bundle per process.
    json reports = json::array();
    for (const std::string &d : dirs)
      reports.push_back(runKbRun(o, {d}, planDir, noBaselines));
    return {{"schema", 1}, {"reports", reports}};
  }
  return j;
}

/// compile --pick-model: the model's pick into the database `o.db`, for a
/// user without a GPU; a measured entry for the same key is kept.
void writeModelPick(const Options &o, const Plan &p) {
  int pick = modelPick(p);
  if (pick < 0)
    die("--pick-model: no surviving candidate of the program's precision (" +
        p.facts.precision + ") to pick");
  try {
    json db = loadDb(o.db);
    json entry = dbModelEntry(p, pick);
    std::string key = entry["key"];
    const json *old = findDb(db, key);
    if (old && old->value("mode", "model") != "model") {
      std::cerr << "kb-tune: the database keeps its measured ("
                << old->value("mode", "") << ") entry for " << key << "\n";
      return;
    }
    mergeDb(db, entry);
    writeJson(o.db, db);
    if (!o.quiet)
      std::cerr << "kb-tune: the model's pick " << p.entries[pick].id << " "
                << p.entries[pick].cand.config() << " (model "
                << p.entries[pick].st.modelMs << " ms, not measured) is in "
                << o.db << " for " << key << "\n";
  } catch (const std::exception &e) {
    die(e.what());
  }
}

std::string defaultKbRun(const char *argv0) {
  fs::path self = fs::absolute(argv0).parent_path() / "kb-run";
  return fs::exists(self) ? self.string() : "kb-run";
}

} // namespace kbtune
