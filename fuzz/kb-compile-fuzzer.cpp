//===- kb-compile-fuzzer.cpp - libFuzzer target over kb-opt's compile path ===//
//
// Each input is a kb program as text. It is parsed and verified as kb-opt
// does, then run through the `kb-compile` pipeline (fusion, the decision
// passes, the lowering, NVVM, PTX and the bundle) with ptxas off, in-process
// and on one thread. Bad input must end in an error diagnostic: a crash, an
// assert, a sanitizer report, a timeout, an out-of-memory, or a failure that
// emitted no error is a finding. An input may pick the chip with a first
// line `// chip=sm_80` (sm_90, sm_90a); the default is sm_90. Inputs over
// kMaxInputBytes are skipped, so each one's work stays bounded.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"
#include "kb/Dialect/KB/IR/KBDialect.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// Larger inputs are skipped (fuzz.sh also passes -max_len).
constexpr size_t kMaxInputBytes = 16384;

DialectRegistry *registry = nullptr;
std::string bundleDir;

/// The chip named by a leading `// chip=...` line, or sm_90.
std::string chipOf(llvm::StringRef text) {
  llvm::StringRef first = text.split('\n').first.trim();
  if (!first.consume_front("// chip="))
    return "sm_90";
  first = first.trim();
  if (first == "sm_80" || first == "sm_90" || first == "sm_90a")
    return first.str();
  return "sm_90";
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  registerAllPasses();
  kb::registerKBTransformsPasses();
  kb::registerKBConversionPasses();
  kb::registerKBCompilePipeline();
  registry = new DialectRegistry();
  registerAllDialects(*registry);
  registerAllExtensions(*registry);
  registerAllToLLVMIRTranslations(*registry);
  registry->insert<kb::KBDialect>();
  // One bundle folder per process, rewritten by every input that compiles.
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("kb-fuzz-bundle", dir)) {
    std::fprintf(stderr, "kb-compile-fuzzer: cannot create a temp folder\n");
    std::abort();
  }
  bundleDir = dir.str().str();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1; // not added to the corpus
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);

  // A fresh context per input: nothing interned by one input outlives it.
  MLIRContext ctx(*registry, MLIRContext::Threading::DISABLED);
  int errors = 0;
  std::string firstError;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && errors++ == 0)
      firstError = d.str();
    return success();
  });

  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &ctx);
  if (!module) {
    if (errors == 0) {
      std::fprintf(stderr, "kb-compile-fuzzer: the parser failed without an error\n");
      std::abort();
    }
    return 0;
  }

  PassManager pm(&ctx);
  std::string pipeline = "builtin.module(kb-compile{chip=" + chipOf(text) +
                         " ptxas=none output=" + bundleDir + "})";
  if (failed(parsePassPipeline(pipeline, pm))) {
    std::fprintf(stderr, "kb-compile-fuzzer: cannot parse '%s'\n", pipeline.c_str());
    std::abort();
  }
  if (failed(pm.run(*module)) && errors == 0) {
    // kb-opt would exit 1 with nothing on stderr.
    std::fprintf(stderr, "kb-compile-fuzzer: kb-compile failed without an error\n");
    std::abort();
  }
  return 0;
}
