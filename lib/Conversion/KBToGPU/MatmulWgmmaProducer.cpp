//===- MatmulWgmmaProducer.cpp - the TMA pipeline's producer --------------===//
//
// The wgmma kernel's TMA pipeline (copy = "tma"): its mbarriers, the
// cluster's rank and multicast, and the producer warp, whose lane 0 issues
// every tensor copy of A's and B's tiles, for one tile, a persistent
// block's tiles or a stream-K chunk, waiting for the consumers to release
// a stage before it refills it (MatmulWgmmaConsumer.cpp has the other
// side).
//
// TMA with a producer warp: the block is the consumer warpgroups (one
// per 64 rows of the tile) plus one warp after them, whose lane 0 issues
// every tensor copy (one per operand tile). The copies complete their
// bytes on the stage's `full` mbarrier; the consumers release a stage on
// its `empty` mbarrier (lane 0 of every consumer warp arrives once its
// `wgmma.wait_group 1` shows the stage's tile retired). No block barrier
// after the set-up. The producer, for each k tile kt:
//   kt >= S: wait on empty of kt's stage (tile kt - S released)
//   arrive.expect_tx on full of kt's stage + 2 tensor copies of tile kt
// a consumer, for each k tile kt:
//   mbarrier.try_wait.parity full   tile kt has landed (parity (kt / S) %
//   2) wgmma.fence; 4 x wgmma; commit; wait_group 1   (tile kt - 1 retired)
//   lane 0: arrive on empty of kt - 1's stage
// The tensor map swizzles each 128-byte row (the same 128-byte swizzle
// as the descriptors) and zero-fills rows past M or N and columns past
// K, so no copy needs a guard; the expected bytes are always whole boxes
// (zero-filled bytes count).
//
//===----------------------------------------------------------------------===//

#include "MatmulWgmmaKernel.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::wgmma;

/// The register count the consumer warpgroups of a block of `threads`
/// threads can take with setmaxnreg.inc after the remaining 128 (the
/// producer warpgroup) gave theirs down to `producerRegs`: the launch count
/// (65536 / threads in steps of 8, as ptxas sets it) plus the consumers'
/// share of what the producer released, in steps of 8, at most 256.
int64_t mlir::kb::wgmma::setmaxnregConsumerCount(int64_t threads,
                                                 int64_t consumerThreads,
                                                 int64_t producerRegs) {
  int64_t launch = std::min<int64_t>(255, 65536 / threads) / 8 * 8;
  int64_t released = 128 * (launch - producerRegs);
  return std::min<int64_t>(256, (launch + released / consumerThreads) / 8 * 8);
}

WgmmaTma::WgmmaTma(const WgmmaKernel &k)
    : WgmmaKernel(k),
      consumerThreads(wgmmaThreads(bm, bn, !rowB, /*tma=*/false)) {}

Value WgmmaTma::ptrTo(Value byteAddr, unsigned space) {
  return LLVM::IntToPtrOp::create(
             b, loc, LLVM::LLVMPointerType::get(ctx, space), toI64(byteAddr))
      .getResult();
}
Value WgmmaTma::full(Value stage) {
  return ptrTo(e.add(barBase, e.mul(stage, 8)), 3);
}
Value WgmmaTma::empty(Value stage) {
  return ptrTo(e.add(barBase, e.add(e.mul(stage, 8), stages * 8)), 3);
}
Value WgmmaTma::globalPtr(Value mem) {
  return ptrTo(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem), 0);
}
Value WgmmaTma::cmp(arith::CmpIPredicate pred, Value v, int64_t c) {
  return arith::CmpIOp::create(b, loc, pred, v, cidx(b, loc, c)).getResult();
}
Value WgmmaTma::both(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y).getResult();
}
void WgmmaTma::when(Value cond, function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  body();
}
Value WgmmaTma::toI32(Value v) {
  return arith::IndexCastUIOp::create(b, loc, b.getI32Type(), v).getResult();
}
Value WgmmaTma::parityOf(Value kt) {
  return toI32(e.rem(e.div(kt, stages), 2));
}

// cluster = 2 (Matmul.cpp checked TMA, BN % 16 == 0 with B^T or BN %
// 64 == 0 with a row-major B, an even number of row tiles; an even
// persistent grid above): the two blocks of a cluster compute rows 2i
// and 2i + 1 of one column of tiles (blockTile, or persistentTile's
// pairs), so B's tile is the same for both. Each block's producer
// copies half of it (its rank's BN / 2 rows of B^T, or half of a
// row-major B's boxes) and multicasts it into both blocks' shared
// memory, at the same offsets, completing bytes on both blocks' `full`
// mbarrier of the stage; its own A tile as before. A stage is then
// written by both producers, so a producer refills it only once both
// blocks' consumers released it: every consumer warp arrives on its own
// block's `empty` and, through mapa, on its peer's (the count doubles),
// for every k tile; the producer, after its last copy, waits for the
// releases of the block's last S k tiles (its tail), so that no block
// exits while its multicast into the peer, or an arrive from the peer,
// is in flight.
// A cluster barrier after the mbarrier set-up, so that no copy or
// arrive reaches a peer's barrier before it is initialised. (An end
// barrier of every thread instead of the tail measured 7-10% slower
// than the default where the kernel without either had been 4.5%
// slower and 1.2% faster: bench/results/2026-12-02-cluster/call5; why
// was not looked at.)
// cluster = 4 or 8 (since session 14; not yet run on a GPU): the same
// with C blocks, each copying a C-th of B's tile into all C (multicast
// mask 2^C - 1), each consumer warp arriving on its own block's `empty`
// and on the C - 1 others' (the count is C times the consumer warps).
LogicalResult WgmmaTma::setUp() {
  barBase = e.add(aligned, stages * stageBytes);
  mapA = globalPtr(e.tmapA);
  mapB = globalPtr(e.tmapB);
  laneZero = cmp(arith::CmpIPredicate::eq, e.rem(e.tid, 32), 0);
  cl = std::max<int64_t>(e.config.getCluster(), 1);
  if (cl > 1 &&
      (!isWgmmaClusterSize(cl) ||
       bn % wgmmaClusterBnMultiple(!rowB && !mnB, cl, mnB)))
    return e.op->emitOpError()
           << "internal error: cluster = " << cl << " with BN = " << bn;
  if (cl > 1) {
    // The block's rank in its cluster: block id y % C (clusters of 1 x C
    // x 1), or x % 2 in a persistent grid (2 x 1 x 1).
    Value bid = gpu::BlockIdOp::create(
        b, loc, persistent ? gpu::Dimension::x : gpu::Dimension::y);
    rank = e.rem(bid, cl);
  }
  if (cl > 1)
    multicastMask = arith::ConstantIntOp::create(b, loc, b.getI16Type(),
                                                 (int64_t(1) << cl) - 1);
  when(cmp(arith::CmpIPredicate::eq, e.tid, 0), [&] {
    for (int64_t s = 0; s < stages; ++s) {
      NVVM::MBarrierInitOp::create(b, loc, full(cidx(b, loc, s)), i32(1),
                                   Value());
      NVVM::MBarrierInitOp::create(b, loc, empty(cidx(b, loc, s)),
                                   i32(consumerThreads / 32 * cl), Value());
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
  });
  if (cl > 1) {
    NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  } else {
    gpu::BarrierOp::create(b, loc);
  }
  return success();
}

// Local k tile kt of output tile `at`, the block's k tile number c
// (kt, or with a persistent grid counted over its tiles): its copies
// into c's stage.
void WgmmaTma::issueTma(Value c, Value kt, const MatmulEmitter::BlockTile &at) {
  Value stage = e.rem(c, stages);
  Value stageAddr = e.add(aligned, e.mul(stage, stageBytes));
  Value bar = full(stage);
  NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, i32(stageBytes),
                                         NVVM::MemScopeKind::CTA, false,
                                         Value());
  Value savedSplit = e.splitIdx;
  if (persistent)
    e.splitIdx = at.batch;
  Value k0 = toI32(e.kAt(kt));
  e.splitIdx = savedSplit;
  // The operands read once (readOnceOperands): an L2 evict-first
  // policy on their copies (hoisted out of the loop by LLVM).
  Value policy = once.a || once.b ? evictFirstPolicy(b, loc) : Value();
  Value hintA = once.a ? policy : Value();
  Value hintB = once.b ? policy : Value();
  auto copy = [&](Value map, Value dstAddr, Value r0,
                  Value multicast = Value()) {
    Value hint = map == mapA ? hintA : hintB;
    SmallVector<Value> coords{k0, toI32(r0)};
    if (e.shape.batched)
      coords.push_back(toI32(at.batch));
    // The shared::cluster window (address space 7) holds this block's
    // own shared memory at the same offsets, cluster or not.
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7), ptrTo(dstAddr, 3));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, map, coords, bar, ValueRange{}, multicast, hint,
        NVVM::TMALoadMode::TILE, false, nullptr, Value());
  };
  copy(mapA, stageAddr, at.row0);
  if (!rowB && !mnB && cl > 1) {
    // This block's C-th of B^T's tile, into every block of the cluster.
    Value part = e.mul(rank, bn / cl);
    copy(mapB, e.add(stageAddr, e.add(e.mul(part, kRowBytes), bytesA)),
         e.add(at.col0, part), multicastMask);
    return;
  }
  if (!rowB && !mnB) {
    copy(mapB, e.add(stageAddr, bytesA), at.col0);
    return;
  }
  // A row-major B: BN / 32 boxes of BK rows x 32 columns (coordinates
  // innermost first: column, then k). In a cluster, this block's C-th
  // of them (rank r: boxes r BN / 32C .. (r + 1) BN / 32C - 1), into
  // every block of the cluster.
  // 16-bit (mnB): BN / W boxes of BK = 64 rows x W = 64 columns (128
  // bytes), or 32 or 16 where 64 does not divide BN (wgmmaMnBoxCols),
  // MN-major for wgmma.
  int64_t boxCols = mnB ? mnBoxCols : 32;
  int64_t boxBytes = mnB ? bk * mnRowBytes : bk * kRowBytes;
  int64_t boxes = bn / boxCols, mine = boxes / cl;
  Value first = cl > 1 ? e.mul(rank, mine) : cidx(b, loc, 0);
  Value mask = multicastMask;
  for (int64_t jj = 0; jj < mine; ++jj) {
    Value j = e.add(first, jj);
    SmallVector<Value> coords{toI32(e.add(at.col0, e.mul(j, boxCols))), k0};
    if (e.shape.batched)
      coords.push_back(toI32(at.batch));
    Value dst = LLVM::AddrSpaceCastOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 7),
        ptrTo(e.add(stageAddr, e.add(e.mul(j, boxBytes), bytesA)), 3));
    NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
        b, loc, dst, mapB, coords, bar, ValueRange{}, mask, hintB,
        NVVM::TMALoadMode::TILE, false, nullptr, Value());
  }
}

// The producer warpgroup: lane 0 of its first warp issues the copies.
void WgmmaTma::buildProducer(bool moveRegisters, int64_t producerRegs) {
  Value warp = e.div(e.tid, 32);
  auto producerGroup = scf::IfOp::create(
      b, loc, cmp(arith::CmpIPredicate::uge, e.tid, consumerThreads), false);
  {
    OpBuilder::InsertionGuard pg(b);
    b.setInsertionPointToStart(producerGroup.thenBlock());
    if (moveRegisters)
      NVVM::SetMaxRegisterOp::create(b, loc, producerRegs,
                                     NVVM::SetMaxRegisterAction::decrease);
    when(both(cmp(arith::CmpIPredicate::eq, warp, consumerThreads / 32),
              laneZero),
         [&] {
           // k tile c of the block: wait for its stage's last use, c - S.
           auto produceOne = [&](Value c, Value kt,
                                 const MatmulEmitter::BlockTile &at) {
             when(cmp(arith::CmpIPredicate::uge, c, stages), [&] {
               // Tile c - S's release completes empty's phase (c / S - 1).
               NVVM::MBarrierTryWaitParityOp::create(
                   b, loc, empty(e.rem(c, stages)),
                   toI32(e.rem(e.add(e.div(c, stages), 1), 2)), i32(0x989680));
             });
             issueTma(c, kt, at);
           };
           // In a cluster, the producer's tail: it waits for the
           // release of each of the block's last S k tiles by both blocks'
           // consumers (as CUTLASS's producer tail), so that the block
           // exits only once every copy it multicast into the peer was
           // consumed there and every arrive the peer's consumers send it
           // has landed. Release of tile c: empty (c % S), parity
           // (c / S) % 2.
           auto tail = [&](Value total) {
             if (cl == 1)
               return;
             Value from = arith::SubIOp::create(
                 b, loc,
                 arith::MaxUIOp::create(b, loc, total, cidx(b, loc, stages)),
                 cidx(b, loc, stages));
             auto wait =
                 scf::ForOp::create(b, loc, from, total, cidx(b, loc, 1));
             OpBuilder::InsertionGuard g(b);
             b.setInsertionPointToStart(wait.getBody());
             Value c = wait.getInductionVar();
             NVVM::MBarrierTryWaitParityOp::create(
                 b, loc, empty(e.rem(c, stages)),
                 toI32(e.rem(e.div(c, stages), 2)), i32(0x989680));
           };
           // A persistent grid's `count` whole tiles of the block.
           auto produceTiles = [&](Value count) {
             auto tilesLoop = scf::ForOp::create(b, loc, cidx(b, loc, 0), count,
                                                 cidx(b, loc, 1));
             OpBuilder::InsertionGuard g(b);
             b.setInsertionPointToStart(tilesLoop.getBody());
             Value i = tilesLoop.getInductionVar();
             MatmulEmitter::BlockTile at = persistentTile(i);
             auto produce =
                 scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                    cidx(b, loc, kTiles), cidx(b, loc, 1));
             b.setInsertionPointToStart(produce.getBody());
             Value kt = produce.getInductionVar();
             produceOne(e.add(e.mul(i, kTiles), kt), kt, at);
           };
           if (streamChunks) {
             // The whole rounds, then the block's chunk of a rest tile.
             Value g = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
             produceTiles(cidx(b, loc, plan.rounds));
             when(cmp(arith::CmpIPredicate::ult, g, plan.rest * streamChunks),
                  [&] {
                    StreamKChunk ch = streamChunk(g);
                    auto produce = scf::ForOp::create(b, loc, ch.kBegin,
                                                      ch.kEnd, cidx(b, loc, 1));
                    OpBuilder::InsertionGuard g(b);
                    b.setInsertionPointToStart(produce.getBody());
                    Value kt = produce.getInductionVar();
                    produceOne(streamCount(ch, kt), kt, ch.at);
                  });
             return;
           }
           if (!persistent) {
             auto produce =
                 scf::ForOp::create(b, loc, cidx(b, loc, 0),
                                    cidx(b, loc, kTiles), cidx(b, loc, 1));
             {
               OpBuilder::InsertionGuard g(b);
               b.setInsertionPointToStart(produce.getBody());
               Value kt = produce.getInductionVar();
               produceOne(kt, kt, tile);
             }
             tail(cidx(b, loc, kTiles));
             return;
           }
           Value count = persistentCount();
           produceTiles(count);
           tail(e.mul(count, kTiles));
         });
    // reduce = "cluster": the producer threads' arrive on the cluster
    // barrier that orders block 1's partial before block 0's loads.
    if (e.clusterReduce)
      NVVM::ClusterArriveRelaxedOp::create(b, loc, UnitAttr());
  }
}
