//===- kb-opt.cpp - the kb optimizer driver -------------------------------===//
//
// An mlir-opt for kb: the kb dialect, kb's passes and pipelines, and the
// upstream dialects and passes the lowering uses, and nothing else
// (registerCompileDialects and registerCompilePasses, lib/Target/Pipeline.cpp),
// so --help lists kb's passes among a dozen others. `fuse-elementwise` is
// registered as another name of kb-fuse-elementwise. MLIR's
// parser, verifier and printer recurse once per level of nesting, so the
// input's bracket nesting is capped (a one-line error past the cap) and the
// whole tool runs on a thread with a large stack that holds the levels that
// are allowed. Diagnostics do not dump the operation unless
// `--mlir-print-op-on-diagnostic` is given, and any error diagnostic makes
// the exit status 1.
//
//===----------------------------------------------------------------------===//

#include "kb/Target/Pipeline.h"
#include "kb/Version.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

#include <chrono>
#include <vector>

namespace {

/// The deepest bracket nesting (`(`, `[`, `{`, `<`) kb-opt reads. Real
/// programs stay below a few dozen levels.
constexpr unsigned kMaxNesting = 1000;
/// The stack of the thread kb-opt runs on: room for kMaxNesting levels in
/// MLIR's recursive parser, verifier, passes and printer (a few KB each).
constexpr unsigned kStackBytes = 512u << 20;

/// Finds where `text` first nests deeper than kMaxNesting, skipping string
/// literals and `//` comments; `->` is not a closing bracket. Returns false
/// when it never does.
bool findTooDeep(llvm::StringRef text, unsigned &line, unsigned &col) {
  unsigned depth = 0;
  line = 1;
  col = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    ++col;
    switch (c) {
    case '\n':
      ++line;
      col = 0;
      break;
    case '"':
      for (++i; i < e && text[i] != '"' && text[i] != '\n'; ++i, ++col)
        if (text[i] == '\\')
          ++i, ++col;
      ++col;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > kMaxNesting)
        return true;
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-')
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth)
        --depth;
      break;
    default:
      break;
    }
  }
  return false;
}

/// What --help says first.
constexpr const char *kOverview =
    "kb-opt: kb's compiler (docs/user-guide.md)\n\n"
    "  kb-opt PROG.mlir --kb-compile=\"output=DIR\"   compile PROG into a "
    "bundle for kb-run\n"
    "      options: chip=sm_90a|sm_90|sm_80 fuse=true|false "
    "ptxas=auto|none|PATH "
    "cuda-path=DIR\n"
    "               tuning-db=DB.json\n"
    "  kb-opt PROG.mlir --fuse-elementwise           show the fusion "
    "decision\n"
    "  kb-opt PROG.mlir --kb-select-mma --kb-select-config --kb-tile "
    "--kb-promote-shared-memory\n"
    "                                                show every decision "
    "(#kb.config)\n\n"
    "The passes below are kb's (kb-*, fuse-elementwise, kb-compile) and the "
    "upstream ones\nkb-compile runs; --help-hidden lists MLIR's and LLVM's "
    "other options.\n";

/// The options --help shows besides the passes: kb-opt's own and the MLIR
/// ones a kb user needs. Every other option (LLVM's backends register
/// hundreds) stays usable but is listed only by --help-hidden.
void hideUnrelatedOptions() {
  static const llvm::StringSet<> shown = {
      "help",
      "help-hidden",
      "version",
      "o",
      "pass-pipeline",
      "split-input-file",
      "verify-diagnostics",
      "show-dialects",
      "dump-pass-pipeline",
      "mlir-print-op-on-diagnostic",
      "mlir-print-ir-after-all",
      "mlir-print-ir-before-all",
      "mlir-print-ir-after-failure",
      "mlir-print-debuginfo",
      "mlir-timing",
      "mlir-pass-statistics",
  };
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    // The pass list: an option without a name whose values are the passes.
    if (option->ArgStr.empty())
      continue;
    if (!shown.contains(entry.first))
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

int runKbOpt(int argc, char **argv) {
  mlir::kb::registerCompilePasses();
  mlir::DialectRegistry registry;
  mlir::kb::registerCompileDialects(registry);

  std::vector<char *> args(argv, argv + argc);
  bool printOpSet = false;
  for (char *a : args)
    printOpSet |= llvm::StringRef(a).ltrim('-').starts_with(
        "mlir-print-op-on-diagnostic");
  // A diagnostic is the line that says what is wrong (and the source line):
  // not, by default, a dump of the operation, which for an error inside a
  // kernel module is thousands of lines.
  static char noPrintOp[] = "--mlir-print-op-on-diagnostic=false";
  if (!printOpSet)
    args.insert(args.begin() + 1, noPrintOp);
  // --version: LLVM's, then kb's version and commit.
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "kb-opt " << KB_VERSION_STRING << "\n";
  });
  std::string helpHeader = mlir::registerCLIOptions(kOverview, registry);
  hideUnrelatedOptions();
  auto [inputFile, outputFile] = mlir::parseCLIOptions(
      static_cast<int>(args.size()), args.data(), helpHeader);

  std::string error;
  // A device (/dev/zero) would be read until memory runs out, a FIFO waits
  // for a writer: only a regular file, or - for stdin, is read.
  if (inputFile != "-") {
    llvm::sys::fs::file_status st;
    if (!llvm::sys::fs::status(inputFile, st) &&
        !llvm::sys::fs::is_regular_file(st)) {
      llvm::errs() << "kb-opt: '" << inputFile << "' is not a regular file ("
                   << (llvm::sys::fs::is_directory(st) ? "a folder"
                                                       : "a device or a FIFO")
                   << "); kb-opt reads a .mlir file, or - for stdin\n";
      return 1;
    }
  }
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  unsigned line, col;
  if (findTooDeep(input->getBuffer(), line, col)) {
    llvm::errs() << (inputFile == "-" ? "<stdin>" : inputFile) << ":" << line
                 << ":" << col << ": error: the input nests brackets more than "
                 << kMaxNesting << " levels deep; kb-opt reads at most "
                 << kMaxNesting << "\n";
    return 1;
  }
  // `--kb-compile="output=DIR"` without -o writes the bundle and says so in
  // one line, instead of printing the lowered IR (tens of KB, the PTX as an
  // escaped string) to the terminal; -o FILE (or -o -) still gets the IR.
  bool explicitOutput = false;
  std::string bundleDir;
  for (char *a : args) {
    llvm::StringRef arg(a);
    if (arg == "-o" || arg == "--o" || arg.starts_with("-o=") ||
        arg.starts_with("--o="))
      explicitOutput = true;
    size_t at = arg.find("output=");
    if (arg.contains("kb-compile") && at != llvm::StringRef::npos) {
      llvm::StringRef rest = arg.substr(at + 7);
      char quote =
          !rest.empty() && (rest[0] == '\'' || rest[0] == '"') ? rest[0] : 0;
      if (quote)
        rest = rest.drop_front();
      bundleDir =
          rest.take_until([&](char c) {
                return quote ? c == quote : c == ' ' || c == '}' || c == '"';
              })
              .str();
    }
  }
  bool quietCompile = !explicitOutput && !bundleDir.empty();
  auto started = std::chrono::steady_clock::now();
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(quietCompile ? "-" : outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // An error diagnostic means exit 1, also from a pass that reports one and
  // does not fail (gpu-module-to-binary without libdevice did, exit 0).
  // Counted by a handler that then passes the diagnostic on to the printer.
  // Not under -verify-diagnostics, where errors are what is checked.
  unsigned errors = 0;
  if (!config.shouldVerifyDiagnostics()) {
    mlir::MlirOptMainConfig base = config;
    config.setPassPipelineSetupFn([base, &errors](mlir::PassManager &pm) {
      pm.getContext()->getDiagEngine().registerHandler(
          [&errors](mlir::Diagnostic &d) {
            errors += d.getSeverity() == mlir::DiagnosticSeverity::Error;
            return mlir::failure();
          });
      return base.setupPassPipeline(pm);
    });
  }
  llvm::raw_null_ostream discard;
  llvm::raw_ostream &os =
      quietCompile ? static_cast<llvm::raw_ostream &>(discard) : output->os();
  if (failed(mlir::MlirOptMain(os, std::move(input), registry, config)) ||
      errors)
    return 1;
  output->keep();
  if (quietCompile) {
    unsigned kernels = 0;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(bundleDir, ec), end;
         it != end && !ec; it.increment(ec))
      kernels += llvm::StringRef(it->path()).ends_with(".ptx");
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - started)
                  .count();
    llvm::errs() << "kb-opt: wrote the bundle " << bundleDir << " (" << kernels
                 << (kernels == 1 ? " kernel" : " kernels") << ", " << ms
                 << " ms); -o FILE writes the lowered IR too\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  int rc = 1;
  llvm::thread worker(std::optional<unsigned>(kStackBytes),
                      [&] { rc = runKbOpt(argc, argv); });
  worker.join();
  return rc;
}
