//===- TuneModel.cpp - kb-tune's static model -----------------------------===//
//
// The static facts of a compiled candidate, the calibration and the model
// that ranks candidates without a GPU (see TuneCore.h).
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

// --- Static facts and the model -----------------------------------------

json toJson(const Static &s) {
  return {{"compiled", s.compiled},
          {"pruned", s.pruned},
          {"registers", s.registers},
          {"spill_bytes", s.spillBytes},
          {"threads", s.threads},
          {"shared_bytes", s.sharedBytes},
          {"blocks", s.blocks},
          {"tensor_cores", s.tensorCores},
          {"blocks_per_sm", s.blocksPerSM},
          {"occupancy", s.occupancy},
          {"limiter", s.limiter},
          {"other_kernel_bytes", s.otherKernelBytes},
          {"model_ms", s.modelMs},
          {"rank", s.rank}};
}

/// j[key] as a number, `def` when absent or not a number (a model time of
/// infinity is written as null).
static double num(const json &j, const char *key, double def) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : def;
}

Static staticFromJson(const json &j) {
  Static s;
  s.compiled = j.value("compiled", false);
  s.pruned = j.value("pruned", "");
  s.registers = j.value("registers", 0);
  s.spillBytes = j.value("spill_bytes", 0);
  s.threads = j.value("threads", 0);
  s.sharedBytes = j.value("shared_bytes", 0);
  s.blocks = j.value("blocks", int64_t(0));
  s.tensorCores = j.value("tensor_cores", false);
  s.blocksPerSM = j.value("blocks_per_sm", 0);
  s.occupancy = j.value("occupancy", 0.0);
  s.limiter = j.value("limiter", "");
  s.otherKernelBytes = j.value("other_kernel_bytes", 0.0);
  s.modelMs = num(j, "model_ms", 0.0);
  s.rank = j.value("rank", -1);
  return s;
}

Calibration loadCalibration(const std::string &path) {
  checkRegularFile(path, "calibration");
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read calibration '" + path + "'");
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception &e) {
    throw std::runtime_error("calibration '" + path + "' is not JSON");
  }
  // kb-run's cache: {device name: figures}; take the first device's.
  if (j.is_object() && !j.contains("copy_bandwidth_gbs")) {
    for (auto &[name, v] : j.items())
      if (v.is_object() && v.contains("copy_bandwidth_gbs")) {
        j = v;
        break;
      }
  }
  if (!j.is_object() || !j.contains("copy_bandwidth_gbs") ||
      !j["copy_bandwidth_gbs"].is_number())
    throw std::runtime_error("calibration '" + path +
                             "' has no copy_bandwidth_gbs (write it with "
                             "kb-run --calibrate)");
  Calibration c;
  c.copyGBs = j["copy_bandwidth_gbs"];
  c.fp32Tflops = j.value("cublas_fp32_tflops", c.fp32Tflops);
  c.tf32Tflops = j.value("cublas_tf32_tflops", c.tf32Tflops);
  if (j.contains("l2_bytes") && j["l2_bytes"].is_number() &&
      j["l2_bytes"].get<double>() > 0)
    c.l2Bytes = j["l2_bytes"];
  c.source = "kb-run --calibrate (" + path + ")";
  return c;
}

std::vector<int64_t> sizes(const std::string &text) {
  std::vector<int64_t> out;
  std::string num;
  for (char ch : text) {
    if (std::isdigit(static_cast<unsigned char>(ch)))
      num += ch;
    else if (!num.empty()) {
      out.push_back(std::stoll(num));
      num.clear();
    }
  }
  if (!num.empty())
    out.push_back(std::stoll(num));
  return out;
}


double splitSumMs(int64_t split, double outBytes, double copyGBs,
                  double l2Bytes) {
  // Partials that fit in L2 (four fifths of it: 40 MB of the H200's 50) are written
  // and read back there, at the L2 rate the tile loads use (three times
  // the copy's): charged at DRAM's, a split of 32 over 256 x 256 looked
  // 10% slower than one of 16, where the H200 measured it 7% faster (long
  // K 256x256x16384, 2026-12-02-tune5).
  double bw = copyGBs * 1e9;
  double partBw = split * outBytes <= 0.8 * l2Bytes ? 3 * bw : bw;
  return (split + 1) * outBytes / partBw * 1e3 + 0.004;
}

double modelTime(const Facts &f, const Candidate &c, const Static &s,
                 const Calibration &cal) {
  if (!s.compiled || !s.pruned.empty())
    return std::numeric_limits<double>::infinity();
  const double launchMs = 0.004;
  double bw = cal.copyGBs * 1e9; // bytes/s
  int sms = std::max(cal.sms, 1);
  int64_t blocks = std::max<int64_t>(s.blocks, 1);
  // Blocks the busiest SM runs one after the other, against a perfect
  // spread: the wave quantization of the grid.
  double perSM = std::ceil(double(blocks) / sms);
  double balance = double(blocks) / (perSM * sms);
  // The grid's real occupancy: a grid of fewer blocks than the SMs hold
  // (ceil(blocks / SMs) < the blocks per SM the resources allow) keeps
  // only that many resident, so only their share of the theoretical
  // occupancy hides latency.
  double occ = s.occupancy;
  if (s.blocksPerSM > 0)
    occ *= std::min<double>(s.blocksPerSM, perSM) / s.blocksPerSM;
  // Warps to hide latency: a quarter of the SM's warps is enough.
  double occEff = std::min(1.0, 0.4 + 2.4 * occ);
  double otherMs =
      s.otherKernelBytes > 0 ? s.otherKernelBytes / bw * 1e3 + launchMs : 0;
  double t;
  if (f.family == Family::Matmul) {
    std::string unit = c.get("mma");
    double peak = unit == "\"ffma\""         ? cal.fp32Tflops
                  : unit == "\"wgmma_tf32\"" ? cal.tf32Tflops
                  : unit == "\"mma_sync_tf32\""
                      ? cal.tf32Tflops * cal.mmaSyncFraction
                      : cal.tf32Tflops * cal.mmaSyncFraction / 3;
    // wgmma is asynchronous and fed by TMA: a warpgroup per 64 rows keeps
    // the tensor cores busy without many warps (its stages hide latency).
    // mma.sync: a warp's independent mma per k step grow with its warp
    // tile (a 64 x 64 tile has four times the accumulators of a 32 x 32
    // one), so fewer resident warps hide as much latency.
    double unitOcc = occEff;
    if (unit == "\"wgmma_tf32\"")
      unitOcc = 1.0;
    else if (auto w = sizes(c.get("warp")); w.size() == 2)
      unitOcc = std::min(1.0, 0.4 + 2.4 * occ * double(w[0] * w[1]) / 1024);
    auto b = sizes(c.get("block"));
    // The work the tiles do: a partial tile at an edge of M, N or K costs
    // a whole one (kb pads or masks it, the mma runs on all of it).
    double flops = f.flops;
    if (b.size() == 3 && f.m > 0 && f.n > 0 && f.k > 0)
      flops *= std::ceil(double(f.m) / b[0]) * b[0] / f.m *
               (std::ceil(double(f.n) / b[1]) * b[1] / f.n) *
               (std::ceil(double(f.k) / b[2]) * b[2] / f.k);
    double compute = flops / (peak * 1e12 * balance * unitOcc) * 1e3;
    // Split-K into S chunks: the grid has S blocks per tile (s.blocks
    // counts them: the balance above sees the fuller grid); each block
    // loads 1/S of K, so the tile loads are the same; the partials are
    // S x M x N floats written instead of M x N, and kb.split_sum reads
    // them and writes M x N: 8 x S x M x N bytes in all, and a launch.
    int64_t split = std::max<int64_t>(1, count(c, "split"));
    double outBytes = 4.0 * f.batch * f.m * f.n;
    double mem = (f.minimalBytes + (split - 1) * outBytes) / bw * 1e3;
    if (b.size() == 3) {
      double tiles =
          std::ceil(double(f.m) / b[0]) * std::ceil(double(f.n) / b[1]);
      double l2Bytes = f.batch * tiles * double(b[0] + b[1]) * f.k * 4;
      mem = std::max(mem, l2Bytes / (3 * bw) * 1e3);
    }
    // Shallow pipelines expose the copies' latency: the stages in flight
    // (stages - 1 per block, for every block resident on the SM) must
    // cover a tile load's latency with the k steps they feed, each 2 x BM
    // x BN x BK flops at the SM's rate. One stage (register copies)
    // overlaps nothing. The latency is the loaded one, 1 us: with 600 ns
    // (the idle figure) three wgmma stages covered it, where kb-tune's
    // exhaustive H200 run (2026-12-02-tune5) measured three stages slower
    // than the best of four and five in 163 of 167 tile groups (median
    // 1.23x); that is what misled guided on odd 1023x1025x1027 (+4.1%).
    int64_t stages = count(c, "stages");
    double stageEff = 0.75;
    if (stages >= 2 && b.size() == 3) {
      double resident = std::max<double>(
          1, std::min<double>(std::max(s.blocksPerSM, 1), perSM));
      double kStepMs = 2.0 * b[0] * b[1] * b[2] / (peak * 1e12 / sms) * 1e3;
      double covered = (stages - 1) * resident * kStepMs / 0.001;
      stageEff = 0.5 + 0.5 * std::min(1.0, covered);
    } else if (stages >= 2) {
      stageEff = stages >= 3 ? 1.0 : 0.9;
    }
    compute /= stageEff;
    // A grid that leaves SMs idle draws only their share of the bandwidth
    // (and a partial last wave as much): the memory side is derated by
    // the same balance as the compute side.
    mem /= unitOcc * balance;
    // The two overlap, not perfectly: a tenth of the smaller one shows.
    t = std::max(compute, mem) + 0.1 * std::min(compute, mem);
    if (split > 1)
      t += splitSumMs(split, outBytes, cal.copyGBs, cal.l2Bytes);
  } else {
    double passes = c.get("strategy") == "\"online\"" ? 1.5 : 1.0;
    int64_t vector = std::max<int64_t>(1, std::atoll(c.get("vector").c_str()));
    double vecEff = vector >= 4 ? 1.0 : vector == 2 ? 0.93 : 0.8;
    std::string strategy = c.get("strategy");
    int64_t parts = std::max<int64_t>(1, count(c, "cluster"));
    double part = f.cols > 0 ? double(f.cols) / parts : 0;
    // Bytes in flight an SM needs to cover DRAM latency (about 19 KB on
    // the H200: 4.2 TB/s x 600 ns / 132 SMs), from the threads resident.
    // A streaming loop (online, split_global, elementwise) has one vector
    // a thread in flight; the registers and split strategies load their
    // whole part of the row into registers before they reduce it, so a
    // thread has all of its elements in flight (up to 32), whatever the
    // vector width.
    double resident = std::min(double(std::max(s.blocksPerSM, 1)) * s.threads,
                               double(blocks) * s.threads / sms);
    double inFlight = vector;
    if (f.family == Family::Softmax &&
        (strategy == "\"registers\"" || strategy == "\"split\"") && part > 0)
      inFlight = std::max<double>(
          vector, std::min(32.0, std::ceil(part / std::max(s.threads, 1))));
    double latEff = std::min(1.0, resident * inFlight * 4 / 19000.0);
    // Lanes that hold part of a row: a row (or a cluster's part of it)
    // shorter than threads x vector leaves the others idle.
    double lanes = double(std::max(s.threads, 1)) * vector;
    double laneEff = part > 0 ? part / (std::ceil(part / lanes) * lanes) : 1;
    if (f.family == Family::Elementwise)
      laneEff = 1;
    // Exchanging partials costs a little per block of a row: through a
    // cluster's shared memory, more through global memory.
    double exchange = strategy == "\"split\""          ? 1 + 0.03 * parts
                      : strategy == "\"split_global\"" ? 1 + 0.05 * parts
                                                       : 1;
    t = f.minimalBytes * passes * exchange /
        (bw * vecEff * std::max(latEff * laneEff, 0.05)) * 1e3;
  }
  t *= 1 + s.spillBytes / 128.0;
  return t + launchMs + otherMs;
}

void rankByModel(std::vector<Static> &st) {
  std::vector<int> idx;
  for (int i = 0; i < int(st.size()); ++i)
    if (st[i].compiled && st[i].pruned.empty())
      idx.push_back(i);
    else
      st[i].rank = -1;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int a, int b) { return st[a].modelMs < st[b].modelMs; });
  for (int r = 0; r < int(idx.size()); ++r)
    st[idx[r]].rank = r;
}

} // namespace kbtune
