//===- MmaSync.cpp - mma.sync fragments: ldmatrix, operands, the mma ------===//
//
// ldmatrix.x4 through nvgpu.ldmatrix, the 32-bit operand of a pair of
// 16-bit elements and one nvvm.mma.sync with f32 accumulators (MmaSync.h).
//
//===----------------------------------------------------------------------===//

#include "MmaSync.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::kb;

NVVM::MMATypes mlir::kb::mmaSyncType(Type elem) {
  if (elem.isF32())
    return NVVM::MMATypes::tf32;
  return elem.isF16() ? NVVM::MMATypes::f16 : NVVM::MMATypes::bf16;
}

SmallVector<Value> mlir::kb::ldmatrixX4(OpBuilder &b, Location loc, Value mem,
                                        Value row, Value col, bool transpose) {
  Type elem = cast<MemRefType>(mem.getType()).getElementType();
  int64_t perReg = 32 / elem.getIntOrFloatBitWidth();
  auto type = VectorType::get({4, perReg}, elem);
  Value v = nvgpu::LdMatrixOp::create(b, loc, type, mem, ValueRange{row, col},
                                      transpose, /*numTiles=*/4);
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(
        perReg == 1
            ? vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i, 0})
                  .getResult()
            : vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{i})
                  .getResult());
  return out;
}

Value mlir::kb::mmaPairOperand(OpBuilder &b, Location loc, Value pair) {
  auto vt = cast<VectorType>(pair.getType());
  if (vt.getElementType().isF16())
    return pair;
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
}

SmallVector<Value> mlir::kb::mmaSyncF32(OpBuilder &b, Location loc,
                                        NVVM::MMATypes type, ArrayRef<Value> a,
                                        ArrayRef<Value> bv,
                                        ArrayRef<Value> acc) {
  Type f32 = b.getF32Type();
  auto resType =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  int64_t kDim = type == NVVM::MMATypes::tf32 ? 8 : 16;
  auto op = NVVM::MmaOp::create(
      b, loc, resType, a, bv, acc, ArrayRef<int64_t>{16, 8, kDim}, std::nullopt,
      std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, op.getResult(), i));
  return out;
}
