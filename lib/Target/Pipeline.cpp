//===- Pipeline.cpp - the kb-compile pipeline -----------------------------===//
//
// `kb-compile`: fusion, the decision passes, kb-lower-to-gpu, upstream's NVVM
// lowering of each kernel module, PTX through gpu-module-to-binary, and the
// bundle. The order is the one place where kb's pipeline is assembled; the
// options reach each pass as values.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;

namespace {
struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target chip: sm_90a (the default: Hopper's wgmma "
                     "and TMA; runs on H100/H200 only), sm_90 "
                     "(mma.sync; also runs on later chips) or sm_80"),
      llvm::cl::init("sm_90a")};
  Option<std::string> output{
      *this, "output",
      llvm::cl::desc("Bundle folder to write; empty: stop after PTX")};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Run kb-fuse-elementwise first"),
                    llvm::cl::init(true)};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit holding nvvm/libdevice (default: CUDA_ROOT, "
                     "CUDA_HOME, CUDA_PATH, then /usr/local/cuda)")};
  Option<std::string> tuningDb{
      *this, "tuning-db",
      llvm::cl::desc("A kb-tune database whose entries give kernels their "
                     "#kb.config (docs/kb-tune.md); read by kb-select-config")};
  Option<std::string> ptxas{*this, "ptxas",
                            llvm::cl::desc("ptxas path, 'auto' or 'none'"),
                            llvm::cl::init("auto")};
};

/// Whether `dir` is a CUDA toolkit with libdevice (what gpu-module-to-binary
/// links for math functions).
bool hasLibdevice(StringRef dir) {
  SmallString<256> p(dir);
  llvm::sys::path::append(p, "nvvm", "libdevice", "libdevice.10.bc");
  return llvm::sys::fs::is_regular_file(p);
}

/// The toolkit whose libdevice gets linked for math functions (exp, erf...):
/// `given` (cuda-path), else the first of CUDA_ROOT, CUDA_HOME, CUDA_PATH and
/// /usr/local/cuda that holds libdevice; empty if none does (kb-emit-bundle
/// then refuses PTX that calls an unresolved function).
std::string findCudaToolkit(const std::string &given) {
  if (!given.empty())
    return given;
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v && hasLibdevice(v))
      return v;
  if (hasLibdevice("/usr/local/cuda"))
    return "/usr/local/cuda";
  return "";
}

/// Adds the kb-compile passes to `pm`. Every option reaches its pass as a
/// value (an options struct), never as pipeline text: a path with a space,
/// a quote or a brace is just a path.
LogicalResult
buildCompilePipeline(OpPassManager &pm, const CompileOptions &o,
                     function_ref<LogicalResult(const Twine &)> errorHandler) {
  std::string chip = o.chip;
  if (failed(kb::getTargetModel(chip)))
    return errorHandler("kb-compile: unknown chip '" + chip +
                        "' (known: sm_80, sm_90, sm_90a)");
  if (o.ptxas.empty())
    return errorHandler("kb-compile: option 'ptxas' is empty (give a path, "
                        "'auto' or 'none')");
  // A missing libdevice is only a diagnostic in gpu-module-to-binary (the
  // exit status stays 0): refused here instead.
  if (!o.cudaPath.empty() && !hasLibdevice(o.cudaPath))
    return errorHandler("kb-compile: cuda-path '" + o.cudaPath +
                        "' has no nvvm/libdevice/libdevice.10.bc (not a CUDA "
                        "toolkit)");
  std::string toolkit = findCudaToolkit(o.cudaPath);

  OpPassManager &fpm = pm.nest<func::FuncOp>();
  if (o.fuse)
    fpm.addPass(kb::createKBFuseElementwise());
  // kb-select-mma first: it may put a kb.transpose in front of a matmul,
  // which kb-select-config then configures.
  fpm.addPass(kb::createKBSelectMma(kb::KBSelectMmaOptions{chip, o.tuningDb}));
  fpm.addPass(
      kb::createKBSelectConfig(kb::KBSelectConfigOptions{chip, o.tuningDb}));
  fpm.addPass(kb::createKBTile(kb::KBTileOptions{chip}));
  fpm.addPass(
      kb::createKBPromoteSharedMemory(kb::KBPromoteSharedMemoryOptions{chip}));
  fpm.addPass(kb::createKBSplitK());
  pm.addPass(kb::createKBLowerToGPU());

  OpPassManager &gpm = pm.nest<gpu::GPUModuleOp>();
  gpm.addPass(createConvertNVGPUToNVVMPass());
  gpm.addPass(memref::createExpandStridedMetadataPass());
  gpm.addPass(createLowerAffinePass());
  gpm.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNvvm;
  toNvvm.useBarePtrCallConv = true;
  gpm.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
  gpm.addPass(createConvertNVVMToLLVMPass());
  gpm.addPass(createCanonicalizerPass());
  gpm.addPass(createCSEPass());
  gpm.addPass(createReconcileUnrealizedCastsPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = chip;
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (!o.output.empty()) {
    kb::KBEmitBundleOptions bundle;
    bundle.output = o.output;
    bundle.chip = chip;
    bundle.ptxas = o.ptxas;
    pm.addPass(kb::createKBEmitBundle(bundle));
  }
  return success();
}
} // namespace

void mlir::kb::registerKBCompilePipeline() {
  // registerPassPipeline rather than PassPipelineRegistration: the builder
  // can refuse an option with a message instead of aborting.
  registerPassPipeline(
      "kb-compile",
      "Compile a kb program to PTX kernels and a bundle for kb-run "
      "(fusion, config, tiling, shared memory, mma, NVVM, PTX)",
      [](OpPassManager &pm, StringRef optionsStr,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CompileOptions options;
        if (failed(options.parseFromString(optionsStr)))
          return failure();
        return buildCompilePipeline(pm, options, errorHandler);
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
        optHandler(CompileOptions());
      });
}
