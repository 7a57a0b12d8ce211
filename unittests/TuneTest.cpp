//===- TuneTest.cpp - kb-tune's space and cost model --------------------===//

#include "TuneCore.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

using namespace kbtune;

#include "TuneTestHelpers.h"

using namespace kbtune::test;

namespace {

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

} // namespace
