//===- KBAttention.cpp - kb.attention and kb.causal_mask ------------------===//
//
// kb.attention's custom syntax and its checks, and kb.causal_mask's. The syntax is custom because
// the precision keyword defaults by element type (tf32 for f32, native for
// 16-bit), which a declarative format cannot see while parsing, and because
// the `lse` keyword must agree with the number of result types. The verifier
// names the operand and the dimension that disagree, and what was expected.
//
//===----------------------------------------------------------------------===//

#include "KBOpsInternal.h"
#include "kb/Dialect/KB/IR/KBDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kb;
using mlir::kb::detail::shapeStr;

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

// %o[, %lse] = kb.attention %q, %k, %v [mask(%m)] scale(F) [causal]
//     [bthd] [precision(P)] [lse] attr-dict : tq, tk, tv[, tm] -> to[, tlse]
ParseResult AttentionOp::parse(OpAsmParser &p, OperationState &state) {
  Builder &b = p.getBuilder();
  SmallVector<OpAsmParser::UnresolvedOperand, 3> qkv;
  OpAsmParser::UnresolvedOperand mask;
  SMLoc operandsLoc = p.getCurrentLocation();
  if (p.parseOperandList(qkv, 3))
    return failure();
  bool hasMask = false;
  if (succeeded(p.parseOptionalKeyword("mask"))) {
    if (p.parseLParen() || p.parseOperand(mask) || p.parseRParen())
      return failure();
    hasMask = true;
  }
  FloatAttr scale;
  if (p.parseKeyword("scale") || p.parseLParen() ||
      p.parseAttribute(scale, b.getF32Type()) || p.parseRParen())
    return failure();
  state.addAttribute("scale", scale);
  if (succeeded(p.parseOptionalKeyword("causal")))
    state.addAttribute("causal", b.getUnitAttr());
  if (succeeded(p.parseOptionalKeyword("bthd")))
    state.addAttribute("bthd", b.getUnitAttr());
  std::optional<Precision> precision;
  if (succeeded(p.parseOptionalKeyword("precision"))) {
    StringRef word;
    SMLoc at = p.getCurrentLocation();
    if (p.parseLParen() || p.parseKeyword(&word))
      return failure();
    precision = symbolizePrecision(word);
    if (!precision)
      return p.emitError(at) << "unknown precision '" << word
                             << "' (known: ieee, tf32, tf32x3, native)";
    if (p.parseRParen())
      return failure();
  }
  bool lse = succeeded(p.parseOptionalKeyword("lse"));
  if (p.parseOptionalAttrDict(state.attributes) || p.parseColon())
    return failure();
  SmallVector<Type, 4> inTypes;
  SMLoc inLoc = p.getCurrentLocation();
  if (p.parseTypeList(inTypes) || p.parseArrow())
    return failure();
  SmallVector<Type, 2> outTypes;
  SMLoc outLoc = p.getCurrentLocation();
  if (p.parseTypeList(outTypes))
    return failure();
  size_t wantIn = hasMask ? 4 : 3, wantOut = lse ? 2 : 1;
  if (inTypes.size() != wantIn)
    return p.emitError(inLoc)
           << "expects " << wantIn << " operand types (q, k, v"
           << (hasMask ? ", mask" : "") << "), got " << inTypes.size();
  if (outTypes.size() != wantOut)
    return p.emitError(outLoc)
           << "expects " << wantOut << " result type(s) (the output"
           << (lse ? ", then the log-sum-exp: `lse` is written"
                   : "; a second one, the log-sum-exp, needs `lse`")
           << "), got " << outTypes.size();
  if (!precision) {
    auto q = dyn_cast<ShapedType>(inTypes[0]);
    precision = q && q.getElementType().isF32() ? Precision::tf32
                                                : Precision::native;
  }
  state.addAttribute("precision", PrecisionAttr::get(b.getContext(), *precision));
  if (p.resolveOperands(qkv, ArrayRef<Type>(inTypes).take_front(3),
                        operandsLoc, state.operands))
    return failure();
  if (hasMask && p.resolveOperand(mask, inTypes[3], state.operands))
    return failure();
  state.addTypes(outTypes);
  return success();
}

void AttentionOp::print(OpAsmPrinter &p) {
  p << ' ' << getQ() << ", " << getK() << ", " << getV();
  if (getMask())
    p << " mask(" << getMask() << ")";
  p << " scale(";
  p.printAttributeWithoutType(getScaleAttr());
  p << ")";
  if (getCausal())
    p << " causal";
  if (getBthd())
    p << " bthd";
  if (getPrecision() != Precision::native)
    p << " precision(" << stringifyEnum(getPrecision()) << ")";
  if (getLse())
    p << " lse";
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"scale", "causal", "bthd", "precision"});
  p << " : " << getQ().getType() << ", " << getK().getType() << ", "
    << getV().getType();
  if (getMask())
    p << ", " << getMask().getType();
  p << " -> " << getResult().getType();
  if (getLse())
    p << ", " << getLse().getType();
}

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  if (failed(detail::verifyStaticShapes(*this)))
    return failure();
  auto qt = getQ().getType(), kt = getK().getType(), vt = getV().getType();
  auto ot = getResult().getType();
  Type elem = qt.getElementType();
  std::pair<StringRef, RankedTensorType> others[] = {
      {"k", kt}, {"v", vt}, {"the result", ot}};
  for (auto [name, t] : others)
    if (t.getElementType() != elem)
      return emitOpError() << "expects q, k, v and the result of one element "
                              "type, got "
                           << elem << " (q) and " << t.getElementType() << " ("
                           << name << "); kb.convert one of them";

  int64_t r = qt.getRank();
  bool bthd = getBthd();
  if (bthd && r != 4)
    return emitOpError() << "bthd takes q, k, v of rank 4 ([B, S, H, D]), got "
                            "q of rank "
                         << r << " (" << shapeStr(qt.getShape()) << ")";
  if (r != 3 && r != 4)
    return emitOpError() << "expects q of rank 3 ([BH, Sq, D]) or 4 ([B, H, "
                            "Sq, D]), got rank "
                         << r << " (" << shapeStr(qt.getShape()) << ")";
  // The leading dimensions ([B, H] or [BH]) and the sequence axis: bthd
  // puts the sequence before the heads ([B, S, H, D]).
  int64_t seq = getSeqAxis();
  auto lead = [&](ArrayRef<int64_t> s) {
    if (bthd)
      return SmallVector<int64_t>{s[0], s[2]};
    return SmallVector<int64_t>(s.drop_back(2));
  };
  auto layout = [&](SmallVector<int64_t> l, int64_t rows, int64_t cols) {
    if (bthd)
      return SmallVector<int64_t>{l[0], rows, l[1], cols};
    l.append({rows, cols});
    return l;
  };
  StringRef form = bthd ? "[B, Sq, H, Dv]" : "[..., Sq, Dv]";
  ArrayRef<int64_t> qs = qt.getShape(), ks = kt.getShape(), vs = vt.getShape();
  SmallVector<int64_t> ql = lead(qs);
  std::pair<StringRef, ArrayRef<int64_t>> kv[] = {{"k", ks}, {"v", vs}};
  for (auto [name, s] : kv) {
    if (static_cast<int64_t>(s.size()) != r)
      return emitOpError() << "expects " << name << " of q's rank " << r
                           << ", got rank " << s.size() << " ("
                           << shapeStr(s) << ")";
    if (lead(s) != ql)
      return emitOpError() << "expects " << name << " to have q's "
                           << (bthd ? "batch and head dimensions [B, H] "
                                    : "leading dimensions ")
                           << shapeStr(ql) << ", got " << shapeStr(lead(s))
                           << " (" << name << " is " << shapeStr(s) << ")";
  }
  int64_t sq = qs[seq], d = qs[r - 1], sk = ks[seq], dv = vs[r - 1];
  if (ks[r - 1] != d)
    return emitOpError() << "expects q and k of one head dimension D: q is "
                         << shapeStr(qs) << " (D = " << d << "), k is "
                         << shapeStr(ks) << " (D = " << ks[r - 1] << ")";
  if (vs[seq] != sk)
    return emitOpError() << "expects k and v of one key count Sk: k is "
                         << shapeStr(ks) << " (Sk = " << sk << "), v is "
                         << shapeStr(vs) << " (Sk = " << vs[seq] << ")";
  SmallVector<int64_t> expected = layout(ql, sq, dv);
  if (ArrayRef<int64_t>(expected) != ot.getShape())
    return emitOpError() << "expects a result of shape " << shapeStr(expected)
                         << " (" << form << "), got "
                         << shapeStr(ot.getShape());

  if (Value mask = getMask()) {
    auto mt = cast<RankedTensorType>(mask.getType());
    if (mt.getElementType() != elem)
      return emitOpError() << "expects a mask of the operands' element type "
                           << elem << ", got " << mt.getElementType();
    SmallVector<int64_t> full(ql);
    full.append({sq, sk});
    ArrayRef<int64_t> ms = mt.getShape();
    if (ms != ArrayRef<int64_t>(full) && ms != ArrayRef<int64_t>({sq, sk}))
      return emitOpError() << "expects a mask of shape " << sq << "x" << sk
                           << " (Sq x Sk, broadcast over the leading "
                              "dimensions) or "
                           << shapeStr(full) << ", got " << shapeStr(ms);
  }

  Precision prec = getPrecision();
  if (elem.isF32() && prec != Precision::tf32 && prec != Precision::ieee)
    return emitOpError() << "an f32 attention takes precision(tf32) (the "
                            "default) or precision(ieee), got precision("
                         << stringifyEnum(prec) << ")";
  if (!elem.isF32() && prec != Precision::native)
    return emitOpError() << "a " << elem << " attention has no precision "
                         << "choice (tensor cores in " << elem
                         << " with f32 accumulation): leave out precision("
                         << stringifyEnum(prec) << ")";

  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError() << "expects a finite scale, got "
                         << getScale().convertToFloat();

  if (Value lse = getLse()) {
    auto lt = cast<RankedTensorType>(lse.getType());
    SmallVector<int64_t> rows(ql);
    rows.push_back(sq); // [B, H, Sq] with bthd too
    if (!lt.getElementType().isF32() || lt.getShape() != ArrayRef(rows))
      return emitOpError() << "expects lse of shape " << shapeStr(rows)
                           << " in f32 (one log-sum-exp per query row), got "
                           << lt;
  }

  if (ConfigAttr config = getConfigAttr();
      config && !config.getBlock().empty() && config.getBlock().size() != 2)
    return emitOpError() << "#kb.config block of an attention is [BQ, BKV] "
                            "(query rows a block, keys a step), got "
                         << config.getBlock().size() << " sizes";
  return success();
}

//===----------------------------------------------------------------------===//
// CausalMaskOp
//===----------------------------------------------------------------------===//

LogicalResult CausalMaskOp::verify() {
  if (failed(detail::verifyStaticShapes(*this)))
    return failure();
  if (getInput().getType().getRank() < 2)
    return emitOpError() << "expects an input of rank 2 or more (the last "
                            "two axes are query rows and keys), got rank "
                         << getInput().getType().getRank();
  return success();
}
