//===- TuneSearch.cpp - kb-tune's measurements, plan and search -----------===//
//
// kb-run's reports read as measurements, the plan (its JSON form) and the
// three search modes: batches, the tie rule, the best (see TuneCore.h).
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

// --- Measurements ---------------------------------------------------------

json toJson(const Measured &m) {
  json j = {{"status", m.status}, {"median_ms", m.medianMs},
            {"min_ms", m.minMs},  {"max_ms", m.maxMs},
            {"runs", m.runs},     {"rel_error", m.relError},
            {"bound", m.bound},   {"cause", m.cause},
            {"lever", m.lever},   {"levers", m.levers},
            {"text", m.text},     {"message", m.message}};
  return j;
}

Measured measuredFromJson(const json &j) {
  Measured m;
  m.status = j.value("status", "error");
  m.medianMs = j.value("median_ms", 0.0);
  m.minMs = j.value("min_ms", 0.0);
  m.maxMs = j.value("max_ms", 0.0);
  m.runs = j.value("runs", 0);
  m.relError = j.value("rel_error", -1.0);
  m.bound = j.value("bound", "");
  m.cause = j.value("cause", "");
  m.lever = j.value("lever", "");
  m.levers = j.value("levers", std::vector<std::string>{});
  m.text = j.value("text", "");
  m.message = j.value("message", "");
  return m;
}

Measured parseReport(const json &r, double maxRelError) {
  Measured m;
  if (!r.is_object()) {
    m.status = "error";
    m.message = "not a kb-run report";
    return m;
  }
  std::string status = r.value("status", "error");
  if (r.contains("checks") && r["checks"].is_array())
    for (const json &c : r["checks"]) {
      double e = -1;
      if (c.contains("float64_relative_error") &&
          c["float64_relative_error"].is_number())
        e = c["float64_relative_error"];
      else if (c.contains("max_rel_error") && c["max_rel_error"].is_number())
        e = c["max_rel_error"];
      m.relError = std::max(m.relError, e);
    }
  if (r.contains("diagnosis") && r["diagnosis"].is_object()) {
    const json &d = r["diagnosis"];
    m.bound = d.value("bound", "");
    m.cause = d.value("cause", "");
    m.lever = d.value("lever", "");
    if (d.contains("levers") && d["levers"].is_array())
      for (const json &l : d["levers"])
        if (l.is_string())
          m.levers.push_back(l);
    m.text = d.value("text", "");
  }
  if (status == "ok" && r.contains("time") && r["time"].is_object()) {
    const json &t = r["time"];
    m.status = "ok";
    m.medianMs = t.value("median_ms", 0.0);
    m.minMs = t.value("min_ms", m.medianMs);
    m.maxMs = t.value("max_ms", m.medianMs);
    m.runs = t.value("runs", 0);
    if (maxRelError >= 0 && m.relError > maxRelError) {
      m.status = "inaccurate";
      m.message = "relative error " + std::to_string(m.relError) +
                  " over the budget " + std::to_string(maxRelError);
    }
  } else if (status == "wrong") {
    m.status = "wrong";
    m.message = "a kernel failed its check";
  } else {
    m.status = "error";
    m.message = r.value("message", status == "ok" ? "no time in the report"
                                                  : "kb-run error");
  }
  return m;
}

std::vector<json> reportsOf(const json &output) {
  if (output.is_object() && output.contains("reports") &&
      output["reports"].is_array())
    return output["reports"].get<std::vector<json>>();
  if (output.is_array())
    return output.get<std::vector<json>>();
  return {output};
}

json parseResults(const std::string &text) {
  json whole = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded())
    return whole;
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      lines.push_back(line);
  json reports = json::array();
  for (size_t i = 0; i < lines.size(); ++i) {
    json r = json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    if (r.is_discarded()) {
      if (i + 1 == lines.size())
        break; // cut short by a kill
      throw std::runtime_error("line " + std::to_string(i + 1) +
                               " is not JSON (neither one JSON value nor "
                               "JSON lines)");
    }
    reports.push_back(r);
  }
  if (reports.empty())
    throw std::runtime_error("no JSON value and no JSON line in it");
  return {{"schema", 1}, {"reports", reports}};
}

// --- The plan ---------------------------------------------------------------

json toJson(const Plan &p) {
  json entries = json::array();
  for (const Entry &e : p.entries) {
    json c = {{"id", e.id},
              {"config", e.cand.config()},
              {"fields", e.cand.fields},
              {"precision", e.cand.precision},
              {"static", toJson(e.st)},
              {"round", e.round},
              {"key", e.key}};
    if (e.meas)
      c["measured"] = toJson(*e.meas);
    entries.push_back(c);
  }
  json cal = {{"copy_bandwidth_gbs", p.cal.copyGBs},
              {"cublas_fp32_tflops", p.cal.fp32Tflops},
              {"cublas_tf32_tflops", p.cal.tf32Tflops},
              {"mma_sync_fraction", p.cal.mmaSyncFraction},
              {"sms", p.cal.sms},
              {"l2_bytes", p.cal.l2Bytes},
              {"source", p.cal.source}};
  return {{"kind", "kb-tune-plan"},
          {"schema", 1},
          {"program", p.program},
          {"mode", p.mode},
          {"facts", toJson(p.facts)},
          {"calibration", cal},
          {"budget", p.budget},
          {"seed", p.seed},
          {"max_rel_error", p.maxRelError},
          {"rounds", p.rounds},
          {"done", p.done},
          {"compile_seconds", p.compileSeconds},
          {"space", p.space},
          {"exhaustive_best_ms", p.exhaustiveBestMs},
          {"exhaustive_source", p.exhaustiveSource},
          {"started_at", p.startedAt},
          {"updated_at", p.updatedAt},
          {"default_ms", p.defaultMs},
          {"default_config", p.defaultConfig},
          {"candidates", entries}};
}

Plan planFromJson(const json &j) {
  if (j.value("kind", "") != "kb-tune-plan")
    throw std::runtime_error("not a kb-tune plan (no \"kind\": "
                             "\"kb-tune-plan\")");
  Plan p;
  p.program = j.value("program", "");
  p.mode = j.value("mode", "guided");
  p.facts = factsFromJson(j.at("facts"));
  const json &cal = j.at("calibration");
  p.cal.copyGBs = cal.value("copy_bandwidth_gbs", p.cal.copyGBs);
  p.cal.fp32Tflops = cal.value("cublas_fp32_tflops", p.cal.fp32Tflops);
  p.cal.tf32Tflops = cal.value("cublas_tf32_tflops", p.cal.tf32Tflops);
  p.cal.mmaSyncFraction = cal.value("mma_sync_fraction", p.cal.mmaSyncFraction);
  p.cal.sms = cal.value("sms", p.cal.sms);
  p.cal.l2Bytes = cal.value("l2_bytes", p.cal.l2Bytes);
  p.cal.source = cal.value("source", p.cal.source);
  p.budget = j.value("budget", 0);
  p.seed = j.value("seed", uint64_t(1));
  p.maxRelError = j.value("max_rel_error", -1.0);
  p.rounds = j.value("rounds", std::vector<std::vector<int>>{});
  p.done = j.value("done", false);
  p.compileSeconds = j.value("compile_seconds", 0.0);
  p.space = j.value("space", "");
  p.exhaustiveBestMs = j.value("exhaustive_best_ms", 0.0);
  p.exhaustiveSource = j.value("exhaustive_source", "");
  p.startedAt = j.value("started_at", 0.0);
  p.updatedAt = j.value("updated_at", 0.0);
  p.defaultMs = j.value("default_ms", 0.0);
  p.defaultConfig = j.value("default_config", "");
  for (const json &c : j.at("candidates")) {
    Entry e;
    e.id = c.at("id");
    e.cand.fields =
        c.at("fields").get<std::vector<std::pair<std::string, std::string>>>();
    e.cand.precision = c.value("precision", "-");
    e.st = staticFromJson(c.at("static"));
    e.round = c.value("round", -1);
    e.key = c.value("key", "");
    if (c.contains("measured"))
      e.meas = measuredFromJson(c["measured"]);
    p.entries.push_back(std::move(e));
  }
  return p;
}

std::vector<int> survivors(const Plan &p) {
  std::vector<int> out;
  for (int i = 0; i < int(p.entries.size()); ++i)
    if (p.entries[i].st.compiled && p.entries[i].st.pruned.empty())
      out.push_back(i);
  return out;
}

int defaultBudget(const Plan &p) {
  int n = int(survivors(p).size());
  if (p.mode == "exhaustive")
    return n;
  return std::min(n, std::max(1, n / 10));
}

std::map<std::string, std::string> configFields(const std::string &text) {
  std::map<std::string, std::string> out;
  size_t open = text.find('<'), close = text.rfind('>');
  if (text.rfind("#kb.config<", 0) != 0 || close == std::string::npos)
    return out;
  std::string body = text.substr(open + 1, close - open - 1), item;
  int depth = 0;
  bool quoted = false;
  auto flush = [&] {
    size_t eq = item.find(" = ");
    if (eq != std::string::npos) {
      std::string k = item.substr(0, eq), v = item.substr(eq + 3);
      k.erase(0, k.find_first_not_of(' '));
      out[k] = v;
    }
    item.clear();
  };
  for (char ch : body) {
    if (ch == '"')
      quoted = !quoted;
    else if (!quoted && ch == '[')
      ++depth;
    else if (!quoted && ch == ']')
      --depth;
    if (ch == ',' && depth == 0 && !quoted) {
      flush();
      continue;
    }
    item += ch;
  }
  flush();
  return out;
}

int distanceTo(const Candidate &c,
               const std::map<std::string, std::string> &fields) {
  int d = 0;
  for (const auto &[k, v] : c.fields) {
    if (v.empty())
      continue;
    auto it = fields.find(k);
    std::string have = it == fields.end() ? (k == "split" ? "1" : "") : it->second;
    d += have != v;
  }
  return d;
}

std::vector<int> byRank(const Plan &p) {
  std::vector<int> s = survivors(p);
  std::stable_sort(s.begin(), s.end(), [&](int a, int b) {
    return p.entries[a].st.rank < p.entries[b].st.rank;
  });
  return s;
}

std::vector<int> firstBatch(const Plan &p) {
  std::vector<int> s = survivors(p);
  int budget =
      p.budget > 0 ? std::min<int>(p.budget, s.size()) : defaultBudget(p);
  // Every survivor, the model's most promising first: a measurement cut
  // short by its time (scripts/gpu-tune.sh keeps what ran) then holds the
  // candidates most likely to be the best (2026-12-03: 2048x8192x28672's
  // batch in table order spent its 200 s on 62 candidates, mma.sync first,
  // 2.5x slower than wgmma).
  if (p.mode == "exhaustive")
    return byRank(p);
  if (p.mode == "random") {
    // Fisher-Yates with mt19937_64, whose output the standard fixes.
    std::mt19937_64 rng(p.seed);
    for (int i = int(s.size()) - 1; i > 0; --i)
      std::swap(s[i], s[rng() % uint64_t(i + 1)]);
    s.resize(budget);
    std::sort(s.begin(), s.end());
    return s;
  }
  // The model's best half-budget. Where the model cannot tell candidates
  // apart (its times within 0.5% of the best one left: a tier, e.g. every
  // mma.sync tile at the unit's ceiling, or a raster the model does not
  // see), the samples are spread over the tier: each slot takes the tier's
  // candidate farthest (fewest fields in common) from those already taken,
  // then the one nearest kb's own config (the decision passes know what
  // the model does not), then the model's rank. A tier in table order would
  // spend the half-budget on one corner of it (stages 2, 3, 4 of one tile).
  std::vector<int> open = byRank(p), taken;
  size_t want = std::min<size_t>(open.size(), std::max(1, (budget + 1) / 2));
  std::map<std::string, std::string> kbOwn = configFields(p.defaultConfig);
  // (Until 2026-12-02 a candidate one field from one taken and timed
  // alike waited while others were left; on kb-tune's fresh H200 run that
  // deferred the fifth stage that won both batched programs, 6-7%.)
  while (taken.size() < want) {
    double top = p.entries[open.front()].st.modelMs;
    int pick = -1, pickDist = -1, pickOwn = 0;
    for (int i : open) {
      if (p.entries[i].st.modelMs > top * 1.005 + 1e-12)
        break;
      int d = std::numeric_limits<int>::max();
      for (int t : taken)
        d = std::min(d, distance(p.entries[i].cand, p.entries[t].cand));
      int own = kbOwn.empty() ? 0 : distanceTo(p.entries[i].cand, kbOwn);
      if (d > pickDist || (d == pickDist && own < pickOwn)) {
        pick = i;
        pickDist = d;
        pickOwn = own;
      }
    }
    if (pick < 0) // no tier (a model time below zero): the rank's first
      pick = open.front();
    taken.push_back(pick);
    open.erase(std::find(open.begin(), open.end(), pick));
  }
  return taken;
}

int distance(const Candidate &a, const Candidate &b) {
  std::set<std::string> names;
  for (auto &kv : a.fields)
    names.insert(kv.first);
  for (auto &kv : b.fields)
    names.insert(kv.first);
  int d = 0;
  for (const std::string &n : names)
    d += a.get(n) != b.get(n);
  return d;
}

static double area(const Candidate &c) {
  auto b = sizes(c.get("block"));
  return b.size() >= 2 ? double(b[0]) * b[1] : 0;
}
int64_t count(const Candidate &c, const char *field) {
  auto v = sizes(c.get(field));
  return v.empty() ? 0 : v[0];
}

bool followsLever(const std::string &lever, const Candidate &from,
                  const Candidate &to) {
  bool matmulLike = !from.get("block").empty();
  if (lever == "split_k") {
    // A larger split (no field: kb-tile's, no split), or at the same
    // split smaller tiles (more blocks).
    int64_t a = std::max<int64_t>(1, count(from, "split")),
            b = std::max<int64_t>(1, count(to, "split"));
    return b > a || (b == a && matmulLike && area(to) < area(from));
  }
  if (lever == "fewer_splits") {
    // A smaller split (no field or 1: none), same unit.
    int64_t a = std::max<int64_t>(1, count(from, "split")),
            b = std::max<int64_t>(1, count(to, "split"));
    return b < a && to.get("mma") == from.get("mma");
  }
  if (lever == "smaller_tiles")
    return matmulLike ? area(to) < area(from)
                      : count(to, "threads") < count(from, "threads");
  if (lever == "larger_tiles")
    return matmulLike ? area(to) > area(from)
                      : count(to, "threads") > count(from, "threads");
  if (lever == "mma_unit")
    return to.get("mma") != from.get("mma");
  if (lever == "fewer_stages")
    return count(to, "stages") < count(from, "stages") &&
           to.get("mma") == from.get("mma");
  if (lever == "more_stages")
    return count(to, "stages") > count(from, "stages") &&
           to.get("mma") == from.get("mma");
  if (lever == "vector_width")
    return to.get("vector") != from.get("vector");
  return false; // fusion, none: nothing in the space follows them
}

int bestIndex(const Plan &p, std::vector<int> *ties) {
  int best = -1;
  for (int i = 0; i < int(p.entries.size()); ++i) {
    const auto &m = p.entries[i].meas;
    if (m && m->status == "ok" &&
        (best < 0 || m->medianMs < p.entries[best].meas->medianMs))
      best = i;
  }
  if (best < 0)
    return -1;
  const Measured &b = *p.entries[best].meas;
  std::vector<int> tied;
  for (int i = 0; i < int(p.entries.size()); ++i) {
    const auto &m = p.entries[i].meas;
    if (m && m->status == "ok" &&
        m->medianMs - b.medianMs <= std::min(m->noiseMs(), b.noiseMs()))
      tied.push_back(i);
  }
  if (ties)
    *ties = tied;
  return tied.front(); // the first in table order
}

std::vector<int> nextBatch(const Plan &p) {
  if (p.mode != "guided")
    return {};
  std::set<int> seen;
  for (const auto &r : p.rounds)
    seen.insert(r.begin(), r.end());
  int budget = p.budget > 0 ? p.budget : defaultBudget(p);
  int remaining = budget - int(seen.size());
  if (remaining <= 0)
    return {};
  int size = std::min(remaining, std::max(1, (budget + 3) / 4));
  std::vector<int> ranked = byRank(p);
  std::vector<int> open;
  for (int i : ranked)
    if (!seen.count(i))
      open.push_back(i);
  std::vector<int> batch;
  auto take = [&](const std::vector<int> &from) {
    for (int i : from)
      if (int(batch.size()) < size &&
          std::find(batch.begin(), batch.end(), i) == batch.end())
        batch.push_back(i);
  };
  int best = bestIndex(p);
  if (best >= 0) {
    const Candidate &b = p.entries[best].cand;
    const Measured &m = *p.entries[best].meas;
    auto nearest = [&](std::vector<int> v) {
      std::stable_sort(v.begin(), v.end(), [&](int x, int y) {
        return distance(b, p.entries[x].cand) < distance(b, p.entries[y].cand);
      });
      return v;
    };
    // A round of two or more first tries the best's nearest untried
    // neighbour (one field changed, the model's order): the levers can
    // point away from it (skinny 64x8192x2048 on the H200: the fifth stage
    // of the best so far, 5% faster, was never reached while the levers
    // of a memory-bound split filled the rounds).
    if (size >= 2) {
      std::vector<int> near1;
      for (int i : open)
        if (distance(b, p.entries[i].cand) == 1)
          near1.push_back(i);
      if (!near1.empty())
        take({near1.front()});
    }
    std::vector<std::string> levers = m.levers;
    if (!m.lever.empty() &&
        std::find(levers.begin(), levers.end(), m.lever) == levers.end())
      levers.insert(levers.begin(), m.lever);
    for (const std::string &lever : levers) {
      std::vector<int> follow;
      for (int i : open)
        if (followsLever(lever, b, p.entries[i].cand))
          follow.push_back(i);
      take(nearest(follow));
    }
    // Then the nearest neighbours (one or two fields changed).
    std::vector<int> near;
    for (int i : open)
      if (distance(b, p.entries[i].cand) <= 2)
        near.push_back(i);
    take(nearest(near));
  }
  take(open);
  return batch;
}

} // namespace kbtune
