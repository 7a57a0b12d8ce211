//===- KBMlirPch.h - MLIR/LLVM headers precompiled for kb's sources -------===//
//
// The MLIR and LLVM headers that nearly every compiler source of kb
// includes (the dialects the lowering builds, the pass and builder APIs).
// CMake precompiles them once (target kb-mlir-pch, option KB_PCH) and every
// MLIR library and tool of kb reuses the result: parsing these headers took
// about 15 of the 16 CPU seconds of a small lowering file such as Pad.cpp.
// Only installed, stable headers belong here, never kb's own or generated
// ones (which change with kb's sources).
//
//===----------------------------------------------------------------------===//

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
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"
