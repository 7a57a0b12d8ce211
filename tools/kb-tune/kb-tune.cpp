//===- kb-tune.cpp - search kb's config space, measured by kb-run ---------===//
//
// kb-tune compiles candidate #kb.configs of one kernel of a kb program
// through kb's own pipeline (kb-compile, in process), prunes and ranks them
// without a GPU (the passes' refusals, ptxas -v, occupancy, tensor-core
// instructions, a roofline model), and has kb-run measure the survivors:
// all of them (exhaustive), a random sample, or rounds steered by the
// diagnosis lever of kb-run's reports (guided). Split across machines:
// `compile` writes a batch, kb-run measures it where the GPU is, `ingest`
// reads the results and writes the next batch or the choice; `tune` does
// the loop on one machine. docs/kb-tune.md.
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

static int tuneMain(int argc, char **argv) {
  mlir::kb::registerKBCompilePipeline();
  CLI::App app{"kb-tune: search kb's #kb.config space of a kernel, measured "
               "by kb-run (docs/kb-tune.md)"};
  app.set_version_flag("--version",
                       std::string("kb-tune ") + KB_VERSION_STRING);
  app.require_subcommand(1);
  Options o;
  auto common = [&](CLI::App *c) {
    c->add_option("--chip", o.chip, "Target chip (sm_90a, sm_90, sm_80)")
        ->capture_default_str();
    c->add_option("--kernel", o.kernel,
                  "Which kernel of the program to tune (index among its "
                  "kernels after fusion; default: the first matmul or "
                  "softmax, else the last)");
    c->add_option("--max-rel-error", o.maxRelError,
                  "Accuracy budget: a matmul may use ieee, tf32 or tf32x3 "
                  "where kb-run's checks measure at most this relative "
                  "error (default: keep the program's precision)");
    c->add_flag("--json", o.json, "Print the summary as JSON");
    c->add_flag("--quiet,-q", o.quiet, "No progress line on stderr");
    c->add_option("--only", o.only,
                  "Keep only the candidates whose #kb.config text matches "
                  "this regular expression");
  };
  auto searchOpts = [&](CLI::App *c) {
    c->add_option("--mode", o.mode, "exhaustive, random or guided")
        ->capture_default_str();
    c->add_option("--budget", o.budget,
                  "Candidates to time (guided, random; default a tenth of "
                  "the survivors, rounded down, at least 1)");
    c->add_option("--seed", o.seed, "Seed of the random mode")
        ->capture_default_str();
    c->add_option("--calibration", o.calibration,
                  "kb-run --calibrate's cache or report: the model's "
                  "ceilings (default: the H200's nominal figures)");
    c->add_option("--db", o.db,
                  "Tuning database: read for an exhaustive result, written "
                  "with the choice");
    c->add_option("--limit", o.limit,
                  "Compile only the first N candidates of the space");
    c->add_flag("--keep-spills", o.keepSpills,
                "Keep candidates whose registers spill");
  };

  auto *space = app.add_subcommand("space", "List the config space of the "
                                            "program's kernel (no compile)");
  space->add_option("program", o.program)->required();
  common(space);

  auto *compile = app.add_subcommand(
      "compile", "Compile the candidates, prune and rank them, write the "
                 "first batch for kb-run");
  compile->add_option("program", o.program)->required();
  compile->add_option("--out", o.out, "Plan folder")->required();
  compile->add_flag("--pick-model", o.pickModel,
                    "Write the model's pick (the survivor it ranks first, "
                    "not measured) to the --db database, for a machine "
                    "without a GPU");
  common(compile);
  searchOpts(compile);

  auto *ingestCmd = app.add_subcommand(
      "ingest", "Read kb-run's results for the batch; write the next batch "
                "or the choice");
  ingestCmd->add_option("dir", o.out)->required();
  ingestCmd->add_option("results", o.results)->required();
  ingestCmd->add_option("--db", o.db, "Tuning database to write the choice to");
  ingestCmd->add_option("--device", o.device,
                        "Device name for the database (default: kb-run's)");
  ingestCmd->add_flag("--json", o.json, "Print the summary as JSON");
  ingestCmd->add_flag("--quiet,-q", o.quiet, "No progress on stderr");

  auto *tune = app.add_subcommand(
      "tune", "compile, then measure with kb-run and ingest until done (one "
              "machine with a GPU)");
  tune->add_option("program", o.program)->required();
  tune->add_option("--out", o.out, "Plan folder (default: kb-tune.<name>)");
  tune->add_option("--kb-run", o.kbRun, "kb-run to measure with");
  tune->add_flag("--profile", o.profile,
                 "Have kb-run add Nsight Compute's counters (DRAM and SM "
                 "throughput, achieved occupancy, tensor-pipe activity) to "
                 "each report, so that the diagnosis steering the next round "
                 "reads them (where ncu is installed; slower)");
  common(tune);
  searchOpts(tune);

  auto *replayCmd = app.add_subcommand(
      "replay", "Replay random and guided search over the measurements of an "
                "exhaustive batch (each mode sees only what it chooses)");
  replayCmd->add_option("dir", o.out, "Plan folder compiled in exhaustive mode")
      ->required();
  replayCmd->add_option("results", o.results, "kb-run's results for it")
      ->required();
  replayCmd->add_option("--budget", o.budget, "Candidates to time");
  replayCmd->add_option("--seed", o.seed, "First seed of the random mode");
  replayCmd->add_option("--seeds", o.seeds, "Random replays (seeds) to run")
      ->capture_default_str();
  replayCmd->add_option("--calibration", o.calibration,
                        "Rank by the model with these ceilings (kb-run "
                        "--calibrate's cache from the GPU run)");

  auto *report = app.add_subcommand("report", "Print a plan's summary");
  report->add_option("dir", o.out)->required();
  report->add_flag("--json", o.json, "As JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }

  if (*space) {
    Program prog = loadProgram(o.program, o.chip, o.kernel, o.maxRelError);
    auto cands = spaceOf(o, prog.facts);
    json list = json::array();
    for (size_t i = 0; i < cands.size(); ++i)
      list.push_back({{"id", idOf(int(i))},
                      {"config", cands[i].config()},
                      {"precision", cands[i].precision}});
    if (o.json)
      std::cout << json({{"facts", toJson(prog.facts)},
                         {"space", spaceId(cands)},
                         {"candidates", list}})
                       .dump(1)
                << "\n";
    else {
      std::cout << "kb-tune: " << familyName(prog.facts.family) << " space, "
                << cands.size() << " candidates (" << spaceId(cands) << ")\n";
      for (size_t i = 0; i < cands.size(); ++i)
        std::cout << idOf(int(i)) << " " << cands[i].config()
                  << (cands[i].precision != "-"
                          ? " precision " + cands[i].precision
                          : "")
                  << "\n";
    }
    return 0;
  }

  if (*compile || *tune) {
    checkMode(o.mode);
    if (o.pickModel && o.db.empty())
      die("--pick-model writes the model's pick to a tuning database: give "
          "--db DB.json");
    if (o.out.empty())
      o.out = "kb-tune." + fs::path(o.program).stem().string();
    Program prog = loadProgram(o.program, o.chip, o.kernel, o.maxRelError);
    Plan p = compileAll(o, prog);
    std::vector<int> batch = firstBatch(p);
    if (batch.empty()) {
      p.done = true;
      writeJson(o.out + "/plan.json", toJson(p));
      printOutcome(o, p);
      die("no candidate survived the static pruning", 1);
    }
    p.rounds.push_back(batch);
    writeBatch(o.out, p, batch);
    writeJson(o.out + "/plan.json", toJson(p));
    if (*compile) {
      if (o.pickModel)
        writeModelPick(o, p);
      printOutcome(o, p);
      if (!o.quiet)
        std::cerr << "kb-tune: " << batch.size() << " candidates in " << o.out
                  << "/batch.txt; measure with: kb-run --json --no-baselines "
                     "$(cat "
                  << o.out
                  << "/batch.txt) > results.json; then: kb-tune "
                     "ingest "
                  << o.out << " results.json\n";
      return 0;
    }
    if (o.kbRun.empty())
      o.kbRun = defaultKbRun(argv[0]);
    while (!p.done) {
      std::vector<std::string> dirs;
      if (p.rounds.size() == 1 && fs::exists(o.out + "/default"))
        dirs.push_back(o.out + "/default");
      for (int i : p.rounds.back())
        dirs.push_back(o.out + "/" + p.entries[i].id);
      if (!o.quiet)
        std::cerr << "kb-tune: round " << p.rounds.size() - 1 << ": timing "
                  << dirs.size() << " candidates\n";
      json out = runKbRun(o, dirs, o.out);
      ingest(o, o.out, p, out);
    }
    printOutcome(o, p);
    return 0;
  }

  if (*ingestCmd) {
    Plan p = loadPlan(o.out);
    ingest(o, o.out, p, readResults(o.results));
    if (p.done)
      printOutcome(o, p);
    else if (o.json)
      std::cout << summaryJson(p).dump(1) << "\n";
    return 0;
  }

  if (*replayCmd) {
    Plan p = loadPlan(o.out);
    if (p.mode != "exhaustive")
      die("replay needs a plan compiled with --mode exhaustive (this one is " +
          p.mode + ")");
    // A plan compiled before plans recorded kb's own config: from its
    // default bundle, where that is still there.
    if (p.defaultConfig.empty())
      p.defaultConfig = tunedKernelConfig(o.out + "/default", p.facts.family);
    // The model again (this kb-tune's), from the stored static facts: with
    // the ceilings measured on the GPU (--calibration), or the plan's.
    if (!o.calibration.empty()) {
      try {
        p.cal = loadCalibration(o.calibration);
      } catch (const std::exception &e) {
        die(e.what());
      }
    }
    std::vector<Static> st;
    for (Entry &e : p.entries) {
      if (e.st.compiled && e.st.pruned.empty())
        e.st.modelMs = modelTime(p.facts, e.cand, e.st, p.cal);
      st.push_back(e.st);
    }
    rankByModel(st);
    for (size_t i = 0; i < st.size(); ++i)
      p.entries[i].st.rank = st[i].rank;
    // Record every measurement, as ingest would, without the rounds.
    p.rounds = {survivors(p)};
    p.done = false;
    Options quiet = o;
    quiet.quiet = true;
    quiet.db.clear();
    std::vector<json> reports = reportsOf(readResults(o.results));
    // The order the reports were measured in, for reports naming no bundle:
    // the plan's batch.txt (gpu-tune.sh measures in its order), else
    // default/ and then the survivors in table order (plans before
    // 2026-12-03, whose batch.txt was in that order too).
    std::vector<std::string> order;
    std::ifstream batchList(o.out + "/batch.txt");
    for (std::string line; std::getline(batchList, line);) {
      while (!line.empty() && line.back() == '/')
        line.pop_back();
      if (!line.empty())
        order.push_back(fs::path(line).filename().string());
    }
    if (order.empty()) {
      order = {"default"};
      for (int i : survivors(p))
        order.push_back(p.entries[i].id);
    }
    for (size_t j = 0; j < reports.size(); ++j) {
      const json &rep = reports[j];
      std::string id = candidateIdOf(rep, j, reports.size(), order);
      if (id == "default" && parseReport(rep, -1).status == "ok")
        p.defaultMs = parseReport(rep, -1).medianMs;
      for (Entry &e : p.entries)
        if (e.id == id)
          e.meas = parseReport(rep, p.maxRelError);
    }
    json out = {{"program", p.program},
                {"family", familyName(p.facts.family)},
                {"facts", toJson(p.facts)},
                {"space", p.space},
                {"simulated", true},
                {"default_ms", p.defaultMs},
                {"calibration", p.cal.source},
                {"exhaustive", replay(p, "exhaustive", 0, 0)}};
    // The model's order against the measurements (how well it ranks).
    json ranked = json::array();
    std::vector<int> byModel = survivors(p);
    std::stable_sort(byModel.begin(), byModel.end(), [&](int a, int b) {
      return p.entries[a].st.rank < p.entries[b].st.rank;
    });
    for (int i : byModel) {
      const Entry &e = p.entries[i];
      json r = {{"id", e.id},
                {"config", e.cand.config()},
                {"model_ms", e.st.modelMs}};
      if (e.meas && e.meas->status == "ok")
        r["median_ms"] = e.meas->medianMs;
      ranked.push_back(r);
    }
    out["model_order"] = ranked;
    out["guided"] = replay(p, "guided", o.budget, 0);
    int budget = out["guided"]["candidates_timed"];
    json randoms = json::array();
    for (int s = 0; s < std::max(1, o.seeds); ++s)
      randoms.push_back(replay(p, "random", budget, o.seed + s));
    out["random"] = randoms;
    std::cout << out.dump(1) << "\n";
    return 0;
  }

  if (*report) {
    Plan p = loadPlan(o.out);
    printOutcome(o, p);
    return 0;
  }
  return 0;
}

int main(int argc, char **argv) {
  // An exception no step caught (a plan or report field of the wrong JSON
  // type) is one line, not std::terminate's abort.
  try {
    return tuneMain(argc, argv);
  } catch (const std::exception &e) {
    die(e.what());
  }
}
