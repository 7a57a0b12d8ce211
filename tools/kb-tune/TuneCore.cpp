//===- TuneCore.cpp - kb-tune's space, model, search and database ---------===//
//
// See TuneCore.h. Nothing here runs a pass or a GPU.
//
//===----------------------------------------------------------------------===//

#include "TuneCore.h"

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

void checkRegularFile(const std::string &path, const std::string &what) {
  std::error_code ec;
  std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st) ||
      std::filesystem::is_regular_file(st))
    return;
  throw std::runtime_error(what + " '" + path + "' is not a regular file" +
                           (std::filesystem::is_directory(st)
                                ? " (a folder)"
                                : " (a device or a FIFO, which kb-tune does "
                                  "not read)"));
}

std::string oneLineError(const std::string &what) {
  std::string s = what;
  // nlohmann::json: "[json.exception.parse_error.101] parse error at ...".
  for (size_t at; (at = s.find("[json.exception.")) != std::string::npos;) {
    size_t close = s.find("] ", at);
    if (close == std::string::npos)
      break;
    s.erase(at, close + 2 - at);
  }
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      c = ' ';
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s;
}

const char *familyName(Family f) {
  switch (f) {
  case Family::Matmul:
    return "matmul";
  case Family::Softmax:
    return "softmax";
  case Family::Elementwise:
    return "elementwise";
  }
  return "?";
}

static Family familyFromName(const std::string &s) {
  if (s == "matmul")
    return Family::Matmul;
  if (s == "softmax")
    return Family::Softmax;
  return Family::Elementwise;
}

bool Facts::allows(const std::string &p) const {
  return std::find(precisions.begin(), precisions.end(), p) != precisions.end();
}

json toJson(const Facts &f) {
  return {{"family", familyName(f.family)},
          {"chip", f.chip},
          {"precision", f.precision},
          {"precisions", f.precisions},
          {"batch", f.batch},
          {"m", f.m},
          {"n", f.n},
          {"k", f.k},
          {"rows", f.rows},
          {"cols", f.cols},
          {"fused", f.fused},
          {"transpose_b", f.transposeB},
          {"minimal_bytes", f.minimalBytes},
          {"flops", f.flops}};
}

Facts factsFromJson(const json &j) {
  Facts f;
  f.family = familyFromName(j.value("family", "elementwise"));
  f.chip = j.value("chip", "sm_90a");
  f.precision = j.value("precision", "-");
  f.precisions = j.value("precisions", std::vector<std::string>{});
  f.batch = j.value("batch", int64_t(1));
  f.m = j.value("m", int64_t(0));
  f.n = j.value("n", int64_t(0));
  f.k = j.value("k", int64_t(0));
  f.rows = j.value("rows", int64_t(0));
  f.cols = j.value("cols", int64_t(0));
  f.fused = j.value("fused", false);
  f.transposeB = j.value("transpose_b", false);
  f.minimalBytes = j.value("minimal_bytes", 0.0);
  f.flops = j.value("flops", 0.0);
  return f;
}

std::string Candidate::get(const std::string &field) const {
  for (auto &[k, v] : fields)
    if (k == field)
      return v;
  return "";
}

std::string Candidate::config() const {
  std::string s = "#kb.config<";
  bool first = true;
  for (auto &[k, v] : fields) {
    if (v.empty())
      continue;
    s += (first ? "" : ", ") + k + " = " + v;
    first = false;
  }
  return s + ">";
}

std::string precisionOfUnit(const std::string &unit) {
  std::string u = unit;
  u.erase(std::remove(u.begin(), u.end(), '"'), u.end());
  if (u == "ffma")
    return "ieee";
  if (u == "mma_sync_tf32x3")
    return "tf32x3";
  if (u == "mma_sync_tf32" || u == "wgmma_tf32")
    return "tf32";
  return "-";
}

// --- The space --------------------------------------------------------------

static std::vector<int64_t> sizes(const std::string &text);

int smsOf(const std::string &chip) { return chip == "sm_80" ? 108 : 132; }

int64_t outputTiles(const Candidate &c, const Facts &f) {
  auto b = sizes(c.get("block"));
  if (b.size() < 2 || b[0] <= 0 || b[1] <= 0)
    return 0;
  return (f.m + b[0] - 1) / b[0] * ((f.n + b[1] - 1) / b[1]);
}

namespace {
using Pred = std::function<bool(const Candidate &, const Facts &)>;
Pred always() {
  return [](const Candidate &, const Facts &) { return true; };
}
Pred unitIs(std::initializer_list<const char *> units) {
  std::vector<std::string> us;
  for (const char *u : units)
    us.push_back(std::string("\"") + u + "\"");
  return [us](const Candidate &c, const Facts &) {
    return std::find(us.begin(), us.end(), c.get("mma")) != us.end();
  };
}
Pred strategyIs(std::initializer_list<const char *> names) {
  std::vector<std::string> ns;
  for (const char *n : names)
    ns.push_back(std::string("\"") + n + "\"");
  return [ns](const Candidate &c, const Facts &) {
    return std::find(ns.begin(), ns.end(), c.get("strategy")) != ns.end();
  };
}
/// Split-K with `s` chunks: a batch of one whose output tiles (of the
/// block chosen before) fill at most half of the SMs (kb-tile does not
/// split a larger grid); s = 1 always, and the two splits whose grids are
/// closest to one and two waves of a block per SM (the largest s with
/// tiles x s <= SMs, and twice it). Not with a raster (it orders the tiles
/// across waves; a split grid is one wave of tiles) nor with mma.sync's one
/// stage (register copies: 1.5-2.4x slower than the best stage in every
/// matmul of the first H200 run, docs/kb-tune.md).
Pred splitFits(int64_t s) {
  return [s](const Candidate &c, const Facts &f) {
    int64_t t = outputTiles(c, f), sms = smsOf(f.chip);
    if (f.batch != 1 || t <= 0 || 2 * t > sms)
      return false;
    if (s == 1)
      return true;
    bool oneStage = c.get("stages") == "1" && c.get("mma") != "\"ffma\"";
    bool wave = t * s <= sms && 2 * t * s > sms;
    bool twoWaves = t * s <= 2 * sms && 2 * t * s > 2 * sms;
    return c.get("raster").empty() && !oneStage && (wave || twoWaves);
  };
}
/// The splits that divide the k tiles (BK = 32, at least 8 a chunk) nearest
/// one and two waves of blocks, and the largest splits of any count there:
/// the largest S with tiles x S <= SMs, and with tiles x S <= 2 SMs (kb-tile's
/// few-tiles choice takes such splits: 384 x 384 x 200000 in 128 x 128 tiles,
/// 10 of 6250 k tiles; the powers of two of the rows above rarely divide such
/// counts). Under the same conditions as splitFits.
std::vector<std::string> divisorSplits(const Candidate &c, const Facts &f) {
  int64_t t = outputTiles(c, f), sms = smsOf(f.chip);
  if (f.batch != 1 || t <= 0 || 2 * t > sms || !c.get("raster").empty() ||
      (c.get("stages") == "1" && c.get("mma") != "\"ffma\""))
    return {};
  int64_t bk = 32;
  if (auto b = sizes(c.get("block")); b.size() == 3 && b[2] > 0)
    bk = b[2];
  int64_t kTiles = (f.k + bk - 1) / bk;
  std::vector<std::string> out;
  for (int64_t waves : {1, 2}) {
    int64_t best = 0, uneven = 0;
    for (int64_t s = 2; s <= kTiles / 8 && t * s <= waves * sms; ++s) {
      if (kTiles % s == 0)
        best = s;
      // Every chunk of ceil(k tiles / S) holds a k tile (the passes' rule).
      if (mlir::kb::splitLeavesNoChunkEmpty(kTiles, s))
        uneven = s;
    }
    // (A power of two up to 64 is already a row of its own; the
    // enumeration keeps each value once.)
    if (best > 1)
      out.push_back(std::to_string(best));
    // The largest split of any count (chunks of ceil(k tiles / S), the last
    // shorter) that fits the wave: kb-tile's few-tiles choice takes such
    // splits (384 x 384 x 200000 in 256 x 128 tiles: 22).
    if (uneven > 1 && uneven != best)
      out.push_back(std::to_string(uneven));
  }
  return out;
}
/// A persistent grid (`grid` = the SMs: one block an SM walking the
/// tiles): wgmma tiles of which an SM holds one (at least 128 x 128) over
/// one to five waves (with B^T outside a fusion, any number above one, as
/// kb-tile's persistent rule since bench/results/2026-12-03-width call 4),
/// unsplit and without a cluster. kb-tile's persistent rule takes it for
/// its own 128 x 160 - 128 x 256 B^T tiles (docs/shapes.md, "Stream-K",
/// "Tile widths between 128 and 256"); a hand-set tile keeps one block a
/// tile unless the candidate says otherwise. A batch of unfused matmuls up
/// to K = 1024 at any number of waves (kb-tile's batched grid since
/// bench/results/2026-12-04-memory-bound: 2.7-9.6% faster on the suite's
/// batched shapes).
bool persistentFits(const Candidate &c, const Facts &f) {
  auto b = sizes(c.get("block"));
  bool batchedFewK = f.batch > 1 && f.k <= 1024 && !f.fused;
  int64_t t = outputTiles(c, f) * f.batch, sms = smsOf(f.chip);
  std::string split = c.get("split");
  return c.get("mma") == "\"wgmma_tf32\"" && (f.batch == 1 || batchedFewK) &&
         b.size() == 3 && b[0] >= 128 && b[1] >= 128 &&
         (split.empty() || split == "1") && c.get("cluster").empty() &&
         t > sms &&
         (t <= 5 * sms || (f.transposeB && !f.fused) || batchedFewK);
}
std::vector<std::string> smsGrid(const Candidate &, const Facts &f) {
  return {std::to_string(smsOf(f.chip))};
}
/// Stream-K over that grid (reduce = "stream"): where the last round of
/// tiles leaves at least half of the SMs idle, so that its tiles split in
/// two chunks or more (streamKPlan); not for a batch (stream-K's kernel
/// splits one matmul's tiles).
bool streamFits(const Candidate &c, const Facts &f) {
  int64_t t = outputTiles(c, f), sms = smsOf(f.chip);
  return f.batch == 1 && !c.get("grid").empty() && t % sms != 0 &&
         2 * (t % sms) <= sms;
}
Pred allows(const char *precision) {
  std::string p = precision;
  return [p](const Candidate &, const Facts &f) { return f.allows(p); };
}
} // namespace

const std::vector<FieldRow> &spaceTable() {
  using F = Family;
  static const std::vector<FieldRow> table = {
      // Matmul: the unit first (kb-select-mma's field), then kb-tile's tiles,
      // kb-promote-shared-memory's stages and copy, kb-tile's raster.
      {F::Matmul, "mma", {"\"ffma\""}, allows("ieee")},
      {F::Matmul, "mma", {"\"mma_sync_tf32\""}, allows("tf32")},
      // Any K: kb-select-mma pads A's rows (and a given B^T's) with kb.pad
      // where K % 4 != 0 (the third run: kb's default, pad + wgmma, was
      // 2.1x faster than every candidate of 1023x1025x1027 when wgmma was
      // left out there).
      {F::Matmul,
       "mma",
       {"\"wgmma_tf32\""},
       [](const Candidate &, const Facts &f) {
         return f.allows("tf32") && f.chip == "sm_90a";
       }},
      {F::Matmul, "mma", {"\"mma_sync_tf32x3\""}, allows("tf32x3")},
      // fp32 FMAs at the program's precision (candidate precision "-"),
      // for at most 16 rows or columns: kb-tile's tiles.
      {F::Matmul,
       "mma",
       {"\"gemv\""},
       [](const Candidate &, const Facts &f) {
         return f.batch == 1 && (f.m <= 16 || f.n <= 16);
       }},
      {F::Matmul,
       "block",
       {"[64, 64, 32]", "[64, 128, 32]", "[128, 64, 32]", "[128, 128, 32]",
        "[128, 256, 32]", "[256, 128, 32]"},
       unitIs({"wgmma_tf32"})},
      // With B^T, the widths between (kb-tile's 128 x 192, and 128 x 160 /
      // 128 x 224 of its widths rule: bench/results/2026-12-03-width).
      {F::Matmul,
       "block",
       {"[128, 160, 32]", "[128, 192, 32]", "[128, 224, 32]"},
       [](const Candidate &c, const Facts &f) {
         return c.get("mma") == "\"wgmma_tf32\"" && f.transposeB && f.m > 64;
       }},
      {F::Matmul,
       "block",
       {"[64, 64, 32]", "[64, 128, 32]", "[128, 64, 32]", "[128, 128, 32]",
        "[128, 256, 32]"},
       unitIs({"mma_sync_tf32", "mma_sync_tf32x3"})},
      {F::Matmul,
       "warp",
       {"[32, 32]", "[64, 32]", "[64, 64]"},
       unitIs({"mma_sync_tf32", "mma_sync_tf32x3"})},
      {F::Matmul,
       "block",
       {"[64, 64, 8]", "[64, 64, 16]", "[128, 64, 16]", "[64, 128, 16]",
        "[128, 128, 16]", "[128, 128, 32]"},
       unitIs({"ffma"})},
      {F::Matmul, "thread", {"[4, 4]", "[8, 8]", "[8, 4]"}, unitIs({"ffma"})},
      {F::Matmul, "stages", {"3", "4", "5"}, unitIs({"wgmma_tf32"})},
      {F::Matmul,
       "stages",
       {"1", "2", "3", "4"},
       unitIs({"mma_sync_tf32", "mma_sync_tf32x3"})},
      {F::Matmul, "stages", {"1", "2", "3"}, unitIs({"ffma"})},
      // gemv: k tiles of weight loads in flight in registers.
      {F::Matmul, "stages", {"1", "2"}, unitIs({"gemv"})},
      {F::Matmul, "copy", {"\"tma\""}, unitIs({"wgmma_tf32"})},
      // "" leaves the field to kb-tile (row by row for these shapes).
      {F::Matmul,
       "raster",
       {"", "8"},
       [](const Candidate &c, const Facts &f) {
         return c.get("mma") == "\"wgmma_tf32\"" && f.batch == 1 && f.m > 128;
       }},
      // Split-K (kb-tile's field): where the tiles leave SMs idle, no
      // split (1) and the splits that bring the grid to one or two blocks
      // per SM; elsewhere the field is left to kb-tile, which does not
      // split a grid that large. The passes take any split that leaves no
      // chunk empty (chunks of ceil(k tiles / S)) since runs 8-11, and
      // refuse the others with their reason; the space lists the powers of
      // two and, per tile (divisorSplits), the divisors and the largest
      // uneven splits nearest one and two waves.
      {F::Matmul, "split", {"1"}, splitFits(1)},
      {F::Matmul, "split", {"2"}, splitFits(2)},
      {F::Matmul, "split", {"4"}, splitFits(4)},
      {F::Matmul, "split", {"8"}, splitFits(8)},
      {F::Matmul, "split", {"16"}, splitFits(16)},
      {F::Matmul, "split", {"32"}, splitFits(32)},
      {F::Matmul, "split", {"64"}, splitFits(64)},
      {F::Matmul, "split", {}, always(), divisorSplits},

      // Clusters of 4 sharing B's tile (wgmma with TMA; "" leaves the
      // field to kb-tile, which sets none for a hand-set tile): measured
      // 13-27% faster than no cluster on medium B^T shapes whose rows split
      // over two lines, alone or on two K chunks, and slower on others
      // (docs/shapes.md, "Clusters on the medium shapes"): a candidate
      // where the grid (split included) is at most two waves and holds a
      // whole cluster of row tiles. BN a multiple of 128 suits both forms
      // of B (8 x 4 with B^T, 32 x 4 row-major).
      {F::Matmul,
       "cluster",
       {"", "4"},
       [](const Candidate &c, const Facts &f) {
         auto b = sizes(c.get("block"));
         std::string split = c.get("split");
         int64_t t = outputTiles(c, f);
         int64_t s = split.empty() ? 1 : std::stoll(split);
         return c.get("mma") == "\"wgmma_tf32\"" && f.batch == 1 &&
                b.size() == 3 && b[0] > 0 && b[1] % 128 == 0 &&
                (f.m + b[0] - 1) / b[0] >= 4 && s <= 2 && t > 0 &&
                t * s <= 2 * smsOf(f.chip) && c.get("raster").empty();
       }},

      // A persistent grid, and stream-K over it ("" leaves one block a
      // tile, and the rest of a persistent grid's tiles unsplit).
      {F::Matmul, "grid", {""}, persistentFits, smsGrid},
      {F::Matmul,
       "reduce",
       {""},
       streamFits,
       [](const Candidate &, const Facts &) {
         return std::vector<std::string>{"\"stream\""};
       }},

      // Softmax: kb-select-config's fields.
      {F::Softmax,
       "strategy",
       {"\"registers\"", "\"online\"", "\"split_global\"", "\"split\""},
       always()},
      {F::Softmax, "threads", {"128", "256", "512", "1024"}, always()},
      {F::Softmax, "vector", {"2", "4"}, always()},
      {F::Softmax,
       "cluster",
       {"2", "4", "8"},
       strategyIs({"split", "split_global"})},

      // Elementwise (and fused elementwise chains).
      {F::Elementwise,
       "threads",
       {"64", "128", "256", "512", "1024"},
       always()},
      {F::Elementwise, "vector", {"1", "2", "4"}, always()},
  };
  return table;
}

std::vector<Candidate> enumerateSpace(const Facts &facts,
                                      const std::vector<FieldRow> &table) {
  // Fields in order of first appearance.
  std::vector<std::string> order;
  for (const FieldRow &r : table)
    if (r.family == facts.family &&
        std::find(order.begin(), order.end(), r.field) == order.end())
      order.push_back(r.field);
  std::vector<Candidate> partial{Candidate{}};
  for (const std::string &field : order) {
    std::vector<Candidate> next;
    for (const Candidate &c : partial) {
      std::vector<std::string> values;
      for (const FieldRow &r : table)
        if (r.family == facts.family && r.field == field && r.when(c, facts)) {
          std::vector<std::string> vs = r.values;
          if (r.valuesOf)
            for (std::string v : r.valuesOf(c, facts))
              vs.push_back(v);
          for (const std::string &v : vs)
            if (std::find(values.begin(), values.end(), v) == values.end())
              values.push_back(v);
        }
      if (values.empty()) {
        next.push_back(c);
        continue;
      }
      for (const std::string &v : values) {
        Candidate d = c;
        d.fields.emplace_back(field, v);
        next.push_back(d);
      }
    }
    partial = std::move(next);
  }
  for (Candidate &c : partial)
    c.precision = facts.family == Family::Matmul ? precisionOfUnit(c.get("mma"))
                                                 : std::string("-");
  if (partial.size() == 1 && partial[0].fields.empty())
    return {};
  return partial;
}

std::string spaceId(const std::vector<Candidate> &space) {
  // FNV-1a over the configs, in order.
  uint64_t h = 1469598103934665603ull;
  for (const Candidate &c : space)
    for (char ch : c.config() + c.precision + ";") {
      h ^= static_cast<unsigned char>(ch);
      h *= 1099511628211ull;
    }
  std::ostringstream os;
  os << std::hex << h;
  return std::to_string(space.size()) + "-" + os.str();
}

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

static std::vector<int64_t> sizes(const std::string &text) {
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

static int64_t count(const Candidate &c, const char *field);

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

static std::vector<int> byRank(const Plan &p) {
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
static int64_t count(const Candidate &c, const char *field) {
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
