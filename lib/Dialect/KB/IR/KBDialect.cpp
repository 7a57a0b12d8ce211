//===- KBDialect.cpp - kb dialect, attributes and interfaces --------------===//
//
// Registers the kb dialect's ops and attributes, verifies #kb.config
// fields that have a fixed range (vector width, stages, mma kind, softmax
// strategy, sizes small enough that no later arithmetic overflows) and the
// `kb.name` of function arguments and results.
//
//===----------------------------------------------------------------------===//

#include "kb/Dialect/KB/IR/KBDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/JSON.h"
#include <limits>

using namespace mlir;
using namespace mlir::kb;

FailureOr<SmallVector<int64_t>> mlir::kb::parseSizes(AsmParser &parser) {
  SmallVector<int64_t> sizes;
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() {
        return parser.parseInteger(sizes.emplace_back());
      }))
    return failure();
  return sizes;
}

void mlir::kb::printSizes(AsmPrinter &printer, ArrayRef<int64_t> sizes) {
  printer << '[';
  llvm::interleaveComma(sizes, printer);
  printer << ']';
}

// A written 0 or keyword cannot fail the parse here: the generated parser
// would add a second, vaguer error. They parse to values no count can have,
// which ConfigAttr::verify refuses with one message.
// A written 0 parses to kCountZero and a keyword (`true`) to kCountKeyword
// (0 in memory means "not set").
static constexpr int64_t kCountZero = std::numeric_limits<int64_t>::min();
static constexpr int64_t kCountKeyword =
    std::numeric_limits<int64_t>::min() + 1;

FailureOr<int64_t> mlir::kb::parseCount(AsmParser &parser, StringRef) {
  // `true` would otherwise parse as the integer -1.
  StringRef word;
  if (succeeded(parser.parseOptionalKeyword(&word)))
    return kCountKeyword;
  int64_t value = 0;
  if (parser.parseInteger(value))
    return failure();
  return value == 0 ? kCountZero : value;
}

FailureOr<int64_t> mlir::kb::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return failure();
    std::optional<int64_t> p = llvm::checkedMul(n, d);
    if (!p)
      return failure();
    n = *p;
  }
  return n;
}

std::string mlir::kb::unsupportedTensorReason(Type type, bool f32) {
  std::string why;
  llvm::raw_string_ostream os(why);
  auto tt = dyn_cast<RankedTensorType>(type);
  if (!tt) {
    os << "is not a ranked tensor";
    return why;
  }
  Type et = tt.getElementType();
  if (f32 && !et.isF32() && !et.isF16() && !et.isBF16()) {
    os << "has element type " << et << "; kb's tensors are f32, f16 or bf16";
    return why;
  }
  if (!tt.hasStaticShape()) {
    os << "must have a static shape";
    return why;
  }
  if (tt.getRank() == 0) {
    os << "must have rank >= 1";
    return why;
  }
  FailureOr<int64_t> n = checkedNumElements(tt.getShape());
  if (failed(n)) {
    os << "has more elements than int64 counts";
    return why;
  }
  if (*n == 0) {
    os << "must not be empty (a zero dimension)";
    return why;
  }
  if (*n > kMaxTensorElements)
    os << "has " << *n << " elements; kb supports at most "
       << kMaxTensorElements << " (2^36)";
  return why;
}

/// The longest buffer name kb-run reads (lib/Runtime/Manifest.cpp).
constexpr size_t kMaxBufferNameBytes = 256;

/// `kb.name`: a non-empty string naming one buffer of the bundle, valid
/// UTF-8 (the manifest is JSON), a plain file name (no '/', '\\' or control
/// character; not '.' or '..') and at most kMaxBufferNameBytes long (what
/// kb-run reads); two arguments or results of one function may not share
/// it.
static LogicalResult verifyBufferName(Operation *op, bool isResult,
                                      unsigned index, NamedAttribute attr) {
  if (attr.getName() != "kb.name")
    return success();
  auto what = [&] {
    return (isResult ? "result #" : "argument #") + std::to_string(index);
  };
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.getValue().empty())
    return op->emitError() << what()
                           << ": 'kb.name' must be a non-empty string";
  // Found by the kb-compile fuzzer: a name that is not UTF-8 reached
  // kb-emit-bundle's JSON writer, which asserts (or, without assertions,
  // writes U+FFFD in its place).
  if (!llvm::json::isUTF8(name.getValue()))
    return op->emitError() << what()
                           << ": 'kb.name' is not valid UTF-8 (it names a "
                              "buffer in the bundle's JSON manifest)";
  // kb-run names files after it (--save-outputs NAME.npy), as the Python
  // builder checks: a portable file name, no path.
  StringRef v = name.getValue();
  if (v == "." || v == ".." ||
      llvm::any_of(v, [](char c) {
        return c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ||
               c == 0x7f;
      })) {
    std::string shown;
    llvm::raw_string_ostream os(shown);
    llvm::printEscapedString(v, os);
    return op->emitError() << what() << ": 'kb.name' \"" << shown
                           << "\" is not a plain file name (it has a '/', a "
                              "'\\' or a control character, or is '.' or "
                              "'..'); kb-run names files after it";
  }
  if (name.getValue().size() > kMaxBufferNameBytes)
    return op->emitError() << what() << ": 'kb.name' has "
                           << name.getValue().size()
                           << " bytes; kb-run reads names of at most "
                           << kMaxBufferNameBytes;
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  auto same = [&](DictionaryAttr attrs) {
    auto other = attrs ? attrs.getAs<StringAttr>("kb.name") : StringAttr();
    return other && other == name;
  };
  // Reported once, at the later of the two.
  unsigned args = isResult ? func.getNumArguments() : index;
  for (unsigned i = 0; i < args; ++i)
    if (same(func.getArgAttrDict(i)))
      return op->emitError() << what() << " has kb.name \"" << name.getValue()
                             << "\", which argument #" << i
                             << " has already: each buffer needs its own name";
  for (unsigned i = 0; isResult && i < index; ++i)
    if (same(func.getResultAttrDict(i)))
      return op->emitError() << what() << " has kb.name \"" << name.getValue()
                             << "\", which result #" << i
                             << " has already: each buffer needs its own name";
  return success();
}

LogicalResult KBDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned argIndex,
                                                  NamedAttribute attr) {
  return verifyBufferName(op, /*isResult=*/false, argIndex, attr);
}

LogicalResult KBDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                     unsigned resultIndex,
                                                     NamedAttribute attr) {
  return verifyBufferName(op, /*isResult=*/true, resultIndex, attr);
}

#include "kb/Dialect/KB/IR/KBEnums.cpp.inc"
#include "kb/Dialect/KB/IR/KBInterfaces.cpp.inc"
#include "kb/Dialect/KB/IR/KBOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "kb/Dialect/KB/IR/KBAttrs.cpp.inc"

void KBDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kb/Dialect/KB/IR/KBOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "kb/Dialect/KB/IR/KBAttrs.cpp.inc"
      >();
}

LogicalResult ConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ArrayRef<int64_t> block,
    ArrayRef<int64_t> warp, ArrayRef<int64_t> thread, int64_t threads,
    int64_t vector, int64_t stages, ArrayRef<int64_t> pad,
    std::optional<MmaUnit> mma, std::optional<SoftmaxStrategy> strategy,
    int64_t cluster, int64_t grid, std::optional<CopyKind> copy, int64_t raster,
    int64_t split, std::optional<StoreKind> store,
    std::optional<ReduceKind> reduce, std::optional<ScheduleKind>,
    std::optional<OperandOrder> operands) {
  if (split < 0 || split > 65535)
    return emitError() << "#kb.config 'split' must be in [1, 65535] (K chunks "
                          "of a split-K matmul), got "
                       << split;
  if (raster < 0 || raster > 65535)
    return emitError()
           << "#kb.config 'raster' must be in [1, 65535] (block rows "
              "per group of the tile order), got "
           << raster;
  auto positive = [&](ArrayRef<int64_t> v, StringRef name) -> LogicalResult {
    for (int64_t x : v) {
      if (x <= 0)
        return emitError() << "#kb.config field '" << name
                           << "' expects positive sizes, got " << x;
      if (x > kMaxConfigSize)
        return emitError() << "#kb.config field '" << name << "' size " << x
                           << " is too large (at most " << kMaxConfigSize
                           << ")";
    }
    return success();
  };
  if (failed(positive(block, "block")) || failed(positive(warp, "warp")) ||
      failed(positive(thread, "thread")))
    return failure();
  for (auto [name, value] : {std::pair<StringRef, int64_t>("threads", threads),
                             {"vector", vector},
                             {"stages", stages},
                             {"cluster", cluster},
                             {"grid", grid}}) {
    if (value == kCountZero)
      return emitError() << "#kb.config '" << name
                         << "' must be at least 1, got 0 (leave the field out "
                            "to let kb choose)";
    if (value == kCountKeyword)
      return emitError() << "#kb.config '" << name
                         << "' expects a positive integer, not a keyword";
  }
  // thread's third size: a gemv thread's rows of each k tile, where its
  // block's threads split the k tile into groups (MatmulGemv.cpp).
  if (block.size() > 3 || warp.size() > 2 || thread.size() > 3)
    return emitError() << "#kb.config takes at most 3 block sizes, 2 warp "
                          "sizes and 3 thread sizes, got "
                       << block.size() << ", " << warp.size() << " and "
                       << thread.size();
  // A third thread size is the gemv kernel's (R rows of each k tile a
  // thread, its block's k groups splitting the tile).
  if (thread.size() == 3 && mma && *mma != MmaUnit::gemv)
    return emitError() << "#kb.config thread = [M, TN, R] (three sizes) is "
                          "for mma = \"gemv\" only";
  // A thread's register tile: TM * TN accumulators plus a column of A and a
  // row of B, all in registers (the lowering unrolls over them).
  if (thread.size() >= 2 &&
      thread[0] * thread[1] + thread[0] + thread[1] > kMaxRegistersPerThread)
    return emitError() << "#kb.config thread = [" << thread[0] << ", "
                       << thread[1] << "] needs "
                       << thread[0] * thread[1] + thread[0] + thread[1]
                       << " registers per thread (" << thread[0] * thread[1]
                       << " accumulators and " << thread[0] + thread[1]
                       << " operands); a thread has at most "
                       << kMaxRegistersPerThread;
  // A warp's tile: its accumulators are spread over the 32 lanes, which the
  // lowering unrolls. Past twice a thread's registers it would only spill
  // (and take minutes to build).
  if (warp.size() == 2 && warp[0] * warp[1] / 32 > 2 * kMaxRegistersPerThread)
    return emitError() << "#kb.config warp = [" << warp[0] << ", " << warp[1]
                       << "] puts " << warp[0] * warp[1] / 32
                       << " accumulators in each of a warp's 32 threads; at "
                          "most "
                       << 2 * kMaxRegistersPerThread
                       << " (a thread has 255 registers)";
  if (threads < 0 || threads > 1024)
    return emitError() << "#kb.config 'threads' must be in [1, 1024], got "
                       << threads;
  // 8: 16-bit values, 16 bytes an access.
  if (vector != 0 && vector != 1 && vector != 2 && vector != 4 && vector != 8)
    return emitError() << "#kb.config 'vector' must be 1, 2, 4 or 8, got "
                       << vector;
  // Up to 16 stages for the wgmma kernels, whose TMA pipeline has a pair of
  // mbarriers a stage and whose shared memory the lowering checks (cuBLAS
  // runs 64 x 80 bf16 tiles in 11 stages on 768 x 768 x 2048); 8 for the
  // others, as ever.
  // (operands = "ba" is the 16-bit wgmma kernel's, its mma yet unset.)
  bool wgmmaStages = isWgmma(mma) || operands == OperandOrder::ba;
  int64_t maxStages = wgmmaStages ? 16 : 8;
  if (stages < 0 || stages > maxStages)
    return emitError() << "#kb.config 'stages' must be in [1, " << maxStages
                       << "]" << (wgmmaStages ? "" : " (16 with a wgmma mma)")
                       << ", got " << stages;
  for (int64_t p : pad) {
    if (p < 0)
      return emitError() << "#kb.config 'pad' must be non-negative, got " << p;
    if (p > kMaxConfigSize)
      return emitError() << "#kb.config 'pad' " << p
                         << " is too large (at most " << kMaxConfigSize << ")";
  }
  if (!pad.empty() && pad.size() != 2)
    return emitError() << "#kb.config 'pad' needs two sizes [padA, padB], got "
                       << pad.size();
  // mma, strategy and copy: their parser accepts only the enum's values.
  // split_global's blocks of a row are not a hardware cluster.
  if (strategy == SoftmaxStrategy::split_global &&
      (cluster < 0 || cluster > 64))
    return emitError() << "#kb.config 'cluster' (blocks per row) of a "
                          "split_global softmax must be in [1, 64], got "
                       << cluster;
  if (grid < 0 || grid > std::numeric_limits<int32_t>::max())
    return emitError()
           << "#kb.config 'grid' must be a positive block count, got " << grid;
  // A persistent grid: a split_global softmax's, or a wgmma matmul's
  // (the op's verifier says which kernels a field applies to).
  if (grid && strategy && strategy != SoftmaxStrategy::split_global)
    return emitError() << "#kb.config 'grid' (a persistent grid) is only for a "
                          "split_global softmax or a wgmma_tf32 matmul, not "
                          "strategy \""
                       << nameOf(strategy) << "\"";
  if (grid && mma && !isWgmma(mma))
    return emitError() << "#kb.config 'grid' (a persistent grid) is only for a "
                          "split_global softmax or a wgmma_tf32 matmul, not "
                          "mma = \""
                       << nameOf(mma) << "\"";
  if (cluster > 1 && mma && !isWgmma(mma))
    return emitError() << "#kb.config 'cluster' on a matmul is only for mma "
                          "= \"wgmma_tf32\" (two blocks sharing B^T's tile), "
                          "not \""
                       << nameOf(mma) << "\"";
  if (copy == CopyKind::tma && mma && !isWgmma(mma))
    return emitError() << "#kb.config copy = \"tma\" is only for mma = "
                          "\"wgmma_tf32\", not \""
                       << nameOf(mma) << "\"";
  // store = "tma": the wgmma kernel's TMA-store epilogue (MatmulWgmma.cpp);
  // kb-lower-to-gpu checks the shape (B transposed, not batched).
  if (store == StoreKind::tma && mma && !isWgmma(mma))
    return emitError() << "#kb.config store = \"tma\" is only for mma = "
                          "\"wgmma_tf32\", not \""
                       << nameOf(mma) << "\"";
  if (store == StoreKind::tma && copy && copy != CopyKind::tma)
    return emitError() << "#kb.config store = \"tma\" needs copy = \"tma\", "
                          "not \""
                       << nameOf(copy) << "\"";
  if (store == StoreKind::tma && split > 1)
    return emitError() << "#kb.config store = \"tma\" is not for a split-K "
                          "matmul (split = "
                       << split << ": its partial products go to a workspace)";
  // reduce = "cluster": the two chunks of a split-K tile sum in a cluster
  // of two (MatmulWgmma.cpp); kb-lower-to-gpu checks the shape. (store =
  // "tma" is refused above for any split.)
  if (reduce == ReduceKind::cluster) {
    std::string why;
    if (split != 2)
      why = "split = 2 (two chunks, one cluster of two blocks a tile), got " +
            (split ? "split = " + std::to_string(split)
                   : std::string("no split"));
    else if (mma && !isWgmma(mma))
      why = "mma = \"wgmma_tf32\", not \"" + nameOf(mma).str() + "\"";
    else if (copy && copy != CopyKind::tma)
      why = "copy = \"tma\", not \"" + nameOf(copy).str() + "\"";
    else if (cluster > 1)
      why = "no other cluster (its blocks share B's tile), got cluster = " +
            std::to_string(cluster);
    else if (grid)
      why = "no persistent grid, got grid = " + std::to_string(grid);
    if (!why.empty())
      return emitError() << "#kb.config reduce = \"cluster\" needs " << why;
  }
  // reduce = "stream": stream-K over a persistent grid (MatmulWgmma.cpp);
  // kb-lower-to-gpu checks the tile (at most 4 consumer warpgroups).
  if (reduce == ReduceKind::stream) {
    std::string why;
    if (grid <= 0)
      why = "a persistent grid (grid = G: the blocks the k tiles are shared "
            "among)";
    else if (split > 1)
      why = "no split (its k tiles are shared among the blocks instead), "
            "got split = " +
            std::to_string(split);
    else if (mma && !isWgmma(mma))
      why = "mma = \"wgmma_tf32\", not \"" + nameOf(mma).str() + "\"";
    else if (copy && copy != CopyKind::tma)
      why = "copy = \"tma\", not \"" + nameOf(copy).str() + "\"";
    else if (cluster > 1)
      why = "no cluster, got cluster = " + std::to_string(cluster);
    else if (store == StoreKind::tma)
      why = "store = \"direct\" (a partial goes through C)";
    if (!why.empty())
      return emitError() << "#kb.config reduce = \"stream\" needs " << why;
  }
  // operands = "ba": the 16-bit wgmma kernel with its operands swapped
  // (C^T = B^T A^T, MatmulWgmma.cpp), one block a tile, its accumulators
  // stored directly; kb-lower-to-gpu checks the shape (a row-major B).
  if (operands == OperandOrder::ba) {
    std::string why;
    if (mma && !isWgmma16(mma))
      why = "mma = \"wgmma_bf16\" or \"wgmma_f16\", not \"" +
            nameOf(mma).str() + "\"";
    else if (copy && copy != CopyKind::tma)
      why = "copy = \"tma\", not \"" + nameOf(copy).str() + "\"";
    else if (grid)
      why = "no persistent grid, got grid = " + std::to_string(grid);
    else if (cluster > 1)
      why = "no cluster, got cluster = " + std::to_string(cluster);
    else if (store == StoreKind::tma)
      why = "store = \"direct\" (its accumulators hold C^T)";
    else if (reduce == ReduceKind::cluster || reduce == ReduceKind::stream)
      why = "reduce = \"kernel\" (kb.split_sum) or none, not \"" +
            nameOf(reduce).str() + "\"";
    if (!why.empty())
      return emitError() << "#kb.config operands = \"ba\" needs " << why;
  }
  if (strategy != SoftmaxStrategy::split_global &&
      (cluster < 0 || cluster > 16))
    return emitError() << "#kb.config 'cluster' must be in [1, 16] (the "
                          "largest thread-block cluster sm_90 launches), got "
                       << cluster;
  return success();
}

ConfigAttr mlir::kb::getConfig(Operation *op) {
  return op->getAttrOfType<ConfigAttr>("config");
}

void mlir::kb::setConfig(Operation *op, ConfigAttr config) {
  op->setAttr("config", config);
}

int64_t mlir::kb::numElements(Type type) {
  return cast<ShapedType>(type).getNumElements();
}

ConfigFields ConfigFields::from(ConfigAttr attr) {
  ConfigFields f;
  if (!attr)
    return f;
  f.block.assign(attr.getBlock().begin(), attr.getBlock().end());
  f.warp.assign(attr.getWarp().begin(), attr.getWarp().end());
  f.thread.assign(attr.getThread().begin(), attr.getThread().end());
  f.threads = attr.getThreads();
  f.vector = attr.getVector();
  f.stages = attr.getStages();
  f.pad.assign(attr.getPad().begin(), attr.getPad().end());
  f.mma = attr.getMma();
  f.strategy = attr.getStrategy();
  f.cluster = attr.getCluster();
  f.grid = attr.getGrid();
  f.copy = attr.getCopy();
  f.raster = attr.getRaster();
  f.split = attr.getSplit();
  f.store = attr.getStore();
  f.reduce = attr.getReduce();
  f.schedule = attr.getSchedule();
  f.operands = attr.getOperands();
  return f;
}

ConfigAttr ConfigFields::get(MLIRContext *ctx) const {
  return ConfigAttr::get(ctx, block, warp, thread, threads, vector, stages, pad,
                         mma, strategy, cluster, grid, copy, raster, split,
                         store, reduce, schedule, operands);
}

bool mlir::kb::holdsRotary(Operation *op) {
  if (isa<RotaryOp>(op))
    return true;
  auto fusion = dyn_cast<FusionOp>(op);
  return fusion &&
         llvm::any_of(fusion.getBody().front().without_terminator(),
                      [](Operation &o) { return isa<RotaryOp>(o); });
}

Operation *mlir::kb::getFusionAnchor(FusionOp fusion) {
  for (Operation &op : fusion.getBody().front())
    if (isa<MatmulOp, SoftmaxOp, LogSoftmaxOp, LayerNormOp, RmsNormOp>(op))
      return &op;
  return nullptr;
}

LogicalResult mlir::kb::adoptInnerConfig(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  Operation *anchor = getFusionAnchor(fusion);
  // The op whose config is the kernel's so far, and that config: the
  // fusion's own, else one given inside.
  Operation *from = nullptr;
  ConfigAttr chosen = getConfig(fusion);
  for (Operation &op : body.without_terminator()) {
    ConfigAttr config = getConfig(&op);
    if (!config)
      continue;
    // Around a matmul or softmax the kernel is the anchor's, and a config
    // written for an elementwise op inside would not describe it.
    if (anchor && &op != anchor)
      return op.emitError()
             << "#kb.config on '" << op.getName()
             << "' would not be used: it is fused into one kernel with '"
             << anchor->getName()
             << "', whose config the kernel takes; put the config on the '"
             << anchor->getName()
             << "' (or on the kb.fusion), or compile with fuse=false to keep '"
             << op.getName() << "' its own kernel";
    // A chain of elementwise ops of one shape is one elementwise kernel:
    // a config on any of them is that kernel's, as long as they agree.
    if (chosen && chosen != config)
      return op.emitError()
             << "#kb.config on '" << op.getName() << "' disagrees with the "
             << (from ? "config on '" + from->getName().getStringRef().str() +
                            "'"
                      : std::string("kb.fusion's own config"))
             << ", and both would be the config of the one kernel they are "
                "fused into; give the kernel one config (on the kb.fusion), "
                "or compile with fuse=false to keep them apart";
    chosen = config;
    from = &op;
  }
  if (chosen && !getConfig(fusion))
    setConfig(fusion, chosen);
  for (Operation &op : body.without_terminator())
    op.removeAttr("config");
  return success();
}

MatmulOp mlir::kb::getKernelMatmul(Operation *op) {
  if (auto mm = dyn_cast<MatmulOp>(op))
    return mm;
  if (auto fusion = dyn_cast<FusionOp>(op))
    return dyn_cast_or_null<MatmulOp>(getFusionAnchor(fusion));
  return {};
}

int64_t mlir::kb::getMatmulLogicalK(MatmulOp mm) {
  Value lhs = mm.getLhs();
  if (auto arg = dyn_cast<BlockArgument>(lhs))
    if (auto fusion = dyn_cast<FusionOp>(arg.getOwner()->getParentOp()))
      lhs = fusion.getInputs()[arg.getArgNumber()];
  if (auto pad = lhs.getDefiningOp<PadOp>())
    return pad.getInput().getType().getShape().back();
  return cast<RankedTensorType>(lhs.getType()).getShape().back();
}

std::optional<KernelKind> mlir::kb::getKernelKind(Operation *op) {
  if (isa<MatmulOp>(op))
    return KernelKind::Matmul;
  if (isa<SoftmaxOp, LogSoftmaxOp>(op))
    return KernelKind::Softmax;
  if (isa<TransposeOp>(op))
    return KernelKind::Transpose;
  if (isa<PadOp>(op))
    return KernelKind::Pad;
  if (isa<LayerNormOp, RmsNormOp, ReduceOp>(op))
    return KernelKind::RowReduce;
  if (isa<AttentionOp>(op))
    return KernelKind::Attention;
  if (isa<ElementwiseOpInterface, RotaryOp>(op))
    return KernelKind::Elementwise;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Operation *anchor = getFusionAnchor(fusion);
    return anchor ? getKernelKind(anchor) : KernelKind::Elementwise;
  }
  return std::nullopt;
}
