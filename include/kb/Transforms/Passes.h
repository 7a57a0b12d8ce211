//===- Passes.h - kb's decision passes --------------------------*- C++ -*-===//
//
// Declarations and registration of kb-fuse-elementwise, kb-select-config,
// kb-tile, kb-promote-shared-memory and kb-select-mma.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TRANSFORMS_PASSES_H
#define KB_TRANSFORMS_PASSES_H

#include "kb/Dialect/KB/IR/KBDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kb {

#define GEN_PASS_DECL
#include "kb/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kb/Transforms/Passes.h.inc"

/// What kb's passes know about a target chip.
struct TargetModel {
  std::string chip = "sm_90";
  int64_t smCount = 132;
  int64_t maxThreadsPerBlock = 1024;
  int64_t maxSharedPerBlock = 232448; // 227 KB, opt-in limit on sm_90
  int64_t sharedPerSM = 233472;       // 228 KB
  int64_t registersPerSM = 65536;
  int64_t maxRegistersPerThread = 255;
  int64_t maxThreadsPerSM = 2048;
  bool hasWgmma = false; // sm_90a only
};
/// The model of `chip`, or failure for a chip kb does not know.
FailureOr<TargetModel> getTargetModel(StringRef chip);

/// Shared memory a matmul config stages per block, in bytes (the layout of
/// the B tile depends on whether B is transposed).
int64_t matmulSharedBytes(ConfigAttr config, bool transposeB = false);

} // namespace mlir::kb

#endif // KB_TRANSFORMS_PASSES_H
