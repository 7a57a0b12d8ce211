//===- EmitBundle.cpp - write manifest.json and the kernels' PTX ----------===//
//
// kb-emit-bundle: the contract between compiler and runtime (docs/bundle.md).
// Reads the entry function that kb-lower-to-gpu made (buffers, launches in
// order, the kb ops each launch computes) and the PTX that
// gpu-module-to-binary put in each gpu.binary, writes them out, and, where
// ptxas is found, assembles each kernel and records its resource report.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"
#include "kb/Runtime/BundleRecord.h"
#include "kb/Version.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBEMITBUNDLE
#include "kb/Conversion/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

llvm::json::Value toJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array arr;
    for (Attribute e : a)
      arr.push_back(toJson(e));
    return arr;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object obj;
    for (NamedAttribute n : d)
      obj[n.getName().str()] = toJson(n.getValue());
    return obj;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

/// Finds ptxas: an explicit path, else PATH, CUDA_HOME/bin,
/// /usr/local/cuda/bin.
std::string findPtxas(StringRef option) {
  if (option == "none")
    return "";
  if (option != "auto")
    return option.str();
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  SmallVector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"))
    dirs.push_back(std::string(home) + "/bin");
  dirs.push_back("/usr/local/cuda/bin");
  for (auto &d : dirs) {
    std::string p = d + "/ptxas";
    if (llvm::sys::fs::can_execute(p))
      return p;
  }
  return "";
}

/// Runs ptxas -v on `ptxPath`; returns the resource report, or an error text.
FailureOr<llvm::json::Object> runPtxas(StringRef ptxas, StringRef chip,
                                       StringRef ptxPath, StringRef cubinPath,
                                       std::string &error) {
  SmallString<128> logPath;
  llvm::sys::fs::createTemporaryFile("kb-ptxas", "log", logPath);
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args = {ptxas,   arch, "-v",     "-O3",
                                 ptxPath, "-o", cubinPath};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 120,
                                     0, &error);
  auto buf = llvm::MemoryBuffer::getFile(logPath);
  std::string log = buf ? (*buf)->getBuffer().str() : "";
  llvm::sys::fs::remove(logPath);
  if (rc != 0) {
    if (error.empty())
      error = StringRef(log).trim().str();
    if (error.empty())
      error = rc < 0 ? "it could not be run or was killed"
                     : "it exited with status " + std::to_string(rc) +
                           " and printed nothing";
    return failure();
  }
  llvm::json::Object r;
  auto grab = [&](StringRef pattern, StringRef key) {
    llvm::Regex re(pattern);
    SmallVector<StringRef> m;
    int64_t v = 0;
    if (re.match(log, &m))
      m[1].getAsInteger(10, v);
    r[key] = v;
  };
  grab("Used ([0-9]+) registers", "registers");
  grab("([0-9]+) bytes smem", "shared_static_bytes");
  grab("([0-9]+) bytes stack frame", "stack_bytes");
  grab("([0-9]+) bytes spill stores", "spill_store_bytes");
  grab("([0-9]+) bytes spill loads", "spill_load_bytes");
  grab("used ([0-9]+) barriers", "barriers");
  return r;
}

/// Whether `name` is a file a bundle holds: kb-emit-bundle's (the manifest,
/// each kernel's PTX and cubin) or the Python front end's (program.mlir,
/// kb_python.json; python/kb/bundle.py).
bool isBundleFile(StringRef name) {
  return name == "manifest.json" || name == "program.mlir" ||
         name == "kb_python.json" || name.ends_with(".ptx") ||
         name.ends_with(".cubin");
}

/// Makes `output` ready for a new bundle: an absent or empty folder is
/// used as it is; a folder holding an earlier kb bundle and nothing else
/// loses that bundle's files (no stale kernel of it stays beside the new
/// ones). A folder holding anything else is refused, naming the first such
/// entry: kb deletes no file it did not write. Returns the refusal in
/// `error`.
LogicalResult clearOutputFolder(StringRef output, std::string &error) {
  if (!llvm::sys::fs::is_directory(output))
    return success();
  std::vector<std::string> files;
  std::string stranger;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(output, ec), end;
       it != end && !ec; it.increment(ec)) {
    StringRef name = llvm::sys::path::filename(it->path());
    llvm::sys::fs::file_status st;
    bool regular = !llvm::sys::fs::status(it->path(), st, /*follow=*/false) &&
                   llvm::sys::fs::is_regular_file(st);
    if (regular && isBundleFile(name))
      files.push_back(it->path());
    else if (stranger.empty())
      stranger = name.str();
  }
  if (ec) {
    error = "cannot list '" + output.str() + "': " + ec.message();
    return failure();
  }
  if (files.empty() && stranger.empty())
    return success();
  SmallString<256> manifestPath(output);
  llvm::sys::path::append(manifestPath, "manifest.json");
  bool isBundle = false;
  if (llvm::sys::fs::is_regular_file(manifestPath))
    if (auto buf = llvm::MemoryBuffer::getFile(manifestPath)) {
      llvm::Expected<llvm::json::Value> v =
          llvm::json::parse((*buf)->getBuffer());
      if (v && v->getAsObject())
        isBundle = v->getAsObject()->getString("format") == "kb-bundle";
      else if (!v)
        llvm::consumeError(v.takeError());
    }
  if (!isBundle) {
    error = "output folder '" + output.str() +
            "' is not empty and holds no kb bundle (no manifest.json of "
            "format \"kb-bundle\"); kb replaces only an earlier bundle and "
            "deletes no other file: give an empty or a new folder";
    return failure();
  }
  if (!stranger.empty()) {
    error = "output folder '" + output.str() + "' holds an earlier kb bundle "
            "and '" + stranger + "', which is not a bundle's file; kb "
            "replaces the bundle whole and deletes no other file: move '" +
            stranger + "' away or give another folder";
    return failure();
  }
  for (const std::string &f : files)
    if (auto rc = llvm::sys::fs::remove(f)) {
      error = "cannot remove the earlier bundle's '" + f + "': " + rc.message();
      return failure();
    }
  return success();
}

struct EmitBundlePass
    : public mlir::kb::impl::KBEmitBundleBase<EmitBundlePass> {
  using Base::Base;
  void runOnOperation() override;
};

void EmitBundlePass::runOnOperation() {
  ModuleOp module = getOperation();
  if (output.empty()) {
    module.emitError()
        << "kb-emit-bundle: option 'output' (the bundle folder) is required";
    return signalPassFailure();
  }
  SmallVector<func::FuncOp> entries;
  for (auto f : module.getOps<func::FuncOp>())
    if (f->hasAttr("kb.entry"))
      entries.push_back(f);
  if (entries.empty()) {
    // Say why: a kb op left unlowered (inside another op's region, in a
    // later block, or kb-lower-to-gpu not run), or no kb op at all.
    Operation *kbOp = nullptr;
    module.walk([&](Operation *op) {
      if (isa_and_nonnull<KBDialect>(op->getDialect())) {
        kbOp = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (kbOp) {
      InFlightDiagnostic diag = kbOp->emitError()
                                << "kb-emit-bundle: this kb op was not lowered "
                                   "by kb-lower-to-gpu";
      Operation *parent = kbOp->getParentOp();
      if (!isa<func::FuncOp>(parent))
        diag << " (it is inside '" << parent->getName()
             << "'; kb compiles kb ops at the top level of a function)";
      else if (kbOp->getBlock() != &kbOp->getParentRegion()->front())
        diag << " (it is in a later block of its function; kb compiles "
                "functions of one block)";
      else
        diag << ": run kb-lower-to-gpu first";
      return signalPassFailure();
    }
    auto funcs = module.getOps<func::FuncOp>();
    Operation *at = funcs.empty() ? module.getOperation() : *funcs.begin();
    at->emitError() << "kb-emit-bundle: no function holds a kb op, so there "
                       "is nothing to put in a bundle (a bundle holds one kb "
                       "function with at least one kb op)";
    return signalPassFailure();
  }
  if (entries.size() > 1) {
    entries[1].emitError()
        << "kb-emit-bundle: a bundle holds one kb function; this is the second "
           "(after @"
        << entries[0].getName() << ")";
    return signalPassFailure();
  }
  func::FuncOp entry = entries.front();
  // The manifest records the function's name; JSON holds UTF-8 only (a
  // symbol like @"\FF" is not).
  if (!llvm::json::isUTF8(entry.getName())) {
    entry.emitError() << "kb-emit-bundle: the function's name is not valid "
                         "UTF-8 (the bundle's JSON manifest records it)";
    return signalPassFailure();
  }
  // Errors about the bundle folder are located at the function it holds
  // (the module's own location is FILE:0:0).
  if (llvm::sys::fs::exists(output) && !llvm::sys::fs::is_directory(output)) {
    entry.emitError() << "kb-emit-bundle: output '" << output
                      << "' exists and is not a folder";
    return signalPassFailure();
  }
  if (std::string error; failed(clearOutputFolder(output, error))) {
    entry.emitError() << "kb-emit-bundle: " << error;
    return signalPassFailure();
  }
  if (auto ec = llvm::sys::fs::create_directories(output)) {
    entry.emitError() << "kb-emit-bundle: cannot create '" << output
                      << "': " << ec.message();
    return signalPassFailure();
  }

  DenseMap<Value, std::string> names;
  llvm::json::Array buffers;
  auto shapeOf = [](Type t) {
    llvm::json::Array a;
    for (int64_t d : cast<MemRefType>(t).getShape())
      a.push_back(d);
    return a;
  };
  // A data buffer's element type, as the manifest names it.
  auto dtypeOf = [](Type t) -> std::string {
    Type e = cast<MemRefType>(t).getElementType();
    return e.isBF16() ? "bf16" : e.isF16() ? "f16" : "f32";
  };
  for (BlockArgument arg : entry.getArguments()) {
    auto name =
        entry.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kb.name");
    auto role =
        entry.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kb.role");
    names[arg] = name.str();
    llvm::json::Object buf{{"name", name.str()},
                           {"shape", shapeOf(arg.getType())},
                           {"dtype", dtypeOf(arg.getType())},
                           {"role", role.str()}};
    if (role == "input")
      buf["init"] =
          llvm::json::Object{{"dist", "normal"}, {"mean", 0.0}, {"std", 1.0}};
    buffers.push_back(std::move(buf));
  }
  entry.walk([&](memref::AllocOp alloc) {
    auto name = alloc->getAttrOfType<StringAttr>("kb.name");
    names[alloc] = name.str();
    // Intermediates ("scratch", of their tensor's type), or a kernel's i32
    // "workspace", which
    // kb-run zero-fills once and the kernel leaves zero.
    // Or a TMA tensor map (128 bytes) that kb-run encodes for the buffer
    // it describes.
    auto role = alloc->getAttrOfType<StringAttr>("kb.role");
    StringRef kind = role ? role.getValue() : "scratch";
    llvm::json::Object buf{{"name", name.str()},
                           {"shape", shapeOf(alloc.getType())},
                           {"dtype", kind == "scratch"
                                         ? dtypeOf(alloc.getType())
                                         : std::string("i32")},
                           {"role", kind}};
    if (auto tm = alloc->getAttrOfType<DictionaryAttr>("kb.tensor_map")) {
      auto ints = [&](StringRef key) {
        llvm::json::Array a;
        for (Attribute x : tm.getAs<ArrayAttr>(key))
          a.push_back(cast<IntegerAttr>(x).getInt());
        return a;
      };
      // The swizzle: 128 bytes, or what the map names (64 or 32 for a
      // 16-bit row-major B's narrower boxes).
      int64_t swizzle = 128;
      if (auto sw = tm.getAs<IntegerAttr>("swizzle"))
        swizzle = sw.getInt();
      buf["tensor_map"] =
          llvm::json::Object{{"of", tm.getAs<StringAttr>("of").str()},
                             {"dims", ints("dims")},
                             {"box", ints("box")},
                             {"swizzle", std::to_string(swizzle) + "B"}};
    }
    buffers.push_back(std::move(buf));
  });

  std::string ptxas = findPtxas(this->ptxas);
  if (this->ptxas != "auto" && this->ptxas != "none" &&
      !llvm::sys::fs::can_execute(ptxas)) {
    module.emitError() << "kb-emit-bundle: ptxas '" << ptxas
                       << "' is not an executable";
    return signalPassFailure();
  }
  llvm::json::Array kernels, program;
  SmallVector<std::string> ptxPaths;
  bool failedAny = false;
  entry.walk(
      [&](gpu::LaunchFuncOp launch) {
        if (failedAny)
          return;
        StringRef moduleName = launch.getKernelModuleName().getValue();
        StringRef kernelName = launch.getKernelName().getValue();
        auto binary = SymbolTable::lookupNearestSymbolFrom<gpu::BinaryOp>(
            module, launch.getKernelModuleName());
        if (!binary || binary.getObjects().empty()) {
          launch.emitError() << "kb-emit-bundle: no gpu.binary '" << moduleName
                             << "': run gpu-module-to-binary{format=isa} first";
          failedAny = true;
          return;
        }
        auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
        if (object.getFormat() != gpu::CompilationTarget::Assembly) {
          launch.emitError()
              << "kb-emit-bundle: '" << moduleName
              << "' is not PTX: use gpu-module-to-binary{format=isa}";
          failedAny = true;
          return;
        }
        StringRef ptxText = object.getObject().getValue();
        if (size_t at = ptxText.find(".extern .func"); at != StringRef::npos) {
          StringRef rest = ptxText.substr(at);
          launch.emitError() << "kb-emit-bundle: the PTX of " << kernelName
                             << " calls an unresolved function ("
                             << rest.take_until([](char c) { return c == '('; })
                             << "): libdevice was not linked; point cuda-path "
                                "(or CUDA_HOME) at a CUDA toolkit";
          failedAny = true;
          return;
        }
        std::string ptxFile = (kernelName + ".ptx").str();
        SmallString<256> ptxPath(output);
        llvm::sys::path::append(ptxPath, ptxFile);
        {
          std::error_code ec;
          llvm::raw_fd_ostream os(ptxPath, ec);
          if (ec) {
            launch.emitError() << "kb-emit-bundle: cannot write " << ptxPath
                               << ": " << ec.message();
            failedAny = true;
            return;
          }
          os << object.getObject().getValue();
        }
        ptxPaths.push_back(ptxPath.str().str());
        auto dims = [&](Value x, Value y, Value z) {
          llvm::json::Array a;
          for (Value v : {x, y, z})
            a.push_back(getConstantIntValue(v).value_or(-1));
          return a;
        };
        llvm::json::Array args;
        for (Value v : launch.getKernelOperands())
          args.push_back(names.lookup(v));
        int64_t smem = 0;
        if (Value s = launch.getDynamicSharedMemorySize())
          smem = getConstantIntValue(s).value_or(0);
        llvm::json::Array ops;
        llvm::json::Object kernel{
            {"name", kernelName.str()},
            {"ptx", ptxFile},
            {"grid", dims(launch.getGridSizeX(), launch.getGridSizeY(),
                          launch.getGridSizeZ())},
            {"block", dims(launch.getBlockSizeX(), launch.getBlockSizeY(),
                           launch.getBlockSizeZ())},
            {"dynamic_shared_bytes", smem},
            {"args", std::move(args)},
        };
        if (launch.hasClusterSize())
          kernel["cluster"] =
              dims(launch.getClusterSizeX(), launch.getClusterSizeY(),
                   launch.getClusterSizeZ());
        if (auto cfg = launch->getAttr("kb.config"))
          kernel["config"] = toJson(cfg);
        // The kernel starts with griddepcontrol.wait (kb-dependent-launch):
        // kb-run may launch it while the kernel before it ends.
        if (launch->hasAttr("kb.dependent_launch"))
          kernel["dependent_launch"] = true;
        // A split_global softmax's blocks of one row wait for each other:
        // kb-run refuses a device that cannot hold that many at once (it would
        // hang).
        if (auto cfg = launch->getAttrOfType<ConfigAttr>("kb.config"))
          if (cfg.getStrategy() == SoftmaxStrategy::split_global)
            kernel["co_resident_blocks"] =
                std::max<int64_t>(cfg.getCluster(), 1);
        // Likewise a stream-K matmul's persistent grid: the block of a rest
        // tile's first chunk waits for the blocks of its other chunks.
        if (auto cfg = launch->getAttrOfType<ConfigAttr>("kb.config"))
          if (cfg.getReduce() == ReduceKind::stream)
            kernel["co_resident_blocks"] =
                getConstantIntValue(launch.getGridSizeX()).value_or(1);
        if (auto recs = launch->getAttrOfType<ArrayAttr>("kb.ops")) {
          for (Attribute r : recs) {
            llvm::json::Value j = toJson(r);
            j.getAsObject()->insert({"kernel", kernelName.str()});
            program.push_back(std::move(j));
            ops.push_back(program.size() - 1);
          }
        }
        kernel["ops"] = std::move(ops);
        if (!ptxas.empty()) {
          std::string cubinFile = (kernelName + ".cubin").str();
          SmallString<256> cubinPath(output);
          llvm::sys::path::append(cubinPath, cubinFile);
          std::string error;
          auto report = runPtxas(ptxas, chip, ptxPath, cubinPath, error);
          if (failed(report)) {
            launch.emitError() << "kb-emit-bundle: ptxas rejected " << ptxFile
                               << ": " << StringRef(error).trim();
            failedAny = true;
            return;
          }
          kernel["cubin"] = cubinFile;
          kernel["resources"] = std::move(*report);
        }
        kernels.push_back(std::move(kernel));
      });
  if (failedAny)
    return signalPassFailure();

  llvm::json::Object manifest{
      {"format", "kb-bundle"},
      {"version", 1},
      {"compiler", "kb " KB_VERSION_STRING},
      {"target", chip},
      {"function", entry.getName().str()},
      {"buffers", std::move(buffers)},
      {"kernels", std::move(kernels)},
      {"program", std::move(program)},
  };
  // Each kernel's PTX ends with the bundle record (docs/bundle.md): the
  // manifest it was compiled for, less what does not change the kernels'
  // work, stripped by the runtime's own bundleRecordOf (the rule kb-run
  // compares with). A comment: ptxas and the driver ignore it.
  std::string recordText =
      ::kb::runtime::bundleRecordOf(
          nlohmann::json::parse(
              llvm::formatv("{0}",
                            llvm::json::Value(llvm::json::Object(manifest)))
                  .str()))
          .dump();
  for (auto [i, ptxPath] : llvm::enumerate(ptxPaths)) {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxPath, ec, llvm::sys::fs::OF_Append);
    if (ec) {
      entry.emitError() << "kb-emit-bundle: cannot write " << ptxPath << ": "
                        << ec.message();
      return signalPassFailure();
    }
    os << "\n// kb.bundle-record {\"kernel\":" << i
       << ",\"manifest\":" << recordText << "}\n";
  }
  SmallString<256> path(output);
  llvm::sys::path::append(path, "manifest.json");
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    entry.emitError() << "kb-emit-bundle: cannot write " << path << ": "
                      << ec.message();
    return signalPassFailure();
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
}

} // namespace
