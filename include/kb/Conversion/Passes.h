//===- Passes.h - lowering kb to kernels and bundles ------------*- C++ -*-===//
//
// kb-lower-to-gpu, kb-emit-bundle and the kb-compile pipeline that chains
// every kb pass with upstream's NVVM lowering and PTX emission.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_PASSES_H
#define KB_CONVERSION_PASSES_H

#include "kb/Dialect/KB/IR/KBDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kb {

#define GEN_PASS_DECL
#include "kb/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kb/Conversion/Passes.h.inc"

/// Registers `kb-compile`: every kb pass, NVVM lowering, PTX, the bundle.
void registerKBCompilePipeline();

} // namespace mlir::kb

#endif // KB_CONVERSION_PASSES_H
