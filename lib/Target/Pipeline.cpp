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
  Option<std::string> ptxas{*this, "ptxas",
                            llvm::cl::desc("ptxas path, 'auto' or 'none'"),
                            llvm::cl::init("auto")};
};

void buildCompilePipeline(OpPassManager &pm, const CompileOptions &o) {
  std::string p = "func.func(";
  if (o.fuse)
    p += "kb-fuse-elementwise,";
  p += "kb-select-config{chip=" + o.chip + "},kb-select-mma,kb-tile,"
       "kb-promote-shared-memory{chip=" + o.chip + "}),"
       "kb-lower-to-gpu,"
       "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
       "convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=true},"
       "canonicalize,cse,reconcile-unrealized-casts),"
       "nvvm-attach-target{chip=" + o.chip + " features=+ptx80 O=3},"
       "gpu-module-to-binary{format=isa}";
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
