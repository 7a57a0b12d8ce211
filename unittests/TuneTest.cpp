//===- TuneTest.cpp - kb-tune's space, model, search and database ---------===//

#include "TuneCore.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

using namespace kbtune;

namespace {

Facts matmulFacts(int64_t m, int64_t n, int64_t k, const std::string &prec,
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

int countUnit(const std::vector<Candidate> &s, const std::string &unit) {
  int n = 0;
  for (const Candidate &c : s)
    n += c.get("mma") == "\"" + unit + "\"";
  return n;
}

TEST(TuneSpace, MatmulTf32OnHopperHasBothTensorCoreUnits) {
  auto s = enumerateSpace(matmulFacts(2048, 2048, 2048, "tf32"));
  // wgmma: 6 tiles x 3 stages x raster {absent, 8}, and clusters of 4 for
  // the three tiles of 128 columns or more whose grid is at most two waves
  // (128 x 128: 256 blocks, 128 x 256, 256 x 128) without a raster: 9;
  // a persistent grid on the one tile of 128 x 128 or more over more tiles
  // than SMs (128 x 128: 256), without a cluster: 3 stages x 2 rasters
  // (its last round of 124 tiles is more than half the SMs: no stream-K);
  // mma.sync: 5 tiles x 3 warp tiles x 4 stages.
  EXPECT_EQ(countUnit(s, "wgmma_tf32"), 36 + 9 + 6);
  EXPECT_EQ(countUnit(s, "mma_sync_tf32"), 60);
  EXPECT_EQ(countUnit(s, "ffma"), 0);
  for (const Candidate &c : s) {
    EXPECT_EQ(c.precision, "tf32");
    if (c.get("mma") == "\"wgmma_tf32\"") {
      EXPECT_EQ(c.get("copy"), "\"tma\"");
      EXPECT_EQ(c.get("warp"), "");
    } else {
      EXPECT_NE(c.get("warp"), "");
    }
  }
  // Distinct configs, and the order is stable.
  std::set<std::string> configs;
  for (const Candidate &c : s)
    configs.insert(c.config());
  EXPECT_EQ(configs.size(), s.size());
  EXPECT_EQ(spaceId(s),
            spaceId(enumerateSpace(matmulFacts(2048, 2048, 2048, "tf32"))));
}

TEST(TuneSpace, WgmmaForEveryKOnSm90aOnly) {
  // K % 4 != 0: kb-select-mma pads K for wgmma (kb.pad), so the space has
  // its candidates too.
  Facts f = matmulFacts(1000, 700, 1501, "tf32");
  EXPECT_GT(countUnit(enumerateSpace(f), "wgmma_tf32"), 0);
  f = matmulFacts(1024, 1024, 1024, "tf32");
  f.chip = "sm_90";
  EXPECT_EQ(countUnit(enumerateSpace(f), "wgmma_tf32"), 0);
}

TEST(TuneSpace, WidthsBetweenOnlyWithBTransposed) {
  // 128 x 160 / 192 / 224 (kb-tile's widths rule) are B^T tiles; the
  // facts carry transpose_b through plan.json.
  auto widths = [](const Facts &f) {
    int n = 0;
    for (const Candidate &c : enumerateSpace(f))
      for (const char *b : {"[128, 160, 32]", "[128, 192, 32]", "[128, 224, 32]"})
        n += c.get("block") == b;
    return n;
  };
  Facts f = matmulFacts(1024, 5120, 13824, "tf32");
  EXPECT_EQ(widths(f), 0);
  f.transposeB = true;
  EXPECT_GT(widths(f), 0);
  EXPECT_TRUE(factsFromJson(toJson(f)).transposeB);
  EXPECT_FALSE(factsFromJson(toJson(matmulFacts(64, 64, 64, "tf32"))).transposeB);
}

TEST(TuneSpace, PersistentPastFiveWavesOnlyUnfusedBTransposed) {
  // 8192^3 at 128 x 256: 2048 tiles, 15.5 waves.
  auto grids = [](const Facts &f) {
    int n = 0;
    for (const Candidate &c : enumerateSpace(f))
      n += !c.get("grid").empty();
    return n;
  };
  Facts f = matmulFacts(8192, 8192, 8192, "tf32");
  EXPECT_EQ(grids(f), 0);
  f.transposeB = true;
  EXPECT_GT(grids(f), 0);
  f.fused = true;
  EXPECT_EQ(grids(f), 0);
}

TEST(TuneSpace, PersistentForABatchUpToK1024Unfused) {
  // 128 x 512^3 (kb-tile's batched grid): persistent candidates at any
  // wave count, none with stream-K (a batch is not split); not past K =
  // 1024, not in a fusion.
  auto grids = [](const Facts &f) {
    int n = 0, stream = 0;
    for (const Candidate &c : enumerateSpace(f)) {
      n += !c.get("grid").empty();
      stream += !c.get("reduce").empty();
    }
    EXPECT_EQ(stream, 0);
    return n;
  };
  Facts f = matmulFacts(512, 512, 512, "tf32");
  f.batch = 128;
  EXPECT_GT(grids(f), 0);
  f.transposeB = true;
  EXPECT_GT(grids(f), 0);
  f.fused = true;
  EXPECT_EQ(grids(f), 0);
  f.fused = false;
  f.k = 2048;
  EXPECT_EQ(grids(f), 0);
}

TEST(TuneSpace, GemvForFewRowsOrColumnsOnly) {
  // Two gemv candidates (kb-tile's tiles, one and two stages of weight
  // loads in flight) at the program's precision ("-").
  auto few = enumerateSpace(matmulFacts(1, 4096, 4096, "tf32"));
  EXPECT_EQ(countUnit(few, "gemv"), 2);
  std::set<std::string> stages;
  for (const Candidate &c : few)
    if (c.get("mma") == "\"gemv\"") {
      EXPECT_EQ(c.precision, "-");
      stages.insert(c.get("stages"));
    }
  EXPECT_EQ(stages, (std::set<std::string>{"1", "2"}));
  EXPECT_EQ(
      countUnit(enumerateSpace(matmulFacts(4096, 16, 4096, "ieee")), "gemv"),
      2);
  EXPECT_EQ(
      countUnit(enumerateSpace(matmulFacts(17, 17, 4096, "tf32")), "gemv"), 0);
  Facts batched = matmulFacts(1, 4096, 4096, "tf32");
  batched.batch = 8;
  EXPECT_EQ(countUnit(enumerateSpace(batched), "gemv"), 0);
}

TEST(TuneSpace, PrecisionIsADimensionOnlyWithABudget) {
  auto ieee = enumerateSpace(matmulFacts(512, 512, 512, "ieee"));
  EXPECT_EQ(countUnit(ieee, "mma_sync_tf32"), 0);
  EXPECT_GT(countUnit(ieee, "ffma"), 0);
  auto all = enumerateSpace(
      matmulFacts(512, 512, 512, "ieee", {"ieee", "tf32", "tf32x3"}));
  EXPECT_GT(countUnit(all, "ffma"), 0);
  EXPECT_GT(countUnit(all, "mma_sync_tf32"), 0);
  EXPECT_GT(countUnit(all, "mma_sync_tf32x3"), 0);
  for (const Candidate &c : all)
    EXPECT_EQ(c.precision, precisionOfUnit(c.get("mma")));
}

TEST(TuneSpace, AFieldIsOneRow) {
  std::vector<FieldRow> table = spaceTable();
  // sm_90 (mma.sync): no candidate has a field whose rows depend on the
  // split (wgmma's cluster does), so every candidate triples.
  Facts f = matmulFacts(2048, 2048, 2048, "tf32");
  f.chip = "sm_90";
  size_t before = enumerateSpace(f, table).size();
  table.push_back({Family::Matmul,
                   "split",
                   {"", "2", "4"},
                   [](const Candidate &, const Facts &) { return true; }});
  auto after = enumerateSpace(f, table);
  EXPECT_EQ(after.size(), 3 * before);
  int withSplit = 0;
  for (const Candidate &c : after)
    withSplit += c.config().find("split = ") != std::string::npos;
  EXPECT_EQ(withSplit, int(2 * before));
}

TEST(TuneSpace, SplitKWhereTheTilesLeaveSMsIdle) {
  // 256 x 256 x 16384: 16 tiles of 64 x 64 on 132 SMs. No split (1), and
  // the splits nearest one wave (8: 128 blocks) and two (16: 256).
  Facts f = matmulFacts(256, 256, 16384, "tf32");
  auto splitsOf = [&](const std::string &unit, const std::string &block,
                      const std::string &stages, const std::string &raster) {
    std::vector<std::string> out;
    for (const Candidate &c : enumerateSpace(f))
      if (c.get("mma") == "\"" + unit + "\"" && c.get("block") == block &&
          c.get("stages") == stages && c.get("raster") == raster &&
          (unit != "mma_sync_tf32" || c.get("warp") == "[32, 32]"))
        out.push_back(c.get("split"));
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(splitsOf("wgmma_tf32", "[64, 64, 32]", "4", ""),
            (V{"1", "8", "16"}));
  // 4 tiles of 128 x 128: 32 (128 blocks) and 64 (256).
  EXPECT_EQ(splitsOf("wgmma_tf32", "[128, 128, 32]", "4", ""),
            (V{"1", "32", "64"}));
  // Not with a raster, nor with mma.sync's register copies (one stage).
  EXPECT_EQ(splitsOf("wgmma_tf32", "[64, 64, 32]", "4", "8"), (V{"1"}));
  EXPECT_EQ(splitsOf("mma_sync_tf32", "[64, 64, 32]", "1", ""), (V{"1"}));
  EXPECT_EQ(splitsOf("mma_sync_tf32", "[64, 64, 32]", "2", ""),
            (V{"1", "8", "16"}));
  // A grid of tiles that fills more than half of the SMs is left to
  // kb-tile (no split field); a batched matmul is never split.
  for (const Candidate &c :
       enumerateSpace(matmulFacts(4096, 4096, 4096, "tf32")))
    EXPECT_EQ(c.get("split"), "") << c.config();
  Facts batched = f;
  batched.batch = 8;
  for (const Candidate &c : enumerateSpace(batched))
    EXPECT_EQ(c.get("split"), "") << c.config();
  // 512 x 768: 64 x 64 is 96 tiles (more than half the SMs: no field);
  // 128 x 128 is 24: 4 (96 blocks) and 8 (192), and of any count (256 k
  // tiles in chunks of ceil(256 / S)) 5 (120) and 11 (264).
  Facts g = matmulFacts(512, 768, 8192, "tf32");
  std::set<std::string> at64, at128;
  for (const Candidate &c : enumerateSpace(g)) {
    if (c.get("block") == "[64, 64, 32]")
      at64.insert(c.get("split"));
    if (c.get("block") == "[128, 128, 32]")
      at128.insert(c.get("split"));
  }
  EXPECT_EQ(at64, (std::set<std::string>{""}));
  EXPECT_EQ(at128, (std::set<std::string>{"1", "4", "5", "8", "11"}));
}

TEST(TuneSpace, SplitsThatDivideTheKTiles) {
  // 384 x 384 x 200000: 6250 k tiles (2 x 5^5), 9 tiles of 128 x 128. The
  // powers of two nearest one and two waves (8, 16) do not divide 6250
  // and the divisors nearest the waves are 10 (90 blocks) and 25 (225);
  // any count of chunks (the last shorter) fills them closer: 14 (126) and
  // 29 (261).
  Facts f = matmulFacts(384, 384, 200000, "tf32");
  std::vector<std::string> splits;
  for (const Candidate &c : enumerateSpace(f))
    if (c.get("mma") == "\"wgmma_tf32\"" &&
        c.get("block") == "[128, 128, 32]" && c.get("stages") == "4" &&
        c.get("raster").empty())
      splits.push_back(c.get("split"));
  EXPECT_EQ(splits,
            (std::vector<std::string>{"1", "8", "16", "10", "14", "25", "29"}));
  // 128 x 128 x 1048576 (32768 k tiles, one tile): 128, past the rows' 64.
  Facts g = matmulFacts(128, 128, 1048576, "tf32");
  std::set<std::string> at128;
  for (const Candidate &c : enumerateSpace(g))
    if (c.get("block") == "[128, 128, 32]" && c.get("raster").empty() &&
        c.get("stages") != "1")
      at128.insert(c.get("split"));
  EXPECT_TRUE(at128.count("128")) << at128.size();
}

TEST(TuneSpace, SoftmaxClustersOnlyWhereTheStrategySplits) {
  Facts f;
  f.family = Family::Softmax;
  f.rows = 4096;
  f.cols = 8192;
  auto s = enumerateSpace(f);
  EXPECT_EQ(s.size(), size_t(8 + 8 + 24 + 24));
  for (const Candidate &c : s) {
    bool split = c.get("strategy") == "\"split\"" ||
                 c.get("strategy") == "\"split_global\"";
    EXPECT_EQ(!c.get("cluster").empty(), split) << c.config();
  }
  f.family = Family::Elementwise;
  EXPECT_EQ(enumerateSpace(f).size(), size_t(15));
}

Static compiled(int threads, int regs, int64_t blocks, double occ,
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
Candidate mm(const std::string &unit, const std::string &block,
             const std::string &stages = "3", const std::string &split = "") {
  Candidate c;
  c.fields = {
      {"mma", "\"" + unit + "\""}, {"block", block}, {"stages", stages}};
  if (!split.empty())
    c.fields.emplace_back("split", split);
  c.precision = precisionOfUnit(unit);
  return c;
}

TEST(TuneModel, RanksUnitsGridsAndSpills) {
  Facts f = matmulFacts(4096, 4096, 4096, "tf32");
  Calibration cal;
  Static s = compiled(288, 154, 512, 0.14, 1);
  double wg = modelTime(f, mm("wgmma_tf32", "[128, 256, 32]"), s, cal);
  double ms = modelTime(f, mm("mma_sync_tf32", "[128, 256, 32]"), s, cal);
  EXPECT_LT(wg, ms);
  // Compute-bound at 4096^3: about flops over the TF32 ceiling.
  EXPECT_NEAR(wg, f.flops / (cal.tf32Tflops * 1e12) * 1e3, 0.5 * wg);
  // 133 blocks on 132 SMs: two waves, nearly half the time wasted.
  Static one = compiled(288, 154, 132, 0.14, 1),
         over = compiled(288, 154, 133, 0.14, 1);
  Candidate c = mm("wgmma_tf32", "[128, 128, 32]");
  EXPECT_GT(modelTime(f, c, over, cal), 1.8 * modelTime(f, c, one, cal));
  Static spills = one;
  spills.spillBytes = 256;
  EXPECT_GT(modelTime(f, c, spills, cal), modelTime(f, c, one, cal));
  Static pruned = one;
  pruned.pruned = "not launchable";
  EXPECT_TRUE(std::isinf(modelTime(f, c, pruned, cal)));
  std::vector<Static> st = {over, pruned, one};
  for (Static &x : st)
    x.modelMs = modelTime(f, c, x, cal);
  rankByModel(st);
  EXPECT_EQ(st[2].rank, 0);
  EXPECT_EQ(st[0].rank, 1);
  EXPECT_EQ(st[1].rank, -1);
}

TEST(TuneModel, SplitKFillsTheGridAndPaysForThePartials) {
  // 256 x 256 x 16384 in 64 x 64 tiles: 16 blocks on 132 SMs.
  Facts f = matmulFacts(256, 256, 16384, "tf32");
  Calibration cal;
  auto withSplit = [](const char *s) {
    return mm("wgmma_tf32", "[64, 64, 32]", "4", s);
  };
  double one = modelTime(f, withSplit("1"), compiled(160, 90, 16, 0.3, 2), cal);
  double eight =
      modelTime(f, withSplit("8"), compiled(160, 90, 128, 0.3, 2), cal);
  // One block per SM instead of one per eight: several times faster.
  EXPECT_LT(eight, one / 4);
  // The partials: 8 x S x M x N bytes and the sum's launch, on top of the
  // same matmul with a grid as full.
  Static full = compiled(160, 90, 128, 0.3, 2);
  double unsplit = modelTime(f, withSplit("1"), full, cal);
  double bytes = 8.0 * 8 * 256 * 256;
  EXPECT_NEAR(eight - unsplit, bytes / (cal.copyGBs * 1e9) * 1e3 + 0.004,
              0.5 * (bytes / (cal.copyGBs * 1e9) * 1e3) + 0.001);
  // A split far past one wave only adds partials: 64 (1024 blocks, about
  // eight waves) is slower than 8.
  double many =
      modelTime(f, withSplit("64"), compiled(160, 90, 1024, 0.3, 2), cal);
  EXPECT_GT(many, eight);
}

TEST(TuneModel, RowsHeldInRegistersAreAllInFlight) {
  // 256 x 131072, split over a cluster of 8: a block's part is 16384
  // floats, 64 a thread at 256 threads, all loaded before the reduction:
  // the vector width does not change the bytes in flight (the first H200
  // run: 0.0746 and 0.0751 ms at vector 4 and 2).
  Facts f;
  f.family = Family::Softmax;
  f.rows = 256;
  f.cols = 131072;
  f.minimalBytes = 2.0 * 256 * 131072 * 4;
  Calibration cal;
  auto cand = [](const char *strategy, const char *vector) {
    Candidate c;
    c.fields = {{"strategy", strategy}, {"threads", "256"}, {"vector", vector}};
    if (std::string(strategy) == "\"split\"")
      c.fields.emplace_back("cluster", "8");
    return c;
  };
  Static s = compiled(256, 80, 2048, 0.375, 3);
  double v4 = modelTime(f, cand("\"split\"", "4"), s, cal);
  double v2 = modelTime(f, cand("\"split\"", "2"), s, cal);
  EXPECT_LT(v2, 1.1 * v4);
  // At the copy bandwidth (with the exchange's cost), not derated by
  // latency: 3 blocks of 256 threads hold 196 KB in flight.
  EXPECT_LT(v4, 1.3 * f.minimalBytes / (cal.copyGBs * 1e9) * 1e3 + 0.004);
  // A streaming loop (online) has one vector a thread in flight: with 256
  // rows of one block each, 2 blocks an SM, narrower vectors cost more.
  Static one = compiled(256, 32, 256, 0.25, 2);
  EXPECT_GT(modelTime(f, cand("\"online\"", "2"), one, cal),
            1.5 * modelTime(f, cand("\"online\"", "4"), one, cal));
}

TEST(TuneModel, WarpTilesAndStagesHideLatency) {
  Facts f = matmulFacts(1024, 1024, 1024, "tf32");
  Calibration cal;
  // mma.sync at 6% occupancy: 64 x 64 warp tiles (32 accumulators a warp)
  // hide the latency that 32 x 32 ones (8) leave exposed.
  auto warp = [](const char *w) {
    Candidate c = mm("mma_sync_tf32", "[128, 128, 32]", "4");
    c.fields.insert(c.fields.begin() + 2, {"warp", w});
    return c;
  };
  Static low = compiled(128, 242, 64, 0.0625, 1);
  EXPECT_LT(modelTime(f, warp("[64, 64]"), low, cal),
            0.8 * modelTime(f, warp("[32, 32]"), low, cal));
  // wgmma 64 x 128 tiles, one block an SM: a k step is 0.2 us, so three
  // stages (two in flight) cover less of a loaded 1 us latency than four,
  // four less than five.
  Static one = compiled(160, 90, 128, 0.08, 1);
  double s3 = modelTime(f, mm("wgmma_tf32", "[64, 128, 32]", "3"), one, cal);
  double s4 = modelTime(f, mm("wgmma_tf32", "[64, 128, 32]", "4"), one, cal);
  double s5 = modelTime(f, mm("wgmma_tf32", "[64, 128, 32]", "5"), one, cal);
  EXPECT_GT(s3, s4);
  EXPECT_GT(s4, s5);
  // 128 x 128 tiles (a k step of 0.39 us): three stages fall short of the
  // loaded 1 us, four cover it (with the idle 600 ns both did, where the
  // H200 measured three stages slower in 163 of 167 tile groups).
  Static big = compiled(384, 168, 64, 0.19, 1);
  EXPECT_GT(modelTime(f, mm("wgmma_tf32", "[128, 128, 32]", "3"), big, cal),
            1.05 * modelTime(f, mm("wgmma_tf32", "[128, 128, 32]", "4"),
                             big, cal));
  // Two blocks an SM put twice the stages in flight: four are about
  // enough for 64 x 64 tiles.
  Static two = compiled(160, 90, 256, 0.16, 2);
  EXPECT_NEAR(modelTime(f, mm("wgmma_tf32", "[64, 64, 32]", "4"), two, cal),
              modelTime(f, mm("wgmma_tf32", "[64, 64, 32]", "5"), two, cal),
              0.01 * s5);
}

TEST(TuneModel, SplitPartialsThatFitInL2CostLess) {
  // Long K 256x256x16384 on the H200 (2026-12-02-tune5): 128 x 128 tiles
  // split 32 ways (8 MB of partials, in L2) measured 7% faster than split
  // 16; charged at DRAM's rate the partials made 32 look 10% slower.
  Facts f = matmulFacts(256, 256, 16384, "tf32");
  Calibration cal;
  auto split = [](const char *s) {
    return mm("wgmma_tf32", "[128, 128, 32]", "4", s);
  };
  Static s16 = compiled(384, 168, 64, 0.19, 1), s32 = s16;
  s32.blocks = 128;
  EXPECT_LT(modelTime(f, split("32"), s32, cal),
            modelTime(f, split("16"), s16, cal));
  // 8 MB of partials at three times the copy's rate; 512 MB (the same
  // split over 2048 x 2048) at the copy's.
  double small = 4.0 * 256 * 256, large = 4.0 * 2048 * 2048;
  EXPECT_NEAR(splitSumMs(32, small, 4000, 50e6), 33 * small / 12e12 * 1e3 + 0.004,
              1e-12);
  EXPECT_NEAR(splitSumMs(32, large, 4000, 50e6), 33 * large / 4e12 * 1e3 + 0.004,
              1e-12);
  // The L2 is the calibration's: 8 MB of partials do not fit four fifths
  // of an 8 MB one.
  EXPECT_NEAR(splitSumMs(32, small, 4000, 8e6), 33 * small / 4e12 * 1e3 + 0.004,
              1e-12);
  // kb-run --calibrate records the device's L2 (l2_bytes); without it, the
  // H200's 50 MB.
  std::string path = ::testing::TempDir() + "kb-tune-calibration.json";
  std::ofstream(path) << R"({"GPU": {"copy_bandwidth_gbs": 4000, "l2_bytes": 41943040}})";
  EXPECT_DOUBLE_EQ(loadCalibration(path).l2Bytes, 41943040);
  std::ofstream(path) << R"({"copy_bandwidth_gbs": 4000})";
  EXPECT_DOUBLE_EQ(loadCalibration(path).l2Bytes, 50e6);
}

TEST(TuneModel, GridOccupancyCountsOnlyTheBlocksResident) {
  // As in skinny 16x4096x4096's and odd 1000x700x1500's misses (mma.sync
  // grids of 96-128 blocks credited 2 resident blocks an SM): 64 blocks on
  // 132 SMs whose resources allow 4 an SM (25% occupancy) have one on each
  // SM they use, as a 1-block-an-SM config at 6.25% does.
  Facts f = matmulFacts(16, 4096, 4096, "tf32");
  Calibration cal;
  Candidate c = mm("mma_sync_tf32", "[64, 64, 32]", "4");
  c.fields.insert(c.fields.begin() + 2, {"warp", "[32, 32]"});
  double four = modelTime(f, c, compiled(128, 128, 64, 0.25, 4), cal);
  double one = modelTime(f, c, compiled(128, 128, 64, 0.0625, 1), cal);
  EXPECT_NEAR(four, one, 1e-9);
  // A grid of 4 blocks an SM has them all resident: the occupancy counts.
  Facts big = matmulFacts(2048, 2048, 4096, "tf32");
  double full = modelTime(big, c, compiled(128, 128, 1024, 0.25, 4), cal);
  double thin = modelTime(big, c, compiled(128, 128, 1024, 0.0625, 1), cal);
  EXPECT_LT(full, 0.8 * thin);
}

TEST(TuneModel, PartialTilesCostWholeOnes) {
  // 4000 x 4000 x 4090 in 128 x 256 x 32 tiles does the work of 4096^3
  // (32 x 16 tiles, 128 k steps): compute-bound, the model times both
  // about the same, not 4000 x 4000 x 4090 / 4096^3 = 0.93 of it.
  Calibration cal;
  Static s = compiled(384, 154, 512, 0.19, 1);
  Candidate c = mm("wgmma_tf32", "[128, 256, 32]", "4");
  double odd = modelTime(matmulFacts(4000, 4000, 4090, "tf32"), c, s, cal);
  double full = modelTime(matmulFacts(4096, 4096, 4096, "tf32"), c, s, cal);
  EXPECT_NEAR(odd, full, 0.01 * full);
  EXPECT_GT(odd, 0.97 * full);
}

TEST(TuneModel, MemoryBoundKernelsPayForASecondPass) {
  Facts f;
  f.family = Family::Softmax;
  f.rows = 8192;
  f.cols = 8192;
  f.minimalBytes = 2.0 * 8192 * 8192 * 4;
  Calibration cal;
  Static s = compiled(512, 32, 8192, 1.0, 4);
  Candidate reg, online;
  reg.fields = {{"strategy", "\"registers\""}, {"vector", "4"}};
  online.fields = {{"strategy", "\"online\""}, {"vector", "4"}};
  double r = modelTime(f, reg, s, cal);
  EXPECT_NEAR(r, f.minimalBytes / (cal.copyGBs * 1e9) * 1e3 + 0.004, 1e-3);
  EXPECT_GT(modelTime(f, online, s, cal), 1.4 * r);
}

json report(const std::string &bundle, double median, double spread,
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
