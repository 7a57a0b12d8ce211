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

#include "kb/Target/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
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
/// KB_FUZZ_VERBOSE=1: print each input's first error (to see what a run of
/// inputs did; off while fuzzing, where it would only slow things down).
bool verbose = false;

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

/// kb's code is built with ASan, libMLIR.so is not, and both run the inline
/// llvm::BumpPtrAllocator of LLVM's headers on the same slabs: kb's copy
/// poisons a slab's free tail (LLVM_ADDRESS_SANITIZER_BUILD), MLIR's copy
/// hands it out without unpoisoning, and ASan reports a use-after-poison in
/// MLIR's parser. Manual poisoning is therefore off; ASan's own redzones and
/// shadow still check every access kb's code makes. Leak checking is off as
/// MLIR's registries live for the whole process (docs/fuzzing.md).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // What kb-opt registers, and nothing else.
  kb::registerCompilePasses();
  registry = new DialectRegistry();
  kb::registerCompileDialects(*registry);
  // One bundle folder per process, rewritten by every input that compiles.
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("kb-fuzz-bundle", dir)) {
    std::fprintf(stderr, "kb-compile-fuzzer: cannot create a temp folder\n");
    std::abort();
  }
  bundleDir = dir.str().str();
  const char *v = std::getenv("KB_FUZZ_VERBOSE");
  verbose = v && *v && *v != '0';
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1; // not added to the corpus
  // A NUL-terminated copy, as kb-opt's input is: kb-opt reads its file
  // through llvm::MemoryBuffer, which ends every buffer with a NUL, and
  // MLIR's lexer may look one byte past the text for it. libFuzzer's buffer
  // ends exactly at `size`, so parsing it in place read 1-2 bytes past it
  // (2026-12-02, a run without -fork: memchr from StringRef::find under
  // parseFunctionOp, 0 bytes after the input's region); that is what the
  // unreproduced heap-buffer-overflow reports of fork-mode runs were
  // (fuzz/unreproduced/kb-compile/README.md).
  std::string owned(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(owned.c_str(), size);

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
    if (verbose)
      std::fprintf(stderr, "kb-compile-fuzzer: parse: %s\n",
                   firstError.c_str());
    if (errors == 0) {
      std::fprintf(stderr,
                   "kb-compile-fuzzer: the parser failed without an error\n");
      std::abort();
    }
    return 0;
  }

  // Anchored on builtin.module: a pass manager on "any" with a nested
  // builtin.module(...) would run only on modules inside the top one.
  PassManager pm(&ctx, ModuleOp::getOperationName());
  std::string pipeline = "kb-compile{chip=" + chipOf(text) +
                         " ptxas=none output=" + bundleDir + "}";
  if (failed(parsePassPipeline(pipeline, pm))) {
    std::fprintf(stderr, "kb-compile-fuzzer: cannot parse '%s'\n",
                 pipeline.c_str());
    std::abort();
  }
  if (verbose) {
    pm.printAsTextualPipeline(llvm::errs());
    llvm::errs() << "\n";
  }
  bool ok = succeeded(pm.run(*module));
  if (!ok && errors == 0) {
    // kb-opt would exit 1 with nothing on stderr.
    std::fprintf(stderr,
                 "kb-compile-fuzzer: kb-compile failed without an error\n");
    std::abort();
  }
  if (verbose)
    std::fprintf(stderr, "kb-compile-fuzzer: %s\n",
                 ok ? "compiled" : ("kb-compile: " + firstError).c_str());
  return 0;
}
