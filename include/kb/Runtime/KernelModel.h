//===- KernelModel.h - a kernel's problem and its modelled bytes -*- C++ -*-===//
//
// What kb-run reads about a kernel from the manifest alone: a matmul's
// dimensions and element types (MatmulDims), and the bytes the kernel moves
// by a simple model (modelledBytes). No CUDA here, so both are unit-tested
// on any machine (unittests/KernelModelTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_KERNELMODEL_H
#define KB_RUNTIME_KERNELMODEL_H

#include "kb/Runtime/DType.h"
#include "kb/Runtime/Manifest.h"

#include <cstdint>
#include <string>

namespace kb::runtime {

struct MatmulDims {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transB = false;
  /// The row length of B^T when transB: K, or more for a padded B^T.
  int64_t ldbT = 0;
  /// The buffers holding A (M x K rows of K) and B (or B^T) for the checks
  /// and the library baseline: the matmul's operands, or where a kb.pad made
  /// one (K % 4 != 0 on wgmma), the pad's input, the unpadded operand.
  std::string a, b;
  std::string precision = "ieee";
  /// The operands' type (f32, f16, bf16: precision native) and the
  /// result's (f32 or the operands').
  DType in = DType::F32, out = DType::F32;
  double flops() const { return 2.0 * batch * m * n * k; }
};

/// The dimensions of matmul kernel `k` (its first op a kb.matmul); throws
/// std::runtime_error for another kernel.
MatmulDims matmulDims(const Manifest &m, const Kernel &k);

/// Bytes kernel `k` moves, by a simple model: each data argument once,
/// softmax 'online' reads its input twice (a row kernel's: once, twice,
/// three times), a matmul with a `block = [BM, BN, ...]` config re-reads A
/// per column of tiles and B per row of tiles, each in its own element size.
double modelledBytes(const Manifest &m, const Kernel &k);

} // namespace kb::runtime

#endif
