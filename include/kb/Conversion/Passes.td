//===- Passes.td - lowering kb to GPU kernels and bundles -*- tablegen -*-===//
//
// kb-lower-to-gpu turns each configured kb op (or kb.fusion) into a gpu.func
// kernel plus a gpu.launch_func on the host side; kb-emit-bundle writes the
// PTX and the manifest that kb-run executes.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_PASSES_TD
#define KB_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def KBLowerToGPU : Pass<"kb-lower-to-gpu", "ModuleOp"> {
  let summary = "Lowers configured kb ops to gpu.func kernels and launches";
  let description = [{
    Each function on tensors becomes a function on memrefs (results become
    trailing output arguments); each kb op or kb.fusion becomes one kernel
    in the `gpu.module @kb_kernels`, built from its #kb.config, and one
    `gpu.launch_func` with a constant grid. Intermediate results become
    scratch buffers. The buffers are named (`kb.name`) and each launch
    records the kb ops it computes (`kb.ops`), so that kb-emit-bundle can
    write the manifest. Run kb-select-config, kb-tile,
    kb-promote-shared-memory and kb-select-mma first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::NVVM::NVVMDialect",
    "::mlir::nvgpu::NVGPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::DLTIDialect"
  ];
}

def KBEmitBundle : Pass<"kb-emit-bundle", "ModuleOp"> {
  let summary = "Writes the bundle: manifest.json and one PTX per kernel";
  let description = [{
    Reads the PTX out of the `gpu.binary` that gpu-module-to-binary made and
    the launches of the host function, and writes into `output`:
    `manifest.json` (buffers, kernels in launch order with grid, block,
    shared memory and arguments, the kb program) and `<kernel>.ptx`. When
    ptxas is found (on PATH or under CUDA_HOME), each kernel is assembled to
    `<kernel>.cubin` and its resource report (registers, shared memory,
    spills) is recorded in the manifest. The format is in docs/bundle.md.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"\"",
           "Folder to write the bundle into (required)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip recorded in the manifest and given to ptxas">,
    Option<"ptxas", "ptxas", "std::string", /*default=*/"\"auto\"",
           "ptxas to run: a path, 'auto' (PATH, then CUDA_HOME, then "
           "/usr/local/cuda) or 'none'">,
  ];
}

#endif // KB_CONVERSION_PASSES_TD
