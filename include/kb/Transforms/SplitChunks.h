//===- SplitChunks.h - split-K's chunks of k tiles --------------*- C++ -*-===//
//
// Plain C++ (no MLIR), shared by the passes (kb-tile, kb-split-k, the
// lowering) and kb-tune's config space: `splits` chunks of
// ceil(kTiles / splits) k tiles each, the last one shorter (kb-split-k's
// split_chunk). A split is valid when every chunk holds at least one k
// tile: (splits - 1) chunks fall short of the k tiles. 6250 k tiles in 14
// chunks: 13 of 447 and one of 439.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TRANSFORMS_SPLITCHUNKS_H
#define KB_TRANSFORMS_SPLITCHUNKS_H

#include <cstdint>

namespace mlir::kb {

inline int64_t splitChunkTiles(int64_t kTiles, int64_t splits) {
  return (kTiles + splits - 1) / splits;
}
inline bool splitLeavesNoChunkEmpty(int64_t kTiles, int64_t splits) {
  return splits >= 1 && splits <= kTiles &&
         (splits - 1) * splitChunkTiles(kTiles, splits) < kTiles;
}

} // namespace mlir::kb

#endif // KB_TRANSFORMS_SPLITCHUNKS_H
