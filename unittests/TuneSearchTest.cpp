//===- TuneSearchTest.cpp - kb-tune's reports, searches and database ---===//

#include "TuneCore.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

using namespace kbtune;

#include "TuneTestHelpers.h"

using namespace kbtune::test;

namespace {

TEST(TuneReports, ParsesTimesChecksAndDiagnosis) {
  Measured m = parseReport(report("d/c0001/", 1.5, 0.01, "split_k"), -1);
  EXPECT_EQ(m.status, "ok");
  EXPECT_DOUBLE_EQ(m.medianMs, 1.5);
  // The noise of the median: 0.01 below it over sqrt(20) runs, 0.0022,
  // is under the floor of 0.5% of the median.
  EXPECT_NEAR(m.noiseMs(), 0.0075, 1e-12);
  EXPECT_EQ(m.runs, 20);
  Measured few = parseReport(report("d", 1.5, 0.1), -1);
  EXPECT_NEAR(few.noiseMs(), 0.1 / std::sqrt(20.0), 1e-12);
  EXPECT_EQ(m.lever, "split_k");
  EXPECT_EQ(m.bound, "compute");
  EXPECT_DOUBLE_EQ(m.relError, 1e-6);
  // A budget tighter than the measured error.
  EXPECT_EQ(parseReport(report("d", 1, 0, "", 2e-3), 1e-3).status,
            "inaccurate");
  EXPECT_EQ(parseReport(report("d", 1, 0, "", 2e-4), 1e-3).status, "ok");
  // No diagnosis: runtime only.
  Measured plain = parseReport(report("d", 1, 0), -1);
  EXPECT_EQ(plain.lever, "");
  EXPECT_TRUE(plain.levers.empty());
  EXPECT_EQ(parseReport({{"status", "wrong"}}, -1).status, "wrong");
  Measured err = parseReport(
      {{"status", "error"}, {"error", "device"}, {"message", "launch failed"}},
      -1);
  EXPECT_EQ(err.status, "error");
  EXPECT_EQ(err.message, "launch failed");
  json multi = {{"schema", 1},
                {"reports", {report("a", 1, 0), report("b", 2, 0)}}};
  EXPECT_EQ(reportsOf(multi).size(), 2u);
  EXPECT_EQ(reportsOf(report("a", 1, 0)).size(), 1u);
}

TEST(TuneReports, JsonLinesOfABatchKilledPartWay) {
  // kb-run --jsonl-out: one report a line; a kill while writing the third
  // leaves a line cut short, which is dropped.
  std::string a = report("a", 1, 0).dump(), b = report("b", 2, 0).dump();
  json r = parseResults(a + "\n" + b + "\n" + b.substr(0, 20));
  ASSERT_EQ(reportsOf(r).size(), 2u);
  EXPECT_EQ(reportsOf(r)[1]["bundle"], "b");
  // One JSON value (a whole batch object) is what it was.
  json multi = {{"schema", 1}, {"reports", {report("a", 1, 0)}}};
  EXPECT_EQ(parseResults(multi.dump(2)), multi);
  // A bad line before the last is not a cut: an error, as is no JSON.
  EXPECT_THROW(parseResults(a + "\n{oops\n" + b + "\n"), std::runtime_error);
  EXPECT_THROW(parseResults("\n \n"), std::runtime_error);
}

TEST(TuneReports, CandidatesWithoutAReportAreNotMeasuredNotTimed) {
  Plan p;
  p.mode = "exhaustive";
  p.facts = matmulFacts(4096, 4096, 4096, "tf32");
  for (int i = 0; i < 3; ++i) {
    Entry e;
    e.id = "c000" + std::to_string(i);
    e.cand = mm("wgmma_tf32", "[128, 128, 32]");
    e.st.compiled = true;
    e.st.rank = i;
    p.entries.push_back(e);
  }
  p.entries[0].meas = parseReport(report("c0000", 1.0, 0.01), -1);
  Measured none;
  none.status = "not_measured";
  p.entries[1].meas = none;
  json s = summaryJson(p);
  EXPECT_EQ(s["candidates_timed"], 1);
  EXPECT_EQ(s["candidates_not_measured"], 1);
  EXPECT_NE(summaryText(p).find("not measured 1: no report for them"),
            std::string::npos);
  // The replay counts the survivors the exhaustive run has no report for.
  json ex = replay(p, "exhaustive", 0, 0);
  EXPECT_EQ(ex["candidates_not_measured"], 2);
  EXPECT_EQ(ex["best_id"], "c0000");
}

/// A plan over `cands`, every one compiled, ranked in the order given.
Plan planOf(const std::vector<Candidate> &cands, const std::string &mode,
            int budget) {
  Plan p;
  p.mode = mode;
  p.budget = budget;
  p.facts = matmulFacts(4096, 4096, 4096, "tf32");
  for (size_t i = 0; i < cands.size(); ++i) {
    Entry e;
    e.id = "c" + std::to_string(1000 + i);
    e.cand = cands[i];
    e.st.compiled = true;
    e.st.rank = int(i);
    p.entries.push_back(e);
  }
  return p;
}

/// A measurement with its fastest run, slowest run and run count given.
void measureRuns(Plan &p, int i, double min, double median, double max,
                 int runs) {
  json r = report(p.entries[i].id, median, 0);
  r["time"]["min_ms"] = min;
  r["time"]["max_ms"] = max;
  r["time"]["runs"] = runs;
  p.entries[i].meas = parseReport(r, -1);
}

void measure(Plan &p, int i, double median, double spread,
             const std::string &lever = "") {
  p.entries[i].meas =
      parseReport(report(p.entries[i].id, median, spread, lever), -1);
}

TEST(TuneSearch, TiesWithinNoiseGoToTheFirstInTableOrder) {
  Plan p = planOf({mm("wgmma_tf32", "[128, 128, 32]"),
                   mm("wgmma_tf32", "[128, 256, 32]"),
                   mm("wgmma_tf32", "[64, 64, 32]")},
                  "exhaustive", 3);
  measure(p, 0, 1.004, 0.02);
  measure(p, 1, 1.000, 0.02); // fastest, but within 0.5% of c1000
  measure(p, 2, 1.500, 0.02);
  std::vector<int> ties;
  EXPECT_EQ(bestIndex(p, &ties), 0);
  EXPECT_EQ(ties, (std::vector<int>{0, 1}));
  // Outside the noise the faster wins.
  measure(p, 0, 1.100, 0.02);
  EXPECT_EQ(bestIndex(p, &ties), 1);
  EXPECT_EQ(ties.size(), 1u);
}

TEST(TuneSearch, OneStalledRunDoesNotMakeASlowCandidateWin) {
  // ew_add_relu_scale_8192x2048 on the H200 (bench/results/
  // 2026-12-01-shapes2/tune): the fastest candidate's 277 runs had one of
  // 4.01 ms (median 0.0513, min 0.0507); with the noise taken as half the
  // spread it "tied" with every candidate, and the first in table order
  // (0.1616 ms, 3x slower) won.
  std::vector<Candidate> cands;
  for (const char *t : {"64", "128", "256"}) {
    Candidate c;
    c.fields = {{"threads", t}, {"vector", "4"}};
    cands.push_back(c);
  }
  Plan p = planOf(cands, "exhaustive", 3);
  auto timed = [&](int i, double min, double median, double max) {
    measureRuns(p, i, min, median, max, 277);
  };
  timed(0, 0.1614, 0.1616, 0.1621);
  timed(1, 0.0507, 0.0513, 4.0146); // the fastest, one run stalled
  timed(2, 0.0510, 0.0515, 0.0535);
  // 0.0006 below the median over sqrt(277) is under 0.5% of it.
  EXPECT_NEAR(p.entries[1].meas->noiseMs(), 0.005 * 0.0513, 1e-9);
  std::vector<int> ties;
  EXPECT_EQ(bestIndex(p, &ties), 1);
  // 0.0515 is within the smaller noise (0.00026, of c1001) of 0.0513:
  // tied, and c1001 is first in table order; 0.1616 is not.
  EXPECT_EQ(ties, (std::vector<int>{1, 2}));
  // Replayed, exhaustive finds the same; no mode beats it.
  json g = replay(p, "guided", 2, 0);
  EXPECT_EQ(g["exhaustive_best_id"], "c1001");
  EXPECT_GE(g["gap_to_exhaustive"].get<double>(), 0);
}

TEST(TuneSearch, ANoisySlowerCandidateDoesNotTieWithASteadyFaster) {
  // From the H200 (skinny 16x4096x4096, 2026-12-01 run 2): c0009's median
  // 0.0316 ms with a fastest run of 0.0300 (noise 0.0016) against the
  // fastest median 0.0301 (noise 0.0001). Under the larger-noise rule the
  // two tied and c0009, first in table order, won: 5% slower. A gap must be
  // within both candidates' noise.
  Plan p = planOf({mm("mma_sync_tf32", "[64, 64, 32]", "4"),
                   mm("mma_sync_tf32", "[64, 128, 32]", "4")},
                  "exhaustive", 2);
  measureRuns(p, 0, 0.0300, 0.0316, 0.0348, 20);
  measureRuns(p, 1, 0.0300, 0.0301, 0.0331, 20);
  std::vector<int> ties;
  EXPECT_EQ(bestIndex(p, &ties), 1);
  EXPECT_EQ(ties, (std::vector<int>{1}));
}

TEST(TuneSearch, ATieNeedsTheSmallerNoise) {
  // One run each: a median's noise is its distance above the fastest run.
  // 1.010 with a run at 0.95 (noise 0.06) against 1.000 with one at 0.999
  // (noise 0.005, the floor): the gap, 0.01, is within the larger noise
  // but not the smaller one: no tie, the faster wins.
  Plan p = planOf({mm("wgmma_tf32", "[128, 128, 32]"),
                   mm("wgmma_tf32", "[128, 256, 32]")},
                  "exhaustive", 2);
  measureRuns(p, 0, 0.95, 1.010, 1.010, 1);
  measureRuns(p, 1, 0.999, 1.000, 1.000, 1);
  std::vector<int> ties;
  EXPECT_EQ(bestIndex(p, &ties), 1);
  EXPECT_EQ(ties, (std::vector<int>{1}));
}

TEST(TuneSearch, GuidedSpreadsItsFirstRoundOverTheModelsTies) {
  // Six candidates the model times alike (one tier) and one slower: the
  // first round (budget 6: three) takes kb's own config's nearest first,
  // then the farthest from those taken, not the table's first three
  // (stages 2, 3, 4 of one tile).
  std::vector<Candidate> cands = {
      mm("mma_sync_tf32", "[64, 128, 32]", "2"),  // 0
      mm("mma_sync_tf32", "[64, 128, 32]", "3"),  // 1
      mm("mma_sync_tf32", "[64, 128, 32]", "4"),  // 2
      mm("mma_sync_tf32", "[128, 128, 32]", "2"), // 3
      mm("mma_sync_tf32", "[128, 128, 32]", "3"), // 4
      mm("mma_sync_tf32", "[128, 128, 32]", "4"), // 5
      mm("wgmma_tf32", "[128, 128, 32]", "4"),    // 6: slower in the model
  };
  Plan p = planOf(cands, "guided", 6);
  for (int i = 0; i < 7; ++i)
    p.entries[i].st.modelMs = i < 6 ? 1.0 : 1.2;
  // Without kb's config: the rank's first, then the first of the farthest
  // (two fields apart: 4, 5), then the first of those one field from both.
  EXPECT_EQ(firstBatch(p), (std::vector<int>{0, 4, 1}));
  p.defaultConfig = "#kb.config<block = [128, 128, 32], warp = [64, 64], "
                    "stages = 3, mma = \"mma_sync_tf32\">";
  // kb's own first (4), then the farthest from it (0 and 2, two fields
  // apart), then, all one field from those taken, the nearest kb's own (1,
  // 3 and 5: one field from it) in rank order.
  EXPECT_EQ(firstBatch(p), (std::vector<int>{4, 0, 1}));
  // A budget of a tenth, at least one: the first pick alone.
  p.budget = 0;
  EXPECT_EQ(defaultBudget(p), 1);
  EXPECT_EQ(firstBatch(p), (std::vector<int>{4}));
}

TEST(TuneSearch, ConfigFieldsOfAKbConfig) {
  auto f = configFields("#kb.config<block = [256, 64, 32], threads = 256, "
                        "mma = \"wgmma_tf32\", copy = \"tma\", split = 32>");
  EXPECT_EQ(f.size(), 5u);
  EXPECT_EQ(f["block"], "[256, 64, 32]");
  EXPECT_EQ(f["mma"], "\"wgmma_tf32\"");
  EXPECT_EQ(f["split"], "32");
  EXPECT_TRUE(configFields("not a config").empty());
  Candidate c = mm("wgmma_tf32", "[256, 64, 32]", "4");
  EXPECT_EQ(distanceTo(c, f), 1); // stages: the config has none
  c.fields.emplace_back("split", "1");
  EXPECT_EQ(distanceTo(c, configFields("#kb.config<stages = 4, "
                                       "mma = \"wgmma_tf32\", "
                                       "block = [256, 64, 32]>")),
            0); // split = 1 is no split
}

TEST(TuneSearch, RandomIsSeededAndUsesTheBudget) {
  std::vector<Candidate> cands;
  for (int i = 0; i < 40; ++i)
    cands.push_back(mm("wgmma_tf32", "[64, 64, 32]", std::to_string(i + 1)));
  Plan p = planOf(cands, "random", 5);
  p.seed = 7;
  auto a = firstBatch(p), b = firstBatch(p);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 5u);
  p.seed = 8;
  EXPECT_NE(firstBatch(p), a);
  EXPECT_TRUE(nextBatch(p).empty()); // one round
  p.mode = "exhaustive";
  EXPECT_EQ(firstBatch(p).size(), 40u);
  // In the model's order, not the table's: ranked backwards, the batch
  // runs backwards.
  for (size_t i = 0; i < p.entries.size(); ++i)
    p.entries[i].st.rank = int(p.entries.size() - 1 - i);
  auto ex = firstBatch(p);
  EXPECT_EQ(ex.front(), 39);
  EXPECT_EQ(ex.back(), 0);
  for (size_t i = 0; i < p.entries.size(); ++i)
    p.entries[i].st.rank = int(i);
  p.mode = "guided";
  auto g = firstBatch(p);
  EXPECT_EQ(g, (std::vector<int>{0, 1, 2})); // the model's best half
}

TEST(TuneSearch, GuidedFollowsTheLeverOfTheBestSoFar) {
  // Ranked so that the model prefers the big tiles.
  std::vector<Candidate> cands = {
      mm("wgmma_tf32", "[128, 256, 32]", "4"),    // 0
      mm("wgmma_tf32", "[128, 256, 32]", "3"),    // 1
      mm("mma_sync_tf32", "[128, 256, 32]", "3"), // 2
      mm("wgmma_tf32", "[128, 128, 32]", "4"),    // 3
      mm("wgmma_tf32", "[64, 64, 32]", "4"),      // 4
      mm("wgmma_tf32", "[128, 256, 32]", "5"),    // 5
      mm("mma_sync_tf32", "[64, 64, 32]", "3"),   // 6
      mm("wgmma_tf32", "[64, 128, 32]", "4"),     // 7
  };
  auto batchFor = [&](const std::string &lever) {
    Plan p = planOf(cands, "guided", 6);
    p.rounds = {{0, 1}};
    measure(p, 0, 1.0, 0.001, lever);
    measure(p, 1, 1.2, 0.001, lever);
    return nextBatch(p);
  };
  // Round size: a quarter of the budget, rounded up.
  auto small = batchFor("smaller_tiles");
  ASSERT_EQ(small.size(), 2u);
  for (int i : small)
    EXPECT_TRUE(followsLever("smaller_tiles", cands[0], cands[i]));
  EXPECT_EQ(small, (std::vector<int>{3, 4})); // nearest first (same stages)
  // A round of two or more first takes the best's nearest untried
  // neighbour (one field changed, the model's order: 3), whatever the
  // lever; then the lever's candidates.
  auto unit = batchFor("mma_unit");
  EXPECT_EQ(unit, (std::vector<int>{3, 2}));
  auto more = batchFor("more_stages");
  EXPECT_EQ(more, (std::vector<int>{3, 5}));
  // split_k: a larger split, or at the same split smaller tiles.
  Candidate s1 = mm("wgmma_tf32", "[128, 256, 32]", "4", "1"),
            s8 = mm("wgmma_tf32", "[128, 256, 32]", "4", "8");
  EXPECT_TRUE(followsLever("split_k", s1, s8));
  EXPECT_FALSE(followsLever("split_k", s8, s1));
  EXPECT_TRUE(followsLever("split_k", cands[0], s8));  // no field: no split
  EXPECT_FALSE(followsLever("split_k", cands[0], s1)); // the same grid
  EXPECT_TRUE(followsLever("split_k", s1, cands[4]));  // more blocks
  // fewer_splits: a smaller split (no field counts as 1), same unit.
  Candidate s4 = s1;
  s4.fields.back().second = "4";
  EXPECT_TRUE(followsLever("fewer_splits", s8, s4));
  EXPECT_TRUE(followsLever("fewer_splits", s8, s1));
  EXPECT_TRUE(followsLever("fewer_splits", s8, cands[0]));
  EXPECT_FALSE(followsLever("fewer_splits", s4, s8));
  EXPECT_FALSE(followsLever("fewer_splits", s1, cands[0])); // both unsplit
  auto split = batchFor("split_k"); // no split field: more blocks
  for (int i : split)
    EXPECT_TRUE(followsLever("smaller_tiles", cands[0], cands[i]));
  // No diagnosis: the nearest neighbours (one field changed: 3, 4, 5, 7),
  // then the model's rank; unlike more_stages (5) or mma_unit (2, 6).
  auto none = batchFor("");
  EXPECT_EQ(none, (std::vector<int>{3, 4}));
  EXPECT_EQ(batchFor("fusion"), none); // nothing in the space follows it
  // The budget ends the search.
  Plan p = planOf(cands, "guided", 2);
  p.rounds = {{0, 1}};
  measure(p, 0, 1.0, 0.001);
  measure(p, 1, 1.2, 0.001);
  EXPECT_TRUE(nextBatch(p).empty());
}

TEST(TuneSearch, ReplayTimesTheBudgetAndNeverLosesTheBest) {
  std::vector<Candidate> cands;
  for (int i = 0; i < 30; ++i)
    cands.push_back(mm(i % 2 ? "wgmma_tf32" : "mma_sync_tf32",
                       i % 3 ? "[128, 128, 32]" : "[64, 64, 32]",
                       std::to_string(2 + i % 4)));
  Plan p = planOf(cands, "exhaustive", 0);
  for (int i = 0; i < 30; ++i)
    measure(p, i, 1.0 + 0.01 * ((i * 7) % 30), 0.0001);
  json ex = replay(p, "exhaustive", 0, 0);
  EXPECT_EQ(ex["candidates_timed"], 30);
  EXPECT_DOUBLE_EQ(ex["gap_to_exhaustive"].get<double>(), 0);
  json g = replay(p, "guided", 6, 0);
  EXPECT_EQ(g["candidates_timed"], 6);
  json r = replay(p, "random", 6, 3);
  EXPECT_EQ(r["candidates_timed"], 6);
  double last = 1e9;
  for (const json &pt : g["curve"]) {
    EXPECT_LE(pt[1].get<double>(), last);
    last = pt[1];
  }
  EXPECT_GE(g["gap_to_exhaustive"].get<double>(), 0);
}

TEST(TuneDb, RoundTripReplacesOnlyItsKey) {
  Plan p = planOf(
      {mm("wgmma_tf32", "[128, 256, 32]"), mm("wgmma_tf32", "[128, 128, 32]")},
      "exhaustive", 2);
  p.space = "2-abc";
  for (Entry &e : p.entries)
    e.key = "kb.matmul|b1 m4096 n4096 k4096|tf32|sm_90a|kb 0.1.0";
  measure(p, 0, 0.40, 0.002);
  measure(p, 1, 0.41, 0.002);
  std::vector<int> ties;
  int best = bestIndex(p, &ties);
  json db = emptyDb();
  json other = {{"key", "kb.softmax|8192x8192,->8192x8192|-|sm_90a|kb 0.1.0"},
                {"config", "#kb.config<threads = 512>"}};
  mergeDb(db, other);
  mergeDb(db, dbEntry(p, best, ties, "NVIDIA H200"));
  json back = json::parse(db.dump());
  ASSERT_EQ(back["entries"].size(), 2u);
  const json *e =
      findDb(back, "kb.matmul|b1 m4096 n4096 k4096|tf32|sm_90a|kb 0.1.0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ((*e)["config"], p.entries[0].cand.config());
  EXPECT_EQ((*e)["op"], "kb.matmul");
  EXPECT_EQ((*e)["chip"], "sm_90a");
  EXPECT_EQ((*e)["kb_version"], "kb 0.1.0");
  EXPECT_DOUBLE_EQ((*e)["noise_ms"].get<double>(), 0.002);
  EXPECT_EQ((*e)["runs"], 20);
  // A new result for the same key replaces that entry only.
  measure(p, 1, 0.30, 0.002);
  best = bestIndex(p, &ties);
  mergeDb(back, dbEntry(p, best, ties, "NVIDIA H200"));
  ASSERT_EQ(back["entries"].size(), 2u);
  EXPECT_EQ((*findDb(back, (*e)["key"]))["config"], p.entries[1].cand.config());
  EXPECT_NE(findDb(back, other["key"]), nullptr);
  // The plan survives its own JSON.
  Plan q = planFromJson(json::parse(toJson(p).dump()));
  EXPECT_EQ(q.entries.size(), 2u);
  EXPECT_EQ(q.entries[1].cand.config(), p.entries[1].cand.config());
  EXPECT_DOUBLE_EQ(q.entries[1].meas->medianMs, 0.30);
}

} // namespace
