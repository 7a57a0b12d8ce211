//===- KBToGPU.cpp - kb functions to host launches and gpu.func kernels ---===//
//
// kb-lower-to-gpu. A function on tensors becomes a function on memrefs whose
// trailing arguments are its results; each top-level kb op or kb.fusion
// becomes a kernel (its own gpu.module, so that each kernel gets its own PTX)
// built by the generator of its kind from its #kb.config, and a
// gpu.launch_func with constant sizes. Buffers carry `kb.name` and `kb.role`;
// each launch carries `kb.ops`, the kb ops it computes with their operand
// names, which kb-emit-bundle writes into the manifest for kb-run's
// references.
//
//===----------------------------------------------------------------------===//

#include "KernelGen.h"
#include "kb/Transforms/Passes.h"

#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kb {
#define GEN_PASS_DEF_KBLOWERTOGPU
#include "kb/Conversion/Passes.h.inc"
} // namespace mlir::kb

using namespace mlir;
using namespace mlir::kb;

namespace {

/// Plain attributes of a kb op for the manifest (no config, enums as words).
DictionaryAttr manifestAttrs(Operation *op) {
  Builder b(op->getContext());
  SmallVector<NamedAttribute> out;
  for (NamedAttribute a : op->getAttrs()) {
    if (a.getName() == "config")
      continue;
    Attribute v = a.getValue();
    if (auto p = dyn_cast<PrecisionAttr>(v))
      v = b.getStringAttr(stringifyPrecision(p.getValue()));
    else if (auto g = dyn_cast<GeluApproxAttr>(v))
      v = b.getStringAttr(stringifyGeluApprox(g.getValue()));
    else if (auto r = dyn_cast<ReductionKindAttr>(v))
      v = b.getStringAttr(stringifyReductionKind(r.getValue()));
    else if (isa<UnitAttr>(v))
      v = b.getBoolAttr(true);
    out.push_back(b.getNamedAttr(a.getName(), v));
  }
  return b.getDictionaryAttr(out);
}

DictionaryAttr opRecord(Operation *op, DenseMap<Value, std::string> &names) {
  Builder b(op->getContext());
  SmallVector<Attribute> ins;
  for (Value v : op->getOperands())
    ins.push_back(b.getStringAttr(names.lookup(v)));
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  DictionaryAttr attrs = manifestAttrs(op);
  // kb.attention: inputs q, k, v[, mask]; `causal`, `has_mask`, `bthd` and `lse`
  // always written (kb-run's reference reads them), and `lse_output`, the
  // log-sum-exp's buffer, when there is one.
  if (auto attn = dyn_cast<AttentionOp>(op)) {
    NamedAttrList a(attrs);
    a.set("causal", b.getBoolAttr(attn.getCausal()));
    a.set("has_mask", b.getBoolAttr(bool(attn.getMask())));
    a.set("bthd", b.getBoolAttr(attn.getBthd()));
    a.set("lse", b.getBoolAttr(bool(attn.getLse())));
    if (Value lse = attn.getLse())
      a.set("lse_output", b.getStringAttr(names.lookup(lse)));
    attrs = a.getDictionary(op->getContext());
  }
  return b.getDictionaryAttr({
      b.getNamedAttr("op", b.getStringAttr(op->getName().getStringRef())),
      b.getNamedAttr("inputs", b.getArrayAttr(ins)),
      b.getNamedAttr("output", b.getStringAttr(names.lookup(op->getResult(0)))),
      b.getNamedAttr("shape", b.getI64ArrayAttr(type.getShape())),
      b.getNamedAttr("attrs", attrs),
  });
}

/// Why the kernel of `op` cannot be built with the 16-bit (f16, bf16)
/// tensors it reads or writes, or "" when it can (or has none): every
/// emitter that has no 16-bit form says so here rather than emit f32 code
/// for 16-bit buffers.
std::string halfUnsupported(Operation *op, ConfigAttr config) {
  auto is16 = [](Type t) {
    auto s = dyn_cast<ShapedType>(t);
    return s && (s.getElementType().isF16() || s.getElementType().isBF16());
  };
  bool half = llvm::any_of(op->getOperandTypes(), is16) ||
              llvm::any_of(op->getResultTypes(), is16);
  if (auto fusion = dyn_cast<FusionOp>(op))
    fusion.getBody().walk([&](Operation *inner) {
      half |= llvm::any_of(inner->getResultTypes(), is16);
    });
  if (!half)
    return "";
  switch (*getKernelKind(op)) {
  case KernelKind::Elementwise:
    return "";
  case KernelKind::Matmul: {
    std::optional<MmaUnit> mma = config.getMma();
    if (isWgmma16(mma) || isMmaSync16(mma))
      return "";
    // The gemv kernel reads 16-bit operands (MatmulGemv.cpp), not an f32
    // matmul's 16-bit result.
    if (auto mm = getKernelMatmul(op);
        mma == MmaUnit::gemv && mm &&
        !mm.getLhs().getType().getElementType().isF32())
      return "";
    if (auto mm = getKernelMatmul(op);
        mm && mm.getLhs().getType().getElementType().isF32())
      return "writes a 16-bit result from an f32 matmul in one kernel, "
             "which kb does not fuse yet (convert after the matmul's kernel)";
    return "has 16-bit tensors, which kb's matmul lowers only with mma = "
           "\"wgmma_bf16\", \"wgmma_f16\" (sm_90a), \"mma_sync_bf16\", "
           "\"mma_sync_f16\" or \"gemv\", not mma = \"" +
           (mma ? stringifyMmaUnit(*mma).str() : std::string("none")) + "\"";
  }
  case KernelKind::Softmax:
    if (config.getStrategy() == SoftmaxStrategy::registers)
      return "";
    return "has 16-bit tensors, which kb's softmax lowers only with strategy "
           "= \"registers\" so far, not \"" +
           (config.getStrategy()
                ? stringifySoftmaxStrategy(*config.getStrategy()).str()
                : std::string("none")) +
           "\"";
  case KernelKind::Transpose:
  case KernelKind::Pad:
  case KernelKind::RowReduce:
  case KernelKind::Attention:
    return "";
  }
  return "";
}

std::string kernelSuffix(Operation *op) {
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    std::string s = "fused";
    for (Operation &inner : fusion.getBody().front().without_terminator())
      s += "_" + inner.getName().stripDialect().str();
    return s.size() > 48 ? s.substr(0, 48) : s;
  }
  return op->getName().stripDialect().str();
}

struct LowerToGPUPass : public kb::impl::KBLowerToGPUBase<LowerToGPUPass> {
  unsigned kernelCount = 0;

  LogicalResult lowerFunction(func::FuncOp func);
  void runOnOperation() override;
};

LogicalResult LowerToGPUPass::lowerFunction(func::FuncOp func) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Operation &op : body.without_terminator()) {
    if (isa<CausalMaskOp>(op))
      return op.emitOpError()
             << "has no kernel of its own: kb lowers it only inside a "
                "kb.attention (kb-fuse-attention folds a q k^T -> "
                "causal_mask -> softmax -> matmul chain into one)";
    if (isa<GatedMatmulOp>(op))
      return op.emitOpError()
             << "has no kernel yet (the two-B wgmma kernel of docs/design.md "
                "\"Gated matmul\" is not built): compile the program "
                "without kb-fuse-gated-matmul";
    if (!getKernelKind(&op))
      return op.emitOpError() << "cannot be lowered by kb-lower-to-gpu: a kb "
                                 "function holds only kb ops";
  }

  // The new signature: inputs, then one output buffer per result.
  auto memrefOf = [](Type t) {
    auto tt = cast<RankedTensorType>(t);
    return MemRefType::get(tt.getShape(), tt.getElementType());
  };
  SmallVector<Type> argTypes;
  // Every buffer of a bundle is a static-shaped f32, f16 or bf16 tensor (an unused
  // argument too: kb-run allocates and fills it).
  for (auto [i, t] : llvm::enumerate(func.getArgumentTypes())) {
    if (std::string why = unsupportedTensorReason(t); !why.empty())
      return func.emitOpError()
             << "argument #" << i << " of type " << t << " " << why
             << "; kb buffers are static-shaped f32, f16 or bf16 tensors";
    argTypes.push_back(memrefOf(t));
  }
  for (auto [i, t] : llvm::enumerate(func.getResultTypes())) {
    if (std::string why = unsupportedTensorReason(t); !why.empty())
      return func.emitOpError()
             << "result #" << i << " of type " << t << " " << why
             << "; kb buffers are static-shaped f32, f16 or bf16 tensors";
    argTypes.push_back(memrefOf(t));
  }
  unsigned numInputs = func.getNumArguments();

  OpBuilder b(func);
  auto newFunc = func::FuncOp::create(b, func.getLoc(), func.getName(),
                                      b.getFunctionType(argTypes, {}));
  Block *entry = newFunc.addEntryBlock();
  DenseMap<Value, std::string> names;
  DenseMap<Value, Value> buffers;
  // Buffer names are unique in a bundle: the names the program gives
  // (kb.name, unique by the kb dialect's verifier) are kept, and may not
  // have the form of a name kb generates for the other buffers (argN,
  // outN, tN, wsN, tmN): a program naming its input "out0" would otherwise
  // share the name with its output, or get a renamed output it did not
  // ask for (repros invalid/name_clash_default.mlir, name_clash_scratch2).
  llvm::StringSet<> taken;
  for (unsigned i = 0; i < argTypes.size(); ++i) {
    bool isInput = i < numInputs;
    StringAttr given =
        isInput
            ? func.getArgAttrOfType<StringAttr>(i, "kb.name")
            : func.getResultAttrOfType<StringAttr>(i - numInputs, "kb.name");
    if (!given)
      continue;
    StringRef g = given.getValue();
    for (StringRef prefix : {"arg", "out", "tm", "ws", "t"})
      if (g.starts_with(prefix) && g.size() > prefix.size() &&
          llvm::all_of(g.drop_front(prefix.size()), llvm::isDigit))
        return func.emitOpError()
               << (isInput ? "argument #" : "result #")
               << (isInput ? i : i - numInputs) << " has kb.name \"" << g
               << "\", the form of a name kb generates for unnamed buffers "
                  "(argN, outN, tN, wsN, tmN): choose another";
    if (!taken.insert(g).second)
      return func.emitOpError() << "gives two buffers the kb.name \"" << g
                                << "\"";
  }
  auto uniqueName = [&](std::string name) {
    if (taken.insert(name).second)
      return name;
    for (unsigned k = 1;; ++k)
      if (std::string alt = name + "_" + std::to_string(k);
          taken.insert(alt).second)
        return alt;
  };
  for (unsigned i = 0; i < argTypes.size(); ++i) {
    bool isInput = i < numInputs;
    std::string name;
    StringAttr given =
        isInput
            ? func.getArgAttrOfType<StringAttr>(i, "kb.name")
            : func.getResultAttrOfType<StringAttr>(i - numInputs, "kb.name");
    name = given ? given.str()
                 : uniqueName(isInput ? "arg" + std::to_string(i)
                                      : "out" + std::to_string(i - numInputs));
    newFunc.setArgAttr(i, "kb.name", b.getStringAttr(name));
    newFunc.setArgAttr(i, "kb.role",
                       b.getStringAttr(isInput ? "input" : "output"));
    if (isInput) {
      names[func.getArgument(i)] = name;
      buffers[func.getArgument(i)] = entry->getArgument(i);
    }
  }
  // A kernel whose result the function returns writes straight into the
  // output buffer.
  DenseMap<Value, Value> outputFor;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!v.getDefiningOp() || outputFor.count(v))
      return ret.emitOpError()
             << "returns value #" << i
             << " that is a function argument or returned twice; kb needs "
                "each result computed by its own kernel";
    outputFor[v] = entry->getArgument(numInputs + i);
    names[v] =
        newFunc.getArgAttrOfType<StringAttr>(numInputs + i, "kb.name").str();
  }

  b.setInsertionPointToStart(entry);
  unsigned scratchCount = 0;
  for (Operation &op : body.without_terminator()) {
    Value result = op.getResult(0);
    Location loc = op.getLoc();
    // One buffer per result: the first is the kernel's output; a second
    // (kb.attention's log-sum-exp) is passed after it.
    SmallVector<Value> outs;
    for (Value r : op.getResults()) {
      Value buf = outputFor.lookup(r);
      if (!buf) {
        auto alloc = memref::AllocOp::create(b, loc, memrefOf(r.getType()));
        std::string name = uniqueName("t" + std::to_string(scratchCount++));
        alloc->setAttr("kb.name", b.getStringAttr(name));
        names[r] = name;
        buf = alloc;
      }
      buffers[r] = buf;
      outs.push_back(buf);
    }
    Value out = outs.front();

    ConfigAttr config = getConfig(&op);
    if (!config)
      return op.emitOpError() << "has no #kb.config: run kb-select-config, "
                                 "kb-select-mma, kb-tile and "
                                 "kb-promote-shared-memory first";
    if (config.getThreads() <= 0)
      return op.emitOpError()
             << "has no thread count in its #kb.config (" << config
             << "): run kb-select-config after "
                "kb-select-mma (which may insert ops)";

    // The kernel: its own gpu.module holding one gpu.func.
    // Not a name the module has already (a user function may be called
    // like a kernel or its module).
    std::string kname;
    do
      kname = "k" + std::to_string(kernelCount++) + "_" + kernelSuffix(&op);
    while (SymbolTable::lookupSymbolIn(module, kname) ||
           SymbolTable::lookupSymbolIn(module, kname + "_module"));
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto gmod = gpu::GPUModuleOp::create(mb, loc, kname + "_module");
    SmallVector<Type> kargTypes;
    SmallVector<Value> kargs;
    for (Value v : op.getOperands()) {
      kargTypes.push_back(buffers.lookup(v).getType());
      kargs.push_back(buffers.lookup(v));
    }
    // A kernel's i32 workspace of `words` (role "workspace": kb-run
    // zero-fills it once and the kernel leaves it zero), as an argument.
    auto addWorkspace = [&](int64_t words) {
      auto ws = memref::AllocOp::create(
          b, loc, MemRefType::get({words}, b.getI32Type()));
      ws->setAttr("kb.name", b.getStringAttr(uniqueName(
                                 "ws" + std::to_string(scratchCount++))));
      ws->setAttr("kb.role", b.getStringAttr("workspace"));
      kargTypes.push_back(ws.getType());
      kargs.push_back(ws);
    };
    // A split_global softmax exchanges its blocks' partial results through
    // a workspace in global memory (zero before each launch, left zero
    // after it), passed just before the output.
    if (config.getStrategy() == SoftmaxStrategy::split_global) {
      auto type = cast<RankedTensorType>(result.getType());
      int64_t n = type.getShape().back(), rows = type.getNumElements() / n;
      addWorkspace(splitGlobalWorkspaceWords(
          rows, std::max<int64_t>(config.getCluster(), 1)));
    }
    // A whole-tensor kb.reduce's blocks publish their partials and count
    // themselves in through a workspace (WholeReduce.cpp).
    if (auto red = dyn_cast<ReduceOp>(&op); red && red.getAll())
      addWorkspace(wholeReduceWorkspaceWords(config.getGrid()));
    // A wgmma matmul whose tiles TMA copies reads A and B (B^T, or B as it
    // is) through two tensor maps (128 bytes each, encoded by kb-run from the manifest's
    // description: docs/bundle.md), passed after its operands, A's first;
    // with store = "tma" C's third. The map swizzles each box row by
    // `swizzle` bytes: 128, or for a 16-bit row-major B's narrower boxes 64
    // or 32 (the attribute's `swizzle`, written only then).
    auto addTensorMap = [&](StringRef of, ArrayRef<int64_t> dims,
                            ArrayRef<int64_t> box,
                            int64_t swizzle = 128) -> LogicalResult {
      if (of.empty())
        return op.emitOpError()
               << "internal error: a tensor map of an unnamed buffer";
      auto tm = memref::AllocOp::create(b, loc,
                                        MemRefType::get({32}, b.getI32Type()));
      tm->setAttr("kb.name", b.getStringAttr(uniqueName(
                                 "tm" + std::to_string(scratchCount++))));
      tm->setAttr("kb.role", b.getStringAttr("tensor_map"));
      SmallVector<NamedAttribute> fields{
          b.getNamedAttr("of", b.getStringAttr(of)),
          b.getNamedAttr("dims", b.getI64ArrayAttr(dims)),
          b.getNamedAttr("box", b.getI64ArrayAttr(box))};
      if (swizzle != 128)
        fields.push_back(
            b.getNamedAttr("swizzle", b.getI64IntegerAttr(swizzle)));
      tm->setAttr("kb.tensor_map", b.getDictionaryAttr(fields));
      kargTypes.push_back(tm.getType());
      kargs.push_back(tm);
      return success();
    };
    if (config.getStore() == StoreKind::tma &&
        config.getCopy() != CopyKind::tma)
      return op.emitOpError()
             << "store = \"tma\" needs copy = \"tma\" (a wgmma_tf32 matmul)";
    if (config.getCopy() == CopyKind::tma) {
      MatmulOp mm = getKernelMatmul(&op);
      if (!mm || config.getBlock().size() != 3)
        return op.emitOpError() << "copy = \"tma\" needs a tiled matmul";
      auto fusion = dyn_cast<FusionOp>(op);
      auto outer = [&](Value v) -> Value {
        if (auto ba = dyn_cast<BlockArgument>(v); ba && fusion)
          return fusion.getInputs()[ba.getArgNumber()];
        return v;
      };
      int64_t k =
          cast<RankedTensorType>(mm.getLhs().getType()).getShape().back();
      bool rowB = !mm.getTransposeB();
      for (auto [v, boxRows, isB] :
           {std::tuple(mm.getLhs(), config.getBlock()[0], false),
            std::tuple(mm.getRhs(), config.getBlock()[1], true)}) {
        auto shape = cast<RankedTensorType>(v.getType()).getShape();
        SmallVector<int64_t> dims(shape), box(shape.size(), 1);
        box[box.size() - 2] = boxRows;
        box.back() = config.getBlock()[2];
        int64_t swizzle = 128;
        if (isB && rowB) {
          // A row-major B: boxes of BK rows (k) x 32 columns (64 of 16
          // bits), one 128-byte swizzled row each (MatmulWgmma.cpp,
          // "Row-major B"); 16 bits with BN not a multiple of 64: 32 or 16
          // columns, 64- or 32-byte swizzled (wgmmaMnBoxCols).
          int64_t bits = cast<ShapedType>(v.getType())
                             .getElementType()
                             .getIntOrFloatBitWidth();
          box[box.size() - 2] = config.getBlock()[2];
          box.back() = 128 * 8 / bits;
          if (int64_t cols = wgmmaMnBoxCols(boxRows); bits == 16 && cols &&
                                         isWgmma16(config.getMma())) {
            box.back() = cols;
            swizzle = cols * 2;
          }
        } else {
          dims.back() = k; // B^T's rows may be padded past K
          // cluster = C: each block of the cluster copies a C-th of B^T's
          // tile and multicasts it to all C.
          if (isB && config.getCluster() > 1)
            box[box.size() - 2] = boxRows / config.getCluster();
        }
        if (failed(addTensorMap(names.lookup(outer(v)), dims, box, swizzle)))
          return failure();
      }
      // store = "tma": a third map, C's, which the consumer warpgroups store
      // their 64 x 32 boxes (64 x 64 of a 16-bit C: 128-byte rows) through (MatmulWgmma.cpp); the output buffer
      // is `out`, whatever its role.
      if (config.getStore() == StoreKind::tma) {
        auto shape = cast<ShapedType>(result.getType()).getShape();
        SmallVector<int64_t> dims(shape), box(shape.size(), 1);
        box[box.size() - 2] = kWgmmaStoreBoxRows;
        box.back() = wgmmaStoreBoxCols(
            cast<ShapedType>(result.getType()).getElementTypeBitWidth() / 8);
        if (failed(addTensorMap(names.lookup(result), dims, box)))
          return failure();
      }
    }
    // The wgmma attention kernel (AttentionWgmma.cpp) copies q's tile of
    // BQ rows and k's and v's of BKV rows by TMA, in boxes of 64 columns
    // (128 bytes, 128-byte swizzled): three maps, q's, k's, v's.
    if (auto attn = dyn_cast<AttentionOp>(op); attn && isAttentionWgmma(config)) {
      if (config.getBlock().size() != 2)
        return op.emitOpError() << "needs block = [BQ, BKV] in its #kb.config";
      for (auto [v, rows] : {std::pair(attn.getQ(), config.getBlock()[0]),
                             std::pair(attn.getK(), config.getBlock()[1]),
                             std::pair(attn.getV(), config.getBlock()[1])}) {
        auto shape = cast<RankedTensorType>(v.getType()).getShape();
        SmallVector<int64_t> dims(shape), box(shape.size(), 1);
        // bthd ([B, S, H, D]): a box of `rows` sequence positions of one
        // head, [1, rows, 1, 64]; the rows lie H x D elements apart.
        box[attn.getSeqAxis()] = rows;
        box.back() = 64;
        if (failed(addTensorMap(names.lookup(v), dims, box)))
          return failure();
      }
    }
    // reduce = "stream" (stream-K, MatmulWgmma.cpp): the blocks that split
    // a tile store their partials in a workspace and announce them by
    // flags there (streamKWorkspaceWords; the flags zero before each
    // launch, left zero after it), passed just before the output.
    if (config && config.getReduce() == ReduceKind::stream) {
      MatmulOp streamMm = getKernelMatmul(&op);
      if (config.getGrid() <= 0 || !streamMm || config.getBlock().size() != 3)
        return op.emitOpError()
               << "#kb.config reduce = \"stream\" needs a tiled matmul with "
                  "a persistent grid: run kb-tile first";
      auto c = streamMm.getResult().getType().getShape();
      int64_t k = streamMm.getLhs().getType().getShape().back();
      int64_t bm = config.getBlock()[0], bn = config.getBlock()[1];
      int64_t tiles = llvm::divideCeil(c[c.size() - 2], bm) *
                      llvm::divideCeil(c.back(), bn) *
                      (c.size() == 3 ? c[0] : 1);
      addWorkspace(streamKWorkspaceWords(
          tiles, llvm::divideCeil(k, config.getBlock()[2]), config.getGrid(),
          bm, bn));
    }
    unsigned numReadOnly = op.getNumOperands();
    for (Value buf : outs) {
      kargTypes.push_back(buf.getType());
      kargs.push_back(buf);
    }
    OpBuilder gb = OpBuilder::atBlockBegin(gmod.getBody());
    auto kfunc = gpu::GPUFuncOp::create(gb, loc, kname,
                                        gb.getFunctionType(kargTypes, {}));
    kfunc->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), gb.getUnitAttr());
    // Every kernel writes only its last argument (kb.attention with lse its
    // last two), a buffer of its own (a
    // fresh allocation or a function result, never an input), and its
    // workspace if it has one, and only reads the others (which may be one
    // buffer passed twice: reads only).
    // Saying so lets LLVM keep an epilogue's loads of bias values ahead of
    // the output stores instead of reloading them after each store (the
    // fused wgmma epilogue did: one dependent load per pair of outputs).
    // (Not a stream-K workspace: its partials are loaded after an inline
    // asm acquire that LLVM must not move them above.)
    bool streamWs = config && config.getReduce() == ReduceKind::stream;
    for (unsigned i = 0; i + 1 < kargTypes.size(); ++i) {
      if (streamWs && i + 2 == kargTypes.size())
        continue;
      kfunc.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                       gb.getUnitAttr());
      if (i < numReadOnly)
        kfunc.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(),
                         gb.getUnitAttr());
    }
    // Not C of a split summed in a cluster (reduce = "cluster"): the other
    // block of the cluster writes the partials that this one loads from C
    // after the cluster barrier, and with noalias LLVM may take the
    // barrier for a call that cannot touch C and move the loads above it.
    if (!(config && config.getReduce() == ReduceKind::cluster))
      kfunc.setArgAttr(kargTypes.size() - 1,
                       LLVM::LLVMDialect::getNoAliasAttrName(),
                       gb.getUnitAttr());

    if (std::string why = halfUnsupported(&op, config); !why.empty())
      return op.emitOpError() << why;
    KernelRequest req{&op, config, kfunc};
    LaunchInfo info;
    LogicalResult built = failure();
    switch (*getKernelKind(&op)) {
    case KernelKind::Elementwise:
      built = buildElementwiseKernel(req, info);
      break;
    case KernelKind::Softmax:
      built = buildSoftmaxKernel(req, info);
      break;
    case KernelKind::Matmul:
      built = buildMatmulKernel(req, info);
      break;
    case KernelKind::Transpose:
      built = buildTransposeKernel(req, info);
      break;
    case KernelKind::Pad:
      built = buildPadKernel(req, info);
      break;
    case KernelKind::RowReduce:
      built = buildRowReduceKernel(req, info);
      break;
    case KernelKind::Attention:
      built = buildAttentionKernel(req, info);
      break;
    }
    if (failed(built))
      return failure();
    // CUDA's launch limits, checked here for every kind of kernel: grid x
    // below 2^31, y and z below 2^16, at most 1024 threads a block, and
    // dynamic shared memory that fits the launch's 32-bit field.
    if (info.grid[0] < 1 ||
        info.grid[0] > std::numeric_limits<int32_t>::max() ||
        info.grid[1] < 1 || info.grid[1] > 65535 || info.grid[2] < 1 ||
        info.grid[2] > 65535)
      return op.emitOpError() << "needs a grid of " << info.grid[0] << " x "
                              << info.grid[1] << " x " << info.grid[2]
                              << " blocks; CUDA launches at most 2147483647 x "
                                 "65535 x 65535";
    if (info.block[0] < 1 || info.block[1] < 1 || info.block[2] < 1 ||
        info.block[0] * info.block[1] * info.block[2] > 1024)
      return op.emitOpError()
             << "needs blocks of " << info.block[0] << " x " << info.block[1]
             << " x " << info.block[2] << " threads; CUDA launches 1 to 1024";
    if (info.dynamicSharedBytes < 0 ||
        info.dynamicSharedBytes > std::numeric_limits<int32_t>::max())
      return op.emitOpError() << "needs " << info.dynamicSharedBytes
                              << " bytes of dynamic shared memory";
    // The NVPTX backend demotes MLIR's dynamic-shared-memory global to a
    // one-byte static .shared variable: static buffers placed after it would
    // overlap the dynamic region. A kernel uses one kind or the other.
    bool dynamicShared = false;
    kfunc.walk([&](gpu::DynamicSharedMemoryOp) { dynamicShared = true; });
    if (dynamicShared && kfunc.getNumWorkgroupAttributions() > 0)
      return op.emitOpError()
             << "internal error: kernel " << kfunc.getName()
             << " mixes dynamic and static shared memory, which NVPTX lays out "
                "overlapping";
    // 32-bit index arithmetic (half the integer work of 64-bit) whenever
    // every buffer of the kernel has fewer than 2^31 elements. Not for
    // kernels with nvgpu ops: convert-nvgpu-to-nvvm assumes 64-bit indices.
    // Nor for kernels that take the address of a global buffer as an index
    // (split_global's workspace, read with LLVM atomics): a 32-bit index
    // would cut the pointer (CUDA_ERROR_ILLEGAL_ADDRESS, 2026-11-30 run 29).
    bool small = llvm::all_of(kargTypes, [](Type t) {
      return cast<MemRefType>(t).getNumElements() <
             std::numeric_limits<int32_t>::max();
    });
    bool needs64 = false;
    kfunc.walk([&](Operation *inner) {
      needs64 |= isa<nvgpu::NVGPUDialect>(inner->getDialect());
      if (auto p = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(inner))
        needs64 |= !isa_and_nonnull<gpu::AddressSpaceAttr>(
            p.getSource().getType().getMemorySpace());
    });
    if (small && !needs64)
      gmod->setAttr(
          DLTIDialect::kDataLayoutAttrName,
          DataLayoutSpecAttr::get(
              ctx, {DataLayoutEntryAttr::get(IndexType::get(ctx),
                                             b.getI32IntegerAttr(32))}));
    OpBuilder rb = OpBuilder::atBlockEnd(&kfunc.getBody().front());
    gpu::ReturnOp::create(rb, loc);
    kfunc.setKnownBlockSizeAttr(
        rb.getDenseI32ArrayAttr({(int32_t)info.block[0], (int32_t)info.block[1],
                                 (int32_t)info.block[2]}));

    // The launch, and what it computes.
    auto dim3 = [&](std::array<int64_t, 3> d) {
      return gpu::KernelDim3{cidx(b, loc, d[0]), cidx(b, loc, d[1]),
                             cidx(b, loc, d[2])};
    };
    Value smem;
    if (info.dynamicSharedBytes)
      smem = arith::ConstantOp::create(
          b, loc,
          b.getI32IntegerAttr(static_cast<int32_t>(info.dynamicSharedBytes)));
    std::optional<gpu::KernelDim3> cluster;
    if (info.cluster != std::array<int64_t, 3>{1, 1, 1})
      cluster = dim3(info.cluster);
    auto launch = gpu::LaunchFuncOp::create(b, loc, kfunc, dim3(info.grid),
                                            dim3(info.block), smem, kargs,
                                            /*asyncTokenType=*/nullptr,
                                            /*asyncDependencies=*/{}, cluster);
    SmallVector<Attribute> records;
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      Block &fb = fusion.getBody().front();
      for (auto [arg, in] : llvm::zip(fb.getArguments(), fusion.getInputs()))
        names[arg] = names.lookup(in);
      unsigned inner = 0;
      for (Operation &fop : fb.without_terminator()) {
        Value r = fop.getResult(0);
        names[r] = fb.getTerminator()->getOperand(0) == r
                       ? names.lookup(result)
                       : uniqueName(kname + ".v" + std::to_string(inner++));
        records.push_back(opRecord(&fop, names));
      }
    } else {
      records.push_back(opRecord(&op, names));
    }
    launch->setAttr("kb.ops", b.getArrayAttr(records));
    // A persistent grid larger than the output tiles launches one block a
    // tile (MatmulWgmma.cpp): the config the bundle records says so, as
    // kb-run checks a persistent grid against the launch.
    if (config && config.getGrid() > info.grid[0] && info.grid[1] == 1 &&
        info.grid[2] == 1 && config.getReduce() != ReduceKind::stream) {
      ConfigFields f = ConfigFields::from(config);
      f.grid = info.grid[0];
      config = f.get(ctx);
    }
    launch->setAttr("kb.config", config);
  }
  func::ReturnOp::create(b, ret.getLoc());
  newFunc->setAttr("kb.entry", b.getUnitAttr());
  func.erase();
  return success();
}

void LowerToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(&getContext()));
  SmallVector<func::FuncOp> funcs;
  // Functions with kb ops are lowered; others (helpers, empty ones) are left.
  // A kb op anywhere but at the top level of a function's only block would
  // be left out of the bundle: refused, never lowered in part.
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal())
      continue;
    Operation *first = nullptr;
    f.walk([&](Operation *op) {
      if (isa_and_nonnull<KBDialect>(op->getDialect()) &&
          !op->getParentOfType<FusionOp>() &&
          !isa<FusionOp>(op->getParentOp())) {
        first = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!first)
      continue;
    if (!f.getBody().hasOneBlock()) {
      f.emitOpError() << "has " << f.getBody().getBlocks().size()
                      << " blocks; kb-lower-to-gpu lowers a function of one "
                         "block (no branches), so its kb ops would be lowered "
                         "in part";
      return signalPassFailure();
    }
    bool nested = false;
    f.walk([&](Operation *op) {
      if (nested || !isa_and_nonnull<KBDialect>(op->getDialect()) ||
          op->getParentOp() == f || isa<FusionOp>(op->getParentOp()))
        return;
      op->emitOpError() << "is inside '" << op->getParentOp()->getName()
                        << "'; kb lowers kb ops at the top level of a "
                           "function's body only";
      nested = true;
    });
    if (nested)
      return signalPassFailure();
    if (!isa<func::ReturnOp>(f.getBody().front().getTerminator())) {
      f.emitOpError() << "must end in func.return";
      return signalPassFailure();
    }
    funcs.push_back(f);
  }
  for (func::FuncOp f : funcs)
    if (failed(lowerFunction(f)))
      return signalPassFailure();

  // Block reductions use gpu.subgroup_reduce; NVVM needs them as shuffles.
  RewritePatternSet patterns(&getContext());
  populateGpuLowerSubgroupReduceToShufflePatterns(patterns,
                                                  /*subgroupSize=*/32);
  FrozenRewritePatternSet frozen(std::move(patterns));
  for (auto gmod : module.getOps<gpu::GPUModuleOp>())
    if (failed(applyPatternsGreedily(gmod, frozen)))
      return signalPassFailure();
}

} // namespace
