//===- TuneTestHelpers.h - facts, candidates and reports for kb-tune tests -===//
//
// Shared by TuneTest.cpp (the space and the model) and TuneSearchTest.cpp
// (reports, the searches and the database).
//
//===----------------------------------------------------------------------===//

#ifndef KB_UNITTESTS_TUNETESTHELPERS_H
#define KB_UNITTESTS_TUNETESTHELPERS_H

#include "TuneCore.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kbtune::test {

using json = nlohmann::json;

inline Facts matmulFacts(int64_t m, int64_t n, int64_t k, const std::string &prec,
                  std::vector<std::string> precisions = {}) {
  Facts f;
  f.family = Family::Matmul;
  f.m = m;
  f.n = n;
  f.k = k;
  f.precision = prec;
  f.precisions =
      precisions.empty() ? std::vector<std::string>{prec} : precisions;
  f.flops = 2.0 * m * n * k;
  f.minimalBytes = 4.0 * (m * k + k * n + m * n);
  return f;
}

inline int countUnit(const std::vector<Candidate> &s, const std::string &unit) {
  int n = 0;
  for (const Candidate &c : s)
    n += c.get("mma") == "\"" + unit + "\"";
  return n;
}

inline Static compiled(int threads, int regs, int64_t blocks, double occ,
                int blocksPerSM, int spill = 0) {
  Static s;
  s.compiled = true;
  s.threads = threads;
  s.registers = regs;
  s.blocks = blocks;
  s.occupancy = occ;
  s.blocksPerSM = blocksPerSM;
  s.spillBytes = spill;
  return s;
}

/// A matmul candidate; `split` (when given) as its last field.
inline Candidate mm(const std::string &unit, const std::string &block,
             const std::string &stages = "3", const std::string &split = "") {
  Candidate c;
  c.fields = {
      {"mma", "\"" + unit + "\""}, {"block", block}, {"stages", stages}};
  if (!split.empty())
    c.fields.emplace_back("split", split);
  c.precision = precisionOfUnit(unit);
  return c;
}

inline json report(const std::string &bundle, double median, double spread,
            const std::string &lever = "", double relError = 1e-6) {
  json r = {
      {"schema", 1},
      {"status", "ok"},
      {"bundle", bundle},
      {"time",
       {{"median_ms", median},
        {"min_ms", median - spread},
        {"max_ms", median + spread},
        {"runs", 20}}},
      {"checks", {{{"kernel", "k0"}, {"float64_relative_error", relError}}}}};
  if (!lever.empty())
    r["diagnosis"] = {{"bound", "compute"},
                      {"cause", "test"},
                      {"lever", lever},
                      {"levers", {lever}},
                      {"text", "test diagnosis"}};
  return r;
}

} // namespace kbtune::test

#endif
