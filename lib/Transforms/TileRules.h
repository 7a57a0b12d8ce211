//===- TileRules.h - kb-tile's default wgmma tile and its rules -*- C++ -*-===//
//
// Private to lib/Transforms: the shape kb-tile's defaults see, and the
// wgmma tile rules (TileWgmma.cpp) and the gemv tiles (TileGemv.cpp) that
// Tile.cpp's pass calls.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TRANSFORMS_TILERULES_H
#define KB_TRANSFORMS_TILERULES_H

#include "kb/Transforms/Passes.h"

namespace mlir::kb::tile {

/// A matmul's shape, as kb-tile's default tiles see it.
struct MatmulShape {
  int64_t m, n, k, batch, sms;
  bool transposeB;
  /// B^T that kb-select-mma made from a row-major B with N % 4 != 0 (its
  /// rows padded to whole 128-byte lines).
  bool paddedB = false;
  /// The matmul of a kb.fusion (an epilogue or prologue in its kernel).
  bool fused = false;
  int64_t blocksFor(int64_t bm, int64_t bn) const {
    return llvm::divideCeil(m, bm) * llvm::divideCeil(n, bn) * batch;
  }
};

/// The few-tiles model's efficiency of a BM x BN wgmma tile (Tile.cpp).
double tileEfficiency(int64_t bm, int64_t bn);

/// kb-tile's default wgmma tile (f.block), and where it chose the tile and
/// split-K together (few output tiles), the split too: returns true then.
bool defaultWgmmaTile(const MatmulShape &s, ConfigFields &f,
                      const TargetModel &model);
/// A 16-bit wgmma matmul's default tile (its shape's K in 128-byte lines):
/// defaultWgmmaTile's tile and split where it splits without a cluster,
/// else its tile for no split; no cluster or cluster reduce (TileWgmma.cpp).
bool defaultHalfWgmmaTile(const MatmulShape &s, ConfigFields &f,
                          const TargetModel &model);
/// The gemv kernel's tiles and split (mma = "gemv"; TileGemv.cpp).
LogicalResult tileGemv(Operation *op, MatmulOp mm, ConfigFields &f,
                       const TargetModel &model);
/// The pair rule (cluster = 2 on one wave of 128 x 128 B^T tiles), after
/// the split decision, for kb-tile's own tile.
void pairRule(const MatmulShape &s, ConfigFields &f);
/// Whether the persistent rule gives kb-tile's own B^T tile a persistent
/// grid of one block an SM (`tiles`: the grid's output tiles).
bool persistentRule(const MatmulShape &s, const ConfigFields &f,
                    int64_t tiles);

} // namespace mlir::kb::tile

#endif // KB_TRANSFORMS_TILERULES_H
