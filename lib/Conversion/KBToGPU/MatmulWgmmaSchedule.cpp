//===- MatmulWgmmaSchedule.cpp - the persistent grid's tile walk ----------===//
//
// Which output tiles a block of the wgmma kernel computes when the grid is
// persistent (`grid = G`): block g takes the tiles g, g + G, g + 2G, ...
// (launch order over every batch or split); with clusters of two, the
// pairs of blocks walk the tiles of 2 BM rows, each block its half; with
// stream-K, the whole rounds as a persistent grid runs them, then the
// block's chunk of a rest tile (streamKChunk, MatmulWgmmaReduce.cpp). The
// producer and the consumers both walk the same tiles.
//
//===----------------------------------------------------------------------===//

#include "MatmulWgmmaKernel.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::wgmma;

// Tile i of a persistent block: its output tile t = g + i G, of slice t /
// (tiles a slice).
MatmulEmitter::BlockTile WgmmaKernel::persistentTile(Value i) {
  Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (pairs) {
    int64_t pairTiles = tilesM / 2 * tilesN;
    Value t = e.add(e.div(g, 2), e.mul(i, persistentGrid / 2));
    MatmulEmitter::BlockTile at =
        e.tileAt(e.rem(t, pairTiles), e.div(t, pairTiles), 2 * bm, tilesM / 2,
                 std::max<int64_t>(e.config.getRaster() / 2, 1));
    at.row0 = e.add(at.row0, e.mul(e.rem(g, 2), bm));
    return at;
  }
  Value t = e.add(g, e.mul(i, persistentGrid));
  return e.tileAt(e.rem(t, tilesM * tilesN), e.div(t, tilesM * tilesN));
}

// Tiles of a persistent block: ceil((total - g) / G) (a pair's:
// ceil((total / 2 - p) / (G / 2)), the same for both blocks).
Value WgmmaKernel::persistentCount() {
  Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (pairs)
    return e.div(arith::SubIOp::create(
                     b, loc,
                     cidx(b, loc, totalTiles / 2 + persistentGrid / 2 - 1),
                     e.div(g, 2)),
                 persistentGrid / 2);
  return e.div(arith::SubIOp::create(
                   b, loc, cidx(b, loc, totalTiles + persistentGrid - 1), g),
               persistentGrid);
}

StreamKChunk WgmmaKernel::streamChunk(Value g) {
  return streamKChunk(e, g, plan, persistentGrid, kTiles, tilesM * tilesN);
}

Value WgmmaKernel::streamCount(const StreamKChunk &ch, Value kt) {
  return e.add(arith::SubIOp::create(b, loc, kt, ch.kBegin),
               plan.rounds * kTiles);
}
