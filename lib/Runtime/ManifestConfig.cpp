//===- ManifestConfig.cpp - a kernel's #kb.config against its launch -------===//
//
// kb-run does not link MLIR, so a kernel's `config` (the #kb.config the
// compiler chose, as text) is read here with a small parser of its one
// grammar: `#kb.config<field = value, ...>`, each value a count, a quoted
// word or a bracketed list of counts. A config that does not parse, names a
// field #kb.config does not have, or disagrees with the launch it describes
// (its `threads` with the block's threads, its persistent `grid` with the
// grid's blocks) is refused: a hand-edited manifest could otherwise launch
// a kernel with another shape than the one it was compiled for.
//
//===----------------------------------------------------------------------===//

#include "ManifestParsing.h"

#include <cctype>
#include <map>

namespace kb::runtime::manifest {

namespace {

/// The fields of #kb.config (KB_ConfigAttr in KBAttrs.td).
const char *const kFields[] = {
    "block",  "warp",  "thread",   "threads", "vector",   "stages",
    "pad",    "mma",   "strategy", "cluster", "grid",     "copy",
    "raster", "split", "store",    "reduce",  "schedule", "operands"};

struct ConfigParser {
  const std::string &s;
  const std::string &where;
  size_t at = 0;

  [[noreturn]] void bad(const std::string &why) const {
    fail(where + ": config '" + s.substr(0, 120) + "' " + why);
  }
  void space() {
    while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at])))
      ++at;
  }
  bool eat(char c) {
    space();
    if (at < s.size() && s[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  void expect(char c, const char *what) {
    if (!eat(c))
      bad("does not parse: expected " + std::string(what) + " at character " +
          std::to_string(at));
  }
  std::string word() {
    space();
    size_t from = at;
    while (at < s.size() && (std::isalnum(static_cast<unsigned char>(s[at])) ||
                             s[at] == '_'))
      ++at;
    return s.substr(from, at - from);
  }
  int64_t count() {
    std::string w = word();
    if (w.empty() || w.size() > 12 ||
        w.find_first_not_of("0123456789") != std::string::npos)
      bad("does not parse: expected a count at character " +
          std::to_string(at - w.size()));
    return std::stoll(w);
  }
};

} // namespace

void checkKernelConfig(const Kernel &k, const std::string &where) {
  if (k.config.empty())
    return;
  ConfigParser p{k.config, where};
  const std::string head = "#kb.config<";
  if (k.config.compare(0, head.size(), head) != 0)
    p.bad("is not a #kb.config<...>");
  p.at = head.size();
  std::map<std::string, int64_t> counts;
  if (!p.eat('>')) {
    do {
      std::string field = p.word();
      bool known = false;
      for (const char *f : kFields)
        known = known || field == f;
      if (!known) {
        std::string all;
        for (const char *f : kFields)
          all += (all.empty() ? "" : ", ") + std::string(f);
        p.bad("has no field '" + field + "' (#kb.config's fields: " + all +
              ")");
      }
      if (counts.count(field) || counts.count("[" + field))
        p.bad("sets '" + field + "' twice");
      p.expect('=', "'='");
      p.space();
      if (p.eat('[')) {
        counts["[" + field] = 0;
        if (!p.eat(']')) {
          do
            p.count();
          while (p.eat(','));
          p.expect(']', "']'");
        }
      } else if (p.eat('"')) {
        counts["[" + field] = 0;
        if (p.word().empty())
          p.bad("does not parse: an empty quoted value of '" + field + "'");
        p.expect('"', "'\"'");
      } else {
        int64_t v = p.count();
        if (v < 1)
          p.bad("sets '" + field + "' to 0; a count is at least 1");
        counts[field] = v;
      }
    } while (p.eat(','));
    p.expect('>', "',' or '>'");
  }
  p.space();
  if (p.at != k.config.size())
    p.bad("does not parse: text after the closing '>'");
  auto it = counts.find("threads");
  if (it != counts.end() && it->second != k.threads())
    fail(where + ": config says threads = " + std::to_string(it->second) +
         " but the kernel's block has " + std::to_string(k.threads()) +
         " threads");
  it = counts.find("grid");
  __int128 blocks = static_cast<__int128>(k.grid[0]) * k.grid[1] * k.grid[2];
  if (it != counts.end() && it->second != blocks)
    fail(where + ": config says grid = " + std::to_string(it->second) +
         " (a persistent grid) but the kernel launches " +
         std::to_string(k.grid[0]) + " x " + std::to_string(k.grid[1]) +
         " x " + std::to_string(k.grid[2]) + " blocks");
}

} // namespace kb::runtime::manifest
