//===- WholeReduce.cpp - kb.reduce of a whole tensor, two stages ----------===//
//
// kb.reduce `all` (sum, mean, max or min of every element) in two stages in
// one launch of `grid` blocks (#kb.config grid):
// 1. Block b's thread t reduces the vectors i = b T + t + k G T of the flat
//    input (G blocks of T threads, k = 0, 1, ...: every load of a warp is one
//    contiguous run), four a step with every load issued before the first
//    combine; the block reduces its threads' values (emitBlockReduce's
//    fixed shuffle tree) and thread 0 writes the block's partial to the
//    workspace, then counts itself in with atom.acq_rel.gpu.add.
// 2. The block that brings the count to G (whichever it is) reads the G
//    partials with relaxed gpu-scope loads, thread t the partials t, t + T,
//    ... in order, reduces them with the same fixed tree, writes the result
//    and sets the count back to zero for the next launch.
// Deterministic: which block comes last changes who combines the partials,
// never the order in which they are combined. No block waits for another,
// so the grid needs no co-residency. The workspace (2 + G words, zero
// before the first launch, role "workspace"): [0] the count, [1] unused,
// [2 + b] block b's partial (the f32's bits).
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

namespace {

/// Vectors a thread loads before it combines them.
constexpr int64_t kVectorsInFlight = 4;

} // namespace

int64_t mlir::kb::wholeReduceWorkspaceWords(int64_t grid) { return 2 + grid; }

LogicalResult mlir::kb::buildWholeReduceKernel(const KernelRequest &req,
                                               LaunchInfo &info) {
  auto red = cast<ReduceOp>(req.op);
  int64_t total = red.getInput().getType().getNumElements();
  int64_t threads = req.config.getThreads();
  int64_t vec = std::max<int64_t>(req.config.getVector(), 1);
  int64_t grid = req.config.getGrid();
  if (threads <= 0 || threads % 32 != 0 || grid <= 0)
    return red->emitOpError()
           << "whole-tensor reduction config needs threads (a multiple of "
              "32) and grid (the blocks of stage 1), got threads = "
           << threads << ", grid = " << grid;
  if (total % vec != 0)
    return red->emitOpError()
           << "vector width " << vec << " does not divide the " << total
           << " elements";
  info.grid = {grid, 1, 1};
  info.block = {threads, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = red->getLoc();
  MLIRContext *ctx = red->getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto scratchType = MemRefType::get({32}, Float32Type::get(ctx), nullptr, wg);
  Value scratch0 = func.addWorkgroupAttribution(scratchType, loc);
  Value scratch1 = func.addWorkgroupAttribution(scratchType, loc);
  Value lastSlot = func.addWorkgroupAttribution(
      MemRefType::get({1}, IntegerType::get(ctx, 32), nullptr, wg), loc);
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  auto kargs = func.getArguments().take_front(func.getNumArguments());
  SoftmaxContext c{b,
                   loc,
                   total,
                   threads,
                   vec,
                   flatten(b, loc, kargs[0]),
                   flatten(b, loc, kargs.back()),
                   Value(),
                   Value(),
                   VectorType::get({vec}, b.getF32Type())};
  GlobalWorkspace ws{kargs[kargs.size() - 2], 1, grid};
  auto i32 = b.getI32Type();
  auto f32 = b.getF32Type();
  StringRef gpuScope = "device";

  ReductionKind kind = red.getKind();
  bool isMax = kind == ReductionKind::max, isMin = kind == ReductionKind::min;
  float negInf = -std::numeric_limits<float>::infinity();
  // min(x) = -max(-x): emitBlockReduce reduces with ADD or MAXIMUMF.
  auto term = [&](Value x) -> Value {
    return isMin ? arith::NegFOp::create(b, loc, x).getResult() : x;
  };
  auto combine = [&](Value acc, Value x) -> Value {
    return isMax || isMin ? c.maxf(acc, term(x)) : c.addf(acc, x);
  };
  Value identity = cf32(b, loc, isMax || isMin ? negInf : 0.0f);
  auto op = isMax || isMin ? gpu::AllReduceOperation::MAXIMUMF
                           : gpu::AllReduceOperation::ADD;

  Value blk = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  c.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value first = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blk, cidx(b, loc, threads)), c.tid);
  int64_t vectors = total / vec, stride = grid * threads;
  auto loadVector = [&](Value i) {
    return c.lanes(
        c.loadVec(c.in, arith::MulIOp::create(b, loc, i, cidx(b, loc, vec))));
  };

  // Stage 1: the full rounds (every index in range, no guard), then the
  // rest one vector at a time.
  int64_t rounds = vectors / (stride * kVectorsInFlight);
  Value acc = identity;
  if (rounds > 0) {
    auto loop =
        scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, rounds),
                           cidx(b, loc, 1), ValueRange{identity});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, loop.getInductionVar(),
                              cidx(b, loc, stride * kVectorsInFlight)),
        first);
    SmallVector<SmallVector<Value>> loaded;
    for (int64_t u = 0; u < kVectorsInFlight; ++u)
      loaded.push_back(loadVector(
          arith::AddIOp::create(b, loc, base, cidx(b, loc, u * stride))));
    Value a = loop.getRegionIterArgs()[0];
    for (auto &lanes : loaded)
      for (Value x : lanes)
        a = combine(a, x);
    scf::YieldOp::create(b, loc, a);
    acc = loop.getResult(0);
  }
  int64_t done = rounds * stride * kVectorsInFlight;
  if (done < vectors) {
    auto loop = scf::ForOp::create(
        b, loc, arith::AddIOp::create(b, loc, cidx(b, loc, done), first),
        cidx(b, loc, vectors), cidx(b, loc, stride), ValueRange{acc});
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value a = loop.getRegionIterArgs()[0];
    for (Value x : loadVector(loop.getInductionVar()))
      a = combine(a, x);
    scf::YieldOp::create(b, loc, a);
    acc = loop.getResult(0);
  }
  Value partial = emitBlockReduce(b, loc, acc, op, threads, scratch0);

  // Thread 0 publishes the partial and counts the block in.
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                       cidx(b, loc, 0));
  {
    auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifZero.thenBlock());
    Value at = arith::AddIOp::create(b, loc, blk, cidx(b, loc, 2));
    LLVM::StoreOp::create(b, loc,
                          arith::BitcastOp::create(b, loc, i32, partial),
                          ws.wordPtr(b, loc, at), /*alignment=*/4, false, false,
                          false, LLVM::AtomicOrdering::monotonic, gpuScope);
    Value before =
        LLVM::InlineAsmOp::create(
            b, loc, i32, ValueRange{ws.wordPtr(b, loc, cidx(b, loc, 0))},
            "atom.acq_rel.gpu.add.u32 $0, [$1], 1;", "=r,l,~{memory}",
            /*has_side_effects=*/true, /*is_align_stack=*/false,
            LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
            ArrayAttr())
            .getResult(0);
    memref::StoreOp::create(b, loc, before, lastSlot,
                            ValueRange{cidx(b, loc, 0)});
  }
  gpu::BarrierOp::create(b, loc);
  Value before =
      memref::LoadOp::create(b, loc, lastSlot, ValueRange{cidx(b, loc, 0)});
  Value isLast = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, before,
                                       ci32(b, loc, grid - 1));
  auto ifLast = scf::IfOp::create(b, loc, isLast, /*withElse=*/false);
  b.setInsertionPointToStart(ifLast.thenBlock());

  // Stage 2, in the last block: the partials in a fixed order.
  auto loop = scf::ForOp::create(b, loc, c.tid, cidx(b, loc, grid),
                                 cidx(b, loc, threads), ValueRange{identity});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value at =
        arith::AddIOp::create(b, loc, loop.getInductionVar(), cidx(b, loc, 2));
    Value w = LLVM::LoadOp::create(b, loc, i32, ws.wordPtr(b, loc, at),
                                   /*alignment=*/4, false, false, false, false,
                                   LLVM::AtomicOrdering::monotonic, gpuScope);
    Value p = arith::BitcastOp::create(b, loc, f32, w);
    // The partials of min are max(-x) already: combine them as max.
    Value a = loop.getRegionIterArgs()[0];
    scf::YieldOp::create(b, loc, isMax || isMin ? c.maxf(a, p) : c.addf(a, p));
  }
  Value result =
      emitBlockReduce(b, loc, loop.getResult(0), op, threads, scratch1);
  if (isMin)
    result = arith::NegFOp::create(b, loc, result);
  if (kind == ReductionKind::mean)
    result = arith::DivFOp::create(b, loc, result,
                                   cf32(b, loc, static_cast<float>(total)));
  auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
  b.setInsertionPointToStart(ifZero.thenBlock());
  memref::StoreOp::create(b, loc, c.narrow(result, c.out), c.out,
                          ValueRange{cidx(b, loc, 0)});
  memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                              ci32(b, loc, 0), ws.mem,
                              ValueRange{cidx(b, loc, 0)});
  return success();
}
