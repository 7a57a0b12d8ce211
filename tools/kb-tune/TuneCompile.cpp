//===- TuneCompile.cpp - kb-tune's candidates through kb's passes ---------===//
//
// The program (parsed and fused), each candidate #kb.config compiled by
// kb-compile in process, the static facts read back from its bundle
// (ptxas's resources, occupancy, tensor-core instructions), the static
// pruning and ranking, and the batches written for kb-run.
//
//===----------------------------------------------------------------------===//

#include "KbTune.h"


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

namespace kbtune {


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
  if (kind == mlir::kb::KernelKind::Attention)
    die("kernel " + std::to_string(kernel) +
        " is a kb.attention, which kb-tune does not tune yet");
  if (kind == mlir::kb::KernelKind::RowReduce)
    die("kernel " + std::to_string(kernel) +
        " is a row reduction or norm, which kb-tune does not tune yet");
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

} // namespace kbtune
