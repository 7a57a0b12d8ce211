// kb-run's diagnosis (lib/Runtime/Verdict.cpp): one test per rule, each with
// the case that must not fire it, and the ceilings of the units. The facts
// are what kb-run reads from a bundle and measures (KernelFacts,
// ProgramFacts); the numbers are H200 figures kb-run has reported.
#include "kb/Runtime/Occupancy.h"
#include "kb/Runtime/Verdict.h"

#include <algorithm>

#include <gtest/gtest.h>

using namespace kb::runtime;
using nlohmann::json;

namespace {

/// A kernel of `blocks` blocks of `threads` threads, its occupancy from
/// Occupancy.cpp.
KernelFacts kernel(const std::string &name, int64_t blocks, int threads,
                   int registers, int shared, const std::string &config) {
  KernelFacts k;
  k.name = name;
  k.blocks = blocks;
  k.threads = threads;
  k.registers = registers;
  k.sharedBytes = shared;
  Occupancy o = theoreticalOccupancy(threads, registers, shared);
  k.blocksPerSM = o.blocksPerSM;
  k.occupancy = o.fraction;
  k.occupancyLimiter = o.limiter;
  k.config = parseConfigText(config);
  k.unit = k.config.mma;
  return k;
}

const char *kWgmma = "#kb.config<block = [128, 256, 32], threads = 288, "
                     "stages = 4, pad = [0, 0], mma = \"wgmma_tf32\", copy = "
                     "\"tma\">";
const char *kMmaSync = "#kb.config<block = [128, 128, 32], warp = [64, 32], "
                       "threads = 256, stages = 3, pad = [4, 8], mma = "
                       "\"mma_sync_tf32\", copy = \"cp_async\">";
const char *kFfma = "#kb.config<block = [128, 128, 32], warp = [32, 64], "
                    "thread = [8, 8], threads = 256, stages = 3, pad = [4, 0], "
                    "mma = \"ffma\">";

/// A lone matmul M x N x K on one kernel, timed at `tflops`.
ProgramFacts matmul(int64_t m, int64_t n, int64_t k, const char *config,
                    const std::string &precision, double tflops,
                    int registers = 128, int shared = 0) {
  ProgramFacts p;
  p.sms = 132;
  p.hopper = true;
  p.precision = precision;
  p.flops = 2.0 * m * n * k;
  p.minBytes = 4.0 * (m * k + k * n + m * n);
  p.movedBytes = p.minBytes;
  p.copyGBs = 4200;
  ConfigFields c = parseConfigText(config);
  int64_t blocks =
      ((m + c.block[0] - 1) / c.block[0]) * ((n + c.block[1] - 1) / c.block[1]);
  KernelFacts kf =
      kernel("k0_matmul", blocks, int(c.threads), registers, shared, config);
  kf.matmul = true;
  kf.tensorInstructions = c.mma != "ffma";
  kf.m = m;
  kf.n = n;
  kf.k = k;
  p.kernels.push_back(kf);
  p.unit = unitCeiling(c.mma, nullptr, true);
  if (tflops > 0) {
    p.timed = true;
    p.achievedTflops = tflops;
    p.timeMs = p.flops / (tflops * 1e12) * 1e3;
    p.achievedGBs = p.minBytes / (p.timeMs * 1e-3) / 1e9;
    p.kernels[0].timeMs = p.timeMs;
  }
  return p;
}

/// A memory-bound program of `kernels` elementwise kernels over `bytes`,
/// timed at `gbs`.
ProgramFacts elementwise(double minBytes, double movedBytes, double gbs,
                         const char *config, int kernels = 1,
                         double scratch = 0) {
  ProgramFacts p;
  p.sms = 132;
  p.hopper = true;
  p.minBytes = minBytes;
  p.movedBytes = movedBytes;
  p.scratchBytes = scratch;
  p.copyGBs = 4200;
  for (int i = 0; i < kernels; ++i)
    p.kernels.push_back(
        kernel("k" + std::to_string(i) + "_ew", 65536, 256, 16, 0, config));
  if (gbs > 0) {
    p.timed = true;
    p.achievedGBs = gbs;
    p.timeMs = minBytes / (gbs * 1e9) * 1e3;
    for (auto &k : p.kernels)
      k.timeMs = p.timeMs / kernels;
  }
  return p;
}

bool hasCause(const Diagnosis &d, const std::string &cause) {
  for (const Finding &f : d.findings)
    if (f.cause == cause)
      return true;
  return false;
}

} // namespace

TEST(Diagnosis, GridUnderfillsSMs) {
  // The matmul: 16 blocks of 128x256 on 132 SMs (512 x 1024 x 8192),
  // at 31 TFLOP/s; ncu called it memory-bound at 6% of DRAM.
  ProgramFacts p = matmul(512, 1024, 8192, kWgmma, "tf32", 31);
  p.kernels[0].hasNcu = true;
  p.kernels[0].ncuDramPct = 6;
  p.kernels[0].ncuSmPct = 11;
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.cause, "grid_underfills_sms");
  EXPECT_EQ(d.lever, "split_k");
  ASSERT_GE(d.levers.size(), 2u);
  EXPECT_EQ(d.levers[0], "split_k");
  EXPECT_EQ(d.levers[1], "smaller_tiles");
  EXPECT_EQ(d.findings[0].text,
            "k0_matmul's grid is 16 blocks on 132 SMs: 116 SMs (88%) idle; K "
            "= 8192 is 256 steps of 32, enough to split 9 ways");
  EXPECT_NE(d.text.find("latency-bound at 9% of the wgmma_tf32 ceiling"),
            std::string::npos)
      << d.text;
  // Short K: nothing to split; smaller tiles first.
  d = diagnose(matmul(512, 1024, 64, kWgmma, "tf32", 0.5));
  EXPECT_EQ(d.cause, "grid_underfills_sms");
  EXPECT_EQ(d.levers, (std::vector<std::string>{"smaller_tiles", "split_k"}));
  // 128 blocks on 132 SMs: 3% idle, not a cause of its own.
  d = diagnose(matmul(512, 4096, 4096,
                      "#kb.config<block = [128, 128, 32], threads = 288, "
                      "stages = 4, mma = \"wgmma_tf32\">",
                      "tf32", 286, 90, 132161));
  EXPECT_FALSE(hasCause(d, "grid_underfills_sms"));
  // A grid that fills the SMs: not this cause.
  d = diagnose(matmul(4096, 4096, 4096, kWgmma, "tf32", 318));
  EXPECT_FALSE(hasCause(d, "grid_underfills_sms"));
}

TEST(Diagnosis, UntimedUnderfilledGridIsLatency) {
  Diagnosis d = diagnose(matmul(512, 1024, 8192, kWgmma, "tf32", 0));
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.cause, "grid_underfills_sms");
  EXPECT_EQ(d.fraction, 0);
  // Untimed and filling the SMs: the roofline's bound, no cause claimed.
  d = diagnose(matmul(4096, 4096, 4096, kWgmma, "tf32", 0));
  EXPECT_EQ(d.bound, "compute");
  EXPECT_EQ(d.cause, "none_found");
  EXPECT_EQ(d.lever, "none");
  EXPECT_TRUE(d.levers.empty());
}

TEST(Diagnosis, PartialLastWave) {
  // 160 blocks, one a SM (shared memory): 1.21 waves, the last 21% full.
  ProgramFacts p = matmul(1280, 4096, 4096, kWgmma, "tf32", 150, 128, 200000);
  ASSERT_EQ(p.kernels[0].blocks, 160);
  ASSERT_EQ(p.kernels[0].blocksPerSM, 1);
  Diagnosis d = diagnose(p);
  ASSERT_TRUE(hasCause(d, "partial_last_wave"));
  EXPECT_EQ(d.cause, "partial_last_wave");
  EXPECT_EQ(d.lever, "smaller_tiles");
  EXPECT_EQ(d.findings[0].text, "k0_matmul's grid is 1.21 waves of 132 blocks "
                                "(1 per SM): the last wave is 21% full");
  // 512 blocks are 3.88 waves: no tail worth a lever.
  d = diagnose(matmul(4096, 4096, 4096, kWgmma, "tf32", 318, 128, 200000));
  EXPECT_FALSE(hasCause(d, "partial_last_wave"));
}

TEST(Diagnosis, SplitPartialsRoundTrip) {
  // A skinny matmul split in 16 chunks: 16 x 64 x 4096 partials (16.8 MB)
  // written and read again against 69 MB of weights and operands (1.49x),
  // then a sum kernel. Memory-bound; the lever is a smaller split, not fusion
  // (the epilogue is already in the sum).
  const char *cfg = "#kb.config<block = [64, 128, 32], threads = 128, "
                    "stages = 4, mma = \"wgmma_tf32\", copy = \"tma\", "
                    "split = 16>";
  ProgramFacts p = matmul(64, 4096, 4096, cfg, "tf32", 80, 128);
  p.kernels[0].blocks = 32 * 16;
  p.scratchBytes = 16.0 * 64 * 4096 * 4;
  p.movedBytes = p.minBytes + 2 * p.scratchBytes;
  KernelFacts sum = p.kernels[0];
  sum.name = "k1_split_sum";
  sum.matmul = false;
  sum.config = parseConfigText("#kb.config<block = [1024], threads = 256, "
                               "vector = 4>");
  sum.timeMs = 0.004;
  p.kernels.push_back(sum);
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.bound, "memory");
  EXPECT_TRUE(hasCause(d, "split_partials_round_trip"));
  EXPECT_FALSE(hasCause(d, "intermediates_round_trip"));
  EXPECT_EQ(d.cause, "split_partials_round_trip");
  EXPECT_EQ(d.lever, "fewer_splits");
  EXPECT_NE(d.findings[0].text.find("k0_matmul splits K in 16 chunks"),
            std::string::npos)
      << d.findings[0].text;
  EXPECT_NE(d.findings[0].text.find("k1_split_sum alone 0.0040 ms"),
            std::string::npos)
      << d.findings[0].text;
}

TEST(Diagnosis, BytesOverTheMinimum) {
  // bias + GELU + dropout unfused: 3 kernels, two intermediates through
  // DRAM, 2.4x the minimal bytes, at 85% of the copy bandwidth.
  const char *ew = "#kb.config<block = [1024], threads = 256, vector = 4>";
  Diagnosis d = diagnose(elementwise(1.07e9, 2.57e9, 3570, ew, 3, 1.07e9));
  EXPECT_EQ(d.bound, "memory");
  EXPECT_EQ(d.cause, "intermediates_round_trip");
  EXPECT_EQ(d.lever, "fusion");
  EXPECT_EQ(d.findings[0].text, "the kernels move 2.40x the minimal bytes: "
                                "1070.0 MB of intermediates go through DRAM "
                                "between kernels");
  // Fused: the minimum moved, 90% of copy: nothing to change.
  d = diagnose(elementwise(1.07e9, 1.07e9, 3780, ew));
  EXPECT_EQ(d.cause, "near_copy_bandwidth");
  EXPECT_EQ(d.lever, "none");
  EXPECT_FALSE(hasCause(d, "intermediates_round_trip"));
  // An online softmax reads its rows twice: no lever in the list fits.
  d = diagnose(elementwise(
      2.15e9, 3.22e9, 3000,
      "#kb.config<block = [1], threads = 1024, vector = 4, strategy = "
      "\"online\">"));
  EXPECT_EQ(d.cause, "two_pass_rows");
  EXPECT_EQ(d.lever, "none");
  // A skinny matmul below the ridge re-reading its operands.
  ProgramFacts p = matmul(16, 8192, 8192, kWgmma, "tf32", 0);
  p.movedBytes = 3 * p.minBytes;
  p.timed = true;
  p.timeMs = 0.08;
  p.achievedGBs = p.minBytes / (p.timeMs * 1e-3) / 1e9;
  p.achievedTflops = p.flops / (p.timeMs * 1e-3) / 1e12;
  p.kernels[0].timeMs = p.timeMs;
  p.kernels[0].blocks = 264;
  d = diagnose(p);
  EXPECT_EQ(d.bound, "memory");
  EXPECT_EQ(d.cause, "operand_rereads");
  EXPECT_EQ(d.lever, "larger_tiles");
  // The same bytes, compute-bound: bytes are not the cause.
  p = matmul(4096, 4096, 4096, kWgmma, "tf32", 318);
  p.movedBytes = 20 * p.minBytes;
  EXPECT_FALSE(hasCause(diagnose(p), "operand_rereads"));
}

TEST(Diagnosis, TensorPipeIdle) {
  // precision tf32 computed on FFMA at 90% of the FFMA ceiling.
  ProgramFacts p = matmul(4096, 4096, 4096, kFfma, "tf32", 50);
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.bound, "compute");
  EXPECT_EQ(d.cause, "tensor_pipe_idle");
  EXPECT_EQ(d.lever, "mma_unit");
  EXPECT_EQ(d.findings[0].text, "k0_matmul computes on ffma though precision "
                                "tf32 allows the tensor cores");
  // precision ieee: the tensor cores are not allowed; FFMA is the unit.
  d = diagnose(matmul(4096, 4096, 4096, kFfma, "ieee", 50));
  EXPECT_FALSE(hasCause(d, "tensor_pipe_idle"));
  EXPECT_EQ(d.cause, "near_unit_ceiling");
  EXPECT_EQ(d.lever, "none");
}

TEST(Diagnosis, GemvLeavesTheTensorPipeIdleByDesign) {
  // A 1 x 4096 x 4096 tf32 matmul at 80% of the copy bandwidth: on ffma it
  // is a finding (the tensor cores were allowed), on gemv, chosen because
  // the weight's bytes decide, it is not.
  const char *kGemv = "#kb.config<block = [1, 4, 512], warp = [1, 1], "
                      "threads = 128, mma = \"gemv\">";
  double tflops =
      2.0 * 4096 * 4096 / (4.0 * 4096 * 4096 / (0.8 * 4200e9)) / 1e12;
  ProgramFacts p = matmul(1, 4096, 4096, kGemv, "tf32", tflops);
  p.kernels[0].tensorInstructions = false;
  EXPECT_FALSE(hasCause(diagnose(p), "tensor_pipe_idle"));
  // Its ceiling is FFMA's.
  EXPECT_EQ(p.unit.tflops, unitCeiling("ffma", nullptr, true).tflops);
  p = matmul(1, 4096, 4096, kFfma, "tf32", tflops);
  EXPECT_TRUE(hasCause(diagnose(p), "tensor_pipe_idle"));
}

TEST(Diagnosis, MmaSyncOnHopper) {
  ProgramFacts p = matmul(4096, 4096, 4096, kMmaSync, "tf32", 280, 128, 60000);
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.cause, "mma_sync_not_wgmma");
  EXPECT_EQ(d.lever, "mma_unit");
  // Not a Hopper GPU: mma.sync is the best unit there.
  p.hopper = false;
  d = diagnose(p);
  EXPECT_FALSE(hasCause(d, "mma_sync_not_wgmma"));
  EXPECT_EQ(d.cause, "near_unit_ceiling");
}

TEST(Diagnosis, GemvStagesAreRegisters) {
  // gemv's `stages` is a register pipeline (MatmulGemv.cpp): neither a
  // shared-memory cap nor a compute gap suggests changing it. (Facts of a
  // compute-bound shape, so that the compute rules are reached.)
  const char *gemv = "#kb.config<block = [1, 32, 512], thread = [1, 4, 16], "
                     "threads = 256, stages = 2, mma = \"gemv\">";
  ProgramFacts p = matmul(4096, 4096, 4096, gemv, "tf32", 20, 64, 200000);
  ASSERT_EQ(p.kernels[0].occupancyLimiter, "shared memory");
  Diagnosis d = diagnose(p);
  EXPECT_TRUE(hasCause(d, "shared_memory_caps_occupancy"));
  EXPECT_EQ(std::find(d.levers.begin(), d.levers.end(), "fewer_stages"),
            d.levers.end());
  EXPECT_EQ(std::find(d.levers.begin(), d.levers.end(), "more_stages"),
            d.levers.end());
  // An FFMA kernel with the same stages and cap is told fewer stages.
  p = matmul(4096, 4096, 4096, kFfma, "ieee", 20, 64, 200000);
  ASSERT_EQ(p.kernels[0].occupancyLimiter, "shared memory");
  d = diagnose(p);
  EXPECT_NE(std::find(d.levers.begin(), d.levers.end(), "fewer_stages"),
            d.levers.end());
  // Below the unit's ceiling with no structural cause: larger tiles, not
  // more stages.
  p = matmul(4096, 4096, 4096, gemv, "tf32", 20, 64, 0);
  d = diagnose(p);
  EXPECT_TRUE(hasCause(d, "compute_below_unit_ceiling"));
  EXPECT_EQ(std::find(d.levers.begin(), d.levers.end(), "more_stages"),
            d.levers.end());
}

TEST(Diagnosis, SpillsAndOccupancy) {
  // Spills: smaller tiles first, then fewer stages.
  ProgramFacts p = matmul(4096, 4096, 4096, kFfma, "ieee", 30);
  p.kernels[0].spillBytes = 96;
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.cause, "register_spills");
  EXPECT_EQ(d.levers[0], "smaller_tiles");
  EXPECT_EQ(d.levers[1], "fewer_stages");
  // Shared memory caps an mma.sync kernel's occupancy at 8 warps of 64,
  // far from the ceiling: fewer stages first.
  p = matmul(4096, 4096, 4096, kMmaSync, "tf32", 60, 64, 200000);
  ASSERT_EQ(p.kernels[0].occupancyLimiter, "shared memory");
  d = diagnose(p);
  EXPECT_EQ(d.cause, "shared_memory_caps_occupancy");
  EXPECT_EQ(d.levers[0], "fewer_stages");
  EXPECT_EQ(d.levers[1], "smaller_tiles");
  // A wgmma kernel as capped and as far: one block a SM is its design and
  // its stages hide the loads (more of them were faster on the H200), so
  // neither the cause nor `fewer_stages` is given.
  p = matmul(4096, 4096, 4096, kWgmma, "tf32", 140, 64, 200000);
  ASSERT_EQ(p.kernels[0].occupancyLimiter, "shared memory");
  d = diagnose(p);
  EXPECT_FALSE(hasCause(d, "shared_memory_caps_occupancy"));
  EXPECT_EQ(std::find(d.levers.begin(), d.levers.end(), "fewer_stages"),
            d.levers.end());
  EXPECT_EQ(d.cause, "compute_below_unit_ceiling");
  // The same kernel near its ceiling.
  p = matmul(4096, 4096, 4096, kWgmma, "tf32", 318, 64, 200000);
  d = diagnose(p);
  EXPECT_FALSE(hasCause(d, "shared_memory_caps_occupancy"));
  EXPECT_EQ(d.cause, "near_unit_ceiling");
  // Registers cap it: 255 registers, 256 threads.
  p = matmul(4096, 4096, 4096, kFfma, "ieee", 20, 255);
  d = diagnose(p);
  EXPECT_EQ(d.cause, "registers_cap_occupancy");
  EXPECT_EQ(d.lever, "smaller_tiles");
}

TEST(Diagnosis, CeilingOfTheUnitUsed) {
  // A wgmma kernel at 334 TFLOP/s (slower than cuBLAS's 356): against the
  // mma.sync ceiling (324) it read 103%; against wgmma's it is 94%.
  ProgramFacts p = matmul(4096, 4096, 4096, kWgmma, "tf32", 334, 128, 200000);
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.bound, "compute");
  EXPECT_NEAR(d.fraction, 334.0 / 356, 1e-12);
  EXPECT_LT(d.fraction, 1.0);
  EXPECT_EQ(d.cause, "near_unit_ceiling");
  EXPECT_EQ(d.text, "compute-bound at 94% of the wgmma_tf32 ceiling (356.0 "
                    "TFLOP/s, nominal: cuBLAS TF32 (wgmma) 8192^3 on the "
                    "H200, run 48): close to the ceiling of the unit it uses; "
                    "lever: none");
  // Below the ceiling: more stages first when there are few.
  p = matmul(4096, 4096, 4096,
             "#kb.config<block = [128, 128, 32], warp = [64, 32], threads = "
             "256, stages = 2, mma = \"mma_sync_tf32\">",
             "tf32", 160, 96, 40000);
  p.hopper = false;
  d = diagnose(p);
  EXPECT_EQ(d.cause, "compute_below_unit_ceiling");
  EXPECT_EQ(d.levers,
            (std::vector<std::string>{"more_stages", "larger_tiles"}));
}

TEST(Diagnosis, MemoryBelowCopy) {
  Diagnosis d = diagnose(
      elementwise(1.07e9, 1.07e9, 2500,
                  "#kb.config<block = [1024], threads = 256, vector = 2>"));
  EXPECT_EQ(d.bound, "memory");
  EXPECT_EQ(d.cause, "memory_below_copy");
  EXPECT_EQ(d.lever, "vector_width");
  d = diagnose(
      elementwise(1.07e9, 1.07e9, 2500,
                  "#kb.config<block = [1024], threads = 256, vector = 4>"));
  EXPECT_EQ(d.lever, "smaller_tiles");
}

TEST(Diagnosis, SizeCapsBandwidth) {
  // bias + GELU + dropout 4096x1024 (run 3): 60% of the copy bandwidth, but
  // a copy of the same 33.6 MB reaches 52% and kb 115% of that copy.
  ProgramFacts p =
      elementwise(33.6e6, 33.6e6, 2520,
                  "#kb.config<block = [1024], threads = 256, vector = 4>");
  p.sameSizeCopyFraction = 0.52;
  p.overSameSizeCopy = 1.15;
  Diagnosis d = diagnose(p);
  EXPECT_EQ(d.bound, "memory");
  EXPECT_EQ(d.cause, "size_caps_bandwidth");
  EXPECT_EQ(d.lever, "none");
  // The same copy fast, the kernel slower than it: the kernel's to fix.
  p.sameSizeCopyFraction = 0.95;
  p.overSameSizeCopy = 0.63;
  d = diagnose(p);
  EXPECT_EQ(d.cause, "memory_below_copy");
}

TEST(Diagnosis, LatencyCauses) {
  // 4 us for one kernel at 5% of copy: launch and ramp-up.
  Diagnosis d = diagnose(
      elementwise(1e6, 1e6, 250, "#kb.config<block = [1024], threads = 256>"));
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.cause, "launch_overhead");
  EXPECT_EQ(d.lever, "none");
  // Three such kernels: fusing them saves two launches.
  d = diagnose(elementwise(1e6, 1e6, 250,
                           "#kb.config<block = [1024], threads = 256>", 3));
  EXPECT_EQ(d.lever, "fusion");
  // A long kernel far from the copy bandwidth with nothing static to
  // blame: said so, no lever invented.
  d = diagnose(
      elementwise(1e9, 1e9, 500, "#kb.config<block = [1024], threads = 256>"));
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.cause, "latency_unexplained");
  EXPECT_EQ(d.lever, "none");
  // ncu: neither DRAM nor the SMs busy is latency, whatever ncu's own
  // bound says.
  ProgramFacts p =
      elementwise(1e9, 1e9, 0, "#kb.config<block = [1024], threads = 256>");
  p.kernels[0].hasNcu = true;
  p.kernels[0].ncuDramPct = 6;
  p.kernels[0].ncuSmPct = 9;
  p.kernels[0].ncuOccupancyPct = 12;
  d = diagnose(p);
  EXPECT_EQ(d.bound, "latency");
  EXPECT_EQ(d.cause, "low_achieved_occupancy");
  p.kernels[0].ncuDramPct = 80;
  EXPECT_EQ(diagnose(p).bound, "memory");
}

TEST(Diagnosis, JsonAndVerdictText) {
  Diagnosis d = diagnose(matmul(512, 1024, 8192, kWgmma, "tf32", 31));
  json j = diagnosisJson(d);
  EXPECT_EQ(j["bound"], "latency");
  EXPECT_EQ(j["cause"], "grid_underfills_sms");
  EXPECT_EQ(j["lever"], "split_k");
  EXPECT_TRUE(j["levers"].is_array());
  EXPECT_TRUE(j["text"].is_string());
  EXPECT_EQ(j["findings"][0]["cause"], "grid_underfills_sms");
  EXPECT_EQ(j["findings"][0]["kernel"], "k0_matmul");
  std::string v = "compute-bound in principle, latency-bound in practice "
                  "(intensity 1.0 flop/byte, ridge 2.0; 9% of the compute "
                  "ceiling)";
  EXPECT_EQ(verdictWithCause(v, d),
            v + "; cause: k0_matmul's grid is 16 blocks on 132 SMs: 116 SMs "
                "(88%) idle; K = 8192 is 256 steps of 32, enough to split 9 "
                "ways (lever: split_k)");
  EXPECT_EQ(verdictWithCause("memory-bound (99% of the copy bandwidth)", d),
            "memory-bound (99% of the copy bandwidth)");
}

TEST(Ceilings, NominalAndCalibrated) {
  Ceiling c = unitCeiling("wgmma_tf32", nullptr, true);
  EXPECT_EQ(c.tflops, 356.0);
  EXPECT_FALSE(c.measured);
  EXPECT_EQ(c.source.rfind("nominal: ", 0), 0u);
  EXPECT_EQ(unitCeiling("mma_sync_tf32", nullptr, true).tflops, 324.0);
  EXPECT_EQ(unitCeiling("mma_sync_tf32x3", nullptr, true).tflops, 108.0);
  EXPECT_EQ(unitCeiling("ffma", nullptr, true).tflops, 55.8);
  EXPECT_EQ(unitCeiling("bogus", nullptr, true).tflops, 0);
  // This kb-run's calibration: per unit.
  json cal = {{"measured", "2026-12-01T12:00:00Z"},
              {"cublas_fp32_tflops", 51.0},
              {"cublas_tf32_tflops", 350.0},
              {"units",
               {{"ffma", {{"tflops", 51.2}, {"source", "cuBLAS fp32 8192^3"}}},
                {"wgmma_tf32",
                 {{"tflops", 362.0}, {"source", "cuBLAS TF32 8192^3"}}}}}};
  c = unitCeiling("wgmma_tf32", cal, true);
  EXPECT_EQ(c.tflops, 362.0);
  EXPECT_TRUE(c.measured);
  EXPECT_EQ(c.source, "cuBLAS TF32 8192^3, calibrated 2026-12-01T12:00:00Z");
  EXPECT_EQ(unitCeiling("ffma", cal, true).tflops, 51.2);
  // mma.sync is not measured on Hopper (cuBLAS runs wgmma): nominal, never
  // wgmma's figure.
  c = unitCeiling("mma_sync_tf32", cal, true);
  EXPECT_EQ(c.tflops, 324.0);
  EXPECT_FALSE(c.measured);
  // 16-bit mma.sync: nominal (twice the TF32 loop's figure), and twice a
  // calibrated TF32 mma.sync loop where one was measured; its own
  // measurement first.
  EXPECT_EQ(unitCeiling("mma_sync_bf16", nullptr, true).tflops, 648.0);
  EXPECT_FALSE(unitCeiling("mma_sync_f16", cal, true).measured);
  json tf32Loop = {{"measured", "2026-12-07T06:00:00Z"},
                   {"units",
                    {{"mma_sync_tf32",
                      {{"tflops", 300.0}, {"source", "kb mma_sync_tf32"}}}}}};
  c = unitCeiling("mma_sync_bf16", tf32Loop, true);
  EXPECT_EQ(c.tflops, 600.0);
  EXPECT_TRUE(c.measured);
  EXPECT_EQ(c.source,
            "twice kb mma_sync_tf32, calibrated 2026-12-07T06:00:00Z");
  tf32Loop["units"]["mma_sync_f16"] = {{"tflops", 500.0}};
  EXPECT_EQ(unitCeiling("mma_sync_f16", tf32Loop, true).tflops, 500.0);
  // An older calibration (cuBLAS fp32 and TF32 only): TF32 is wgmma's on
  // Hopper, mma.sync's elsewhere.
  json old = {{"measured", "2026-11-30T10:00:00Z"},
              {"cublas_fp32_tflops", 51.0},
              {"cublas_tf32_tflops", 350.0}};
  EXPECT_EQ(unitCeiling("wgmma_tf32", old, true).tflops, 350.0);
  EXPECT_EQ(unitCeiling("mma_sync_tf32", old, true).tflops, 324.0);
  EXPECT_EQ(unitCeiling("mma_sync_tf32", old, false).tflops, 350.0);
  EXPECT_NEAR(unitCeiling("mma_sync_tf32x3", old, false).tflops, 350.0 / 3,
              1e-12);
  EXPECT_EQ(unitCeiling("ffma", old, true).tflops, 51.0);
  // Garbage in the cache file is ignored, not trusted.
  json bad = {{"units", {{"ffma", {{"tflops", "fast"}}}}},
              {"cublas_fp32_tflops", -3}};
  EXPECT_EQ(unitCeiling("ffma", bad, true).tflops, 55.8);
}

TEST(ConfigText, Fields) {
  ConfigFields f = parseConfigText(kWgmma);
  EXPECT_EQ(f.block, (std::vector<int64_t>{128, 256, 32}));
  EXPECT_EQ(f.mma, "wgmma_tf32");
  EXPECT_EQ(f.copy, "tma");
  EXPECT_EQ(f.stages, 4);
  EXPECT_EQ(f.threads, 288);
  EXPECT_EQ(f.vector, 0);
  f = parseConfigText("#kb.config<block = [4], threads = 1024, vector = 4, "
                      "strategy = \"split\", cluster = 8>");
  EXPECT_EQ(f.block, (std::vector<int64_t>{4}));
  EXPECT_EQ(f.strategy, "split");
  EXPECT_EQ(f.cluster, 8);
  EXPECT_EQ(f.vector, 4);
  EXPECT_EQ(f.mma, "");
  // Untrusted text: nothing parsed, nothing thrown.
  f = parseConfigText("stages = 99999999999999999999 mma = \"\" block = [x]");
  EXPECT_TRUE(f.block.empty());
  EXPECT_EQ(f.stages, 0);
  EXPECT_EQ(f.mma, "");
}
