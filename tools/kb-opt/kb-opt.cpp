//===- kb-opt.cpp - the kb optimizer driver -------------------------------===//
//
// An mlir-opt for kb: the kb dialect, kb's passes and pipelines, and the
// upstream dialects and passes the lowering uses. `--fuse-elementwise` is
// accepted as the user-facing spelling of `--kb-fuse-elementwise`.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"
#include "kb/Dialect/KB/IR/KBDialect.h"
#include "kb/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include <cstring>
#include <vector>

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::kb::registerKBTransformsPasses();
  mlir::kb::registerKBConversionPasses();
  mlir::kb::registerKBCompilePipeline();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::kb::KBDialect>();

  // The short spellings users type, mapped onto the flags kb registers.
  std::vector<char *> args(argv, argv + argc);
  static char fuse[] = "--kb-fuse-elementwise";
  for (char *&a : args)
    if (std::strcmp(a, "--fuse-elementwise") == 0 ||
        std::strcmp(a, "-fuse-elementwise") == 0)
      a = fuse;
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      static_cast<int>(args.size()), args.data(),
      "kb optimizer: kb dialect passes and lowering to PTX\n", registry));
}
