//===- Matmul.cpp - the matmul kernel dispatcher --------------------------===//
//
// buildMatmulKernel: sets up the MatmulEmitter (shape, tiles, operands, the
// fused epilogue, the grid) for a kb.matmul or a kb.fusion anchored on one,
// and hands it to the kernel of its #kb.config's unit: FFMA
// (MatmulFfma.cpp), gemv (MatmulGemv.cpp), mma.sync (MatmulMmaSync.cpp;
// 16-bit operands MatmulMmaSync16.cpp) or
// wgmma (MatmulWgmma.cpp). It only dispatches; the shared emitter lives in
// MatmulEmitter.cpp.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"
#include "MatmulGen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

using namespace mlir;
using namespace mlir::kb;

LogicalResult mlir::kb::buildMatmulKernel(const KernelRequest &req,
                                          LaunchInfo &info) {
  Operation *op = req.op;
  MatmulOp mm = dyn_cast<MatmulOp>(op);
  auto fusion = dyn_cast<FusionOp>(op);
  if (fusion)
    mm = dyn_cast_or_null<MatmulOp>(getFusionAnchor(fusion));
  if (!mm)
    return op->emitOpError() << "is not a matmul kernel";
  ConfigAttr cfg = req.config;
  if (cfg.getBlock().size() != 3)
    return op->emitOpError() << "has no block tile: run kb-tile first";
  gpu::GPUFuncOp func = req.func;
  OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
  auto args = func.getArguments().take_front(func.getNumArguments());
  // Kernel arguments: the op's operands (a fusion's inputs), then C.
  auto argFor = [&](Value v) -> Value {
    if (auto ba = dyn_cast<BlockArgument>(v))
      return args[ba.getArgNumber()];
    return Value();
  };
  if (fusion && (!argFor(mm.getLhs()) || !argFor(mm.getRhs())))
    return mm.emitOpError()
           << "in a kb.fusion must take the fusion's inputs "
              "directly (elementwise prologues are not lowered)";
  MatmulEmitter e{b,
                  op->getLoc(),
                  op,
                  cfg,
                  MatmulShape::of(mm),
                  fusion ? argFor(mm.getLhs()) : args[0],
                  fusion ? argFor(mm.getRhs()) : args[1],
                  args.back(),
                  Value(),
                  cfg.getBlock()[0],
                  cfg.getBlock()[1],
                  cfg.getBlock()[2],
                  cfg.getThreads()};
  // copy = "tma": the two tensor maps come just before C (kb-lower-to-gpu),
  // with store = "tma" followed by C's.
  // reduce = "stream": the flags' workspace just before C, after the maps.
  size_t ws = cfg.getReduce() == ReduceKind::stream ? 1 : 0;
  if (ws) {
    if (args.size() < 2)
      return op->emitOpError() << "internal error: no workspace argument";
    e.streamFlags = args[args.size() - 2];
  }
  if (cfg.getCopy() == CopyKind::tma) {
    size_t maps = cfg.getStore() == StoreKind::tma ? 3 : 2;
    if (args.size() < maps + 1 + ws)
      return op->emitOpError() << "internal error: no tensor-map arguments";
    e.tmapA = args[args.size() - 1 - ws - maps];
    e.tmapB = args[args.size() - ws - maps];
    if (maps == 3)
      e.tmapC = args[args.size() - 2 - ws];
  }
  if (fusion) {
    e.chain = ElementwiseChain::after(fusion, mm);
    auto resultType = mm.getResult().getType();
    // The epilogue's ops produce the matmul's shape (in f32 registers; a
    // kb.convert may change the element type of what is stored).
    for (Operation *inner : e.chain->ops) {
      if (!isa<ElementwiseOpInterface, RotaryOp>(inner) ||
          cast<ShapedType>(inner->getResult(0).getType()).getShape() !=
              resultType.getShape())
        return inner->emitOpError()
               << "cannot be part of a matmul epilogue producing "
               << resultType;
      for (OpOperand &use : inner->getOpOperands()) {
        Value in = use.get();
        auto ba = dyn_cast<BlockArgument>(in);
        if (!ba)
          continue;
        // A kb.rotary's tables: read at the pair's position (epilogue2).
        if (isa<RotaryOp>(inner) && use.getOperandNumber() > 0) {
          e.chainTables[in] = args[ba.getArgNumber()];
          continue;
        }
        auto t = cast<RankedTensorType>(in.getType());
        bool bias =
            t.getRank() == 1 && t.getDimSize(0) == resultType.getShape().back();
        if (t.getShape() != resultType.getShape() && !bias)
          return inner->emitOpError()
                 << "epilogue input of type " << t
                 << " neither matches the result " << resultType
                 << " nor broadcasts along its last axis";
        e.chainInputs[in] = args[ba.getArgNumber()];
      }
    }
  }
  // kb.rotary rotates column pairs: the kernels whose threads store C's
  // adjacent column pairs (storeC2: mma.sync's and wgmma's fragments) hold
  // both; the gemv and FFMA kernels store one element a thread and the
  // f32 wgmma kernel of a row-major B holds C^T (kb-fuse-elementwise keeps
  // a rotary out of what may become them; a hand-written fusion ends here).
  if (e.chain && chainHasRotary(*e.chain)) {
    MmaUnit unit = cfg.getMma().value_or(MmaUnit::ffma);
    const char *why = nullptr;
    if (unit == MmaUnit::gemv)
      why = "the gemv kernel stores one column a thread";
    else if (unit == MmaUnit::ffma)
      why = "the FFMA kernel stores one element a thread";
    else if (unit == MmaUnit::wgmma_tf32 && !e.shape.transB)
      why = "the wgmma kernel of a row-major f32 B holds C^T (pairs of rows)";
    else if (cfg.getOperands() == OperandOrder::ba)
      why = "operands = \"ba\" holds C^T (pairs of rows)";
    if (why)
      return op->emitOpError()
             << "has a kb.rotary in its matmul epilogue, which needs column "
                "pairs in one thread: "
             << why;
  }
  // Split-K: kb-split-k turned `split = S` into a matmul with split_chunk
  // (S partial products, one per block z) and a kb.split_sum after it.
  // With reduce = "cluster" the op is whole and the kernel splits it: two
  // chunks, blocks z = 0 and 1 of a cluster of two (1 x 1 x 2); block 1
  // stores its partial into C, block 0 adds it to its own and stores the
  // sum through the fused epilogue (MatmulWgmma.cpp).
  int64_t splitCfg = std::max<int64_t>(cfg.getSplit(), 1);
  bool clusterReduce = cfg.getReduce() == ReduceKind::cluster;
  if (clusterReduce) {
    int64_t kTiles = llvm::divideCeil(e.shape.k, e.bk);
    std::string why;
    if (e.shape.splits > 1)
      why = "a whole matmul (kb-split-k leaves it whole), not split_chunk";
    else if (e.shape.batched)
      why = "an unbatched matmul";
    else if (!isWgmma(cfg.getMma()) ||
             cfg.getCopy() != CopyKind::tma)
      why = "mma = \"wgmma_tf32\" with copy = \"tma\"";
    else if (splitCfg != 2 || !splitLeavesNoChunkEmpty(kTiles, 2))
      why = "split = 2 with two non-empty chunks of the " +
            std::to_string(kTiles) + " k tiles";
    if (!why.empty())
      return op->emitOpError() << "#kb.config reduce = \"cluster\" needs "
                               << why;
    e.shape.splits = 2;
    e.shape.chunk = splitChunkTiles(kTiles, 2) * e.bk;
    e.clusterReduce = true;
  } else if (splitCfg != e.shape.splits)
    return op->emitOpError()
           << "#kb.config asks for split = " << splitCfg << " but the matmul "
           << (e.shape.splits > 1 ? "has " + std::to_string(e.shape.splits) +
                                        " partial products"
                                  : std::string("is not split"))
           << ": run kb-split-k";
  if (e.shape.splits > 1 && !clusterReduce) {
    if (e.chain && !e.chain->ops.empty())
      return op->emitOpError() << "a split-K matmul's epilogue runs after its "
                                  "kb.split_sum, not in the matmul";
    if (e.shape.chunk % e.bk)
      return op->emitOpError()
             << "split_chunk = " << e.shape.chunk
             << " must be a whole number of BK = " << e.bk << " k tiles";
  }
  e.tid = gpu::ThreadIdOp::create(b, e.loc, gpu::Dimension::x);
  info.grid = {(int64_t)llvm::divideCeil(e.shape.n, e.bn),
               (int64_t)llvm::divideCeil(e.shape.m, e.bm),
               e.shape.splits > 1 ? e.shape.splits : e.shape.batch};
  info.block = {e.threads, 1, 1};
  // cluster = C (2, 4 or 8): C blocks of one column of tiles (rows Ci ..
  // Ci + C - 1) share B's tile by TMA multicast (MatmulWgmma.cpp; a
  // persistent grid sets its own clusters there, 2 x 1 x 1, and takes only
  // C = 2, with an even number of row tiles). Each block copies a C-th of
  // it: BN / C rows of B^T, each part starting on the 1024 bytes of the
  // swizzle (BN % 8C == 0), or a C-th of a row-major B's BN / 32 boxes of
  // 32 columns (BN % 32C == 0). The grid's rows are rounded up to whole
  // clusters, as cuBLAS's are: a block past M copies its part of B for its
  // peers, reads a zero-filled A box and stores nothing.
  if (int64_t cl = cfg.getCluster(); cl && cl != 1) {
    int64_t tilesM = llvm::divideCeil(e.shape.m, e.bm);
    int64_t bnMultiple = wgmmaClusterBnMultiple(
        e.shape.transB, cl, isWgmma16(cfg.getMma()));
    bool persistent = cfg.getGrid() > 0;
    if (!isWgmmaClusterSize(cl) ||
        !isWgmma(cfg.getMma()) ||
        cfg.getCopy() != CopyKind::tma || e.bn % bnMultiple ||
        (persistent && tilesM % 2))
      return op->emitOpError()
             << "#kb.config cluster = " << cl
             << ": a matmul shares B's tile over 2, 4 or 8 blocks of one "
                "column of tiles, with a wgmma mma, copy = \"tma\", "
                "BN a multiple of 8 x cluster with B transposed or of 32 x "
                "cluster (64 x cluster in 16-bit) with a row-major B (each "
                "block copies its part of "
                "B's tile; BN = "
             << e.bn << "), and with a persistent grid an even number of "
                "row tiles (M = "
             << e.shape.m << " makes " << tilesM << ")";
    info.grid[1] = llvm::alignTo(tilesM, cl);
    info.cluster = {1, cl, 1};
  }
  if (clusterReduce)
    info.cluster = {1, 1, 2};
  if (info.grid[1] > 65535 || info.grid[2] > 65535)
    return op->emitOpError()
           << "needs a grid of " << info.grid[1] << " x " << info.grid[2]
           << " in y and z; at most 65535 each";
  if (!cfg.getMma())
    return op->emitOpError() << "has no mma unit in its #kb.config: run "
                                "kb-select-mma first";
  if (cfg.getGrid() && !isWgmma(cfg.getMma()))
    return op->emitOpError()
           << "#kb.config grid = " << cfg.getGrid()
           << " (a persistent grid) needs mma = \"wgmma_tf32\"";
  switch (*cfg.getMma()) {
  case MmaUnit::ffma:
    return buildFfma(e, info);
  case MmaUnit::mma_sync_tf32:
  case MmaUnit::mma_sync_tf32x3:
    return buildMmaSync(e, info, *cfg.getMma() == MmaUnit::mma_sync_tf32x3);
  case MmaUnit::mma_sync_f16:
  case MmaUnit::mma_sync_bf16:
    return buildMmaSync16(e, info);
  case MmaUnit::wgmma_tf32:
  case MmaUnit::wgmma_f16:
  case MmaUnit::wgmma_bf16:
    return buildWgmma(e, info);
  case MmaUnit::gemv:
    return buildGemv(e, info);
  }
  llvm_unreachable("unknown mma unit");
}
