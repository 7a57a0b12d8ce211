//===- KBOps.cpp - kb op verifiers, folders and builders ------------------===//
//
// Shape and attribute checks for every kb op. Each message names what was
// expected and what was found, so a wrong program is explained at its
// location instead of failing later in the lowering or on the GPU.
//
//===----------------------------------------------------------------------===//

#include "kb/Dialect/KB/IR/KBDialect.h"
#include "KBOpsInternal.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kb;
using mlir::kb::detail::shapeStr;
using mlir::kb::detail::verifyStaticShapes;

// `precision(tf32)`, `approx(tanh)`: the enum's keyword alone inside the
// op's parentheses (the enum attribute's own printer would put a space in
// front of it). An unknown keyword is an error that lists the known ones.
template <typename AttrT>
static ParseResult parseKeywordOf(OpAsmParser &p, AttrT &attr, StringRef what,
                                  unsigned maxValue) {
  using EnumT = decltype(std::declval<AttrT>().getValue());
  StringRef word;
  SMLoc at = p.getCurrentLocation();
  if (p.parseKeyword(&word))
    return failure();
  if (std::optional<EnumT> v = symbolizeEnum<EnumT>(word)) {
    attr = AttrT::get(p.getContext(), *v);
    return success();
  }
  std::string known;
  for (unsigned i = 0; i <= maxValue; ++i)
    known += (i ? ", " : "") + stringifyEnum(static_cast<EnumT>(i)).str();
  return p.emitError(at) << "unknown " << what << " '" << word
                         << "' (known: " << known << ")";
}
template <typename AttrT>
static void printEnumKeyword(OpAsmPrinter &p, Operation *, AttrT attr) {
  p << stringifyEnum(attr.getValue());
}
static ParseResult parseEnumKeyword(OpAsmParser &p, PrecisionAttr &attr) {
  return parseKeywordOf(p, attr, "precision", getMaxEnumValForPrecision());
}
/// A matmul's `precision(...)`, left out for 16-bit operands (precision
/// native, the only one they have): `kb.matmul %a, %b transpose_b : ...`.
static ParseResult parsePrecision(OpAsmParser &p, PrecisionAttr &attr) {
  if (failed(p.parseOptionalKeyword("precision"))) {
    attr = PrecisionAttr::get(p.getContext(), Precision::native);
    return success();
  }
  if (p.parseLParen() || parseEnumKeyword(p, attr) || p.parseRParen())
    return failure();
  return success();
}
static void printPrecision(OpAsmPrinter &p, Operation *, PrecisionAttr attr) {
  if (attr.getValue() != Precision::native)
    p << " precision(" << stringifyEnum(attr.getValue()) << ")";
}
static ParseResult parseEnumKeyword(OpAsmParser &p, GeluApproxAttr &attr) {
  return parseKeywordOf(p, attr, "GELU approximation",
                        getMaxEnumValForGeluApprox());
}

static ParseResult parseEnumKeyword(OpAsmParser &p, GateAttr &attr) {
  return parseKeywordOf(p, attr, "gate", getMaxEnumValForGate());
}

static ParseResult parseEnumKeyword(OpAsmParser &p, ReductionKindAttr &attr) {
  return parseKeywordOf(p, attr, "reduction", getMaxEnumValForReductionKind());
}

#define GET_OP_CLASSES
#include "kb/Dialect/KB/IR/KBOps.cpp.inc"

/// The #kb.config fields that a kernel of the op's kind reads; any other field
/// set on such an op is an error (it would be ignored silently).
static LogicalResult verifyConfigApplies(Operation *op) {
  auto config = op->getAttrOfType<ConfigAttr>("config");
  if (!config)
    return success();
  std::optional<KernelKind> kind = getKernelKind(op);
  if (!kind)
    return success();
  // block, threads: every kind.
  bool matmul = *kind == KernelKind::Matmul;
  bool softmax = *kind == KernelKind::Softmax;
  bool transpose = *kind == KernelKind::Transpose;
  bool pad = *kind == KernelKind::Pad;
  bool row = *kind == KernelKind::RowReduce;
  bool attn = *kind == KernelKind::Attention;
  struct Field {
    StringRef name;
    bool set, applies;
  } fields[] = {
      {"warp", !config.getWarp().empty(), matmul},
      {"thread", !config.getThread().empty(), matmul},
      {"vector", config.getVector() != 0,
       !matmul && !transpose && !pad && !attn},
      {"stages", config.getStages() != 0, matmul || softmax || attn},
      {"pad", !config.getPad().empty(), matmul},
      {"mma", config.getMma().has_value(), matmul || attn},
      {"copy", config.getCopy().has_value(), matmul},
      {"strategy", config.getStrategy().has_value(), softmax || row},
      // A matmul's: wgmma_tf32 with TMA, two blocks sharing B^T's tile
      // (kb-lower-to-gpu checks the rest); a row kernel's: strategy
      // "cluster" (kb-select-config checks it).
      {"cluster", config.getCluster() != 0, softmax || matmul || row},
      {"grid", config.getGrid() != 0, softmax || matmul || row},
      {"raster", config.getRaster() != 0, matmul},
      {"split", config.getSplit() != 0, matmul},
      {"store", config.getStore().has_value(), matmul},
      {"reduce", config.getReduce().has_value(), matmul},
      // The 16-bit wgmma kernel's (kb-lower-to-gpu checks the unit).
      {"operands", config.getOperands().has_value(), matmul},
      // The wgmma attention kernel's (kb-select-config checks the unit).
      {"schedule", config.getSchedule().has_value(), attn},
  };
  StringRef kindName = matmul      ? "a matmul"
                       : softmax   ? "a softmax"
                       : transpose ? "a transpose"
                       : pad       ? "a pad"
                       : row       ? "a row reduction"
                       : attn      ? "an attention"
                                   : "an elementwise";
  for (const Field &f : fields)
    if (f.set && !f.applies)
      return op->emitOpError()
             << "#kb.config field '" << f.name << "' does not apply to "
             << kindName << " kernel (kb would ignore it)";
  return success();
}

/// Every kb tensor must have a static shape, rank of at least one, and at
/// least one and at most kMaxTensorElements elements; a set config must
/// apply to the op.
LogicalResult mlir::kb::detail::verifyStaticShapes(Operation *op) {
  auto check = [&](Type t, StringRef what, unsigned i) -> LogicalResult {
    if (!isa<RankedTensorType>(t))
      return success(); // element/rank constraints are ODS's job
    std::string why = unsupportedTensorReason(t, /*f32=*/false);
    if (!why.empty())
      return op->emitOpError()
             << what << " #" << i << " " << why << ", got " << t;
    return success();
  };
  for (auto [i, t] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(t, "operand", i)))
      return failure();
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(t, "result", i)))
      return failure();
  return verifyConfigApplies(op);
}

/// Operand `i`'s and the result's element types must be one (transpose,
/// pad: they move elements, they do not convert them).
static LogicalResult verifySameElementType(Operation *op, Type in, Type res) {
  Type a = cast<ShapedType>(in).getElementType();
  Type r = cast<ShapedType>(res).getElementType();
  if (a != r)
    return op->emitOpError()
           << "expects a result of the input's element type " << a << ", got "
           << r << " (kb.convert changes element types)";
  return success();
}

std::string mlir::kb::detail::shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

/// kb.transpose's and kb.pad's input: a matrix, or a batch of them.
static LogicalResult verifyMatrixOrBatch(Operation *op, ArrayRef<int64_t> in) {
  if (in.size() != 2 && in.size() != 3)
    return op->emitOpError()
           << "expects an input of rank 2 or 3, got rank " << in.size();
  return success();
}

LogicalResult TransposeOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType().getShape();
  auto res = getResult().getType().getShape();
  if (failed(verifyMatrixOrBatch(*this, in)) ||
      failed(verifySameElementType(*this, getInput().getType(),
                                   getResult().getType())))
    return failure();
  SmallVector<int64_t> expected(in.begin(), in.end());
  std::swap(expected[in.size() - 2], expected[in.size() - 1]);
  std::optional<int64_t> pad = getPad();
  if (pad && (*pad < 1 || *pad > 1024))
    return emitOpError() << "pad must be between 1 and 1024, got " << *pad;
  if (pad)
    expected.back() = llvm::alignTo(expected.back(), *pad);
  if (ArrayRef<int64_t>(expected) != res)
    return emitOpError() << "expects result shape " << shapeStr(expected)
                         << (pad ? " (the input's last two axes swapped, rows "
                                   "padded to a multiple of " +
                                       std::to_string(*pad) + ")"
                                 : std::string(
                                       " (the input's last two axes swapped)"))
                         << ", got " << shapeStr(res);
  return success();
}

LogicalResult PadOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType().getShape();
  auto res = getResult().getType().getShape();
  if (failed(verifyMatrixOrBatch(*this, in)) ||
      failed(verifySameElementType(*this, getInput().getType(),
                                   getResult().getType())))
    return failure();
  int64_t multiple = getMultiple();
  if (multiple < 2 || multiple > 1024)
    return emitOpError() << "multiple must be between 2 and 1024, got "
                         << multiple;
  SmallVector<int64_t> expected(in.begin(), in.end());
  expected.back() = llvm::alignTo(expected.back(), multiple);
  if (ArrayRef<int64_t>(expected) != res)
    return emitOpError() << "expects result shape " << shapeStr(expected)
                         << " (the last axis rounded up to a multiple of "
                         << multiple << "), got " << shapeStr(res);
  if (in.back() % multiple == 0)
    return emitOpError() << "pads nothing: the last axis (" << in.back()
                         << ") is already a multiple of " << multiple;
  return success();
}

LogicalResult MatmulOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto lhs = getLhs().getType().getShape();
  auto rhs = getRhs().getType().getShape();
  auto res = getResult().getType().getShape();
  // Element types: f32 operands with precision ieee / tf32 / tf32x3 and an
  // f32 result; 16-bit operands of one type with precision native and a
  // result of f32 or their type.
  Type ta = getLhs().getType().getElementType();
  Type tb = getRhs().getType().getElementType();
  Type tc = getResult().getType().getElementType();
  if (ta != tb)
    return emitOpError() << "expects lhs and rhs of one element type, got "
                         << ta << " and " << tb
                         << " (kb.convert one of them)";
  bool half = !ta.isF32();
  if (half && getPrecision() != Precision::native)
    return emitOpError() << "a " << ta << " matmul has no precision choice "
                         << "(tensor cores in " << ta
                         << " with f32 accumulation): leave out precision("
                         << stringifyEnum(getPrecision()) << ")";
  if (!half && getPrecision() == Precision::native)
    return emitOpError() << "an f32 matmul needs precision(ieee), "
                            "precision(tf32) or precision(tf32x3)";
  if (!tc.isF32() && tc != ta) {
    InFlightDiagnostic d = emitOpError() << "expects a result of element "
                                            "type f32";
    if (half)
      d << " or " << ta;
    return d << ", got " << tc;
  }
  if (lhs.size() != 2 && lhs.size() != 3)
    return emitOpError()
           << "expects lhs of rank 2 (MxK) or 3 (BxMxK), got rank "
           << lhs.size();
  if (rhs.size() != lhs.size())
    return emitOpError() << "expects rhs of the same rank as lhs ("
                         << lhs.size() << "), got rank " << rhs.size();
  size_t r = lhs.size();
  int64_t m = lhs[r - 2], k = lhs[r - 1];
  int64_t k2 = getTransposeB() ? rhs[r - 1] : rhs[r - 2];
  int64_t n = getTransposeB() ? rhs[r - 2] : rhs[r - 1];
  if (getPaddedB() && !getTransposeB())
    return emitOpError()
           << "padded_b needs transpose_b (it pads the rows of B^T)";
  if (getPaddedB() && k2 < k)
    return emitOpError() << "padded_b: the rows of rhs " << shapeStr(rhs)
                         << " must be at least K = " << k << " long";
  if (k != k2 && !getPaddedB())
    return emitOpError() << "inner dimensions must match: lhs is "
                         << shapeStr(lhs) << " (K = " << k << "), rhs is "
                         << shapeStr(rhs) << " (K = " << k2 << ")";
  if (r == 3 && lhs[0] != rhs[0])
    return emitOpError() << "batch dimensions must match: lhs has " << lhs[0]
                         << ", rhs has " << rhs[0];
  SmallVector<int64_t> expected;
  if (r == 3)
    expected.push_back(lhs[0]);
  if (std::optional<int64_t> chunk = getSplitChunk()) {
    if (r != 2)
      return emitOpError() << "split_chunk: a batched matmul is not split";
    if (res.size() != 3)
      return emitOpError() << "split_chunk: expects a result of rank 3 "
                              "(splits x M x N), got rank "
                           << res.size();
    int64_t splits = res[0];
    if (*chunk < 1 || splits < 2 || (splits - 1) * *chunk >= k ||
        splits * *chunk < k)
      return emitOpError() << "split_chunk = " << *chunk << " and " << splits
                           << " splits must cover K = " << k
                           << " with every chunk non-empty";
    expected.push_back(splits);
  }
  expected.append({m, n});
  if (ArrayRef<int64_t>(expected) != res)
    return emitOpError() << "expects result shape " << shapeStr(expected)
                         << ", got " << shapeStr(res);
  return success();
}

//===----------------------------------------------------------------------===//
// GatedMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult GatedMatmulOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto lhsType = getLhs().getType();
  auto b1Type = getRhs1().getType(), b2Type = getRhs2().getType();
  // One kernel reads both weights through one shared-memory tile (the B
  // tile's two halves): they must agree in shape and element type.
  if (b1Type != b2Type)
    return emitOpError() << "expects rhs1 and rhs2 of one type, got "
                         << b1Type << " and " << b2Type;
  if (!getTransposeB())
    return emitOpError() << "expects transpose_b: rhs1 and rhs2 are NxK (as "
                            "F.linear's weights)";
  Type ta = lhsType.getElementType(), tb = b1Type.getElementType();
  Type tc = getResult().getType().getElementType();
  if (ta != tb)
    return emitOpError() << "expects lhs and rhs of one element type, got "
                         << ta << " and " << tb;
  bool half = !ta.isF32();
  if (half && getPrecision() != Precision::native)
    return emitOpError() << "a " << ta << " gated matmul has no precision "
                         << "choice: leave out precision("
                         << stringifyEnum(getPrecision()) << ")";
  if (!half && getPrecision() == Precision::native)
    return emitOpError() << "an f32 gated matmul needs precision(ieee), "
                            "precision(tf32) or precision(tf32x3)";
  if (!tc.isF32() && tc != ta)
    return emitOpError() << "expects a result of element type f32"
                         << (half ? " or the operands' type" : "") << ", got "
                         << tc;
  auto lhs = lhsType.getShape(), rhs = b1Type.getShape();
  if (lhs.size() != 2 || rhs.size() != 2)
    return emitOpError() << "expects lhs (MxK) and rhs1, rhs2 (NxK) of rank "
                            "2, got ranks "
                         << lhs.size() << " and " << rhs.size();
  if (lhs[1] != rhs[1])
    return emitOpError() << "inner dimensions must match: lhs is "
                         << shapeStr(lhs) << " (K = " << lhs[1]
                         << "), rhs1 and rhs2 are " << shapeStr(rhs)
                         << " (K = " << rhs[1] << ")";
  SmallVector<int64_t> expected{lhs[0], rhs[0]};
  if (ArrayRef<int64_t>(expected) != getResult().getType().getShape())
    return emitOpError() << "expects result shape " << shapeStr(expected)
                         << ", got "
                         << shapeStr(getResult().getType().getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp and the elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() { return verifyStaticShapes(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifyStaticShapes(*this); }

#define KB_STATIC_VERIFIER(OP)                                                 \
  LogicalResult OP::verify() { return verifyStaticShapes(*this); }
KB_STATIC_VERIFIER(AddOp)
KB_STATIC_VERIFIER(SubOp)
KB_STATIC_VERIFIER(MulOp)
KB_STATIC_VERIFIER(DivOp)
KB_STATIC_VERIFIER(ReluOp)
KB_STATIC_VERIFIER(TanhOp)
KB_STATIC_VERIFIER(SigmoidOp)
KB_STATIC_VERIFIER(ExpOp)
KB_STATIC_VERIFIER(SiluOp)
KB_STATIC_VERIFIER(GeluOp)
#undef KB_STATIC_VERIFIER

LogicalResult ConvertOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType(), res = getResult().getType();
  if (in.getShape() != res.getShape())
    return emitOpError() << "expects a result of the input's shape "
                         << shapeStr(in.getShape()) << ", got "
                         << shapeStr(res.getShape());
  if (in.getElementType() == res.getElementType())
    return emitOpError() << "converts nothing: input and result are both "
                         << in.getElementType();
  return success();
}

LogicalResult SplitSumOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType().getShape();
  auto res = getResult().getType().getShape();
  if (in.size() < 2 || in.drop_front() != res || in[0] < 1)
    return emitOpError() << "expects an input of shape S x " << shapeStr(res)
                         << " (the partials of the result), got "
                         << shapeStr(in);
  if (!getInput().getType().getElementType().isF32())
    return emitOpError() << "expects f32 partials (a split matmul accumulates "
                            "in f32), got "
                         << getInput().getType().getElementType();
  return success();
}

LogicalResult ScaleOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (!std::isfinite(getFactor().convertToFloat()))
    return emitOpError() << "expects a finite factor, got "
                         << getFactor().convertToFloat();
  return success();
}

/// The constant attribute of an elementwise op (add_scalar's value, pow's
/// exponent, leaky_relu's slope) must be finite.
template <typename OpT>
static LogicalResult verifyFiniteConstant(OpT op, FloatAttr attr,
                                          StringRef what) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  if (!std::isfinite(attr.getValueAsDouble()))
    return op.emitOpError() << "expects a finite " << what << ", got "
                            << attr.getValueAsDouble();
  return success();
}

LogicalResult AddScalarOp::verify() {
  return verifyFiniteConstant(*this, getValueAttr(), "value");
}

LogicalResult PowOp::verify() {
  return verifyFiniteConstant(*this, getExponentAttr(), "exponent");
}

LogicalResult LeakyReluOp::verify() {
  return verifyFiniteConstant(*this, getSlopeAttr(), "slope");
}

LogicalResult BiasAddOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType();
  auto bias = getBias().getType();
  if (bias.getRank() != 1)
    return emitOpError() << "expects a 1-D bias, got rank " << bias.getRank();
  if (bias.getElementType() != in.getElementType())
    return emitOpError() << "expects a bias of the input's element type "
                         << in.getElementType() << ", got "
                         << bias.getElementType();
  if (bias.getDimSize(0) != in.getShape().back())
    return emitOpError() << "expects bias length " << in.getShape().back()
                         << " (the input's last dimension), got "
                         << bias.getDimSize(0);
  if (getResult().getType() != in)
    return emitOpError() << "expects result type " << in << ", got "
                         << getResult().getType();
  return success();
}

LogicalResult DropoutOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  float p = getP().convertToFloat();
  if (!(p >= 0.0f && p < 1.0f))
    return emitOpError() << "expects p in [0, 1), got " << p;
  return success();
}

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().convertToFloat() == 1.0f)
    return getInput();
  return {};
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getP().convertToFloat() == 0.0f)
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// RotaryOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType();
  auto cosT = getCos().getType(), sinT = getSin().getType();
  if (in.getRank() < 2)
    return emitOpError() << "expects an input of rank 2 or more (rows of "
                            "heads x head_dim), got rank "
                         << in.getRank();
  if (cosT.getRank() != 2)
    return emitOpError() << "expects cos and sin tables of rank 2 (positions "
                            "x head_dim / 2), got rank "
                         << cosT.getRank();
  if (sinT != cosT)
    return emitOpError() << "expects sin of cos's type " << cosT << ", got "
                         << sinT;
  Type e = cosT.getElementType();
  if (!e.isF32() && e != in.getElementType())
    return emitOpError() << "expects tables of f32 or the input's element "
                            "type "
                         << in.getElementType() << ", got " << e;
  int64_t headDim = getHeadDim(), c = in.getShape().back();
  if (c % headDim)
    return emitOpError() << "expects the last dimension (" << c
                         << ") to be a multiple of head_dim = 2 x the tables' "
                            "columns ("
                         << headDim << ")";
  if (getResult().getType() != in)
    return emitOpError() << "expects result type " << in << ", got "
                         << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// FusionOp
//===----------------------------------------------------------------------===//

void FusionOp::build(OpBuilder &builder, OperationState &state,
                     TypeRange resultTypes, ValueRange inputs) {
  state.addOperands(inputs);
  state.addTypes(resultTypes);
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value v : inputs)
    block->addArgument(v.getType(), v.getLoc());
}

LogicalResult FusionOp::verify() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "expects " << getInputs().size()
                         << " block arguments (one per input), got "
                         << block.getNumArguments();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(block.getArgumentTypes(), getInputs()))) {
    auto [argType, input] = pair;
    if (argType != input.getType())
      return emitOpError() << "block argument #" << i << " has type " << argType
                           << " but input #" << i << " has type "
                           << input.getType();
  }
  // The implicit-terminator trait builds kb.yield only where the body has
  // no terminator; a body written in generic form may end in another op
  // (kb-compile's fuzzer: an unknown kb op there reached a cast that
  // asserts).
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "expects its body to end in kb.yield, got '"
                         << block.getTerminator()->getName() << "'";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "expects kb.yield to return the fusion's result "
                            "types";
  if (getNumResults() == 0)
    return emitOpError() << "expects at least one result";
  // One kernel writes one output buffer: the lowering has no second one.
  if (getNumResults() > 1)
    return emitOpError() << "has " << getNumResults()
                         << " results; kb lowers a fusion to one kernel with "
                            "one output, so it needs exactly one result";
  for (Type t : getResultTypes())
    if (std::string why = unsupportedTensorReason(t, /*f32=*/false);
        !why.empty())
      return emitOpError() << "result " << why << ", got " << t;
  // The kernel computes the yielded value from the body's ops: a block
  // argument yielded (a copy of an input) or an op whose result reaches no
  // kb.yield would be computed into nothing.
  if (isa<BlockArgument>(yield.getValues()[0]))
    return emitOpError()
           << "yields block argument #"
           << cast<BlockArgument>(yield.getValues()[0]).getArgNumber()
           << " (an input): kb.yield must return a value "
              "computed in the body";
  int64_t matmuls = 0, softmaxes = 0, norms = 0;
  for (Operation &op : block.without_terminator()) {
    if (op.getDialect() != (*this)->getDialect() ||
        isa<FusionOp, ReduceOp, AttentionOp>(op))
      return op.emitOpError()
             << "is not allowed in kb.fusion: its body holds kb elementwise "
                "ops and at most one kb.matmul, kb.softmax, kb.layer_norm or "
                "kb.rms_norm";
    matmuls += isa<MatmulOp>(op);
    softmaxes += isa<SoftmaxOp, LogSoftmaxOp>(op);
    norms += isa<LayerNormOp, RmsNormOp>(op);
  }
  if (matmuls + softmaxes + norms > 1)
    return emitOpError() << "holds " << matmuls << " matmul(s), " << softmaxes
                         << " softmax(es) and " << norms
                         << " norm(s); at most one of them is allowed";
  // kb.rotary reads its pair's other element: the matmul epilogue (column
  // pairs in one thread) and the elementwise kernel (whole pairs a vector)
  // hold both; a row kernel's prologue or epilogue does not.
  if (softmaxes + norms)
    for (Operation &op : block.without_terminator())
      if (isa<RotaryOp>(op))
        return op.emitOpError()
               << "is not allowed in a kb.fusion around a softmax or norm: "
                  "only a matmul epilogue or an elementwise kernel holds "
                  "whole pairs";
  for (Operation &op : block.without_terminator())
    if (op.use_empty())
      return op.emitOpError() << "result is unused in its kb.fusion: every op "
                                 "of a fusion must feed the value kb.yield "
                                 "returns";
  return verifyConfigApplies(*this);
}

//===----------------------------------------------------------------------===//
// Activations and simple math (issue #45)
//===----------------------------------------------------------------------===//

#define KB_STATIC_VERIFIER(OP)                                                 \
  LogicalResult OP::verify() { return verifyStaticShapes(*this); }
KB_STATIC_VERIFIER(SeluOp)
KB_STATIC_VERIFIER(HardsigmoidOp)
KB_STATIC_VERIFIER(HardswishOp)
KB_STATIC_VERIFIER(MishOp)
KB_STATIC_VERIFIER(SoftsignOp)
KB_STATIC_VERIFIER(AbsOp)
KB_STATIC_VERIFIER(NegOp)
KB_STATIC_VERIFIER(SqrtOp)
KB_STATIC_VERIFIER(RsqrtOp)
KB_STATIC_VERIFIER(LogOp)
KB_STATIC_VERIFIER(MinimumOp)
KB_STATIC_VERIFIER(MaximumOp)
#undef KB_STATIC_VERIFIER

LogicalResult SoftplusOp::verify() {
  if (failed(verifyFiniteConstant(*this, getBetaAttr(), "beta")) ||
      failed(verifyFiniteConstant(*this, getThresholdAttr(), "threshold")))
    return failure();
  if (!(getBeta().convertToFloat() > 0.0f))
    return emitOpError() << "expects a positive beta, got "
                         << getBeta().convertToFloat();
  return success();
}

LogicalResult EluOp::verify() {
  return verifyFiniteConstant(*this, getAlphaAttr(), "alpha");
}

/// Both bounds of a clamp finite and in order (either may be absent).
template <typename OpT>
static LogicalResult verifyBounds(OpT op, FloatAttr lo, FloatAttr hi,
                                  StringRef loName, StringRef hiName) {
  if (lo && failed(verifyFiniteConstant(op, lo, loName)))
    return failure();
  if (hi && failed(verifyFiniteConstant(op, hi, hiName)))
    return failure();
  if (lo && hi && lo.getValueAsDouble() > hi.getValueAsDouble())
    return op.emitOpError() << "expects " << loName << " <= " << hiName
                            << ", got " << loName << " = "
                            << static_cast<float>(lo.getValueAsDouble())
                            << " and " << hiName << " = "
                            << static_cast<float>(hi.getValueAsDouble());
  return success();
}

LogicalResult HardtanhOp::verify() {
  return verifyBounds(*this, getMinValAttr(), getMaxValAttr(), "min_val",
                      "max_val");
}

LogicalResult ClampOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  if (!getMinAttr() && !getMaxAttr())
    return emitOpError() << "expects a min or a max bound (or both), got "
                            "neither";
  return verifyBounds(*this, getMinAttr(), getMaxAttr(), "min", "max");
}

//===----------------------------------------------------------------------===//
// Row reductions and normalizations
//===----------------------------------------------------------------------===//

/// A norm's input, result and parameters (weight, bias): the result has the
/// input's type, each parameter is 1-D of the last axis' length and of the
/// input's element type, at most `maxParams` of them; eps is finite and not
/// negative.
static LogicalResult verifyRowNorm(Operation *op, Value input,
                                   ValueRange params, Value result,
                                   FloatAttr eps, size_t maxParams,
                                   StringRef paramNames) {
  if (failed(verifyStaticShapes(op)))
    return failure();
  auto in = cast<RankedTensorType>(input.getType());
  if (result.getType() != in)
    return op->emitOpError() << "expects a result of the input's type " << in
                             << ", got " << result.getType();
  if (params.size() > maxParams)
    return op->emitOpError() << "takes at most " << maxParams
                             << " parameter tensors (" << paramNames
                             << "), got " << params.size();
  int64_t n = in.getShape().back();
  for (auto [i, v] : llvm::enumerate(params)) {
    auto t = cast<RankedTensorType>(v.getType());
    StringRef what = i == 0 ? "weight" : "bias";
    if (t.getRank() != 1 || t.getDimSize(0) != n)
      return op->emitOpError()
             << "expects a 1-D " << what << " of length " << n
             << " (the input's last dimension), got " << t;
    if (t.getElementType() != in.getElementType())
      return op->emitOpError()
             << "expects a " << what << " of the input's element type "
             << in.getElementType() << ", got " << t.getElementType();
  }
  double e = eps.getValueAsDouble();
  if (!std::isfinite(e) || e < 0)
    return op->emitOpError() << "expects a finite eps >= 0, got " << e;
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyRowNorm(*this, getInput(), getParams(), getResult(),
                       getEpsAttr(), 2, "weight, then bias");
}

LogicalResult RmsNormOp::verify() {
  return verifyRowNorm(*this, getInput(), getParams(), getResult(),
                       getEpsAttr(), 1, "weight");
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyStaticShapes(*this)))
    return failure();
  auto in = getInput().getType(), res = getResult().getType();
  if (failed(verifySameElementType(*this, in, res)))
    return failure();
  auto shape = in.getShape();
  int64_t rank = in.getRank();
  if (getAll()) {
    if (getAxisAttr())
      return emitOpError() << "takes 'all' or 'axis', not both";
    SmallVector<int64_t> expected(getKeepdim() ? rank : 1, 1);
    if (ArrayRef<int64_t>(expected) != res.getShape())
      return emitOpError() << "expects result shape " << shapeStr(expected)
                           << " (every axis reduced"
                           << (getKeepdim() ? ", kept 1 long" : "")
                           << "), got " << shapeStr(res.getShape());
    return success();
  }
  if (getAxisAttr() &&
      (getAxisAttr().getInt() < 0 || getAxisAttr().getInt() >= rank))
    return emitOpError() << "expects axis in [0, " << rank << "), got "
                         << getAxisAttr().getInt();
  int64_t axis = getReducedAxis();
  if (shape.size() == 1 && !getKeepdim())
    return emitOpError() << "reduces a rank-1 input to a scalar, which kb "
                            "has no tensor for: add keepdim (result "
                         << shapeStr({1}) << ")";
  SmallVector<int64_t> expected(shape.begin(), shape.end());
  if (getKeepdim())
    expected[axis] = 1;
  else
    expected.erase(expected.begin() + axis);
  if (ArrayRef<int64_t>(expected) != res.getShape())
    return emitOpError() << "expects result shape " << shapeStr(expected)
                         << (getAxisAttr() ? " (axis " + std::to_string(axis)
                                           : std::string(" (the last axis"))
                         << " " << (getKeepdim() ? "kept, 1 long" : "dropped")
                         << "), got " << shapeStr(res.getShape());
  return success();
}
