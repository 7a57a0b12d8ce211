//===- KBDialect.cpp - kb dialect, attributes and interfaces --------------===//
//
// Registers the kb dialect's ops and attributes, and verifies #kb.config
// fields that have a fixed range (vector width, stages, mma kind, softmax
// strategy).
//
//===----------------------------------------------------------------------===//

#include "kb/Dialect/KB/IR/KBDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
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

#include "kb/Dialect/KB/IR/KBOpsDialect.cpp.inc"
#include "kb/Dialect/KB/IR/KBEnums.cpp.inc"
#include "kb/Dialect/KB/IR/KBInterfaces.cpp.inc"

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

LogicalResult
ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   ArrayRef<int64_t> block, ArrayRef<int64_t> warp,
                   ArrayRef<int64_t> thread, int64_t threads, int64_t vector,
                   int64_t stages, ArrayRef<int64_t> pad,
                   std::optional<MmaUnit> mma,
                   std::optional<SoftmaxStrategy> strategy, int64_t cluster,
                   int64_t grid, std::optional<CopyKind> copy) {
  auto positive = [&](ArrayRef<int64_t> v, StringRef name) -> LogicalResult {
    for (int64_t x : v)
      if (x <= 0)
        return emitError() << "#kb.config field '" << name
                           << "' expects positive sizes, got " << x;
    return success();
  };
  if (failed(positive(block, "block")) || failed(positive(warp, "warp")) ||
      failed(positive(thread, "thread")))
    return failure();
  if (threads < 0 || threads > 1024)
    return emitError() << "#kb.config 'threads' must be in [1, 1024], got "
                       << threads;
  if (vector != 0 && vector != 1 && vector != 2 && vector != 4)
    return emitError() << "#kb.config 'vector' must be 1, 2 or 4, got "
                       << vector;
  if (stages < 0 || stages > 8)
    return emitError() << "#kb.config 'stages' must be in [1, 8], got "
                       << stages;
  for (int64_t p : pad)
    if (p < 0)
      return emitError() << "#kb.config 'pad' must be non-negative, got " << p;
  if (!pad.empty() && pad.size() != 2)
    return emitError() << "#kb.config 'pad' needs two sizes [padA, padB], got "
                       << pad.size();
  // mma, strategy and copy: their parser accepts only the enum's values.
  // split_global's blocks of a row are not a hardware cluster.
  if (strategy == SoftmaxStrategy::split_global && (cluster < 0 || cluster > 64))
    return emitError() << "#kb.config 'cluster' (blocks per row) of a "
                          "split_global softmax must be in [1, 64], got "
                       << cluster;
  if (grid < 0 || grid > std::numeric_limits<int32_t>::max())
    return emitError() << "#kb.config 'grid' must be a positive block count, got "
                       << grid;
  if (grid && strategy != SoftmaxStrategy::split_global)
    return emitError() << "#kb.config 'grid' (a persistent grid) is only for a "
                          "split_global softmax, not strategy \""
                       << nameOf(strategy) << "\"";
  if (copy == CopyKind::tma && mma && mma != MmaUnit::wgmma_tf32)
    return emitError() << "#kb.config copy = \"tma\" is only for mma = "
                          "\"wgmma_tf32\", not \""
                       << nameOf(mma) << "\"";
  if (strategy != SoftmaxStrategy::split_global && (cluster < 0 || cluster > 16))
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
  return f;
}

ConfigAttr ConfigFields::get(MLIRContext *ctx) const {
  return ConfigAttr::get(ctx, block, warp, thread, threads, vector, stages,
                         pad, mma, strategy, cluster, grid, copy);
}

Operation *mlir::kb::getFusionAnchor(FusionOp fusion) {
  for (Operation &op : fusion.getBody().front())
    if (isa<MatmulOp, SoftmaxOp>(op))
      return &op;
  return nullptr;
}

void mlir::kb::adoptInnerConfig(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  Operation *configured = getFusionAnchor(fusion);
  if (!configured)
    configured = body.getTerminator()->getOperand(0).getDefiningOp();
  for (Operation &op : body.without_terminator()) {
    ConfigAttr config = getConfig(&op);
    if (!config)
      continue;
    if (&op == configured && !getConfig(fusion))
      setConfig(fusion, config);
    else
      op.emitWarning() << "config not used: it is fused into one kernel with '"
                       << (configured ? configured->getName().getStringRef() : "")
                       << "', whose config the kernel takes";
    op.removeAttr("config");
  }
}

MatmulOp mlir::kb::getKernelMatmul(Operation *op) {
  if (auto mm = dyn_cast<MatmulOp>(op))
    return mm;
  if (auto fusion = dyn_cast<FusionOp>(op))
    return dyn_cast_or_null<MatmulOp>(getFusionAnchor(fusion));
  return {};
}

std::optional<KernelKind> mlir::kb::getKernelKind(Operation *op) {
  if (isa<MatmulOp>(op))
    return KernelKind::Matmul;
  if (isa<SoftmaxOp>(op))
    return KernelKind::Softmax;
  if (isa<TransposeOp>(op))
    return KernelKind::Transpose;
  if (isa<ElementwiseOpInterface>(op))
    return KernelKind::Elementwise;
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    Operation *anchor = getFusionAnchor(fusion);
    return anchor ? getKernelKind(anchor) : KernelKind::Elementwise;
  }
  return std::nullopt;
}
