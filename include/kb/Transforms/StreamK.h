//===- StreamK.h - stream-K's plan and workspace ----------------*- C++ -*-===//
//
// Plain C++ (no MLIR), shared by the compiler (kb-lower-to-gpu's stream-K
// lowering, KBToGPU's workspace) and kb-run's manifest check, which must
// agree on the workspace's size: reduce = "stream" (docs/design.md
// "Stream-K").
//
//===----------------------------------------------------------------------===//

#ifndef KB_TRANSFORMS_STREAMK_H
#define KB_TRANSFORMS_STREAMK_H

#include <algorithm>
#include <cstdint>

namespace mlir::kb {

/// Stream-K's plan (#kb.config reduce = "stream", MatmulWgmma.cpp) for
/// `tiles` output tiles of `kTiles` k tiles over a persistent grid of
/// `grid` blocks: `rounds` whole rounds of `grid` tiles, one a block, each
/// tile whole; the `rest` tiles left over split in `chunks` chunks of their
/// k tiles, one a block (grid / rest of them, at most kTiles), so that the
/// last round's blocks share its work. Fewer than two chunks: the rest is
/// one more round of whole tiles (`chunks` 1).
struct StreamKPlan {
  int64_t rounds = 0, rest = 0, chunks = 1;
  /// Partial tiles in the workspace: chunks 1 .. chunks - 1 of each rest
  /// tile (chunk 0's block adds them).
  int64_t partialSlots() const { return chunks >= 2 ? rest * (chunks - 1) : 0; }
};
inline StreamKPlan streamKPlan(int64_t tiles, int64_t kTiles, int64_t grid) {
  StreamKPlan p;
  if (grid <= 0 || tiles <= 0)
    return p;
  p.rounds = tiles / grid;
  p.rest = tiles % grid;
  if (p.rest > 0)
    p.chunks = std::max<int64_t>(1, std::min(grid / p.rest, kTiles));
  return p;
}
/// Its workspace, in 32-bit words: four flags a block (one a consumer
/// warpgroup), then each partial tile (BM x BN values).
inline int64_t streamKWorkspaceWords(int64_t tiles, int64_t kTiles,
                                     int64_t grid, int64_t bm, int64_t bn) {
  return 4 * grid + streamKPlan(tiles, kTiles, grid).partialSlots() * bm * bn;
}

} // namespace mlir::kb

#endif // KB_TRANSFORMS_STREAMK_H
