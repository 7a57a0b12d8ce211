//===- Pipeline.h - kb's compile pipeline, for tools that embed kb -*- C++
//-*-===//
//
// The public entry point to kb's compiler: the `kb-compile` pipeline (fusion,
// the decision passes, kb-lower-to-gpu, NVVM, PTX and the bundle) added to a
// pass manager from an options struct, and the dialects and extensions a
// context needs to parse a kb program and run that pipeline. kb-opt is one
// user of it; an installed kb (find_package(KB), docs/user-guide.md) gives
// the same entry point to any C++ program:
//
//   mlir::DialectRegistry registry;
//   mlir::kb::registerCompileDialects(registry);
//   mlir::MLIRContext ctx(registry);
//   auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
//   mlir::PassManager pm(&ctx);
//   mlir::kb::CompileOptions options;
//   options.output = "bundle-dir";
//   if (failed(mlir::kb::buildCompilePipeline(pm, options)) ||
//       failed(pm.run(*module)))
//     ...; // the reason was reported as an error diagnostic
//
//===----------------------------------------------------------------------===//

#ifndef KB_TARGET_PIPELINE_H
#define KB_TARGET_PIPELINE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::kb {

/// The options of `kb-compile` (the same names and defaults as
/// `--kb-compile="chip=... output=..."`).
struct CompileOptions {
  /// sm_90a (Hopper's wgmma and TMA; H100/H200 only), sm_90 or sm_80.
  std::string chip = "sm_90a";
  /// The bundle folder to write; empty: stop after PTX (the gpu.binary ops
  /// hold the kernels).
  std::string output;
  /// Run kb-fuse-attention and kb-fuse-elementwise first; false gives one
  /// kernel per op.
  bool fuse = true;
  /// A CUDA toolkit holding nvvm/libdevice; empty: CUDA_ROOT, CUDA_HOME,
  /// CUDA_PATH, then /usr/local/cuda (the first that holds libdevice).
  std::string cudaPath;
  /// The ptxas kb-emit-bundle checks each kernel with: a path, "auto" (from
  /// the toolkit or PATH) or "none".
  std::string ptxas = "auto";
  /// A kb-tune database (docs/kb-tune.md) whose entries kb-select-mma and
  /// kb-select-config apply as hand-set fields; empty: none.
  std::string tuningDb;
};

/// Adds kb-compile's passes to `pm`, a pass manager on builtin.module.
/// Options that cannot work (an unknown chip, a cuda-path without libdevice,
/// an empty ptxas) are refused before any pass is added: the message goes to
/// `errorHandler`, or, without one, to llvm::errs() prefixed "error: ".
LogicalResult buildCompilePipeline(
    OpPassManager &pm, const CompileOptions &options,
    function_ref<LogicalResult(const Twine &)> errorHandler = nullptr);

/// Registers what a context needs to parse kb programs and kb's lit inputs
/// and to run kb-compile: the kb dialect, the upstream dialects the lowering
/// produces (func, arith, math, tensor, memref, scf, cf, affine, vector,
/// gpu, nvgpu, nvvm, llvm, index, ub, DLTI), their conversions to LLVM, the
/// NVVM target and the LLVM IR translations PTX emission uses. Nothing else:
/// kb-opt's --help lists only these.
void registerCompileDialects(DialectRegistry &registry);

/// Registers kb's passes (kb-*, with `fuse-elementwise` and `fuse-attention`
/// as other names for kb-fuse-elementwise and kb-fuse-attention), the `kb-compile` pipeline, and the upstream passes
/// kb-compile runs (so that its steps can be run one by one with
/// --pass-pipeline). Nothing else.
void registerCompilePasses();

} // namespace mlir::kb

#endif // KB_TARGET_PIPELINE_H
