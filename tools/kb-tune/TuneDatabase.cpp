//===- TuneDatabase.cpp - kb-tune's tuning database -----------------------===//
//
// Reading, writing and merging the tuning database's entries (see
// TuneCore.h).
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

// --- The database -----------------------------------------------------------

json emptyDb() {
  return {{"kind", "kb-tuning-db"}, {"schema", 1}, {"entries", json::array()}};
}

json loadDb(const std::string &path) {
  checkRegularFile(path, "tuning database");
  std::ifstream in(path);
  if (!in)
    return emptyDb();
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception &e) {
    throw std::runtime_error("tuning database '" + path + "' is not JSON");
  }
  if (!j.is_object() || j.value("kind", "") != "kb-tuning-db" ||
      j.value("schema", 0) != 1 || !j.contains("entries") ||
      !j["entries"].is_array())
    throw std::runtime_error("'" + path +
                             "' is not a kb-tune database (kind "
                             "kb-tuning-db, schema 1, entries[])");
  return j;
}

static std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

json dbEntry(const Plan &p, int best, const std::vector<int> &ties,
             const std::string &device) {
  const Entry &e = p.entries[best];
  const Measured &m = *e.meas;
  auto parts = split(e.key, '|');
  json tied = json::array();
  for (int i : ties)
    tied.push_back({{"id", p.entries[i].id},
                    {"config", p.entries[i].cand.config()},
                    {"median_ms", p.entries[i].meas->medianMs}});
  int timed = 0;
  for (const Entry &x : p.entries)
    timed += x.meas.has_value();
  json j = {{"key", e.key},
            {"config", e.cand.config()},
            {"precision", e.cand.precision},
            {"median_ms", m.medianMs},
            {"min_ms", m.minMs},
            {"max_ms", m.maxMs},
            {"runs", m.runs},
            {"noise_ms", m.noiseMs()},
            {"ties", tied},
            {"tie_rule", "medians within the smaller noise of the two (a "
                         "median's: (median - min) / sqrt(runs), at least "
                         "0.5% of it) are a tie; the first in the space's "
                         "table order wins"},
            {"mode", p.mode},
            {"space", p.space},
            {"candidates_compiled", int(p.entries.size())},
            {"candidates_timed", timed},
            {"device", device},
            {"program", p.program}};
  if (parts.size() == 5) {
    j["op"] = parts[0];
    j["shapes"] = parts[1];
    j["chip"] = parts[3];
    j["kb_version"] = parts[4];
  }
  return j;
}

int modelPick(const Plan &p) {
  int pick = -1;
  for (int i : survivors(p)) {
    const Entry &e = p.entries[i];
    if (e.cand.precision != p.facts.precision && p.facts.precision != "-")
      continue;
    if (pick < 0 || e.st.rank < p.entries[pick].st.rank)
      pick = i;
  }
  return pick;
}

json dbModelEntry(const Plan &p, int pick) {
  const Entry &e = p.entries[pick];
  auto parts = split(e.key, '|');
  json j = {{"key", e.key},
            {"config", e.cand.config()},
            {"precision", e.cand.precision},
            {"model_ms", e.st.modelMs},
            {"mode", "model"},
            {"space", p.space},
            {"candidates_compiled", int(p.entries.size())},
            {"candidates_timed", 0},
            {"calibration", p.cal.source},
            {"program", p.program}};
  if (parts.size() == 5) {
    j["op"] = parts[0];
    j["shapes"] = parts[1];
    j["chip"] = parts[3];
    j["kb_version"] = parts[4];
  }
  return j;
}

void mergeDb(json &db, const json &entry) {
  json &entries = db["entries"];
  for (json &e : entries)
    if (e.value("key", "") == entry.value("key", "")) {
      e = entry;
      return;
    }
  entries.push_back(entry);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const json &a, const json &b) {
                     return a.value("key", "") < b.value("key", "");
                   });
}

const json *findDb(const json &db, const std::string &key) {
  if (!db.contains("entries"))
    return nullptr;
  for (const json &e : db["entries"])
    if (e.value("key", "") == key)
      return &e;
  return nullptr;
}

} // namespace kbtune
