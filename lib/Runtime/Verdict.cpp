//===- Verdict.cpp - which ceiling binds a measured program, and why ------===//

#include "kb/Runtime/Verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <string>

using namespace kb::runtime;
using nlohmann::json;

Verdict kb::runtime::classify(double flops, double minBytes, double achievedGBs,
                              double achievedTflops, double copyGBs,
                              double computeTflops, double deviceTflops,
                              const std::string &computeName) {
  Verdict v;
  if (flops > 0) {
    double intensity = flops / minBytes;
    double peak = deviceTflops > 0 ? deviceTflops : computeTflops;
    v.ridge = peak * 1e12 / (copyGBs * 1e9);
    v.memoryBound = intensity < v.ridge;
    v.fraction =
        v.memoryBound ? achievedGBs / copyGBs : achievedTflops / computeTflops;
    v.text = v.memoryBound ? "memory-bound" : "compute-bound";
    if (v.fraction < 0.25)
      v.text += " in principle, latency-bound in practice";
    else if (!v.memoryBound && computeTflops < 0.25 * peak)
      v.text += " in principle, latency-bound at this size (the compute "
                "ceiling here, "
                "cuBLAS at this shape, is " +
                std::to_string(int(100 * computeTflops / peak + 0.5)) +
                "% of the device's)";
    char buf[300];
    snprintf(buf, sizeof buf,
             " (intensity %.1f flop/byte, ridge %.1f; %.0f%% of %s)", intensity,
             v.ridge, 100 * v.fraction,
             v.memoryBound ? "the copy ceiling" : computeName.c_str());
    v.text += buf;
    return v;
  }
  v.fraction = achievedGBs / copyGBs;
  v.text = v.fraction < 0.25 ? "latency-bound (memory-bound work at "
                             : "memory-bound (";
  char buf[100];
  snprintf(buf, sizeof buf, "%.0f%% of the copy bandwidth)", 100 * v.fraction);
  v.text += buf;
  return v;
}

//===----------------------------------------------------------------------===//
// Ceilings
//===----------------------------------------------------------------------===//

namespace {

/// The H200 figures of docs/performance.md ("Ceilings and targets").
struct Nominal {
  const char *unit;
  double tflops;
  const char *source;
};
constexpr Nominal kNominal[] = {
    {"ffma", 55.8, "nominal: FFMA register loop on the H200"},
    {"mma_sync_tf32", 324.0,
     "nominal: mma.sync.m16n8k8 TF32 register loop on the H200"},
    {"mma_sync_tf32x3", 108.0,
     "nominal: a third of the mma.sync TF32 loop on the H200 (three mma.sync "
     "per product)"},
    {"wgmma_tf32", 356.0,
     "nominal: cuBLAS TF32 (wgmma) 8192^3 on the H200, run 48"},
    // Not yet measured on the H200 by kb: the datasheet's dense figure
    // until kb-run --calibrate measures cuBLAS bf16/f16 at 8192^3.
    {"wgmma_bf16", 989.0,
     "nominal: the H200 datasheet's dense bf16 tensor-core rate"},
    {"wgmma_f16", 989.0,
     "nominal: the H200 datasheet's dense f16 tensor-core rate"},
    // Not measured: an m16n8k16 does twice the flops of an m16n8k8 tf32 in
    // the same issue slots, so twice the TF32 register loop's figure.
    {"mma_sync_bf16", 648.0,
     "nominal: twice the mma.sync.m16n8k8 TF32 register loop on the H200 "
     "(m16n8k16 bf16; not measured)"},
    {"mma_sync_f16", 648.0,
     "nominal: twice the mma.sync.m16n8k8 TF32 register loop on the H200 "
     "(m16n8k16 f16; not measured)"},
};

double number(const json &j, const char *key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number())
    return 0;
  double v = j[key].get<double>();
  return std::isfinite(v) && v > 0 ? v : 0;
}

} // namespace

Ceiling kb::runtime::unitCeiling(const std::string &unitName,
                                 const json &calibration, bool hopper) {
  // gemv computes in fp32 FMAs: FFMA's ceiling (it is bound by its bytes
  // long before).
  const std::string &unit = unitName == "gemv" ? std::string("ffma") : unitName;
  Ceiling c;
  const Nominal *nominal = nullptr;
  for (const Nominal &n : kNominal)
    if (unit == n.unit)
      nominal = &n;
  if (!nominal) {
    c.source = "unknown unit '" + unit + "'";
    return c;
  }
  std::string when = calibration.is_object() &&
                             calibration.contains("measured") &&
                             calibration["measured"].is_string()
                         ? calibration["measured"].get<std::string>()
                         : "?";
  // The units kb-run --calibrate measured, by name.
  auto measuredUnit = [&](const std::string &name, double scale,
                          const std::string &how) {
    if (!calibration.is_object() || !calibration.contains("units") ||
        !calibration["units"].is_object() ||
        !calibration["units"].contains(name))
      return false;
    const json &u = calibration["units"][name];
    double t = number(u, "tflops");
    if (t <= 0)
      return false;
    c.tflops = t * scale;
    std::string src = u.contains("source") && u["source"].is_string()
                          ? u["source"].get<std::string>()
                          : name;
    c.source = how + src + ", calibrated " + when;
    c.measured = true;
    return true;
  };
  if (unit == "mma_sync_tf32x3") {
    if (measuredUnit("mma_sync_tf32", 1.0 / 3, "a third of "))
      return c;
  } else if (measuredUnit(unit, 1.0, "")) {
    return c;
  }
  // 16-bit mma.sync (m16n8k16) issues twice the flops of TF32's m16n8k8 in
  // the same slots: twice a measured TF32 mma.sync loop where only that one
  // was calibrated.
  if ((unit == "mma_sync_bf16" || unit == "mma_sync_f16") &&
      measuredUnit("mma_sync_tf32", 2.0, "twice "))
    return c;
  // A calibration of an older kb-run: cuBLAS fp32 and TF32 at 8192^3 only.
  double legacy = 0;
  std::string legacyName;
  if (unit == "ffma") {
    legacy = number(calibration, "cublas_fp32_tflops");
    legacyName = "cuBLAS fp32 8192^3 (FFMA)";
  } else if (unit == "wgmma_tf32" && hopper) {
    legacy = number(calibration, "cublas_tf32_tflops");
    legacyName = "cuBLAS TF32 8192^3 (wgmma)";
  } else if ((unit == "mma_sync_tf32" || unit == "mma_sync_tf32x3") &&
             !hopper) {
    legacy = number(calibration, "cublas_tf32_tflops");
    legacyName = "cuBLAS TF32 8192^3 (mma.sync)";
    if (unit == "mma_sync_tf32x3") {
      legacy /= 3;
      legacyName = "a third of " + legacyName;
    }
  }
  if (legacy > 0) {
    c.tflops = legacy;
    c.source = legacyName + ", calibrated " + when;
    c.measured = true;
    return c;
  }
  c.tflops = nominal->tflops;
  c.source = nominal->source;
  return c;
}

//===----------------------------------------------------------------------===//
// #kb.config text
//===----------------------------------------------------------------------===//

ConfigFields kb::runtime::parseConfigText(const std::string &config) {
  ConfigFields f;
  auto count = [&](const char *name) -> int64_t {
    std::smatch m;
    std::regex re(std::string("[<, ]") + name + " = (\\d{1,9})\\b");
    if (std::regex_search(config, m, re))
      return std::stoll(m[1]);
    return 0;
  };
  auto word = [&](const char *name) -> std::string {
    std::smatch m;
    std::regex re(std::string("[<, ]") + name + " = \"([a-z0-9_]{1,40})\"");
    if (std::regex_search(config, m, re))
      return m[1];
    return "";
  };
  std::smatch m;
  if (std::regex_search(config, m,
                        std::regex("[<, ]block = \\[([0-9, ]{1,64})\\]"))) {
    std::string list = m[1];
    std::regex num("\\d{1,9}");
    for (auto it = std::sregex_iterator(list.begin(), list.end(), num);
         it != std::sregex_iterator(); ++it)
      f.block.push_back(std::stoll(it->str()));
  }
  f.mma = word("mma");
  f.strategy = word("strategy");
  f.copy = word("copy");
  f.stages = count("stages");
  f.vector = count("vector");
  f.threads = count("threads");
  f.split = count("split");
  f.cluster = count("cluster");
  return f;
}

//===----------------------------------------------------------------------===//
// Diagnosis
//===----------------------------------------------------------------------===//

namespace {

std::string fmt(const char *f, double a) {
  char buf[64];
  snprintf(buf, sizeof buf, f, a);
  return buf;
}

std::string pct(double fraction) { return fmt("%.0f%%", 100 * fraction); }

std::string mb(double bytes) { return fmt("%.1f MB", bytes / 1e6); }

/// A grid that leaves at least a tenth of the SMs without a block (128
/// blocks on 132 SMs lose 3%: not worth a lever of its own).
bool underfills(const KernelFacts &k, const ProgramFacts &p) {
  return k.blocks > 0 && p.sms > 0 && double(k.blocks) <= 0.9 * p.sms;
}

bool allowsTensorCores(const std::string &precision) {
  return precision == "tf32" || precision == "tf32x3";
}

/// The kernel the program's time is in: the slowest alone; untimed, the
/// matmul (first), else the one moving the most bytes.
size_t dominantKernel(const ProgramFacts &p) {
  size_t best = 0;
  bool timed = false;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].timeMs > 0 &&
        (!timed || p.kernels[i].timeMs > p.kernels[best].timeMs)) {
      best = i;
      timed = true;
    }
  if (timed)
    return best;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].matmul)
      return i;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].modelledBytes > p.kernels[best].modelledBytes)
      best = i;
  return best;
}

/// Every rule, each finding with its priority; the bound orders them.
struct Rules {
  const ProgramFacts &p;
  const KernelFacts *k = nullptr; // the dominant kernel
  bool memory = false, latency = false;
  double fraction = 0;
  std::vector<std::pair<int, Finding>> found;

  void add(int priority, const std::string &cause, const KernelFacts *about,
           const std::string &text, std::vector<std::string> levers) {
    found.push_back(
        {priority, Finding{cause, about ? about->name : "", text, levers}});
  }

  // Priorities: lower first. One table per bound.
  int prio(const std::string &cause) const {
    // clang-format off
    static const char *latencyOrder[] = {
        "launch_overhead",
        "size_caps_bandwidth",
        "grid_underfills_sms",
        "partial_last_wave",
        "register_spills",
        "shared_memory_caps_occupancy",
        "registers_cap_occupancy",
        "low_achieved_occupancy",
        "tensor_pipe_idle", // the causes above explain a latency verdict
        "intermediates_round_trip",
        "split_partials_round_trip",
        "operand_rereads",
        "two_pass_rows",
        "excess_bytes",
        "mma_sync_not_wgmma",
        "latency_unexplained"};
    static const char *memoryOrder[] = {
        "intermediates_round_trip",
        "split_partials_round_trip",
        "operand_rereads",
        "two_pass_rows",
        "excess_bytes",
        "grid_underfills_sms",
        "partial_last_wave",
        "register_spills",
        "shared_memory_caps_occupancy",
        "registers_cap_occupancy",
        "low_achieved_occupancy",
        "size_caps_bandwidth",
        "memory_below_copy",
        "near_copy_bandwidth",
        "tensor_pipe_idle",
        "mma_sync_not_wgmma",
        "launch_overhead"};
    static const char *computeOrder[] = {
        "tensor_pipe_idle",
        "grid_underfills_sms",
        "partial_last_wave",
        "register_spills",
        "shared_memory_caps_occupancy",
        "registers_cap_occupancy",
        "low_achieved_occupancy",
        "mma_sync_not_wgmma",
        "compute_below_unit_ceiling",
        "near_unit_ceiling",
        "intermediates_round_trip",
        "split_partials_round_trip",
        "operand_rereads",
        "excess_bytes",
        "launch_overhead"};
    // clang-format on
    auto find = [&](const char *const *b, size_t n) {
      for (size_t i = 0; i < n; ++i)
        if (cause == b[i])
          return int(i);
      return int(n);
    };
    if (latency)
      return find(latencyOrder, std::size(latencyOrder));
    if (memory)
      return find(memoryOrder, std::size(memoryOrder));
    return find(computeOrder, std::size(computeOrder));
  }

  void gridRules() {
    // Grid against the SMs.
    if (k->blocks > 0 && p.sms > 0 && underfills(*k, p)) {
      int64_t idle = p.sms - k->blocks;
      std::string text = k->name + "'s grid is " + std::to_string(k->blocks) +
                         " blocks on " + std::to_string(p.sms) +
                         " SMs: " + std::to_string(idle) + " SMs (" +
                         pct(double(idle) / p.sms) + ") idle";
      std::vector<std::string> levers;
      int64_t bk = k->config.block.size() >= 3 ? k->config.block[2] : 0;
      int64_t steps = bk > 0 ? (k->k + bk - 1) / bk : 0;
      if (k->matmul && steps >= 8) {
        int64_t split =
            std::min<int64_t>((p.sms + k->blocks - 1) / k->blocks, steps / 4);
        text += "; K = " + std::to_string(k->k) + " is " +
                std::to_string(steps) + " steps of " + std::to_string(bk) +
                ", enough to split " + std::to_string(split) + " ways";
        levers = {"split_k", "smaller_tiles"};
      } else {
        levers = {"smaller_tiles"};
        if (k->matmul && steps >= 2)
          levers.push_back("split_k");
      }
      add(0, "grid_underfills_sms", k, text, levers);
      return;
    }
    // A last wave that runs mostly empty.
    int perSM =
        k->driverBlocksPerSM > 0 ? k->driverBlocksPerSM : k->blocksPerSM;
    int64_t resident = int64_t(perSM) * p.sms;
    if (resident > 0 && k->blocks > resident) {
      double waves = double(k->blocks) / resident;
      double full = std::ceil(waves);
      double last = waves - (full - 1);
      if (full <= 4 && waves / full < 0.75)
        add(0, "partial_last_wave", k,
            k->name + "'s grid is " + fmt("%.2f", waves) + " waves of " +
                std::to_string(resident) + " blocks (" + std::to_string(perSM) +
                " per SM): the last wave is " + pct(last) + " full",
            k->matmul
                ? std::vector<std::string>{"smaller_tiles", "split_k",
                                           "larger_tiles"}
                : std::vector<std::string>{"smaller_tiles", "larger_tiles"});
    }
  }

  void resourceRules() {
    for (const KernelFacts &q : p.kernels)
      if (q.spillBytes > 0)
        add(0, "register_spills", &q,
            q.name + " spills " + std::to_string(q.spillBytes) +
                " bytes of registers (" + std::to_string(q.registers) +
                " registers a thread)",
            {"smaller_tiles", "fewer_stages"});
    // Occupancy capped: only where the kernel was measured far from its
    // ceiling (untimed, low occupancy alone says nothing), and not for a
    // wgmma kernel: it runs one block per SM by design, its stages in
    // shared memory are what hides the loads' latency, so the lever
    // `fewer_stages` points the wrong way (kb-tune on the H200: wgmma
    // 64 x 128 tiles at 1000x700x1500, 3 / 4 / 5 stages at occupancy
    // 23% / 16% / 8%, measured 0.0311 / 0.0257 / 0.0240 ms).
    bool far = p.timed ? fraction < 0.6 : k->hasNcu;
    if (far && k->unit != "wgmma_tf32" && k->occupancy > 0 &&
        k->occupancy < 0.25) {
      std::string text = k->name + "'s occupancy is " + pct(k->occupancy) +
                         " (" + std::to_string(k->blocksPerSM) + " blocks of " +
                         std::to_string(k->threads) +
                         " threads a SM), capped by " + k->occupancyLimiter;
      if (k->occupancyLimiter == "shared memory")
        add(0, "shared_memory_caps_occupancy", k,
            text + " (" + std::to_string(k->sharedBytes) + " bytes a block)",
            // gemv's stages are registers, not shared memory.
            k->config.stages > 1 && k->unit != "gemv"
                ? std::vector<std::string>{"fewer_stages", "smaller_tiles"}
                : std::vector<std::string>{"smaller_tiles"});
      else if (k->occupancyLimiter == "registers")
        add(0, "registers_cap_occupancy", k,
            text + " (" + std::to_string(k->registers) + " a thread)",
            {"smaller_tiles"});
    }
    if (k->hasNcu && k->ncuOccupancyPct > 0 && k->ncuOccupancyPct < 20 && far &&
        !(k->occupancy > 0 && k->occupancy < 0.25))
      add(0, "low_achieved_occupancy", k,
          k->name + "'s achieved occupancy is " +
              fmt("%.0f%%", k->ncuOccupancyPct) + " (ncu) against " +
              pct(k->occupancy) + " theoretical",
          {"smaller_tiles"});
  }

  void unitRules() {
    for (const KernelFacts &q : p.kernels) {
      if (!q.matmul)
        continue;
      // gemv leaves the tensor pipe idle by design: few rows, bound by the
      // weight's bytes (kb-select-mma chose it for that).
      if (allowsTensorCores(p.precision) && q.unit != "gemv" &&
          (q.unit == "ffma" || !q.tensorInstructions))
        add(0, "tensor_pipe_idle", &q,
            q.name + " computes on " +
                (q.unit.empty() ? std::string("no tensor-core instruction")
                                : q.unit) +
                " though precision " + p.precision +
                " allows the tensor cores" +
                (q.hasNcu ? " (ncu: tensor pipe " +
                                fmt("%.1f%%", q.ncuTensorPct) + " active)"
                          : ""),
            {"mma_unit"});
      else if (p.precision == "tf32" && q.unit == "mma_sync_tf32" && p.hopper &&
               !memory)
        add(0, "mma_sync_not_wgmma", &q,
            q.name + " runs mma.sync on a Hopper GPU: wgmma_tf32 "
                     "(chip=sm_90a) has the higher ceiling",
            {"mma_unit"});
    }
  }

  void bytesRules() {
    if (!memory || p.minBytes <= 0 || p.movedBytes < 1.25 * p.minBytes)
      return;
    std::string ratio = fmt("%.2fx", p.movedBytes / p.minBytes);
    const KernelFacts *split = nullptr;
    for (const KernelFacts &q : p.kernels)
      if (q.matmul && q.config.split > 1)
        split = &q;
    if (split && p.kernels.size() > 1 && p.scratchBytes > 0.1 * p.minBytes) {
      // The intermediates are split-K's partials: already fused with the
      // epilogue into the sum; fewer chunks write fewer of them.
      std::string text =
          split->name + " splits K in " + std::to_string(split->config.split) +
          " chunks: the kernels move " + ratio + " the minimal bytes, " +
          mb(p.scratchBytes) + " of partial products through DRAM to the sum";
      const KernelFacts &last = p.kernels.back();
      if (p.timeMs > 0 && last.timeMs > 0 && &last != split)
        text += " (" + last.name + " alone " + fmt("%.4f ms", last.timeMs) +
                " of the whole " + fmt("%.4f ms", p.timeMs) + ")";
      add(0, "split_partials_round_trip", split, text, {"fewer_splits"});
    } else if (p.kernels.size() > 1 && p.scratchBytes > 0.1 * p.minBytes)
      add(0, "intermediates_round_trip", nullptr,
          "the kernels move " + ratio +
              " the minimal bytes: " + mb(p.scratchBytes) +
              " of intermediates go through DRAM between kernels",
          {"fusion"});
    else if (k->matmul)
      add(0, "operand_rereads", k,
          k->name + " re-reads its operands tile by tile: " + ratio +
              " the minimal bytes",
          {"larger_tiles"});
    else if (k->config.strategy == "online")
      add(0, "two_pass_rows", k,
          k->name + "'s online strategy reads each row twice (" + ratio +
              " the minimal bytes); a one-pass softmax strategy would not",
          {});
    else
      add(0, "excess_bytes", k,
          "the kernels move " + ratio + " the minimal bytes", {"fusion"});
  }

  void ceilingRules() {
    if (!p.timed)
      return;
    double perKernel = p.timeMs / std::max<size_t>(p.kernels.size(), 1);
    if (perKernel < 0.010 && fraction < 0.25)
      add(0, "launch_overhead", nullptr,
          fmt("%.4f ms", p.timeMs) + " for " +
              std::to_string(p.kernels.size()) +
              (p.kernels.size() == 1 ? " kernel" : " kernels") +
              ": launch and ramp-up, not the work, set the time",
          p.kernels.size() > 1 ? std::vector<std::string>{"fusion"}
                               : std::vector<std::string>{});
    // A copy of the same bytes is no faster: the size sets the rate.
    if (memory && fraction < 0.8 && p.sameSizeCopyFraction > 0 &&
        p.sameSizeCopyFraction < 0.8 && p.overSameSizeCopy >= 0.9)
      add(0, "size_caps_bandwidth", nullptr,
          "a copy of the same " + mb(p.minBytes) +
              ", timed the same way, "
              "reaches " +
              pct(p.sameSizeCopyFraction) +
              " of the copy bandwidth and the program " +
              pct(p.overSameSizeCopy) +
              " of that copy: the size, not the "
              "kernel, sets the rate",
          p.kernels.size() > 1 ? std::vector<std::string>{"fusion"}
                               : std::vector<std::string>{});
    if (latency)
      return;
    if (memory) {
      if (fraction >= 0.8)
        add(0, "near_copy_bandwidth", nullptr, "close to the copy bandwidth",
            {});
      else
        add(0, "memory_below_copy", k,
            k->name + " is below the copy bandwidth with no structural cause "
                      "found",
            k->matmul ? std::vector<std::string>{"smaller_tiles", "split_k"}
            : k->config.vector > 0 && k->config.vector < 4
                ? std::vector<std::string>{"vector_width", "smaller_tiles"}
                : std::vector<std::string>{"smaller_tiles", "larger_tiles"});
      return;
    }
    if (fraction >= 0.8)
      add(0, "near_unit_ceiling", k, "close to the ceiling of the unit it uses",
          {});
    else
      add(0, "compute_below_unit_ceiling", k,
          k->name + " is below the ceiling of the unit it uses with no "
                    "structural cause found",
          k->unit == "gemv"
              ? std::vector<std::string>{"larger_tiles"}
          : k->config.stages > 0 && k->config.stages < 3
              ? std::vector<std::string>{"more_stages", "larger_tiles"}
              : std::vector<std::string>{"larger_tiles", "more_stages"});
  }
};

} // namespace

Diagnosis kb::runtime::diagnose(const ProgramFacts &p) {
  Diagnosis d;
  if (p.kernels.empty()) {
    d.bound = "memory";
    d.cause = "no_kernels";
    d.lever = "none";
    d.text = "no kernels";
    return d;
  }
  Rules r{p};
  r.k = &p.kernels[dominantKernel(p)];
  // The roofline, with the ridge of the unit the matmul uses.
  double intensity = p.flops > 0 && p.minBytes > 0 ? p.flops / p.minBytes : 0;
  double ridge = p.flops > 0 && p.unit.tflops > 0 && p.copyGBs > 0
                     ? p.unit.tflops * 1e3 / p.copyGBs
                     : 0;
  r.memory = p.flops <= 0 || (ridge > 0 && intensity < ridge);
  std::string ceilingName = r.memory ? "the copy bandwidth"
                                     : "the " + r.k->unit + " ceiling (" +
                                           fmt("%.1f", p.unit.tflops) +
                                           " TFLOP/s, " + p.unit.source + ")";
  if (!r.memory && r.k->unit.empty())
    ceilingName = "the compute ceiling (" + fmt("%.1f", p.unit.tflops) +
                  " TFLOP/s, " + p.unit.source + ")";
  if (p.timed)
    r.fraction =
        r.memory ? (p.copyGBs > 0 ? p.achievedGBs / p.copyGBs : 0)
                 : (p.unit.tflops > 0 ? p.achievedTflops / p.unit.tflops : 0);
  // Latency-bound: far from the binding ceiling; or, by ncu, neither DRAM
  // nor the SMs busy (ncu's own "bound" compares the two, and calls a
  // kernel at 6% of DRAM memory-bound); or, untimed, a grid that leaves
  // SMs idle.
  bool ncuIdle = r.k->hasNcu && std::max(r.k->ncuDramPct, r.k->ncuSmPct) < 25;
  r.latency = (p.timed && r.fraction < 0.25) || ncuIdle ||
              (!p.timed && !r.k->hasNcu && underfills(*r.k, p));
  d.bound = r.latency ? "latency" : r.memory ? "memory" : "compute";
  d.fraction = r.fraction;

  r.gridRules();
  r.resourceRules();
  r.unitRules();
  r.bytesRules();
  r.ceilingRules();
  if (r.latency) {
    bool explained = false;
    for (auto &f : r.found)
      explained |= r.prio(f.second.cause) < r.prio("tensor_pipe_idle");
    if (!explained)
      r.add(0, "latency_unexplained", r.k,
            r.k->name + " is below a quarter of its ceiling with " +
                std::to_string(r.k->blocks) +
                " blocks, no spills and its occupancy not capped" +
                (r.k->hasNcu ? "" : "; kb-run --profile shows ncu's view"),
            {});
  }
  if (r.found.empty())
    r.add(0, "none_found", nullptr,
          p.timed ? "no cause found" : "no static cause found (not timed)", {});
  // By priority, ties in the order found (the rank keeps the sort stable).
  for (size_t i = 0; i < r.found.size(); ++i)
    r.found[i].first = r.prio(r.found[i].second.cause) * 1000 + int(i);
  std::sort(r.found.begin(), r.found.end(),
            [](auto &a, auto &b) { return a.first < b.first; });
  for (auto &f : r.found) {
    d.findings.push_back(f.second);
    for (const std::string &l : f.second.levers)
      if (std::find(d.levers.begin(), d.levers.end(), l) == d.levers.end())
        d.levers.push_back(l);
  }
  const Finding &primary = d.findings.front();
  d.cause = primary.cause;
  d.kernel = primary.kernel;
  d.lever = primary.levers.empty() ? "none" : primary.levers.front();
  d.text = d.bound + "-bound";
  if (p.timed)
    d.text += " at " + pct(r.fraction) + " of " + ceilingName;
  d.text += ": " + primary.text + "; lever: " + d.lever;
  if (!primary.levers.empty())
    for (size_t i = 1; i < primary.levers.size(); ++i)
      d.text += (i == 1 ? ", then " : ", ") + primary.levers[i];
  return d;
}

json kb::runtime::diagnosisJson(const Diagnosis &d) {
  json findings = json::array();
  for (const Finding &f : d.findings)
    findings.push_back({{"cause", f.cause},
                        {"kernel", f.kernel},
                        {"levers", f.levers},
                        {"text", f.text}});
  return {{"bound", d.bound},   {"cause", d.cause},    {"lever", d.lever},
          {"levers", d.levers}, {"text", d.text},      {"fraction", d.fraction},
          {"kernel", d.kernel}, {"findings", findings}};
}

std::string kb::runtime::verdictWithCause(const std::string &verdict,
                                          const Diagnosis &d) {
  if (verdict.find("latency-bound") == std::string::npos || d.findings.empty())
    return verdict;
  const Finding &f = d.findings.front();
  return verdict + "; cause: " + f.text + " (lever: " + d.lever + ")";
}

std::string kb::runtime::boardNote(const BoardFacts &kb, const BoardFacts &peer,
                                   const std::string &peerName) {
  if (!kb.valid())
    return "";
  auto atLimit = [&](const BoardFacts &b) {
    return b.limitW > 0 && b.watts >= 0.95 * b.limitW;
  };
  char buf[512];
  std::string limit = "";
  if (kb.limitW > 0) {
    snprintf(buf, sizeof buf, " of its %.0f W limit", kb.limitW);
    limit = buf;
  }
  snprintf(buf, sizeof buf, "kb ran at %.0f W%s, SM clock %.0f MHz", kb.watts,
           limit.c_str(), kb.smMhz);
  std::string text = buf;
  if (!peer.valid())
    return text;
  snprintf(buf, sizeof buf, "; %s at %.0f W, %.0f MHz", peerName.c_str(),
           peer.watts, peer.smMhz);
  text += buf;
  if (atLimit(kb) && atLimit(peer)) {
    double cycles = (kb.ms * kb.smMhz) / (peer.ms * peer.smMhz);
    snprintf(buf, sizeof buf,
             ": both at the power limit, where the clock it allows sets the "
             "time; kb's time x clock is %.2fx the baseline's, its clock "
             "%.2fx",
             cycles, kb.smMhz / peer.smMhz);
    text += buf;
  }
  return text;
}

