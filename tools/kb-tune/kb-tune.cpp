//===- kb-tune.cpp - search kb's config space, measured by kb-run ---------===//
//
// kb-tune compiles candidate #kb.configs of one kernel of a kb program
// through kb's own pipeline (kb-compile, in process), prunes and ranks them
// without a GPU (the passes' refusals, ptxas -v, occupancy, tensor-core
// instructions, a roofline model), and has kb-run measure the survivors:
// all of them (exhaustive), a random sample, or rounds steered by the
// diagnosis lever of kb-run's reports (guided). Split across machines:
// `compile` writes a batch, kb-run measures it where the GPU is, `ingest`
// reads the results and writes the next batch or the choice; `tune` does
// the loop on one machine. docs/kb-tune.md.
//
//===----------------------------------------------------------------------===//

#include "TuneCore.h"

#include "kb/Conversion/Passes.h"
#include "kb/Dialect/KB/IR/KBDialect.h"
#include "kb/Runtime/Occupancy.h"
#include "kb/Transforms/Passes.h"
#include "kb/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/SourceMgr.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <unistd.h>

using namespace mlir;
using namespace kbtune;
namespace fs = std::filesystem;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void die(const std::string &msg, int code = 1) {
  std::cerr << "kb-tune: " << oneLineError(msg) << "\n";
  std::exit(code);
}

/// Dies, naming the file, unless `path` is a regular file (or absent).
void requireRegularFile(const std::string &path, const std::string &what) {
  try {
    checkRegularFile(path, what);
  } catch (const std::exception &e) {
    die(e.what());
  }
}

json readJson(const std::string &path) {
  requireRegularFile(path, "input");
  std::ifstream in(path);
  if (!in)
    die("cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const std::exception &e) {
    die("'" + path + "' is not JSON: " + e.what());
  }
}

/// kb-run's results: one JSON value or JSON lines (--jsonl-out).
json readResults(const std::string &path) {
  requireRegularFile(path, "results");
  std::ifstream in(path);
  if (!in)
    die("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return parseResults(text.str());
  } catch (const std::exception &e) {
    die("'" + path + "': " + e.what());
  }
}

void writeJson(const std::string &path, const json &j) {
  std::ofstream out(path);
  out << j.dump(1) << "\n";
  if (!out)
    die("cannot write '" + path + "'");
}

/// One line of progress on stderr: rewritten in place on a terminal, every
/// tenth step otherwise.
struct Progress {
  bool quiet = false, tty = isatty(2);
  void step(int i, int n, const std::string &what) {
    if (quiet)
      return;
    if (tty)
      std::cerr << "\rkb-tune: " << what << " " << i << "/" << n << "   "
                << std::flush;
    else if (i == n || i % 10 == 0)
      std::cerr << "kb-tune: " << what << " " << i << "/" << n << "\n";
    if (tty && i == n)
      std::cerr << "\n";
  }
};

// --- The program and its candidates, through kb's passes -----------------

struct Program {
  std::unique_ptr<MLIRContext> ctx;
  OwningOpRef<ModuleOp> fused; // after kb-fuse-elementwise
  int kernel = -1;             // index among the function's kernels
  Facts facts;
};

std::vector<Operation *> kernelsOf(ModuleOp m) {
  std::vector<Operation *> out;
  m.walk([&](func::FuncOp f) {
    if (!out.empty())
      return;
    for (Operation &op : f.getBody().getOps())
      if (mlir::kb::getKernelKind(&op))
        out.push_back(&op);
  });
  return out;
}

double tensorBytes(Type t) {
  auto s = dyn_cast<ShapedType>(t);
  return s && s.hasStaticShape() ? double(s.getNumElements()) * 4 : 0;
}

Program loadProgram(const std::string &path, const std::string &chip,
                    int kernel, double maxRelError) {
  Program p;
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::kb::KBDialect>();
  p.ctx = std::make_unique<MLIRContext>(registry);
  p.ctx->disableMultithreading();
  p.ctx->loadAllAvailableDialects();
  llvm::SourceMgr sm;
  std::string error;
  requireRegularFile(path, "program");
  auto file = openInputFile(path, &error);
  if (!file)
    die("cannot read '" + path + "': " + error);
  sm.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sm, p.ctx.get());
  p.fused = parseSourceFile<ModuleOp>(sm, p.ctx.get());
  if (!p.fused)
    die("'" + path + "' does not parse as a kb program");
  PassManager pm(p.ctx.get(), ModuleOp::getOperationName());
  pm.nest<func::FuncOp>().addPass(mlir::kb::createKBFuseElementwise());
  if (failed(pm.run(*p.fused)))
    die("kb-fuse-elementwise failed on '" + path + "'");
  auto kernels = kernelsOf(*p.fused);
  if (kernels.empty())
    die("'" + path + "' has no kernel to tune");
  if (kernel < 0) {
    for (int i = 0; i < int(kernels.size()) && kernel < 0; ++i) {
      auto kind = mlir::kb::getKernelKind(kernels[i]);
      if (kind == mlir::kb::KernelKind::Matmul ||
          kind == mlir::kb::KernelKind::Softmax)
        kernel = i;
    }
    if (kernel < 0)
      kernel = int(kernels.size()) - 1;
  }
  if (kernel >= int(kernels.size()))
    die("--kernel " + std::to_string(kernel) + ": the program has " +
        std::to_string(kernels.size()) + " kernel(s)");
  p.kernel = kernel;
  Operation *op = kernels[kernel];
  auto kind = *mlir::kb::getKernelKind(op);
  Facts &f = p.facts;
  f.chip = chip;
  f.fused = isa<mlir::kb::FusionOp>(op);
  if (kind == mlir::kb::KernelKind::Transpose)
    die("kernel " + std::to_string(kernel) +
        " is a kb.transpose, which kb-tune does not tune");
  if (kind == mlir::kb::KernelKind::Pad)
    die("kernel " + std::to_string(kernel) +
        " is a kb.pad, which kb-tune does not tune");
  if (kind == mlir::kb::KernelKind::Matmul) {
    f.family = Family::Matmul;
    mlir::kb::MatmulOp mm = mlir::kb::getKernelMatmul(op);
    auto out = mm.getResult().getType().getShape();
    f.batch = out.size() == 3 ? out[0] : 1;
    f.m = out[out.size() - 2];
    f.n = out.back();
    f.k = mlir::kb::getMatmulLogicalK(mm);
    f.transposeB = mm.getTransposeB();
    f.precision = mlir::kb::stringifyPrecision(mm.getPrecision()).str();
    f.flops = 2.0 * f.batch * f.m * f.n * f.k;
    f.precisions = maxRelError >= 0
                       ? std::vector<std::string>{"ieee", "tf32", "tf32x3"}
                       : std::vector<std::string>{f.precision};
  } else {
    f.family = kind == mlir::kb::KernelKind::Softmax ? Family::Softmax
                                                     : Family::Elementwise;
    auto shape = cast<ShapedType>(op->getResult(0).getType()).getShape();
    f.cols = shape.back();
    f.rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i)
      f.rows *= shape[i];
  }
  // The program's minimal bytes: its arguments and results, once each.
  p.fused->walk([&](func::FuncOp fn) {
    if (f.minimalBytes > 0)
      return;
    for (Type t : fn.getFunctionType().getInputs())
      f.minimalBytes += tensorBytes(t);
    for (Type t : fn.getFunctionType().getResults())
      f.minimalBytes += tensorBytes(t);
  });
  return p;
}

/// Compiles one candidate into `dir` (a bundle); on a refusal returns false
/// with the first error the passes gave.
bool compileCandidate(Program &p, const Candidate &c, const std::string &dir,
                      std::string &reason, std::string &key) {
  OwningOpRef<ModuleOp> m(cast<ModuleOp>(p.fused->getOperation()->clone()));
  Operation *op = kernelsOf(*m)[p.kernel];
  std::string first;
  ScopedDiagnosticHandler handler(p.ctx.get(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && first.empty())
      first = d.str();
    return success();
  });
  if (c.precision != "-" && c.precision != p.facts.precision) {
    mlir::kb::MatmulOp mm = mlir::kb::getKernelMatmul(op);
    mm.setPrecision(*mlir::kb::symbolizePrecision(c.precision));
  }
  auto attr = dyn_cast_or_null<mlir::kb::ConfigAttr>(
      parseAttribute(c.config(), p.ctx.get()));
  if (!attr) {
    reason = "config does not parse: " + (first.empty() ? c.config() : first);
    return false;
  }
  mlir::kb::setConfig(op, attr);
  key = mlir::kb::tuningKey(op, p.facts.chip);
  PassManager pm(p.ctx.get(), ModuleOp::getOperationName());
  std::string pipeline =
      "kb-compile{fuse=false chip=" + p.facts.chip + " output=" + dir + "}";
  if (failed(parsePassPipeline(pipeline, pm))) {
    reason = "kb-compile does not parse: " + first;
    return false;
  }
  if (std::getenv("KB_TUNE_DEBUG"))
    pm.printAsTextualPipeline(llvm::errs());
  if (failed(pm.run(*m))) {
    reason = first.empty() ? "kb-compile failed" : first;
    std::error_code ec;
    fs::remove_all(dir, ec);
    return false;
  }
  return true;
}

/// Compiles the program as it is (kb's own configs) into `dir`.
bool compileDefault(Program &p, const std::string &dir, std::string &reason) {
  OwningOpRef<ModuleOp> m(cast<ModuleOp>(p.fused->getOperation()->clone()));
  std::string first;
  ScopedDiagnosticHandler handler(p.ctx.get(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && first.empty())
      first = d.str();
    return success();
  });
  PassManager pm(p.ctx.get(), ModuleOp::getOperationName());
  if (failed(parsePassPipeline("kb-compile{fuse=false chip=" + p.facts.chip +
                                   " output=" + dir + "}",
                               pm)) ||
      failed(pm.run(*m))) {
    reason = first;
    return false;
  }
  return true;
}

/// The static facts of a compiled bundle: the tuned kernel's ptxas
/// resources, launch, occupancy and whether its PTX uses the tensor cores;
/// the bytes the other kernels (a kb.transpose) move.
/// The index in a manifest's kernels of the kernel kb-tune tunes: the one
/// holding the kb.matmul or kb.softmax, else the last.
static int tunedKernel(const json &m, Family family) {
  const json &program = m.at("program");
  const json &kernels = m.at("kernels");
  int target = -1;
  std::string anchor = family == Family::Matmul    ? "kb.matmul"
                       : family == Family::Softmax ? "kb.softmax"
                                                   : "";
  for (int i = 0; i < int(kernels.size()); ++i)
    for (const json &o : kernels[i].at("ops"))
      if (!anchor.empty() && program.at(o.get<int>()).value("op", "") == anchor)
        target = i;
  return target < 0 ? int(kernels.size()) - 1 : target;
}

/// kb's own config of the tuned kernel in the bundle `dir` ("" where there
/// is none, or no bundle).
std::string tunedKernelConfig(const std::string &dir, Family family) {
  if (!fs::exists(dir + "/manifest.json"))
    return "";
  try {
    json m = readJson(dir + "/manifest.json");
    return m.at("kernels").at(tunedKernel(m, family)).value("config", "");
  } catch (const std::exception &) {
    return "";
  }
}

Static readBundle(const std::string &dir, Family family) {
  Static s;
  s.compiled = true;
  json m = readJson(dir + "/manifest.json");
  const json &program = m.at("program");
  const json &kernels = m.at("kernels");
  int target = tunedKernel(m, family);
  for (int i = 0; i < int(kernels.size()); ++i) {
    if (i == target)
      continue;
    for (const json &o : kernels[i].at("ops")) {
      // Split-K's sum: the model charges it from the split (modelTime).
      if (program.at(o.get<int>()).value("op", "") == "kb.split_sum")
        continue;
      double elems = 1;
      for (const json &d : program.at(o.get<int>()).at("shape"))
        elems *= d.get<double>();
      s.otherKernelBytes += 2 * elems * 4; // one read, one write
    }
  }
  const json &k = kernels[target];
  auto prod = [](const json &v) {
    int64_t x = 1;
    for (const json &d : v)
      x *= d.get<int64_t>();
    return x;
  };
  s.threads = int(prod(k.at("block")));
  s.blocks = prod(k.at("grid"));
  s.sharedBytes = k.value("dynamic_shared_bytes", 0);
  if (k.contains("resources")) {
    const json &r = k["resources"];
    s.registers = r.value("registers", 0);
    s.spillBytes =
        r.value("spill_store_bytes", 0) + r.value("spill_load_bytes", 0);
    s.sharedBytes += r.value("shared_static_bytes", 0);
  }
  std::ifstream ptx(dir + "/" + k.value("ptx", ""));
  std::string text((std::istreambuf_iterator<char>(ptx)),
                   std::istreambuf_iterator<char>());
  s.tensorCores = text.find("mma.sync") != std::string::npos ||
                  text.find("wgmma.mma_async") != std::string::npos;
  auto occ = ::kb::runtime::theoreticalOccupancy(
      s.threads, std::max(s.registers, 1), s.sharedBytes);
  s.blocksPerSM = occ.blocksPerSM;
  s.occupancy = occ.fraction;
  s.limiter = occ.limiter;
  return s;
}

struct Options {
  std::string program, out, mode = "guided", chip = "sm_90a", calibration, db,
                            kbRun, results, device, only;
  int budget = 0, kernel = -1, limit = 0, seeds = 1;
  uint64_t seed = 1;
  double maxRelError = -1;
  bool keepSpills = false, json = false, quiet = false, profile = false,
       pickModel = false;
};

/// The space, narrowed to the configs that `--only` matches.
std::vector<Candidate> spaceOf(const Options &o, const Facts &f) {
  std::vector<Candidate> all = enumerateSpace(f), out;
  if (o.only.empty())
    return all;
  std::regex re;
  try {
    re = std::regex(o.only);
  } catch (const std::regex_error &) {
    die("--only '" + o.only + "' is not a regular expression");
  }
  for (const Candidate &c : all)
    if (std::regex_search(c.config(), re))
      out.push_back(c);
  return out;
}

std::string idOf(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "c%04d", i);
  return buf;
}

/// Writes the batch of `round`: its bundles copied to DIR/cNNNN (the
/// previous batch removed) and DIR/batch.txt listing them.
void writeBatch(const std::string &dir, const Plan &p,
                const std::vector<int> &batch) {
  for (const auto &e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("c", 0) == 0 &&
        e.path().filename().string().size() == 5)
      fs::remove_all(e.path());
  std::ofstream list(dir + "/batch.txt");
  // kb's own choice, measured with the first batch.
  if (p.rounds.size() == 1 && !batch.empty() && fs::exists(dir + "/default"))
    list << dir << "/default/\n";
  for (int i : batch) {
    const std::string &id = p.entries[i].id;
    fs::copy(dir + "/pool/" + id, dir + "/" + id, fs::copy_options::recursive);
    list << dir << "/" << id << "/\n";
  }
}

Plan compileAll(const Options &o, Program &prog) {
  Plan p;
  p.startedAt = now();
  p.program = o.program;
  p.mode = o.mode;
  p.facts = prog.facts;
  p.seed = o.seed;
  p.maxRelError = o.maxRelError;
  if (!o.calibration.empty()) {
    try {
      p.cal = loadCalibration(o.calibration);
    } catch (const std::exception &e) {
      die(e.what());
    }
  }
  std::vector<Candidate> space = spaceOf(o, p.facts);
  if (o.limit > 0 && int(space.size()) > o.limit)
    space.resize(o.limit);
  p.space = spaceId(space);
  fs::create_directories(o.out + "/pool");
  Progress progress{o.quiet};
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < int(space.size()); ++i) {
    Entry e;
    e.id = idOf(i);
    e.cand = space[i];
    std::string reason, dir = o.out + "/pool/" + e.id;
    fs::remove_all(dir);
    if (!compileCandidate(prog, e.cand, dir, reason, e.key)) {
      e.st.pruned = "refused by the passes: " + reason;
    } else {
      e.st = readBundle(dir, p.facts.family);
      std::string unit = e.cand.get("mma");
      if (e.st.blocksPerSM == 0)
        e.st.pruned = "not launchable: " + e.st.limiter + " (" +
                      std::to_string(e.st.threads) + " threads, " +
                      std::to_string(e.st.registers) + " registers, " +
                      std::to_string(e.st.sharedBytes) + " shared bytes)";
      else if (e.st.spillBytes > 0 && !o.keepSpills)
        e.st.pruned = "ptxas spills " + std::to_string(e.st.spillBytes) +
                      " bytes at " + std::to_string(e.st.registers) +
                      " registers";
      else if (!unit.empty() && unit != "\"ffma\"" && !e.st.tensorCores)
        e.st.pruned =
            "no tensor-core instruction in the PTX of a " + unit + " kernel";
      if (e.st.pruned.empty())
        e.st.modelMs = modelTime(p.facts, e.cand, e.st, p.cal);
      else
        fs::remove_all(dir);
    }
    p.entries.push_back(std::move(e));
    progress.step(i + 1, int(space.size()), "compiled");
  }
  std::string reason;
  fs::remove_all(o.out + "/default");
  if (!compileDefault(prog, o.out + "/default", reason))
    std::cerr << "kb-tune: the program as it is does not compile: " << reason
              << "\n";
  else
    p.defaultConfig = tunedKernelConfig(o.out + "/default", p.facts.family);
  p.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::vector<Static> st;
  for (auto &e : p.entries)
    st.push_back(e.st);
  rankByModel(st);
  for (size_t i = 0; i < st.size(); ++i)
    p.entries[i].st.rank = st[i].rank;
  p.budget = o.budget > 0 ? o.budget : defaultBudget(p);
  if (p.mode == "exhaustive")
    p.budget = int(survivors(p).size());
  // An exhaustive result over the same space in the database.
  if (!o.db.empty()) {
    try {
      json db = loadDb(o.db);
      for (auto &e : p.entries)
        if (e.cand.precision == p.facts.precision || p.facts.precision == "-")
          if (const json *x = findDb(db, e.key)) {
            if (x->value("mode", "") == "exhaustive" &&
                x->value("space", "") == p.space) {
              p.exhaustiveBestMs = x->value("median_ms", 0.0);
              p.exhaustiveSource = "database " + o.db;
            }
            break;
          }
    } catch (const std::exception &e) {
      die(e.what());
    }
  }
  p.updatedAt = now();
  return p;
}

void printOutcome(const Options &o, const Plan &p) {
  if (o.json)
    std::cout << summaryJson(p).dump(1) << "\n";
  else
    std::cout << summaryText(p);
}

/// Records `output` (kb-run's JSON) for the current round; then the next
/// round's batch or, when the search is done, the choice (and the database
/// entry).
/// The candidate (its folder's name: c0042, default) kb-run report `rep`,
/// the j-th of n, measured: the last component of its `bundle`, or, for
/// reports that name no bundle, `order[j]` when there is one report per
/// entry of the batch's order.
std::string candidateIdOf(const json &rep, size_t j, size_t n,
                          const std::vector<std::string> &order) {
  std::string bundle = rep.is_object() ? rep.value("bundle", "") : "";
  while (!bundle.empty() && bundle.back() == '/')
    bundle.pop_back();
  if (bundle.empty())
    return n == order.size() ? order[j] : "";
  return fs::path(bundle).filename().string();
}

void ingest(const Options &o, const std::string &dir, Plan &p,
            const json &output) {
  if (p.rounds.empty() || p.done)
    die("'" + dir + "' has no batch waiting for results");
  const std::vector<int> &batch = p.rounds.back();
  int r = int(p.rounds.size()) - 1;
  std::vector<json> reports = reportsOf(output);
  std::string device = o.device;
  int matched = 0;
  // The batch in batch.txt's order, for reports that name no bundle.
  std::vector<std::string> order;
  if (r == 0 && fs::exists(dir + "/default"))
    order.push_back("default");
  for (int i : batch)
    order.push_back(p.entries[i].id);
  for (size_t j = 0; j < reports.size(); ++j) {
    const json &rep = reports[j];
    int idx = -1;
    std::string id = candidateIdOf(rep, j, reports.size(), order);
    if (id == "default") {
      Measured d = parseReport(rep, -1);
      if (d.status == "ok")
        p.defaultMs = d.medianMs;
      continue;
    }
    for (int i : batch)
      if (p.entries[i].id == id)
        idx = i;
    if (idx < 0)
      continue;
    p.entries[idx].meas = parseReport(rep, p.maxRelError);
    p.entries[idx].round = r;
    ++matched;
    if (device.empty() && rep.is_object() && rep.contains("device") &&
        rep["device"].is_object())
      device = rep["device"].value("name", "");
  }
  if (matched == 0)
    die("no report in the results names a bundle of this batch (" +
        std::to_string(batch.size()) + " bundles: " + dir + "/batch.txt)");
  for (int i : batch)
    if (!p.entries[i].meas) {
      Measured m;
      m.status = "not_measured";
      m.message = "no report for this bundle (the batch stopped before it)";
      p.entries[i].meas = m;
      p.entries[i].round = r;
    }
  p.updatedAt = now();
  std::vector<int> next = nextBatch(p);
  if (!next.empty()) {
    p.rounds.push_back(next);
    writeBatch(dir, p, next);
    writeJson(dir + "/plan.json", toJson(p));
    if (!o.quiet)
      std::cerr << "kb-tune: round " << p.rounds.size() - 1 << ": "
                << next.size() << " candidates in " << dir
                << "/batch.txt; measure with: kb-run --json --no-baselines "
                   "$(cat "
                << dir << "/batch.txt) > results.json; then: kb-tune ingest "
                << dir << " results.json\n";
    return;
  }
  p.done = true;
  writeBatch(dir, p, {});
  std::vector<int> ties;
  int best = bestIndex(p, &ties);
  if (p.mode == "exhaustive" && best >= 0) {
    p.exhaustiveBestMs = p.entries[best].meas->medianMs;
    p.exhaustiveSource = "this run";
  }
  json result = summaryJson(p);
  if (best >= 0) {
    result["key"] = p.entries[best].key;
    if (p.entries[best].cand.precision != p.facts.precision)
      result["precision_changed"] = {
          {"from", p.facts.precision},
          {"to", p.entries[best].cand.precision},
          {"rel_error", p.entries[best].meas->relError},
          {"max_rel_error", p.maxRelError}};
    if (!o.db.empty()) {
      try {
        json db = loadDb(o.db);
        json entry = dbEntry(p, best, ties, device.empty() ? "?" : device);
        const json *old = findDb(db, entry["key"]);
        if (old && old->value("mode", "") == "exhaustive" &&
            p.mode != "exhaustive" && old->value("space", "") == p.space)
          std::cerr << "kb-tune: the database keeps its exhaustive entry for "
                    << entry["key"].get<std::string>() << "\n";
        else {
          mergeDb(db, entry);
          writeJson(o.db, db);
        }
      } catch (const std::exception &e) {
        die(e.what());
      }
    }
  }
  writeJson(dir + "/result.json", result);
  writeJson(dir + "/plan.json", toJson(p));
}

Plan loadPlan(const std::string &dir) {
  json j = readJson(dir + "/plan.json");
  try {
    return planFromJson(j);
  } catch (const std::exception &e) {
    die("'" + dir + "/plan.json': " + e.what());
  }
}

void checkMode(const std::string &mode) {
  if (mode != "exhaustive" && mode != "random" && mode != "guided")
    die("--mode must be exhaustive, random or guided, got '" + mode + "'");
}

/// Runs kb-run on `dirs`; its JSON output, or exits when there is no GPU.
json runKbRun(const Options &o, const std::vector<std::string> &dirs,
              const std::string &planDir, bool noBaselines = true) {
  std::string cmd =
      o.kbRun + " --json --quiet" + (noBaselines ? " --no-baselines" : "") +
      (o.profile ? " --profile" : "");
  for (const std::string &d : dirs)
    cmd += " '" + d + "'";
  // kb-run's stderr is kept aside: without a GPU a batch says so once per
  // bundle there, and kb-tune says it once below instead.
  std::string errPath = planDir + "/kb-run.stderr";
  cmd += " 2>'" + errPath + "'";
  FILE *pipe = popen(cmd.c_str(), "r");
  if (!pipe)
    die("cannot run '" + o.kbRun + "'");
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    out.append(buf, n);
  pclose(pipe);
  std::string err;
  {
    std::ifstream in(errPath);
    std::stringstream text;
    text << in.rdbuf();
    err = text.str();
  }
  std::error_code ec;
  fs::remove(errPath, ec);
  json j;
  try {
    j = json::parse(out);
  } catch (...) {
    std::cerr << err;
    die("kb-run printed no JSON (" + o.kbRun + ")");
  }
  // A kb-run that knows no --no-baselines (nor several bundles): one
  // bundle per process, with its baselines.
  if (noBaselines && j.is_object() && j.value("error", "") == "usage") {
    json reports = json::array();
    for (const std::string &d : dirs)
      reports.push_back(runKbRun(o, {d}, planDir, false));
    return {{"schema", 1}, {"reports", reports}};
  }
  // No GPU: kb-run says so at the top, or (a batch) in its reports.
  json noGpu = j;
  if (j.is_object() && j.contains("reports") && j["reports"].is_array())
    for (const json &r : j["reports"])
      if (r.is_object() && r.value("error", "") == "no_gpu")
        noGpu = r;
  bool gpuMissing = noGpu.is_object() && noGpu.value("error", "") == "no_gpu";
  if (!gpuMissing)
    std::cerr << err;
  if (gpuMissing)
    die("no GPU here (kb-run: " + noGpu.value("message", "") +
            "). The candidates are compiled in " + planDir +
            ": measure them where the GPU is with `kb-run --json "
            "--no-baselines $(cat " +
            planDir + "/batch.txt) > results.json`, then `kb-tune ingest " +
            planDir + " results.json`",
        2);
  if (dirs.size() > 1 && !(j.is_object() && j.contains("reports"))) {
    // A kb-run that measures one bundle per process.
    json reports = json::array();
    for (const std::string &d : dirs)
      reports.push_back(runKbRun(o, {d}, planDir, noBaselines));
    return {{"schema", 1}, {"reports", reports}};
  }
  return j;
}

/// compile --pick-model: the model's pick into the database `o.db`, for a
/// user without a GPU; a measured entry for the same key is kept.
void writeModelPick(const Options &o, const Plan &p) {
  int pick = modelPick(p);
  if (pick < 0)
    die("--pick-model: no surviving candidate of the program's precision (" +
        p.facts.precision + ") to pick");
  try {
    json db = loadDb(o.db);
    json entry = dbModelEntry(p, pick);
    std::string key = entry["key"];
    const json *old = findDb(db, key);
    if (old && old->value("mode", "model") != "model") {
      std::cerr << "kb-tune: the database keeps its measured ("
                << old->value("mode", "") << ") entry for " << key << "\n";
      return;
    }
    mergeDb(db, entry);
    writeJson(o.db, db);
    if (!o.quiet)
      std::cerr << "kb-tune: the model's pick " << p.entries[pick].id << " "
                << p.entries[pick].cand.config() << " (model "
                << p.entries[pick].st.modelMs << " ms, not measured) is in "
                << o.db << " for " << key << "\n";
  } catch (const std::exception &e) {
    die(e.what());
  }
}

std::string defaultKbRun(const char *argv0) {
  fs::path self = fs::absolute(argv0).parent_path() / "kb-run";
  return fs::exists(self) ? self.string() : "kb-run";
}

} // namespace

static int tuneMain(int argc, char **argv) {
  mlir::kb::registerKBCompilePipeline();
  CLI::App app{"kb-tune: search kb's #kb.config space of a kernel, measured "
               "by kb-run (docs/kb-tune.md)"};
  app.set_version_flag("--version",
                       std::string("kb-tune ") + KB_VERSION_STRING);
  app.require_subcommand(1);
  Options o;
  auto common = [&](CLI::App *c) {
    c->add_option("--chip", o.chip, "Target chip (sm_90a, sm_90, sm_80)")
        ->capture_default_str();
    c->add_option("--kernel", o.kernel,
                  "Which kernel of the program to tune (index among its "
                  "kernels after fusion; default: the first matmul or "
                  "softmax, else the last)");
    c->add_option("--max-rel-error", o.maxRelError,
                  "Accuracy budget: a matmul may use ieee, tf32 or tf32x3 "
                  "where kb-run's checks measure at most this relative "
                  "error (default: keep the program's precision)");
    c->add_flag("--json", o.json, "Print the summary as JSON");
    c->add_flag("--quiet,-q", o.quiet, "No progress line on stderr");
    c->add_option("--only", o.only,
                  "Keep only the candidates whose #kb.config text matches "
                  "this regular expression");
  };
  auto searchOpts = [&](CLI::App *c) {
    c->add_option("--mode", o.mode, "exhaustive, random or guided")
        ->capture_default_str();
    c->add_option("--budget", o.budget,
                  "Candidates to time (guided, random; default a tenth of "
                  "the survivors, rounded down, at least 1)");
    c->add_option("--seed", o.seed, "Seed of the random mode")
        ->capture_default_str();
    c->add_option("--calibration", o.calibration,
                  "kb-run --calibrate's cache or report: the model's "
                  "ceilings (default: the H200's nominal figures)");
    c->add_option("--db", o.db,
                  "Tuning database: read for an exhaustive result, written "
                  "with the choice");
    c->add_option("--limit", o.limit,
                  "Compile only the first N candidates of the space");
    c->add_flag("--keep-spills", o.keepSpills,
                "Keep candidates whose registers spill");
  };

  auto *space = app.add_subcommand("space", "List the config space of the "
                                            "program's kernel (no compile)");
  space->add_option("program", o.program)->required();
  common(space);

  auto *compile = app.add_subcommand(
      "compile", "Compile the candidates, prune and rank them, write the "
                 "first batch for kb-run");
  compile->add_option("program", o.program)->required();
  compile->add_option("--out", o.out, "Plan folder")->required();
  compile->add_flag("--pick-model", o.pickModel,
                    "Write the model's pick (the survivor it ranks first, "
                    "not measured) to the --db database, for a machine "
                    "without a GPU");
  common(compile);
  searchOpts(compile);

  auto *ingestCmd = app.add_subcommand(
      "ingest", "Read kb-run's results for the batch; write the next batch "
                "or the choice");
  ingestCmd->add_option("dir", o.out)->required();
  ingestCmd->add_option("results", o.results)->required();
  ingestCmd->add_option("--db", o.db, "Tuning database to write the choice to");
  ingestCmd->add_option("--device", o.device,
                        "Device name for the database (default: kb-run's)");
  ingestCmd->add_flag("--json", o.json, "Print the summary as JSON");
  ingestCmd->add_flag("--quiet,-q", o.quiet, "No progress on stderr");

  auto *tune = app.add_subcommand(
      "tune", "compile, then measure with kb-run and ingest until done (one "
              "machine with a GPU)");
  tune->add_option("program", o.program)->required();
  tune->add_option("--out", o.out, "Plan folder (default: kb-tune.<name>)");
  tune->add_option("--kb-run", o.kbRun, "kb-run to measure with");
  tune->add_flag("--profile", o.profile,
                 "Have kb-run add Nsight Compute's counters (DRAM and SM "
                 "throughput, achieved occupancy, tensor-pipe activity) to "
                 "each report, so that the diagnosis steering the next round "
                 "reads them (where ncu is installed; slower)");
  common(tune);
  searchOpts(tune);

  auto *replayCmd = app.add_subcommand(
      "replay", "Replay random and guided search over the measurements of an "
                "exhaustive batch (each mode sees only what it chooses)");
  replayCmd->add_option("dir", o.out, "Plan folder compiled in exhaustive mode")
      ->required();
  replayCmd->add_option("results", o.results, "kb-run's results for it")
      ->required();
  replayCmd->add_option("--budget", o.budget, "Candidates to time");
  replayCmd->add_option("--seed", o.seed, "First seed of the random mode");
  replayCmd->add_option("--seeds", o.seeds, "Random replays (seeds) to run")
      ->capture_default_str();
  replayCmd->add_option("--calibration", o.calibration,
                        "Rank by the model with these ceilings (kb-run "
                        "--calibrate's cache from the GPU run)");

  auto *report = app.add_subcommand("report", "Print a plan's summary");
  report->add_option("dir", o.out)->required();
  report->add_flag("--json", o.json, "As JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }

  if (*space) {
    Program prog = loadProgram(o.program, o.chip, o.kernel, o.maxRelError);
    auto cands = spaceOf(o, prog.facts);
    json list = json::array();
    for (size_t i = 0; i < cands.size(); ++i)
      list.push_back({{"id", idOf(int(i))},
                      {"config", cands[i].config()},
                      {"precision", cands[i].precision}});
    if (o.json)
      std::cout << json({{"facts", toJson(prog.facts)},
                         {"space", spaceId(cands)},
                         {"candidates", list}})
                       .dump(1)
                << "\n";
    else {
      std::cout << "kb-tune: " << familyName(prog.facts.family) << " space, "
                << cands.size() << " candidates (" << spaceId(cands) << ")\n";
      for (size_t i = 0; i < cands.size(); ++i)
        std::cout << idOf(int(i)) << " " << cands[i].config()
                  << (cands[i].precision != "-"
                          ? " precision " + cands[i].precision
                          : "")
                  << "\n";
    }
    return 0;
  }

  if (*compile || *tune) {
    checkMode(o.mode);
    if (o.pickModel && o.db.empty())
      die("--pick-model writes the model's pick to a tuning database: give "
          "--db DB.json");
    if (o.out.empty())
      o.out = "kb-tune." + fs::path(o.program).stem().string();
    Program prog = loadProgram(o.program, o.chip, o.kernel, o.maxRelError);
    Plan p = compileAll(o, prog);
    std::vector<int> batch = firstBatch(p);
    if (batch.empty()) {
      p.done = true;
      writeJson(o.out + "/plan.json", toJson(p));
      printOutcome(o, p);
      die("no candidate survived the static pruning", 1);
    }
    p.rounds.push_back(batch);
    writeBatch(o.out, p, batch);
    writeJson(o.out + "/plan.json", toJson(p));
    if (*compile) {
      if (o.pickModel)
        writeModelPick(o, p);
      printOutcome(o, p);
      if (!o.quiet)
        std::cerr << "kb-tune: " << batch.size() << " candidates in " << o.out
                  << "/batch.txt; measure with: kb-run --json --no-baselines "
                     "$(cat "
                  << o.out
                  << "/batch.txt) > results.json; then: kb-tune "
                     "ingest "
                  << o.out << " results.json\n";
      return 0;
    }
    if (o.kbRun.empty())
      o.kbRun = defaultKbRun(argv[0]);
    while (!p.done) {
      std::vector<std::string> dirs;
      if (p.rounds.size() == 1 && fs::exists(o.out + "/default"))
        dirs.push_back(o.out + "/default");
      for (int i : p.rounds.back())
        dirs.push_back(o.out + "/" + p.entries[i].id);
      if (!o.quiet)
        std::cerr << "kb-tune: round " << p.rounds.size() - 1 << ": timing "
                  << dirs.size() << " candidates\n";
      json out = runKbRun(o, dirs, o.out);
      ingest(o, o.out, p, out);
    }
    printOutcome(o, p);
    return 0;
  }

  if (*ingestCmd) {
    Plan p = loadPlan(o.out);
    ingest(o, o.out, p, readResults(o.results));
    if (p.done)
      printOutcome(o, p);
    else if (o.json)
      std::cout << summaryJson(p).dump(1) << "\n";
    return 0;
  }

  if (*replayCmd) {
    Plan p = loadPlan(o.out);
    if (p.mode != "exhaustive")
      die("replay needs a plan compiled with --mode exhaustive (this one is " +
          p.mode + ")");
    // A plan compiled before plans recorded kb's own config: from its
    // default bundle, where that is still there.
    if (p.defaultConfig.empty())
      p.defaultConfig = tunedKernelConfig(o.out + "/default", p.facts.family);
    // The model again (this kb-tune's), from the stored static facts: with
    // the ceilings measured on the GPU (--calibration), or the plan's.
    if (!o.calibration.empty()) {
      try {
        p.cal = loadCalibration(o.calibration);
      } catch (const std::exception &e) {
        die(e.what());
      }
    }
    std::vector<Static> st;
    for (Entry &e : p.entries) {
      if (e.st.compiled && e.st.pruned.empty())
        e.st.modelMs = modelTime(p.facts, e.cand, e.st, p.cal);
      st.push_back(e.st);
    }
    rankByModel(st);
    for (size_t i = 0; i < st.size(); ++i)
      p.entries[i].st.rank = st[i].rank;
    // Record every measurement, as ingest would, without the rounds.
    p.rounds = {survivors(p)};
    p.done = false;
    Options quiet = o;
    quiet.quiet = true;
    quiet.db.clear();
    std::vector<json> reports = reportsOf(readResults(o.results));
    // The order the reports were measured in, for reports naming no bundle:
    // the plan's batch.txt (gpu-tune.sh measures in its order), else
    // default/ and then the survivors in table order (plans before
    // 2026-12-03, whose batch.txt was in that order too).
    std::vector<std::string> order;
    std::ifstream batchList(o.out + "/batch.txt");
    for (std::string line; std::getline(batchList, line);) {
      while (!line.empty() && line.back() == '/')
        line.pop_back();
      if (!line.empty())
        order.push_back(fs::path(line).filename().string());
    }
    if (order.empty()) {
      order = {"default"};
      for (int i : survivors(p))
        order.push_back(p.entries[i].id);
    }
    for (size_t j = 0; j < reports.size(); ++j) {
      const json &rep = reports[j];
      std::string id = candidateIdOf(rep, j, reports.size(), order);
      if (id == "default" && parseReport(rep, -1).status == "ok")
        p.defaultMs = parseReport(rep, -1).medianMs;
      for (Entry &e : p.entries)
        if (e.id == id)
          e.meas = parseReport(rep, p.maxRelError);
    }
    json out = {{"program", p.program},
                {"family", familyName(p.facts.family)},
                {"facts", toJson(p.facts)},
                {"space", p.space},
                {"simulated", true},
                {"default_ms", p.defaultMs},
                {"calibration", p.cal.source},
                {"exhaustive", replay(p, "exhaustive", 0, 0)}};
    // The model's order against the measurements (how well it ranks).
    json ranked = json::array();
    std::vector<int> byModel = survivors(p);
    std::stable_sort(byModel.begin(), byModel.end(), [&](int a, int b) {
      return p.entries[a].st.rank < p.entries[b].st.rank;
    });
    for (int i : byModel) {
      const Entry &e = p.entries[i];
      json r = {{"id", e.id},
                {"config", e.cand.config()},
                {"model_ms", e.st.modelMs}};
      if (e.meas && e.meas->status == "ok")
        r["median_ms"] = e.meas->medianMs;
      ranked.push_back(r);
    }
    out["model_order"] = ranked;
    out["guided"] = replay(p, "guided", o.budget, 0);
    int budget = out["guided"]["candidates_timed"];
    json randoms = json::array();
    for (int s = 0; s < std::max(1, o.seeds); ++s)
      randoms.push_back(replay(p, "random", budget, o.seed + s));
    out["random"] = randoms;
    std::cout << out.dump(1) << "\n";
    return 0;
  }

  if (*report) {
    Plan p = loadPlan(o.out);
    printOutcome(o, p);
    return 0;
  }
  return 0;
}

int main(int argc, char **argv) {
  // An exception no step caught (a plan or report field of the wrong JSON
  // type) is one line, not std::terminate's abort.
  try {
    return tuneMain(argc, argv);
  } catch (const std::exception &e) {
    die(e.what());
  }
}
