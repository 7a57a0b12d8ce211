//===- MatmulWgmmaReduce.cpp - partial products summed in the kernel ------===//
//
// The wgmma kernel's own reductions of K's partial products
// (MatmulWgmma.cpp calls them after its k loop):
//
// reduce = "cluster" (split = 2, blocks z = 0 and 1 of a 1 x 1 x 2
// cluster, the same output tile). Each part of the tile that a consumer
// warpgroup holds is finished by one of the two blocks: with two or more
// warpgroups, warpgroup w's part by block w % 2 (each block finishes half
// of the tile), with one, by block 0. The other block's warpgroup w stores
// its raw partial of that part into C; every thread of both blocks arrives
// on the cluster barrier (release: the partials' stores before it; the
// producers arrive, relaxed, once their copies are issued); the finishing
// warpgroups wait (acquire), load the partial of each element they hold
// (the same thread of the other block stored it: both run the same code),
// add it to their own and store the sum through the fused epilogue. A
// warpgroup that stored its partial exits after its arrive: nothing reads
// its shared memory. kb.split_sum adds chunk 0's and chunk 1's partials,
// and a + b == b + a in IEEE arithmetic: the same bits. (First form, block
// 1 storing the whole tile and block 0 finishing it: from 1% faster to 8%
// slower than kb.split_sum on the row-major medium shapes,
// bench/results/2026-12-03-reduce.)
//
// reduce = "stream" (MatmulWgmma.cpp, docs/design.md "Stream-K"): over a
// persistent grid of G blocks (streamKPlan), the whole rounds of G output
// tiles run one a block as a persistent grid runs them; the R tiles left
// over, which one a block would leave G - R SMs idle, are split in S = G /
// R chunks of their k tiles, block g taking chunk g % S of tile g / S of
// them. All rest chunks run at once and at S k offsets, so the blocks of
// one chunk read the same k tiles of A and B together (a first form, one
// run of I / G k tiles a block over the tiles laid end to end, read them
// at G offsets, the likely cause, not profiled, of its running 1.04-1.95x
// slower than one block a tile: bench/results/2026-12-03-streamk/raw.tar.xz:call1).
// Chunks
// 1 .. S - 1 store their raw accumulators into the workspace, pass the
// warpgroup's named barrier, and thread 0 of the warpgroup releases the
// block's flag (fence.acq_rel.gpu; st.relaxed.gpu); chunk 0's thread 0
// spins on the later chunks' flags (ld.acquire.gpu), resets each, and after
// the barrier every thread adds the partials to its accumulators in chunk
// order (the same bits run to run). Only chunk 0 waits, and only for blocks
// that never wait: with the grid resident at once no wait is for ever.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"
#include "MatmulGen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::kb;

void mlir::kb::emitClusterReduce(MatmulEmitter &e, Value acc,
                                  Value warpgroup, int64_t groups,
                                  function_ref<void(Value)> epilogue) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Value z = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  Value first = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, z,
      groups >= 2 ? e.rem(warpgroup, 2) : cidx(b, loc, 0));
  auto ifSecond = scf::IfOp::create(
      b, loc,
      arith::XOrIOp::create(
          b, loc, first,
          arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1)),
      false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifSecond.thenBlock());
    e.partial = MatmulEmitter::Partial::store;
    epilogue(acc);
  }
  NVVM::ClusterArriveOp::create(b, loc, UnitAttr());
  auto ifFirst = scf::IfOp::create(b, loc, first, false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifFirst.thenBlock());
    NVVM::ClusterWaitOp::create(b, loc, UnitAttr());
    e.partial = MatmulEmitter::Partial::add;
    epilogue(acc);
  }
  e.partial = MatmulEmitter::Partial::none;
}

LogicalResult mlir::kb::checkStreamK(MatmulEmitter &e, bool persistent,
                                     bool tma, bool tmaStore,
                                     int64_t consumerWarpgroups) {
  std::string why;
  if (!persistent || !tma)
    why = "a persistent grid with TMA copies";
  else if (e.shape.batched || e.shape.splits > 1 || e.clusterReduce)
    why = "an unbatched, unsplit matmul";
  else if (e.config.getCluster() > 1)
    why = "no cluster";
  else if (tmaStore)
    why = "store = \"direct\"";
  else if (consumerWarpgroups > 4)
    why = "at most 4 consumer warpgroups (four flags a block), BM <= 256 "
          "with B^T or BN <= 256 with a row-major B";
  else if (!e.streamFlags)
    why = "its workspace (kb-lower-to-gpu passes it)";
  if (!why.empty())
    return e.op->emitOpError() << "#kb.config reduce = \"stream\" needs "
                               << why;
  return success();
}

StreamKChunk mlir::kb::streamKChunk(MatmulEmitter &e, Value g,
                                    const StreamKPlan &plan, int64_t grid,
                                    int64_t kTiles, int64_t tilesPerSlice) {
  int64_t chunks = plan.chunks;
  Value t = e.add(e.div(g, chunks), plan.rounds * grid);
  Value j = e.rem(g, chunks);
  MatmulEmitter::BlockTile at =
      e.tileAt(e.rem(t, tilesPerSlice), cidx(e.b, e.loc, 0));
  Value kb = e.div(e.mul(j, kTiles), chunks);
  Value ke = e.div(e.mul(e.add(j, 1), kTiles), chunks);
  return StreamKChunk{at, j, kb, ke};
}

StreamKFixup::StreamKFixup(MatmulEmitter &e, Value warpgroup, int64_t grid,
                           int64_t chunks, int64_t values,
                           int64_t consumerThreads)
    : e(e), warpgroup(warpgroup), grid(grid), chunks(chunks), values(values),
      consumerThreads(consumerThreads) {
  elected = arith::CmpIOp::create(e.b, e.loc, arith::CmpIPredicate::eq,
                                  e.rem(e.tid, 128), cidx(e.b, e.loc, 0));
}

// Flag (block, warpgroup w): word 4 block + w of the workspace.
Value StreamKFixup::flagPtr(Value block) {
  OpBuilder &b = e.b;
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, e.loc,
                                                              e.streamFlags);
  Value addr = e.add(base, e.mul(e.add(e.mul(block, 4), warpgroup), 4));
  return LLVM::IntToPtrOp::create(
      b, e.loc, LLVM::LLVMPointerType::get(b.getContext(), 0),
      arith::IndexCastUIOp::create(b, e.loc, b.getI64Type(), addr)
          .getResult());
}

Value StreamKFixup::word(Value slot, int64_t v) {
  return e.add(e.add(e.mul(e.add(e.mul(slot, values), v), consumerThreads),
                     e.tid),
               4 * grid);
}

void StreamKFixup::groupBarrier() {
  OpBuilder &b = e.b;
  Value barId = arith::IndexCastUIOp::create(b, e.loc, b.getI32Type(),
                                             e.add(warpgroup, 1));
  NVVM::BarrierOp::create(
      b, e.loc, Type(), barId,
      arith::ConstantIntOp::create(b, e.loc, b.getI32Type(), 128), nullptr,
      Value());
}

void StreamKFixup::asmStatement(StringRef text, Value ptr) {
  LLVM::InlineAsmOp::create(e.b, e.loc, TypeRange{}, ValueRange{ptr}, text,
                            "l,~{memory}", /*has_side_effects=*/true,
                            /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None,
                            LLVM::AsmDialectAttr(), ArrayAttr());
}

Value StreamKFixup::slot(Value restTile, Value chunk) {
  return e.add(e.add(e.mul(restTile, chunks - 1), chunk), -1);
}

Value StreamKFixup::waitAndAdd(Value acc, Value g, Value restTile) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  Type i32 = b.getI32Type();
  auto ifElected = scf::IfOp::create(b, loc, elected, false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifElected.thenBlock());
    auto waits = scf::ForOp::create(b, loc, cidx(b, loc, 1),
                                    cidx(b, loc, chunks), cidx(b, loc, 1));
    b.setInsertionPointToStart(waits.getBody());
    Value flag = flagPtr(e.add(g, waits.getInductionVar()));
    auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
    Block *before = b.createBlock(&spin.getBefore());
    b.setInsertionPointToStart(before);
    Value v = LLVM::InlineAsmOp::create(
                  b, loc, i32, ValueRange{flag},
                  "ld.acquire.gpu.global.u32 $0, [$1];", "=r,l,~{memory}",
                  /*has_side_effects=*/true, /*is_align_stack=*/false,
                  LLVM::tailcallkind::TailCallKind::None,
                  LLVM::AsmDialectAttr(), ArrayAttr())
                  .getResult(0);
    Value notYet =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v,
                              arith::ConstantIntOp::create(b, loc, i32, 0));
    scf::ConditionOp::create(b, loc, notYet, ValueRange{});
    Block *after = b.createBlock(&spin.getAfter());
    b.setInsertionPointToStart(after);
    scf::YieldOp::create(b, loc);
    b.setInsertionPointAfter(spin);
    asmStatement("st.relaxed.gpu.global.u32 [$0], 0;", flag);
  }
  groupBarrier();
  auto adds = scf::ForOp::create(b, loc, cidx(b, loc, 1), cidx(b, loc, chunks),
                                 cidx(b, loc, 1), ValueRange{acc});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(adds.getBody());
    Value s = slot(restTile, adds.getInductionVar());
    Value sum = adds.getRegionIterArgs()[0];
    for (int64_t v = 0; v < values; ++v) {
      Value w = memref::LoadOp::create(b, loc, e.streamFlags,
                                       ValueRange{word(s, v)});
      Value part = arith::BitcastOp::create(b, loc, b.getF32Type(), w);
      Value own = LLVM::ExtractValueOp::create(b, loc, sum, v);
      sum = LLVM::InsertValueOp::create(
          b, loc, sum, arith::AddFOp::create(b, loc, own, part), v);
    }
    scf::YieldOp::create(b, loc, sum);
  }
  return adds.getResult(0);
}

void StreamKFixup::storeAndSignal(Value acc, Value g, Value s) {
  OpBuilder &b = e.b;
  Location loc = e.loc;
  for (int64_t v = 0; v < values; ++v) {
    Value x = LLVM::ExtractValueOp::create(b, loc, acc, v);
    memref::StoreOp::create(b, loc,
                            arith::BitcastOp::create(b, loc, b.getI32Type(), x),
                            e.streamFlags, ValueRange{word(s, v)});
  }
  groupBarrier();
  auto ifElected = scf::IfOp::create(b, loc, elected, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifElected.thenBlock());
  asmStatement("fence.acq_rel.gpu;\nst.relaxed.gpu.global.u32 [$0], 1;",
               flagPtr(g));
}
