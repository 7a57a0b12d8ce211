//===- SoftmaxExchange.cpp - partial (max, sum) pairs between blocks ------===//
//
// A row split over several blocks (softmax strategies split, split_shared,
// split_global) is reduced in two steps: each block reduces its part to a
// partial (max m, sum s of exp(x - m)), the blocks exchange their pairs and
// each rescales its part by exp(m - M) / S. The exchange goes through a
// cluster's distributed shared memory or through a workspace in global
// memory; both are here (declarations and docs in SoftmaxGen.h). The row
// kernels' cluster strategy (RowNorm.cpp) exchanges single partial
// sums (or maxima) the same way, combineInRankOrder, and a layer_norm's
// (mean, M2) pairs, combineMomentsInRankOrder.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

Value mlir::kb::softmax::atomicAdd(OpBuilder &b, Location loc, Value mem,
                                   Value at, uint32_t v) {
  return memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                     ci32(b, loc, v), mem, ValueRange{at});
}

Value mlir::kb::softmax::mapToClusterRank(OpBuilder &b, Location loc,
                                          Value partial, Value rank) {
  MLIRContext *ctx = b.getContext();
  Value addr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, partial);
  Value addr64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), addr);
  auto sharedPtr = LLVM::LLVMPointerType::get(ctx, /*shared=*/3);
  auto clusterPtr = LLVM::LLVMPointerType::get(ctx, /*shared::cluster=*/7);
  Value local = LLVM::IntToPtrOp::create(b, loc, sharedPtr, addr64);
  Value rank32 = arith::IndexCastOp::create(b, loc, b.getI32Type(), rank);
  return NVVM::MapaOp::create(b, loc, clusterPtr, local, rank32);
}

Value mlir::kb::softmax::loadClusterWord(OpBuilder &b, Location loc,
                                         Value remote, int64_t index) {
  Type f32 = b.getF32Type();
  if (index)
    remote = LLVM::GEPOp::create(b, loc, remote.getType(), f32, remote,
                                 ArrayRef<LLVM::GEPArg>{index});
  return LLVM::LoadOp::create(b, loc, f32, remote);
}

Value mlir::kb::softmax::combineInRankOrder(SoftmaxContext &c, Value v,
                                            Value partial, int64_t slot,
                                            int64_t cluster,
                                            gpu::AllReduceOperation op) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  bool isMax = op == gpu::AllReduceOperation::MAXIMUMF;
  auto combine = [&](Value x, Value y) {
    return isMax ? c.maxf(x, y) : c.addf(x, y);
  };
  auto isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                      cidx(b, loc, 0));
  auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifZero.thenBlock());
    memref::StoreOp::create(b, loc, v, partial, ValueRange{cidx(b, loc, slot)});
  }
  // arrive (release) + wait (acquire): every block's partial is visible, and
  // every block of the cluster has started.
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  // Lane k of every warp reads block k's partial...
  Value lane = arith::RemUIOp::create(b, loc, c.tid, cidx(b, loc, 32));
  auto ifIn = scf::IfOp::create(b, loc, TypeRange{b.getF32Type()},
                                c.lt(lane, cluster), /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value remote = mapToClusterRank(b, loc, partial, lane);
    scf::YieldOp::create(b, loc, loadClusterWord(b, loc, remote, slot));
    b.setInsertionPointToStart(ifIn.elseBlock());
    scf::YieldOp::create(
        b, loc,
        cf32(b, loc, isMax ? -std::numeric_limits<float>::infinity() : 0.0f));
  }
  // ...and every lane combines them from lane 0 up: the same order, so the
  // same bits, in every block.
  Value r;
  for (int32_t k = 0; k < cluster; ++k) {
    Value x = gpu::ShuffleOp::create(b, loc, ifIn.getResult(0), k, 32,
                                     gpu::ShuffleMode::IDX)
                  .getShuffleResult();
    r = r ? combine(r, x) : x;
  }
  return r;
}

/// One cluster round for a pair of words: thread 0 of each block publishes
/// (v0, v1) in its `partial` words 0 and 1, an arrive (release) + wait
/// (acquire) makes every block's pair visible (and every block started),
/// and lane k < cluster of every warp reads block k's pair; the other
/// lanes get (fill0, fill1).
static std::pair<Value, Value> exchangePair(SoftmaxContext &c, Value v0,
                                            Value v1, Value partial,
                                            int64_t cluster, float fill0,
                                            float fill1) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  auto isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                      cidx(b, loc, 0));
  auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifZero.thenBlock());
    memref::StoreOp::create(b, loc, v0, partial, ValueRange{cidx(b, loc, 0)});
    memref::StoreOp::create(b, loc, v1, partial, ValueRange{cidx(b, loc, 1)});
  }
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  Value lane = arith::RemUIOp::create(b, loc, c.tid, cidx(b, loc, 32));
  auto f32 = b.getF32Type();
  auto ifIn =
      scf::IfOp::create(b, loc, TypeRange{f32, f32}, c.lt(lane, cluster),
                        /*withElse=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifIn.thenBlock());
    Value remote = mapToClusterRank(b, loc, partial, lane);
    Value w0 = loadClusterWord(b, loc, remote, 0);
    Value w1 = loadClusterWord(b, loc, remote, 1);
    scf::YieldOp::create(b, loc, ValueRange{w0, w1});
    b.setInsertionPointToStart(ifIn.elseBlock());
    Value f0 = cf32(b, loc, fill0);
    Value f1 = fill1 == fill0 ? f0 : cf32(b, loc, fill1);
    scf::YieldOp::create(b, loc, ValueRange{f0, f1});
  }
  return {ifIn.getResult(0), ifIn.getResult(1)};
}

std::pair<Value, Value> mlir::kb::softmax::combineMomentsInRankOrder(
    SoftmaxContext &c, Value mean, Value m2, Value partial, int64_t cluster,
    int64_t partLen) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  // Lane k of every warp reads block k's pair...
  auto [mine0, mine1] = exchangePair(c, mean, m2, partial, cluster, 0.0f, 0.0f);
  // ...and every lane merges them from lane 0 up: the same order, so the
  // same bits, in every block.
  auto fromLane = [&](Value v, int32_t k) {
    return gpu::ShuffleOp::create(b, loc, v, k, 32, gpu::ShuffleMode::IDX)
        .getShuffleResult();
  };
  SmallVector<Value> ms, qs;
  for (int32_t k = 0; k < cluster; ++k) {
    ms.push_back(fromLane(mine0, k));
    qs.push_back(fromLane(mine1, k));
  }
  Value sum = ms[0], q = qs[0];
  for (int64_t k = 1; k < cluster; ++k) {
    sum = c.addf(sum, ms[k]);
    q = c.addf(q, qs[k]);
  }
  Value rowMean = arith::DivFOp::create(
      b, loc, sum, cf32(b, loc, static_cast<float>(cluster)));
  // The parts' means' spread about the row's: partLen sum (m_k - mean)^2.
  Value spread;
  for (Value m : ms) {
    Value d = c.subf(m, rowMean);
    spread = spread ? c.addf(spread, c.mulf(d, d)) : c.mulf(d, d);
  }
  Value rowM2 = c.addf(
      q, c.mulf(cf32(b, loc, static_cast<float>(partLen)), spread));
  return {rowMean, rowM2};
}

Value mlir::kb::softmax::combineOverCluster(SoftmaxContext &c, Value m, Value s,
                                            Value partial, int64_t cluster) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  float negInf = -std::numeric_limits<float>::infinity();
  auto [mi, si] = exchangePair(c, m, s, partial, cluster, negInf, 0.0f);
  Value rowMax = gpu::SubgroupReduceOp::create(
      b, loc, mi, gpu::AllReduceOperation::MAXIMUMF, /*uniform=*/true);
  // Lanes without a block: 0 * exp(-inf) = 0. A block whose part is empty
  // has m = -inf, s = 0 and adds 0 in the same way.
  Value scaled = c.mulf(si, c.exp(c.subf(mi, rowMax)));
  Value rowSum = gpu::SubgroupReduceOp::create(
      b, loc, scaled, gpu::AllReduceOperation::ADD, /*uniform=*/true);
  // Done with the other blocks' shared memory.
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  return arith::DivFOp::create(b, loc, c.exp(c.subf(m, rowMax)), rowSum);
}

Value mlir::kb::softmax::combineOverGlobal(SoftmaxContext &c, Value m, Value s,
                                           Value partial,
                                           const GlobalWorkspace &ws, Value row,
                                           Value rank, TicketDraw *draw) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Type f32 = b.getF32Type(), i32 = b.getI32Type(), i64 = b.getI64Type();
  StringRef gpuScope = "device";
  int64_t g = ws.blocksPerRow;
  Value arrived = ws.arrivedAt(b, loc, row);
  Value done = arith::AddIOp::create(b, loc, arrived, cidx(b, loc, 1));
  auto threadZero = [&] {
    return scf::IfOp::create(b, loc,
                             arith::CmpIOp::create(b, loc,
                                                   arith::CmpIPredicate::eq,
                                                   c.tid, cidx(b, loc, 0)),
                             /*withElse=*/false);
  };
  auto pack = [&](Value lo, Value hi) {
    Value l = arith::ExtUIOp::create(b, loc, i64,
                                     arith::BitcastOp::create(b, loc, i32, lo));
    Value h = arith::ExtUIOp::create(b, loc, i64,
                                     arith::BitcastOp::create(b, loc, i32, hi));
    return arith::OrIOp::create(
        b, loc, l,
        arith::ShLIOp::create(b, loc, h,
                              arith::ConstantIntOp::create(b, loc, i64, 32)));
  };
  auto half = [&](Value w, bool high) -> Value {
    if (high)
      w = arith::ShRUIOp::create(b, loc, w,
                                 arith::ConstantIntOp::create(b, loc, i64, 32));
    return arith::BitcastOp::create(b, loc, f32,
                                    arith::TruncIOp::create(b, loc, i32, w));
  };
  auto ifZero = threadZero();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifZero.thenBlock());
    LLVM::StoreOp::create(b, loc, pack(m, s),
                          ws.wordPtr(b, loc, ws.partialAt(b, loc, row, rank)),
                          /*alignment=*/8, false, false, false,
                          LLVM::AtomicOrdering::monotonic, gpuScope);
    Value arrivedPtr = ws.wordPtr(b, loc, arrived);
    Value before =
        LLVM::InlineAsmOp::create(
            b, loc, i32, ValueRange{arrivedPtr},
            "atom.acq_rel.gpu.add.u32 $0, [$1], 1;", "=r,l,~{memory}",
            /*has_side_effects=*/true, /*is_align_stack=*/false,
            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
            ArrayAttr())
            .getResult(0);
    auto notLast = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, before,
                              ci32(b, loc, g - 1)),
        /*withElse=*/false);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(notLast.thenBlock());
      // Spin until all g blocks of the row have counted themselves in.
      auto spin = scf::WhileOp::create(b, loc, TypeRange{}, ValueRange{});
      Block *cond = b.createBlock(&spin.getBefore());
      b.setInsertionPointToStart(cond);
      Value now = LLVM::LoadOp::create(b, loc, i32, arrivedPtr, /*alignment=*/4,
                                       false, false, false, false,
                                       LLVM::AtomicOrdering::acquire, gpuScope);
      Value waiting = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            now, ci32(b, loc, g));
      scf::ConditionOp::create(b, loc, waiting, ValueRange{});
      Block *body = b.createBlock(&spin.getAfter());
      b.setInsertionPointToStart(body);
      NVVM::NanosleepOp::create(b, loc, ci32(b, loc, 32));
      scf::YieldOp::create(b, loc);
    }
    if (draw) {
      Value t = atomicAdd(b, loc, ws.mem, cidx(b, loc, 0), 1);
      auto ifLast = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                ci32(b, loc, draw->draws - 1)),
          /*withElse=*/false);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(ifLast.thenBlock());
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                                    ci32(b, loc, 0), ws.mem,
                                    ValueRange{cidx(b, loc, 0)});
      }
      memref::StoreOp::create(b, loc, t, draw->slot,
                              ValueRange{cidx(b, loc, 0)});
    }
    float negInf = -std::numeric_limits<float>::infinity();
    SmallVector<Value> ms, ss;
    Value rowMax = cf32(b, loc, negInf);
    for (int64_t k = 0; k < g; ++k) {
      Value w = LLVM::LoadOp::create(
          b, loc, i64,
          ws.wordPtr(b, loc, ws.partialAt(b, loc, row, cidx(b, loc, k))),
          /*alignment=*/8, false, false, false, false,
          LLVM::AtomicOrdering::monotonic, gpuScope);
      ms.push_back(half(w, false));
      ss.push_back(half(w, true));
      rowMax = c.maxf(rowMax, ms.back());
    }
    // A block whose part is empty has m = -inf, s = 0: it adds 0.
    Value rowSum = cf32(b, loc, 0.0f);
    for (int64_t k = 0; k < g; ++k)
      rowSum = c.addf(rowSum, c.mulf(ss[k], c.exp(c.subf(ms[k], rowMax))));
    memref::StoreOp::create(b, loc, rowMax, partial,
                            ValueRange{cidx(b, loc, 0)});
    memref::StoreOp::create(b, loc, rowSum, partial,
                            ValueRange{cidx(b, loc, 1)});
  }
  gpu::BarrierOp::create(b, loc);
  Value rowMax =
      memref::LoadOp::create(b, loc, partial, ValueRange{cidx(b, loc, 0)});
  Value rowSum =
      memref::LoadOp::create(b, loc, partial, ValueRange{cidx(b, loc, 1)});
  if (draw)
    draw->next =
        memref::LoadOp::create(b, loc, draw->slot, ValueRange{cidx(b, loc, 0)});
  auto countOut = threadZero();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(countOut.thenBlock());
    // Thread 0's loads above (the acquire in the spin, or the acq_rel add)
    // come before this add in its program order, so the row's counters are
    // reset only after every block has seen the count complete.
    Value before = atomicAdd(b, loc, ws.mem, done, 1);
    auto ifLast = scf::IfOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before,
                              ci32(b, loc, g - 1)),
        /*withElse=*/false);
    b.setInsertionPointToStart(ifLast.thenBlock());
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                                ci32(b, loc, 0), ws.mem, ValueRange{arrived});
    memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                                ci32(b, loc, 0), ws.mem, ValueRange{done});
  }
  return arith::DivFOp::create(b, loc, c.exp(c.subf(m, rowMax)), rowSum);
}
