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

def KBDependentLaunch : Pass<"kb-dependent-launch", "ModuleOp"> {
  let summary = "Lets each kernel of a program launch while the one before it ends (Hopper's programmatic dependent launch)";
  let description = [{
    After kb-lower-to-gpu, for sm_90 and later (kb-compile adds it there):
    every kernel launched after another one of the same host function
    starts with `griddepcontrol.wait` (inline PTX with a memory clobber: it waits
    until the kernels before it have finished and their writes are
    visible), and its `gpu.launch_func` is marked `kb.dependent_launch`,
    which kb-emit-bundle writes as `"dependent_launch": true` and kb-run
    turns into CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; every
    kernel followed by another starts with `griddepcontrol.launch_dependents`,
    so the next kernel's blocks are scheduled once all of this one's have
    started, and its launch overlaps this one's tail (a split-K sum, a pad
    or a transpose in front of a matmul: a few microseconds each). A launch
    without the attribute runs as before (the wait returns at once).
    The signal is left out where the next kernel's blocks, scheduled at
    once, would crowd onto the few SMs this grid leaves idle (more than 4x
    their share: the model of `chip`'s SMs and threads; measured: a split
    sum behind a 128-block wgmma grid, 3.8% slower with it, 2026-12-01 run
    13); that kernel still waits, and starts once this one has ended.
    A kernel launched more than once is an error.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip (its SMs and threads per SM)">,
  ];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
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
