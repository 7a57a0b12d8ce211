//===- Pipeline.cpp - the kb-compile pipeline -----------------------------===//
//
// `kb-compile`: fusion, the decision passes, kb-lower-to-gpu, upstream's NVVM
// lowering of each kernel module, PTX through gpu-module-to-binary, and the
// bundle. The order is the one place where kb's pipeline is assembled.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/Passes.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"

#include <cstdlib>

using namespace mlir;

namespace {
struct CompileOptions : public PassPipelineOptions<CompileOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("Target chip: sm_80, sm_90 or sm_90a"),
                           llvm::cl::init("sm_90")};
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
  Option<std::string> ptxas{*this, "ptxas",
                            llvm::cl::desc("ptxas path, 'auto' or 'none'"),
                            llvm::cl::init("auto")};
};

/// The toolkit whose libdevice gets linked for math functions (exp, erf...).
std::string findCudaToolkit(const std::string &given) {
  if (!given.empty())
    return given;
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v)
      return v;
  if (llvm::sys::fs::exists("/usr/local/cuda/nvvm/libdevice"))
    return "/usr/local/cuda";
  return "";
}

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &o) {
  std::string toolkit = findCudaToolkit(o.cudaPath);
  std::string p = "func.func(";
  if (o.fuse)
    p += "kb-fuse-elementwise,";
  // kb-select-mma first: it may put a kb.transpose in front of a matmul,
  // which kb-select-config then configures.
  p += "kb-select-mma{chip=" + o.chip + "},kb-select-config{chip=" + o.chip + "},kb-tile{chip=" + o.chip + "},"
       "kb-promote-shared-memory{chip=" + o.chip + "}),"
       "kb-lower-to-gpu,"
       "gpu.module(convert-nvgpu-to-nvvm,expand-strided-metadata,lower-affine,convert-scf-to-cf,"
       "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=true},convert-nvvm-to-llvm,"
       "canonicalize,cse,reconcile-unrealized-casts),"
       "nvvm-attach-target{chip=" + o.chip + " features=+ptx80 O=3},"
       "gpu-module-to-binary{format=isa" +
       (toolkit.empty() ? std::string() : " toolkit=" + toolkit) + "}";
  if (!o.output.empty())
    p += ",kb-emit-bundle{output=" + o.output + " chip=" + o.chip +
         " ptxas=" + o.ptxas + "}";
  if (failed(parsePassPipeline(p, pm)))
    llvm::report_fatal_error("kb-compile: internal pipeline failed to parse");
}
} // namespace

void mlir::kb::registerKBCompilePipeline() {
  PassPipelineRegistration<CompileOptions>(
      "kb-compile",
      "Compile a kb program to PTX kernels and a bundle for kb-run "
      "(fusion, config, tiling, shared memory, mma, NVVM, PTX)",
      buildCompilePipeline);
}
