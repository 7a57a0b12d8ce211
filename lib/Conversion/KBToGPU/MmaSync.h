//===- MmaSync.h - mma.sync fragments, ldmatrix and the mma -----*- C++ -*-===//
//
// The register-level pieces of an mma.sync kernel that do not depend on
// what the kernel computes: ldmatrix.x4 of four 8 x 8 matrices (16-bit) or
// 8 x 4 (f32) from shared memory, a pair of 16-bit elements as the 32-bit
// register mma.sync reads, and one m16n8k8 (tf32) or m16n8k16 (f16, bf16)
// mma with f32 accumulators. Both matmul kernels (MatmulMmaSync.cpp,
// MatmulMmaSync16.cpp) use them; the fused attention kernel has its own
// copies so far (AttentionPipeline.cpp) and can take these.
//
// Fragment layout (PTX ISA, "Matrix Fragments for mma.m16n8k16"): lane =
// 4 g + t; A's registers hold (row g, k 2t..2t+1), (g + 8, 2t..), (g, 2t +
// 8..), (g + 8, 2t + 8..); B's (k 2t..2t+1, column g), (2t + 8.., g); C's
// (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1). For tf32 (m16n8k8)
// the same with one element a register and k offsets of 4.
//
//===----------------------------------------------------------------------===//

#ifndef KB_CONVERSION_KBTOGPU_MMASYNC_H
#define KB_CONVERSION_KBTOGPU_MMASYNC_H

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::kb {

/// The NVVM operand type of an mma.sync on elements of `elem`: tf32 for
/// f32, else f16 or bf16.
NVVM::MMATypes mmaSyncType(Type elem);

/// Four matrices from a shared-memory view `mem` with one ldmatrix.x4
/// (`.trans` with `transpose`, 16-bit only): lane L gives the address (row,
/// col) of row L % 8 of matrix L / 8 and receives one 32-bit register of
/// each matrix: for f32 (8 x 4 matrices) the f32 at (L / 4, L % 4), for 16
/// bits (8 x 8) the pair at (L / 4, 2 (L % 4)..+1), as vector<2 x elem>;
/// transposed, the pair at rows 2 (L % 4)..+1 of column L / 4.
SmallVector<Value> ldmatrixX4(OpBuilder &b, Location loc, Value mem, Value row,
                              Value col, bool transpose = false);

/// A pair of 16-bit elements (vector<2xf16> or vector<2xbf16>) as the
/// register mma.sync reads: itself for f16, its bits as an i32 for bf16.
Value mmaPairOperand(OpBuilder &b, Location loc, Value pair);

/// One mma.sync with f32 accumulators, row-major A and column-major B:
/// m16n8k8 for tf32 (a: 4 i32, b: 2 i32), m16n8k16 for f16 or bf16 (a: 4
/// registers, b: 2, as mmaPairOperand gives them); acc (4 f32) += a x b.
SmallVector<Value> mmaSyncF32(OpBuilder &b, Location loc, NVVM::MMATypes type,
                              ArrayRef<Value> a, ArrayRef<Value> bv,
                              ArrayRef<Value> acc);

} // namespace mlir::kb

#endif // KB_CONVERSION_KBTOGPU_MMASYNC_H
