//===- TuneSummary.cpp - kb-tune's summaries and replay -------------------===//
//
// A session's summary (text and JSON) and the replay of random and guided
// search over an exhaustive batch (see TuneCore.h).
//
//===----------------------------------------------------------------------===//

#include "TuneCore.h"
#include "TuneInternal.h"

#include "kb/Transforms/SplitChunks.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kbtune {

// --- Summaries --------------------------------------------------------------

json summaryJson(const Plan &p) {
  int compiled = 0, pruned = 0, timed = 0, notMeasured = 0;
  std::map<std::string, int> reasons;
  for (const Entry &e : p.entries) {
    compiled += 1;
    if (!e.st.pruned.empty()) {
      ++pruned;
      reasons[e.st.pruned.substr(0, 160)]++;
    }
    bool missing = e.meas && e.meas->status == "not_measured";
    timed += e.meas.has_value() && !missing;
    notMeasured += missing;
  }
  std::vector<int> ties;
  int best = bestIndex(p, &ties);
  json j = {{"program", p.program},
            {"family", familyName(p.facts.family)},
            {"mode", p.mode},
            {"space", p.space},
            {"candidates_compiled", compiled},
            {"candidates_pruned", pruned},
            {"candidates_timed", timed},
            {"candidates_not_measured", notMeasured},
            {"rounds", int(p.rounds.size())},
            {"done", p.done},
            {"budget", p.budget},
            {"compile_seconds", p.compileSeconds},
            {"wall_seconds", p.updatedAt - p.startedAt},
            {"prune_reasons", reasons}};
  if (best >= 0) {
    const Entry &e = p.entries[best];
    j["best"] = {{"id", e.id},
                 {"config", e.cand.config()},
                 {"precision", e.cand.precision},
                 {"median_ms", e.meas->medianMs},
                 {"noise_ms", e.meas->noiseMs()},
                 {"ties", int(ties.size())}};
    if (p.defaultMs > 0) {
      j["default_ms"] = p.defaultMs;
      j["speedup_over_default"] = p.defaultMs / e.meas->medianMs;
    }
    if (p.exhaustiveBestMs > 0) {
      j["exhaustive_best_ms"] = p.exhaustiveBestMs;
      j["exhaustive_source"] = p.exhaustiveSource;
      j["gap_to_exhaustive"] = e.meas->medianMs / p.exhaustiveBestMs - 1;
    }
  }
  return j;
}

std::string summaryText(const Plan &p) {
  json s = summaryJson(p);
  std::ostringstream os;
  char buf[512];
  os << "kb-tune: " << p.program << " (" << familyName(p.facts.family);
  if (p.facts.family == Family::Matmul)
    os << " b" << p.facts.batch << " " << p.facts.m << "x" << p.facts.n << "x"
       << p.facts.k << " " << p.facts.precision;
  else
    os << " " << p.facts.rows << "x" << p.facts.cols;
  os << ", " << p.facts.chip << "), mode " << p.mode << "\n";
  std::snprintf(buf, sizeof buf,
                "  compiled %d, pruned %d, timed %d in %d round(s); compile "
                "%.1f s, wall %.1f s\n",
                s["candidates_compiled"].get<int>(),
                s["candidates_pruned"].get<int>(),
                s["candidates_timed"].get<int>(), s["rounds"].get<int>(),
                p.compileSeconds, p.updatedAt - p.startedAt);
  os << buf;
  if (int n = s["candidates_not_measured"].get<int>())
    os << "  not measured " << n
       << ": no report for them (the batch stopped before them)\n";
  for (auto &[reason, n] : s["prune_reasons"].items())
    os << "  pruned " << n.get<int>() << "x: " << reason << "\n";
  if (s.contains("best")) {
    std::snprintf(buf, sizeof buf, "  best %s %.4f ms (noise %.4f, %d tied) ",
                  s["best"]["id"].get<std::string>().c_str(),
                  s["best"]["median_ms"].get<double>(),
                  s["best"]["noise_ms"].get<double>(),
                  s["best"]["ties"].get<int>());
    os << buf << s["best"]["config"].get<std::string>();
    if (s["best"]["precision"] != "-")
      os << " precision " << s["best"]["precision"].get<std::string>();
    os << "\n";
    if (s.contains("default_ms")) {
      std::snprintf(buf, sizeof buf, "  kb's default %.4f ms: tuned %.3fx\n",
                    s["default_ms"].get<double>(),
                    s["speedup_over_default"].get<double>());
      os << buf;
    }
    if (s.contains("gap_to_exhaustive")) {
      std::snprintf(buf, sizeof buf,
                    "  exhaustive best %.4f ms (%s): gap %+.1f%%\n",
                    s["exhaustive_best_ms"].get<double>(),
                    s["exhaustive_source"].get<std::string>().c_str(),
                    100 * s["gap_to_exhaustive"].get<double>());
      os << buf;
    } else {
      os << "  no exhaustive result known for this space\n";
    }
  } else if (s["candidates_timed"].get<int>() > 0) {
    os << "  no candidate measured ok\n";
  }
  os << "  rank  id     model_ms   median_ms  status      config\n";
  std::vector<int> order = byRank(p);
  for (int i = 0; i < int(p.entries.size()); ++i)
    if (p.entries[i].meas && p.entries[i].st.rank < 0)
      order.push_back(i);
  for (int i : order) {
    const Entry &e = p.entries[i];
    if (!e.meas && e.st.rank >= 10)
      continue; // the model's top 10 and everything measured
    std::snprintf(buf, sizeof buf, "  %4d  %s  %9.4f  %10s  %-10s  ", e.st.rank,
                  e.id.c_str(), e.st.modelMs,
                  e.meas && e.meas->status == "ok"
                      ? std::to_string(e.meas->medianMs).substr(0, 8).c_str()
                      : "-",
                  e.meas ? e.meas->status.c_str() : "");
    os << buf << e.cand.config() << "\n";
  }
  return os.str();
}

// --- Replay -------------------------------------------------------------

json replay(const Plan &measured, const std::string &mode, int budget,
            uint64_t seed) {
  Plan p = measured;
  p.mode = mode;
  p.seed = seed;
  p.rounds.clear();
  p.done = false;
  std::vector<std::optional<Measured>> oracle;
  for (Entry &e : p.entries) {
    oracle.push_back(e.meas);
    e.meas.reset();
    e.round = -1;
  }
  p.budget = budget > 0 ? budget : defaultBudget(p);
  json curve = json::array();
  int timed = 0, notMeasured = 0;
  double gpuMs = 0;
  std::vector<int> batch = firstBatch(p);
  while (!batch.empty()) {
    int r = int(p.rounds.size());
    p.rounds.push_back(batch);
    for (int i : batch) {
      Entry &e = p.entries[i];
      if (oracle[i])
        e.meas = oracle[i];
      else {
        e.meas = Measured();
        e.meas->status = "not_measured";
        e.meas->message = "not measured in the exhaustive run";
      }
      notMeasured += e.meas->status == "not_measured";
      e.round = r;
      ++timed;
      if (e.meas->status == "ok")
        gpuMs += e.meas->medianMs * e.meas->runs;
      int b = bestIndex(p);
      curve.push_back({timed, b >= 0 ? p.entries[b].meas->medianMs : 0.0});
    }
    batch = nextBatch(p);
  }
  Plan full = measured;
  int ex = bestIndex(full);
  int b = bestIndex(p);
  json j = {{"mode", mode},
            {"budget", p.budget},
            {"seed", seed},
            {"candidates_compiled", int(p.entries.size())},
            {"candidates_survived", int(survivors(p).size())},
            {"candidates_timed", timed},
            {"candidates_not_measured", notMeasured},
            {"rounds", int(p.rounds.size())},
            {"timed_gpu_ms", gpuMs},
            {"curve", curve}};
  if (b >= 0) {
    j["best_id"] = p.entries[b].id;
    j["best_ms"] = p.entries[b].meas->medianMs;
    j["best_config"] = p.entries[b].cand.config();
  }
  if (ex >= 0) {
    // The gap is to the fastest median measured, not to the exhaustive
    // choice (the tie rule's winner, which may be a little slower than a
    // candidate it tied with): a mode's gap is never negative.
    double fastest = std::numeric_limits<double>::infinity();
    for (const Entry &e : full.entries)
      if (e.meas && e.meas->status == "ok")
        fastest = std::min(fastest, e.meas->medianMs);
    j["exhaustive_best_id"] = full.entries[ex].id;
    j["exhaustive_best_ms"] = full.entries[ex].meas->medianMs;
    j["exhaustive_fastest_ms"] = fastest;
    if (b >= 0)
      j["gap_to_exhaustive"] = p.entries[b].meas->medianMs / fastest - 1;
  }
  return j;
}

} // namespace kbtune
