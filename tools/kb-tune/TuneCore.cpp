//===- TuneCore.cpp - kb-tune's space and its facts -----------------------===//
//
// See TuneCore.h: the helpers every part uses, the facts of a program and
// the config space of each kernel family. The model is TuneModel.cpp; the
// measurements, plan and search TuneSearch.cpp; the database
// TuneDatabase.cpp; summaries and replay TuneSummary.cpp. Nothing here
// runs a pass or a GPU.
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

} // namespace kbtune
