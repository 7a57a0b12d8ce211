//===- MatmulMma.cpp - the mma.sync.m16n8k8 TF32 inner tile ---------------===//
//
// Placeholder until the tensor-core tile lands.
//
//===----------------------------------------------------------------------===//

#include "kb/Conversion/KBToGPU/MatmulGen.h"

using namespace mlir;
using namespace mlir::kb;

LogicalResult mlir::kb::buildMmaSync(MatmulEmitter &e, LaunchInfo &info,
                                     bool split3) {
  return e.op->emitOpError() << "mma.sync lowering is not available yet";
}
