//===- Softmax.cpp - the softmax kernel: config, row layout, strategy -----===//
//
// Elementwise work fused before the softmax (its prologue) is computed from
// the kernel's inputs as each element is loaded; work fused after it (its
// epilogue) is applied just before each store. Four strategies, picked by
// kb-select-config and recorded in #kb.config:
// - registers: each thread loads its slice of the row into registers (16-byte
//   loads, all issued before the first use), the block reduces the max and
//   the sum of exponentials, and each element is written once. One read, one
//   write: the bandwidth floor.
// - split: for rows too wide for one block's registers; the row is split
//   over the blocks of a thread-block cluster, each block holds its part in
//   registers as above and reduces it to a partial (max, sum); the partials
//   are exchanged through distributed shared memory (mapa + ld.shared::cluster
//   between two cluster barriers) and each block rescales its part. Still one
//   read, one write.
// - split_shared: the same split, each block's part staged in (dynamic)
//   shared memory by cp.async instead of registers, so that a part may be as
//   large as a block's shared memory. The running max and sum are kept as
//   the copies land; one more pass over shared memory normalises. A cluster
//   may take several consecutive rows, copying the next while it stores the
//   current. Still one read and one write of global memory.
// - online: for rows too wide even for that; a loop keeps a running max and
//   a rescaled running sum, then a second loop reads the row again to write
//   it. Two reads, one write.
// Rows that are not a multiple of 4 long are read as the 16-byte-aligned
// chunks of the flat buffer that overlap them, lanes outside the row masked
// (registers and split_shared, unfused softmax).
//
// This file reads the config, sets up the fused prologue and epilogue and
// the row's split, and calls the strategy's builder; the strategies are in
// SoftmaxRegisters.cpp and SoftmaxShared.cpp, the exchanges between a row's
// blocks in SoftmaxExchange.cpp, their shared pieces in SoftmaxGen.h.
//
//===----------------------------------------------------------------------===//

#include "SoftmaxGen.h"

using namespace mlir;
using namespace mlir::kb;
using namespace mlir::kb::softmax;

LogicalResult mlir::kb::buildSoftmaxKernel(const KernelRequest &req,
                                           LaunchInfo &info) {
  Operation *op = req.op;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  int64_t n = type.getShape().back();
  int64_t rows = type.getNumElements() / n;
  int64_t threads = req.config.getThreads();
  int64_t vec = std::max<int64_t>(req.config.getVector(), 1);
  std::optional<SoftmaxStrategy> strategy = req.config.getStrategy();
  // Rows that are not a multiple of the vector: aligned chunks with masked
  // edges (registers strategy, unfused softmax only).
  bool unaligned = n % vec != 0;
  bool global = strategy == SoftmaxStrategy::split_global;
  bool staged = strategy == SoftmaxStrategy::split_shared || global;
  if (unaligned && (vec != 4 || isa<FusionOp>(op) ||
                    (strategy != SoftmaxStrategy::registers && !staged)))
    return op->emitOpError()
           << "vector width " << vec << " does not divide the row length " << n
           << " (allowed only for vector 4 with strategy "
              "\"registers\", \"split_shared\" or "
              "\"split_global\" on an unfused softmax)";
  if (rows > std::numeric_limits<int32_t>::max())
    return op->emitOpError()
           << "has " << rows << " rows, more than a grid holds";
  bool split = strategy == SoftmaxStrategy::split || staged;
  int64_t cluster = split ? std::max<int64_t>(req.config.getCluster(), 1) : 1;
  if (rows * cluster > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << "has " << rows << " rows of " << cluster
                             << " blocks each, more than a grid holds";
  // split_shared / split_global: `block = [k]` rows per cluster (group of
  // blocks), one after the other.
  int64_t rowsPerCluster = 1;
  if (staged && !req.config.getBlock().empty())
    rowsPerCluster = req.config.getBlock()[0];
  if (rowsPerCluster > 1 && (rows % rowsPerCluster || isa<FusionOp>(op)))
    return op->emitOpError()
           << nameOf(strategy) << " with " << rowsPerCluster
           << " rows per cluster needs an unfused softmax whose " << rows
           << " rows it divides";
  info.grid = {rows / rowsPerCluster * cluster, 1, 1};
  info.block = {threads, 1, 1};
  // split_global: `cluster` blocks per row, but no hardware cluster.
  info.cluster = {global ? 1 : cluster, 1, 1};

  gpu::GPUFuncOp func = req.func;
  Location loc = op->getLoc();
  MLIRContext *ctx = op->getContext();
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto scratchType = MemRefType::get({32}, Float32Type::get(ctx), nullptr, wg);
  auto partialType = MemRefType::get({2}, Float32Type::get(ctx), nullptr, wg);
  // Shared memory: static workgroup buffers, or (split_shared) everything
  // carved out of the dynamic shared memory. Not both: the NVPTX backend
  // demotes MLIR's dynamic-shared-memory global to a one-byte static
  // variable, which the other static buffers then overlap.
  Value scratchMax, scratchSum, partial, part, ticketSlot;
  int64_t partBytes = 0;
  if (staged) {
    OpBuilder ab = OpBuilder::atBlockEnd(&func.getBody().front());
    int64_t clusterBlocks = std::max<int64_t>(req.config.getCluster(), 1);
    partBytes = splitSharedPartBytes(n, clusterBlocks, vec);
    info.dynamicSharedBytes = splitSharedBytes(n, clusterBlocks, vec);
    Value bytes = gpu::DynamicSharedMemoryOp::create(
        ab, loc,
        MemRefType::get({ShapedType::kDynamic}, ab.getI8Type(), nullptr, wg));
    auto view = [&](MemRefType t, int64_t at) -> Value {
      return memref::ViewOp::create(ab, loc, t, bytes, cidx(ab, loc, at),
                                    ValueRange{});
    };
    part =
        view(MemRefType::get({partBytes / 4}, ab.getF32Type(), nullptr, wg), 0);
    scratchMax = view(scratchType, partBytes);
    scratchSum = view(scratchType, partBytes + 128);
    partial = view(partialType, partBytes + 256);
    if (global)
      ticketSlot = view(MemRefType::get({1}, ab.getI32Type(), nullptr, wg),
                        partBytes + 264);
  } else {
    scratchMax = func.addWorkgroupAttribution(scratchType, loc);
    scratchSum = func.addWorkgroupAttribution(scratchType, loc);
    if (strategy == SoftmaxStrategy::split)
      partial = func.addWorkgroupAttribution(partialType, loc);
  }

  // At the end: after the shared-memory views made above.
  OpBuilder b = OpBuilder::atBlockEnd(&func.getBody().front());
  auto args = func.getArguments();
  auto kargs = args.take_front(func.getNumArguments());
  SoftmaxContext c{b,
                   loc,
                   n,
                   threads,
                   vec,
                   Value(),
                   flatten(b, loc, kargs.back()),
                   Value(),
                   Value(),
                   VectorType::get({vec}, b.getF32Type())};
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Operation *sm = getFusionAnchor(fusion);
    c.log = isa<LogSoftmaxOp>(sm);
    if (failed(bindFusedChains(c, op, fusion, sm, sm->getOperand(0), type,
                               kargs, c.log ? "log_softmax" : "softmax")))
      return failure();
    // split_shared / split_global stage the prologue's first full-shaped
    // input through shared memory by cp.async (one read, in flight all at
    // once); before 2026-11-30 the prologue's loads went through registers
    // one chunk at a time (attention softmax 256x200000: 49% of copy).
    if (c.pro && staged)
      for (Value inV : c.pro->inputs)
        if (c.memOf.count(inV) && !c.isBias.contains(inV)) {
          c.stagedInput = inV;
          c.in = c.memOf.lookup(inV);
          break;
        }
  } else {
    c.in = flatten(b, loc, kargs[0]);
    c.log = isa<LogSoftmaxOp>(op);
  }
  if (c.log && strategy != SoftmaxStrategy::registers &&
      strategy != SoftmaxStrategy::online)
    return op->emitOpError()
           << "has a log_softmax, which kb builds with strategy "
              "\"registers\" or \"online\", not \""
           << nameOf(strategy) << "\"";
  Value block = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  c.tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  GlobalWorkspace ws{Value(), rows, cluster};
  // split_global with a persistent grid: `grid` blocks, each taking parts
  // from tickets until none is left (one draw per part, plus one empty draw
  // per block).
  int64_t parts = info.grid[0];
  int64_t persistentGrid = global ? req.config.getGrid() : 0;
  if (persistentGrid >= parts)
    persistentGrid = 0;
  // A row's blocks wait for each other: a grid smaller than one row would
  // wait forever.
  if (persistentGrid && persistentGrid < cluster)
    return op->emitOpError()
           << "a persistent split_global grid of " << persistentGrid
           << " blocks cannot hold the " << cluster
           << " blocks of one row, which wait for each other";
  if (persistentGrid && rowsPerCluster > 1)
    return op->emitOpError()
           << "a persistent split_global grid takes one row per "
              "group of blocks (block = [1]), not "
           << rowsPerCluster;
  // A persistent block with `stages = 2` copies its next part while it
  // stores this one (slot by slot); otherwise it copies each part at the
  // start of its turn.
  bool prefetch = persistentGrid && req.config.getStages() == 2;
  if (global && req.config.getStages() > 2)
    return op->emitOpError()
           << "split_global takes stages = 1 or 2 (2: a persistent "
              "block copies its next part while it stores this one), not "
           << req.config.getStages();
  if (persistentGrid)
    info.grid[0] = persistentGrid;
  int64_t draws = persistentGrid ? parts + persistentGrid : parts;
  Value ticket; // i32
  if (global) {
    // Blocks take their (row, part) from a ticket, in the order they start,
    // not from their block index: a block only ever waits for blocks that
    // hold tickets of its own row, and the rows of the lowest tickets are
    // always complete among the blocks already running, so the grid cannot
    // deadlock however the hardware orders blocks. The last draw sets the
    // counter back to zero for the next launch.
    ws.mem = kargs[kargs.size() - 2];
    auto isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, c.tid,
                                        cidx(b, loc, 0));
    auto ifZero = scf::IfOp::create(b, loc, isZero, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifZero.thenBlock());
      Value t = atomicAdd(b, loc, ws.mem, cidx(b, loc, 0), 1);
      Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t,
                                         ci32(b, loc, draws - 1));
      auto ifLast = scf::IfOp::create(b, loc, last, /*withElse=*/false);
      {
        OpBuilder::InsertionGuard g2(b);
        b.setInsertionPointToStart(ifLast.thenBlock());
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::assign,
                                    ci32(b, loc, 0), ws.mem,
                                    ValueRange{cidx(b, loc, 0)});
      }
      memref::StoreOp::create(b, loc, t, ticketSlot,
                              ValueRange{cidx(b, loc, 0)});
    }
    gpu::BarrierOp::create(b, loc);
    ticket =
        memref::LoadOp::create(b, loc, ticketSlot, ValueRange{cidx(b, loc, 0)});
    block = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), ticket);
  }
  c.partStart = cidx(b, loc, 0);
  c.partEnd = cidx(b, loc, n);
  c.partLen = c.minPartLen = n;
  int64_t len = split ? splitPartLength(n, cluster, vec) : n;
  if (split) {
    c.partLen = len;
    c.minPartLen = std::max<int64_t>(0, n - (cluster - 1) * len);
  }
  // Blocks [row * cluster, (row + 1) * cluster) form the row's cluster;
  // block `rank` of it handles columns [rank * len, (rank + 1) * len).
  struct Part {
    Value row, rank, start, end, rowBase;
  };
  auto partOf = [&](Value blk) {
    Part p;
    p.rank = arith::RemUIOp::create(b, loc, blk, cidx(b, loc, cluster));
    p.row = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, blk, cidx(b, loc, cluster)),
        cidx(b, loc, rowsPerCluster));
    p.start = arith::MulIOp::create(b, loc, p.rank, cidx(b, loc, len));
    p.end = arith::MinUIOp::create(
        b, loc, cidx(b, loc, n),
        arith::AddIOp::create(b, loc, p.start, cidx(b, loc, len)));
    p.rowBase = arith::MulIOp::create(b, loc, p.row, cidx(b, loc, n));
    return p;
  };
  auto usePart = [&](const Part &p) {
    c.rank = p.rank;
    c.partStart = p.start;
    c.partEnd = p.end;
    c.rowBase = p.rowBase;
  };
  if (persistentGrid) {
    // Ticket t is part t % cluster of row t / cluster. With two stages the
    // first part's copies go out before the loop (none for a block whose
    // first ticket is past the end) and each part's pass 2 issues the next
    // part's, at addresses computed from the ticket clamped into range; with
    // one, each part is copied at the start of its turn.
    auto clamp = [&](Value t) {
      return arith::MinUIOp::create(b, loc, t, cidx(b, loc, parts - 1))
          .getResult();
    };
    PersistentHooks first;
    if (prefetch) {
      usePart(partOf(clamp(block)));
      first.copiesOnly = true;
      first.valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          ticket, ci32(b, loc, parts));
      auto noCombine = [&](Value, Value, int64_t) -> Value { return Value(); };
      buildSplitShared(c, scratchMax, scratchSum, part, unaligned, rows * n, 1,
                       /*clusterSync=*/false, noCombine, &first);
    }
    // The loop carries the ticket as an i32: an index block argument of
    // scf.while came out of the LLVM conversion as i64 in kernels lowered
    // with 32-bit indices (an unresolved cast).
    auto i32 = b.getI32Type();
    auto loop =
        scf::WhileOp::create(b, loc, TypeRange{i32}, ValueRange{ticket});
    {
      OpBuilder::InsertionGuard guard(b);
      Block *cond = b.createBlock(&loop.getBefore(), {}, {i32}, {loc});
      Value t = cond->getArgument(0);
      scf::ConditionOp::create(b, loc,
                               arith::CmpIOp::create(b, loc,
                                                     arith::CmpIPredicate::ult,
                                                     t, ci32(b, loc, parts)),
                               ValueRange{t});
      Block *body = b.createBlock(&loop.getAfter(), {}, {i32}, {loc});
      Part cur = partOf(arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                                     body->getArgument(0)));
      usePart(cur);
      TicketDraw draw{ticketSlot, draws, Value()};
      PersistentHooks hooks;
      hooks.copied = prefetch;
      hooks.group = first.group;
      if (prefetch)
        hooks.next = [&]() {
          Part p = partOf(clamp(arith::IndexCastUIOp::create(
              b, loc, b.getIndexType(), draw.next)));
          return NextPart{arith::CmpIOp::create(b, loc,
                                                arith::CmpIPredicate::ult,
                                                draw.next, ci32(b, loc, parts)),
                          p.rowBase, p.start, p.end};
        };
      buildSplitShared(
          c, scratchMax, scratchSum, part, unaligned, rows * n, 1,
          /*clusterSync=*/false,
          [&](Value m, Value s, int64_t) {
            return combineOverGlobal(c, m, s, partial, ws, cur.row, c.rank,
                                     &draw);
          },
          &hooks);
      scf::YieldOp::create(b, loc, ValueRange{draw.next});
    }
    // No copy may be left in flight when the block exits.
    if (prefetch && (!c.pro || c.stagedInput))
      nvgpu::DeviceAsyncWaitOp::create(b, loc, first.group,
                                       b.getI32IntegerAttr(0));
    return success();
  }
  Value row = block;
  if (split) {
    Part p = partOf(block);
    usePart(p);
    row = p.row;
  } else {
    c.rowBase = arith::MulIOp::create(b, loc, row, cidx(b, loc, n));
  }
  if (strategy == SoftmaxStrategy::registers && unaligned)
    buildRegistersUnaligned(c, scratchMax, scratchSum, rows * n);
  else if (strategy == SoftmaxStrategy::registers)
    buildRegisters(c, scratchMax, scratchSum);
  else if (strategy == SoftmaxStrategy::split)
    buildRegisters(c, scratchMax, scratchSum, partial, cluster);
  else if (strategy == SoftmaxStrategy::split_shared)
    buildSplitShared(c, scratchMax, scratchSum, part, unaligned, rows * n,
                     rowsPerCluster, /*clusterSync=*/true,
                     [&](Value m, Value s, int64_t) {
                       return combineOverCluster(c, m, s, partial, cluster);
                     });
  else if (global)
    buildSplitShared(
        c, scratchMax, scratchSum, part, unaligned, rows * n, rowsPerCluster,
        /*clusterSync=*/false, [&](Value m, Value s, int64_t i) {
          Value r = arith::AddIOp::create(b, loc, row, cidx(b, loc, i));
          return combineOverGlobal(c, m, s, partial, ws, r, c.rank);
        });
  else if (strategy == SoftmaxStrategy::online)
    buildOnline(c, scratchMax, scratchSum);
  else
    return op->emitOpError()
           << "has no softmax strategy in its #kb.config: run kb-select-config";
  return success();
}
