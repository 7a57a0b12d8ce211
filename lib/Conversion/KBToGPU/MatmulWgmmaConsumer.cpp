//===- MatmulWgmmaConsumer.cpp - the TMA pipeline's consumers -------------===//
//
// The wgmma kernel's consumer warpgroups under TMA copies: for each k tile,
// wait on its stage's `full` mbarrier, run its wgmma (MatmulWgmmaMma.cpp)
// and release the previous stage on its `empty` mbarrier (in a cluster, on
// every peer's too); then the epilogue of each tile a persistent block
// walks, or the stream-K fix-up of a rest tile's chunks
// (MatmulWgmmaReduce.cpp). One block a tile leaves its epilogue to the
// driver (MatmulWgmma.cpp).
//
//===----------------------------------------------------------------------===//

#include "MatmulWgmmaKernel.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::wgmma;

// Lane 0 of each consumer warp releases the stage of the block's k tile
// `cPrev` (retired) where `cond` holds. In a cluster it arrives on the
// peer's barrier too (the producers' tails wait for every release of
// the last S k tiles).
void WgmmaTma::releaseStage(Value cPrev, Value cond) {
  when(both(cond, laneZero), [&] {
    Value stage = e.rem(cPrev, stages);
    NVVM::MBarrierArriveOp::create(b, loc, Type(), empty(stage), Value(),
                                   NVVM::MemScopeKindAttr());
    if (cl == 1)
      return;
    // The peer's barrier at the same offset (mapa). The arrive has the
    // default semantics (release at CTA scope), as CUTLASS's
    // ClusterBarrier::arrive: this warp's wgmma reads of the stage
    // retired (wait_group) before it. With `.release.cluster` the same
    // kernel ran 1.57x slower (4096^3 B^T: 0.5622 against 0.3644 ms,
    // same call, bench/results/2026-12-02-cluster/call1): the slowdown
    // of 2026-11-30 run 38's first try, whose arrive had cluster scope
    // (NVVM::MBarrierArriveOp with MemScopeKind::CLUSTER). The empty
    // barriers follow the full ones (stages x 8 bytes).
    // With C blocks, one arrive on each of the C - 1 others (rank ^ j,
    // j = 1 .. C - 1).
    Value local = arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(),
        e.add(barBase, e.add(e.mul(stage, 8), stages * 8)));
    for (int64_t j = 1; j < cl; ++j) {
      Value peerRank = arith::IndexCastUIOp::create(
          b, loc, b.getI32Type(),
          arith::XOrIOp::create(b, loc, rank, cidx(b, loc, j)));
      LLVM::InlineAsmOp::create(
          b, loc, TypeRange{}, ValueRange{local, peerRank},
          "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, $0, "
          "$1;\nmbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n",
          "r,r", /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
          ArrayAttr());
    }
  });
}

// The k loop of one output tile; its k tile kt is the block's k tile
// c0 + kt (c0 = 0 without a persistent grid).
// (`trips`: its k tiles, kTiles unless given: a stream-K chunk's.)
scf::ForOp WgmmaTma::consumeTile(Value c0, Value trips) {
  auto kLoop = scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                  trips ? trips : cidx(b, loc, kTiles),
                                  cidx(b, loc, 1), ValueRange{zero});
  // A 16-bit tile of 3 to 5 k tiles: not unrolled (`.pragma "nounroll"`).
  // Unrolled whole, ptxas spilled in the persistent kernel at its 168
  // registers: 128 x 256 x 64, 4 stages, TMA store, K = 256 (the suite's
  // batched 256 x 256^3 B^T and a row-major 8192^2 x 256): 172 bytes, 56
  // with direct stores; K = 192 or 320 at 3 stages 104 and 12. Not
  // unrolled: none at 4 stages (164-168 registers), 8 bytes at 3. One or
  // two k tiles (smallk) did not spill unrolled, and from 6 on LLVM
  // unrolls by two, as before.
  if (half && kTiles >= 3 && kTiles <= 5) {
    auto unroll = LLVM::LoopUnrollAttr::get(ctx, b.getBoolAttr(true), {}, {},
                                            {}, {}, {}, {});
    kLoop->setAttr("loop_annotation",
                   LLVM::LoopAnnotationAttr::get(ctx, {}, {}, {}, unroll, {},
                                                 {}, {}, {}, {}, {}, {}, {},
                                                 {}, {}, {}));
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(kLoop.getBody());
  Value kt = kLoop.getInductionVar();
  Value c = c0 ? e.add(c0, kt) : kt;
  NVVM::MBarrierTryWaitParityOp::create(b, loc, full(e.rem(c, stages)),
                                        parityOf(c), i32(0x989680));
  Value acc = mmaStep(c, kLoop.getRegionIterArgs()[0]);
  // Tile c - 1 is retired: release its stage (the previous output
  // tile's last k tile was released after its loop).
  releaseStage(e.add(c, -1), cmp(arith::CmpIPredicate::ne, kt, 0));
  scf::YieldOp::create(b, loc, acc);
  return kLoop;
}

// A persistent grid's `count` whole tiles of the block: each one's k
// loop, every wgmma retired, the last k tile's stage released (the
// producer may be waiting for it), then the epilogue while the
// producer copies the next tile's first k tiles.
void WgmmaTma::consumeTiles(Value count) {
  auto tilesLoop =
      scf::ForOp::create(b, loc, cidx(b, loc, 0), count, cidx(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(tilesLoop.getBody());
  Value i = tilesLoop.getInductionVar();
  MatmulEmitter::BlockTile at = persistentTile(i);
  Value c0 = e.mul(i, kTiles);
  scf::ForOp kLoop = consumeTile(c0);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  releaseStage(e.add(c0, kTiles - 1),
               arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  epilogue(kLoop.getResult(0), at.row0, at.col0, at.batch);
}

// The consumers: the k loop and, after it, the epilogue.
scf::ForOp WgmmaTma::buildConsumers(bool moveRegisters, int64_t consumerRegs) {
  auto consumer = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::ult, e.tid, consumerThreads), false);
  b.setInsertionPointToStart(consumer.thenBlock());
  if (moveRegisters)
    NVVM::SetMaxRegisterOp::create(b, loc, consumerRegs,
                                   NVVM::SetMaxRegisterAction::increase);
  if (streamChunks) {
    // The whole rounds as a persistent grid runs them; then the block's
    // chunk of a rest tile, if it has one: its k loop, every wgmma
    // retired, its last k tile's stage released; chunks 1 .. S - 1 store
    // their partial and set their flag, chunk 0 adds the others' and runs
    // the epilogue.
    Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
    consumeTiles(cidx(b, loc, plan.rounds));
    when(cmp(arith::CmpIPredicate::ult, g, plan.rest * streamChunks), [&] {
      StreamKChunk ch = streamChunk(g);
      scf::ForOp kLoop =
          consumeTile(cidx(b, loc, plan.rounds * kTiles),
                      arith::SubIOp::create(b, loc, ch.kEnd, ch.kBegin));
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      releaseStage(e.add(streamCount(ch, ch.kEnd), -1),
                   arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
      Value acc = kLoop.getResult(0);
      StreamKFixup fixup(e, warpgroup, persistentGrid, streamChunks, nAcc,
                         consumerThreads);
      Value restTile = e.div(g, streamChunks);
      Value isFirst = cmp(arith::CmpIPredicate::eq, ch.chunk, 0);
      auto ifFirst = scf::IfOp::create(b, loc, isFirst, true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifFirst.thenBlock());
      epilogue(fixup.waitAndAdd(acc, g, restTile), ch.at.row0, ch.at.col0,
               ch.at.batch);
      b.setInsertionPointToStart(ifFirst.elseBlock());
      fixup.storeAndSignal(acc, g, fixup.slot(restTile, ch.chunk));
    });
    return scf::ForOp();
  }
  if (persistent) {
    consumeTiles(persistentCount());
    tmaStoreFinish();
    return scf::ForOp();
  }
  scf::ForOp loop = consumeTile(Value());
  b.setInsertionPointAfter(loop);
  if (cl > 1) {
    // The last k tile's release (the producers' tails wait for it).
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    releaseStage(cidx(b, loc, kTiles - 1),
                 arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
  }
  return loop;
}
