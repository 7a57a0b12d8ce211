//===- main.cpp - a program that embeds kb's compiler ---------------------===//
//
// Built against an installed kb (find_package(KB), test/install/consumer):
// parses a kb program, compiles it with kb's public entry point
// (kb/Target/Pipeline.h) into a bundle folder, and checks what it wrote:
// the manifest names kb's version and one fused kernel, and that kernel's
// PTX is an entry point. Then checks that a bad option is refused with a
// message. Usage: kb-consumer BUNDLE_DIR. Exit 0 when every check holds.
//
//===----------------------------------------------------------------------===//

#include "kb/Target/Pipeline.h"
#include "kb/Version.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

// bias_add then relu: kb-fuse-elementwise makes them one kernel. No math
// function, so no libdevice is needed (CI has no CUDA toolkit).
static const char *kProgram = R"mlir(
func.func @bias_relu(%x: tensor<64x256xf32> {kb.name = "x"},
                     %b: tensor<256xf32> {kb.name = "bias"})
    -> (tensor<64x256xf32> {kb.name = "y"}) {
  %0 = kb.bias_add %x, %b : tensor<64x256xf32>, tensor<256xf32> -> tensor<64x256xf32>
  %1 = kb.relu %0 : tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}
)mlir";

static int fail(const llvm::Twine &why) {
  llvm::errs() << "kb-consumer: FAIL: " << why << "\n";
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return fail("usage: kb-consumer BUNDLE_DIR");
  std::string dir = argv[1];

  mlir::DialectRegistry registry;
  mlir::kb::registerCompileDialects(registry);
  mlir::MLIRContext ctx(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kProgram, &ctx);
  if (!module)
    return fail("the program did not parse");

  mlir::PassManager pm(&ctx);
  mlir::kb::CompileOptions options;
  options.chip = "sm_90";
  options.output = dir;
  options.ptxas = "none";
  if (mlir::failed(mlir::kb::buildCompilePipeline(pm, options)))
    return fail("buildCompilePipeline refused valid options");
  if (mlir::failed(pm.run(*module)))
    return fail("kb-compile failed");

  auto manifestText = llvm::MemoryBuffer::getFile(dir + "/manifest.json");
  if (!manifestText)
    return fail("no manifest.json in " + dir);
  llvm::Expected<llvm::json::Value> manifest =
      llvm::json::parse((*manifestText)->getBuffer());
  if (!manifest)
    return fail("manifest.json is not JSON");
  const llvm::json::Object *m = manifest->getAsObject();
  std::string want = std::string("kb ") + KB_VERSION_STRING;
  if (!m || m->getString("compiler") != want)
    return fail("the manifest's compiler is not '" + want + "'");
  if (m->getString("target") != "sm_90")
    return fail("the manifest's target is not sm_90");
  const llvm::json::Array *kernels = m->getArray("kernels");
  if (!kernels || kernels->size() != 1)
    return fail("expected one fused kernel");
  const llvm::json::Object *k = (*kernels)[0].getAsObject();
  std::optional<llvm::StringRef> ptx = k ? k->getString("ptx") : std::nullopt;
  if (!ptx)
    return fail("the kernel has no ptx file");
  auto ptxText = llvm::MemoryBuffer::getFile(dir + "/" + ptx->str());
  if (!ptxText)
    return fail("cannot read " + *ptx);
  if (!(*ptxText)->getBuffer().contains(".entry") ||
      !(*ptxText)->getBuffer().contains(".target sm_90"))
    return fail(*ptx + " is not PTX for sm_90 with an entry point");

  // A bad option is refused before any pass is added, with a message.
  mlir::PassManager bad(&ctx);
  mlir::kb::CompileOptions wrongChip;
  wrongChip.chip = "sm_99";
  std::string message;
  if (mlir::succeeded(
          mlir::kb::buildCompilePipeline(bad, wrongChip,
                                         [&](const llvm::Twine &msg) {
                                           message = msg.str();
                                           return mlir::failure();
                                         })) ||
      !llvm::StringRef(message).contains("unknown chip 'sm_99'"))
    return fail("chip=sm_99 was not refused by name");

  llvm::outs() << "kb-consumer: OK: kb " << KB_VERSION_STRING << " compiled "
               << k->getString("name").value_or("?") << " into " << dir << "\n";
  return 0;
}
