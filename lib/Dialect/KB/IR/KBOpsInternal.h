//===- KBOpsInternal.h - helpers shared by the op verifiers -----*- C++ -*-===//
//
// The checks every kb op's verifier starts with, shared by KBOps.cpp and the
// verifiers kept in their own files (KBAttention.cpp). Private to the
// dialect library.
//
//===----------------------------------------------------------------------===//

#ifndef KB_LIB_DIALECT_KB_IR_KBOPSINTERNAL_H
#define KB_LIB_DIALECT_KB_IR_KBOPSINTERNAL_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::kb::detail {
/// Every kb tensor must have a static shape, rank of at least one, and at
/// least one and at most kMaxTensorElements elements; a set config must
/// apply to the op.
LogicalResult verifyStaticShapes(Operation *op);
/// `2x3x4`.
std::string shapeStr(ArrayRef<int64_t> shape);
} // namespace mlir::kb::detail

#endif // KB_LIB_DIALECT_KB_IR_KBOPSINTERNAL_H
