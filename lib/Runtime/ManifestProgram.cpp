//===- ManifestProgram.cpp - the manifest's program -----------------------===//
//
// program[]: each op's name, operands (buffers or earlier ops' outputs),
// shape against what the op computes, attributes, and element types: a
// matmul's operands share one type (f32 with precision ieee, tf32 or
// tf32x3; f16 or bf16 with precision native) and its result is f32 or that
// type; a kb.convert changes the type; every other op keeps it.
//
//===----------------------------------------------------------------------===//

#include "ManifestParsing.h"
#include "ReferenceActivations.h"

#include <algorithm>
#include <cmath>

namespace kb::runtime::manifest {

namespace {

const std::set<std::string> &unaryOps() {
  static const std::set<std::string> ops = {
      "kb.scale",   "kb.relu", "kb.tanh",       "kb.exp",
      "kb.sigmoid", "kb.gelu", "kb.dropout",    "kb.softmax",
      "kb.silu",    "kb.pow",  "kb.add_scalar", "kb.leaky_relu",
      "kb.log_softmax"};
  return ops;
}
/// The row ops: a layer_norm or rms_norm keeps its input's shape (and takes
/// an optional weight, then for a layer_norm an optional bias, of the last
/// axis' length); a reduce drops its axis (the last, or attrs.axis; every
/// one with attrs.all) or, with keepdim, keeps it 1 long.
bool isRowOp(const std::string &op) {
  return op == "kb.layer_norm" || op == "kb.rms_norm" || op == "kb.reduce";
}
const std::set<std::string> &binaryOps() {
  static const std::set<std::string> ops = {"kb.add", "kb.sub", "kb.mul",
                                            "kb.div", "kb.bias_add"};
  return ops;
}

/// The attributes each op may carry, each checked for its type and range.
void checkAttrs(const ProgramOp &op, const std::string &where) {
  std::string w = where + ".attrs";
  if (!op.attrs.is_object())
    fail(w + " must be an object, not " + typeName(op.attrs));
  for (auto it = op.attrs.begin(); it != op.attrs.end(); ++it) {
    const std::string &key = it.key();
    const json &v = it.value();
    std::string path = w + "." + key;
    if (key == "precision") {
      std::string p = asString(v, path);
      if (p != "ieee" && p != "tf32" && p != "tf32x3" && p != "native")
        fail(path + " must be ieee, tf32, tf32x3 or native, got '" + p + "'");
    } else if (key == "transpose_b" || key == "padded_b") {
      asBool(v, path);
    } else if (key == "split_chunk") {
      asInt(v, path, 1, int64_t(1) << 40);
    } else if (key == "pad") {
      asInt(v, path, 1, 1 << 16);
    } else if (key == "multiple") {
      asInt(v, path, 2, 1024);
    } else if (key == "approx") {
      std::string a = asString(v, path);
      if (a != "tanh" && a != "erf")
        fail(path + " must be tanh or erf, got '" + a + "'");
    } else if (key == "p") {
      double p = asNumber(v, path);
      if (!(p >= 0 && p < 1))
        fail(path + ": " + shown(v) + " is not in [0, 1)");
    } else if (key == "seed") {
      if (!v.is_number_integer())
        fail(path + " must be an integer, not " + typeName(v));
    } else if (key == "factor" || key == "value" || key == "exponent" ||
               key == "slope") {
      asNumber(v, path);
    } else if (key == "eps") {
      double e = asNumber(v, path);
      if (!(e >= 0) || !std::isfinite(e))
        fail(path + ": " + shown(v) + " is not a finite number >= 0");
    } else if (key == "kind") {
      std::string k = asString(v, path);
      if (k != "sum" && k != "max" && k != "min" && k != "mean")
        fail(path + " must be sum, max, min or mean, got '" + k + "'");
    } else if (key == "keepdim" || key == "all" || key == "causal" || key == "has_mask" ||
               key == "lse" || key == "bthd") {
      asBool(v, path);
    } else if (key == "scale") {
      if (!std::isfinite(asNumber(v, path)))
        fail(path + ": " + shown(v) + " is not finite");
    } else if (key == "lse_output") {
      asString(v, path);
    } else if (key == "axis") {
      asInt(v, path, 0, 7);
    }
    // Other attributes are recorded for the reader and not used by kb-run.
  }
}

} // namespace

void parseProgram(const json &j, ParseState &st) {
  Manifest &m = st.m;
  const json &prog = array(field(j, "program", "manifest"), "program");
  std::map<std::string, std::vector<int64_t>> defined; // name -> shape
  for (const Buffer &b : m.buffers)
    if (b.isData())
      defined[b.name] = b.shape;
  std::set<std::string> &written = st.written;
  for (size_t i = 0; i < prog.size(); ++i) {
    std::string where = "program[" + std::to_string(i) + "]";
    const json &pj = prog[i];
    ProgramOp op;
    op.op = str(pj, "op", where);
    if (op.op != "kb.matmul" && op.op != "kb.transpose" && op.op != "kb.pad" &&
        op.op != "kb.split_sum" && op.op != "kb.convert" &&
        op.op != "kb.attention" && op.op != "kb.rotary" && !isRowOp(op.op) &&
        !unaryOps().count(op.op) &&
        !isActivationOp(op.op, false) && !binaryOps().count(op.op) &&
        !isActivationOp(op.op, true))
      fail(where + ".op '" + op.op.substr(0, 40) +
           "' is not an op kb-run can check");
    where += " (" + op.op + ")";
    op.output = str(pj, "output", where);
    op.shape = shapeField(pj, where, st.maxElements);
    if (const json *k = opt(pj, "kernel"))
      op.kernel = asString(*k, where + ".kernel");
    const json &ins = array(field(pj, "inputs", where), where + ".inputs");
    for (size_t a = 0; a < ins.size(); ++a)
      op.inputs.push_back(
          asString(ins[a], where + ".inputs[" + std::to_string(a) + "]"));
    if (const json *at = opt(pj, "attrs"))
      op.attrs = *at;
    else
      op.attrs = json::object();
    checkAttrs(op, where);
    checkActivationAttrs(op, where);
    std::vector<std::vector<int64_t>> inShapes;
    for (size_t a = 0; a < op.inputs.size(); ++a) {
      auto it = defined.find(op.inputs[a]);
      if (it == defined.end())
        fail(where + ".inputs[" + std::to_string(a) + "] '" + op.inputs[a] +
             "' is neither a data buffer nor an earlier op's output");
      inShapes.push_back(it->second);
    }
    const Buffer *outBuf = st.bufferOf(op.output);
    if (outBuf && (outBuf->role == "input" || !outBuf->isData()))
      fail(where + ".output '" + op.output + "' is a buffer of role " +
           outBuf->role + ", which no op writes");
    if (!written.insert(op.output).second)
      fail(where + ".output '" + op.output +
           "' is written by an earlier op too");
    if (!outBuf && defined.count(op.output))
      fail(where + ".output '" + op.output + "' is already defined");
    auto needInputs = [&](size_t n) {
      if (op.inputs.size() != n)
        fail(where + " needs " + std::to_string(n) + " input" +
             (n == 1 ? "" : "s") + ", has " + std::to_string(op.inputs.size()));
    };
    // The first operand of a matmul, transpose or pad: a matrix or a batch.
    auto needMatrixOrBatch = [&](const std::vector<int64_t> &shape) {
      if (shape.size() != 2 && shape.size() != 3)
        fail(where + " operand '" + op.inputs[0] + "' must have rank 2 or 3");
    };
    auto sameShape = [&](size_t a) {
      if (inShapes[a] != op.shape)
        fail(where + ".inputs[" + std::to_string(a) + "] '" + op.inputs[a] +
             "' has shape " + shapeStr(inShapes[a]) + ", the op's shape is " +
             shapeStr(op.shape));
    };
    if (op.op == "kb.matmul") {
      // kb-run reads the operands of a matmul from device buffers, and
      // indexes them with the dimensions they imply: they must agree.
      needInputs(2);
      for (size_t a = 0; a < 2; ++a)
        if (!st.bufferOf(op.inputs[a]))
          fail(where + " operand '" + op.inputs[a] + "' must be a buffer");
      const auto &a = inShapes[0], &b = inShapes[1];
      size_t r = a.size();
      needMatrixOrBatch(a);
      bool transB = op.attrs.value("transpose_b", false);
      // padded_b: B^T's rows may be longer than K (kb.transpose pad).
      bool padded = transB && op.attrs.value("padded_b", false);
      int64_t bk = b.size() == r ? (transB ? b[r - 1] : b[r - 2]) : -1;
      if (b.size() != r || (r == 3 && b[0] != a[0]) ||
          (padded ? bk < a[r - 1] : bk != a[r - 1]))
        fail(where + " operands " + shapeStr(a) + " and " + shapeStr(b) +
             (transB ? " (B transposed)" : "") + " do not multiply");
      std::vector<int64_t> c(a.begin(), a.end() - 1);
      c.push_back(transB ? b[r - 2] : b[r - 1]);
      // split_chunk: S partial products over K chunks, S x M x N.
      if (const json *sc = op.attrs.contains("split_chunk")
                               ? &op.attrs["split_chunk"]
                               : nullptr) {
        int64_t chunk = sc->get<int64_t>(), kk = a[r - 1];
        if (r != 2 || op.shape.size() != 3)
          fail(where + " with split_chunk must be a matrix product giving "
                       "S x M x N partials");
        int64_t splits = op.shape[0];
        if (splits < 2 || chunk > kk || (splits - 1) * chunk >= kk ||
            chunk * splits < kk)
          fail(where + ": " + std::to_string(splits) +
               " splits of split_chunk " + std::to_string(chunk) +
               " do not cover K = " + std::to_string(kk));
        c.insert(c.begin(), splits);
      }
      if (op.shape != c)
        fail(where + " has shape " + shapeStr(op.shape) +
             ", its operands give " + shapeStr(c));
    } else if (op.op == "kb.transpose") {
      needInputs(1);
      if (!st.bufferOf(op.inputs[0]))
        fail(where + " operand '" + op.inputs[0] + "' must be a buffer");
      std::vector<int64_t> t = inShapes[0];
      needMatrixOrBatch(t);
      std::swap(t[t.size() - 2], t[t.size() - 1]);
      int64_t pad = op.attrs.value("pad", int64_t(1));
      t.back() = (t.back() + pad - 1) / pad * pad;
      if (!outBuf)
        fail(where + " output '" + op.output + "' must be a buffer");
      if (outBuf->shape != t || op.shape != t)
        fail(where + " of " + shapeStr(inShapes[0]) + " must give " +
             shapeStr(t) + ", not " + shapeStr(outBuf->shape));
    } else if (op.op == "kb.pad") {
      needInputs(1);
      if (!st.bufferOf(op.inputs[0]))
        fail(where + " operand '" + op.inputs[0] + "' must be a buffer");
      std::vector<int64_t> t = inShapes[0];
      needMatrixOrBatch(t);
      if (!op.attrs.contains("multiple"))
        fail(where + " needs attrs.multiple");
      int64_t mult = op.attrs["multiple"].get<int64_t>();
      t.back() = (t.back() + mult - 1) / mult * mult;
      if (!outBuf)
        fail(where + " output '" + op.output + "' must be a buffer");
      if (outBuf->shape != t || op.shape != t)
        fail(where + " of " + shapeStr(inShapes[0]) + " must give " +
             shapeStr(t) + ", not " + shapeStr(outBuf->shape));
    } else if (op.op == "kb.split_sum") {
      needInputs(1);
      const auto &p = inShapes[0];
      if (p.size() < 2 ||
          std::vector<int64_t>(p.begin() + 1, p.end()) != op.shape)
        fail(where + ".inputs[0] '" + op.inputs[0] + "' has shape " +
             shapeStr(p) + "; the partials of " + shapeStr(op.shape) +
             " have shape S x " + shapeStr(op.shape));
    } else if (op.op == "kb.attention") {
      // q [..., Sq, D], k [..., Sk, D], v [..., Sk, Dv], [mask [Sq, Sk] or
      // [..., Sq, Sk]], all buffers; out [..., Sq, Dv]; lse_output [..., Sq].
      bool hasMask = op.attrs.value("has_mask", false);
      needInputs(hasMask ? 4 : 3);
      for (size_t a = 0; a < op.inputs.size(); ++a)
        if (!st.bufferOf(op.inputs[a]))
          fail(where + " operand '" + op.inputs[a] + "' must be a buffer");
      if (!op.attrs.contains("scale"))
        fail(where + " needs attrs.scale");
      // bthd: q [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv], out
      // [B, Sq, H, Dv]; the mask and lse_output keep [B, H, ...].
      const auto &q = inShapes[0], &k = inShapes[1], &v = inShapes[2];
      size_t r = q.size();
      bool bthd = op.attrs.value("bthd", false);
      if (bthd && (r != 4 || k.size() != 4 || v.size() != 4))
        fail(where + " bthd operands " + shapeStr(q) + ", " + shapeStr(k) +
             ", " + shapeStr(v) + " are not of rank 4 ([B, S, H, D])");
      size_t seq = bthd ? 1 : r - 2;
      auto leadOf = [&](const std::vector<int64_t> &s) {
        if (bthd)
          return std::vector<int64_t>{s[0], s[2]};
        return std::vector<int64_t>(s.begin(), s.end() - (s.size() >= 2 ? 2 : 0));
      };
      std::vector<int64_t> lead = leadOf(q);
      if ((r != 3 && r != 4) || k.size() != r || v.size() != r ||
          leadOf(k) != lead || leadOf(v) != lead ||
          k[r - 1] != q[r - 1] || v[seq] != k[seq])
        fail(where + " operands " + shapeStr(q) + ", " + shapeStr(k) + ", " +
             shapeStr(v) + (bthd ? " are not q [B, Sq, H, D], k [B, Sk, H, D], "
                                   "v [B, Sk, H, Dv]"
                                 : " are not q [..., Sq, D], k [..., Sk, D], "
                                   "v [..., Sk, Dv] of rank 3 or 4"));
      std::vector<int64_t> o = lead, rows = lead, sqsk = {q[seq], k[seq]};
      o.insert(o.end(), {q[seq], v[r - 1]});
      if (bthd)
        o = {q[0], q[1], q[2], v[3]};
      rows.push_back(q[seq]);
      std::vector<int64_t> full = lead;
      full.insert(full.end(), sqsk.begin(), sqsk.end());
      if (hasMask && inShapes[3] != sqsk && inShapes[3] != full)
        fail(where + " mask '" + op.inputs[3] + "' has shape " +
             shapeStr(inShapes[3]) + ", not " + shapeStr(sqsk) + " or " +
             shapeStr(full));
      if (!outBuf || op.shape != o)
        fail(where + " must write a buffer of shape " + shapeStr(o));
      if (op.attrs.value("lse", false)) {
        std::string l = op.attrString("lse_output", "");
        const Buffer *lb = st.bufferOf(l);
        if (!lb || lb->shape != rows || lb->dtype != DType::F32 ||
            !written.insert(l).second)
          fail(where + " lse_output '" + l + "' must be an f32 buffer of "
               "shape " + shapeStr(rows) + " that no other op writes");
        defined[l] = rows;
      }
    } else if (op.op == "kb.rotary") {
      // The input, then the P x head_dim / 2 cos and sin tables.
      needInputs(3);
      sameShape(0);
      const auto &t = inShapes[1];
      if (t.size() != 2 || inShapes[2] != t || op.shape.empty() ||
          op.shape.back() % (2 * t[1]))
        fail(where + " tables '" + op.inputs[1] + "' " + shapeStr(t) +
             " and '" + op.inputs[2] + "' " + shapeStr(inShapes[2]) +
             " are not P x head_dim / 2 tables, head_dim dividing the "
             "last dimension of " + shapeStr(op.shape));
    } else if (op.op == "kb.bias_add") {
      needInputs(2);
      sameShape(0);
      if (inShapes[1] != std::vector<int64_t>{op.shape.back()})
        fail(where + ".inputs[1] '" + op.inputs[1] + "' has shape " +
             shapeStr(inShapes[1]) + "; a bias of " + shapeStr(op.shape) +
             " has shape [" + std::to_string(op.shape.back()) + "]");
    } else if (op.op == "kb.reduce") {
      needInputs(1);
      if (!op.attrs.contains("kind"))
        fail(where + " needs attrs.kind (sum, max, min or mean)");
      const auto &x = inShapes[0];
      bool keep = op.attrs.value("keepdim", false);
      bool all = op.attrs.value("all", false);
      const int64_t rank = static_cast<int64_t>(x.size());
      int64_t axis = op.attrs.value("axis", rank - 1);
      if (all && op.attrs.contains("axis"))
        fail(where + " takes attrs.all or attrs.axis, not both");
      if (axis < 0 || axis >= rank)
        fail(where + " reduces axis " + std::to_string(axis) + " of rank-" +
             std::to_string(rank) + " '" + op.inputs[0] + "'");
      std::vector<int64_t> r(x.begin(), x.end());
      if (all)
        r.assign(keep ? rank : 1, 1);
      else if (keep)
        r[axis] = 1;
      else
        r.erase(r.begin() + axis);
      if (r.empty())
        r.push_back(1);
      if (x.size() == 1 && !keep && !all)
        fail(where + " reduces rank-1 '" + op.inputs[0] +
             "' to a scalar: it needs keepdim");
      if (op.shape != r)
        fail(where + " of " + shapeStr(x) + " must give " + shapeStr(r) +
             (keep ? " (keepdim)" : "") + ", not " + shapeStr(op.shape));
    } else if (isRowOp(op.op)) {
      size_t most = op.op == "kb.layer_norm" ? 3 : 2;
      if (op.inputs.empty() || op.inputs.size() > most)
        fail(where + " needs 1 to " + std::to_string(most) +
             " inputs (the input, then " +
             (most == 3 ? "weight, bias" : "weight") + "), has " +
             std::to_string(op.inputs.size()));
      sameShape(0);
      for (size_t a = 1; a < op.inputs.size(); ++a)
        if (inShapes[a] != std::vector<int64_t>{op.shape.back()})
          fail(where + ".inputs[" + std::to_string(a) + "] '" + op.inputs[a] +
               "' has shape " + shapeStr(inShapes[a]) + "; a " +
               (a == 1 ? "weight" : "bias") + " of " + shapeStr(op.shape) +
               " has shape [" + std::to_string(op.shape.back()) + "]");
    } else if (binaryOps().count(op.op) || isActivationOp(op.op, true)) {
      needInputs(2);
      sameShape(0);
      sameShape(1);
    } else {
      needInputs(1);
      sameShape(0);
    }
    op.toBuffer = outBuf != nullptr;
    if (outBuf && outBuf->shape != op.shape)
      fail(where + " has shape " + shapeStr(op.shape) +
           ", its output buffer '" + op.output + "' has " +
           shapeStr(outBuf->shape));
    defined[op.output] = op.shape;
    m.program.push_back(op);
  }

}

namespace {

/// The element type of every value the program names: buffers have their
/// own; an op writing a buffer has the buffer's; an elementwise op, a
/// softmax, a transpose or a pad keeps its operand's; a matmul or a convert
/// writing registers takes the type of the elementwise op that reads it
/// (its kernel's epilogue, of one type), a matmul read only by a convert
/// f32. Unresolved values are refused.
std::map<std::string, DType> valueTypes(const Manifest &m) {
  std::map<std::string, DType> ty;
  for (const Buffer &b : m.buffers)
    if (b.isData())
      ty[b.name] = b.dtype;
  auto keepsType = [](const ProgramOp &op) {
    return op.op != "kb.matmul" && op.op != "kb.convert" &&
           op.op != "kb.split_sum";
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (const ProgramOp &op : m.program) {
      if (ty.count(op.output) || !keepsType(op) || op.inputs.empty() ||
          !ty.count(op.inputs[0]))
        continue;
      ty[op.output] = ty.at(op.inputs[0]);
      changed = true;
    }
    for (const ProgramOp &op : m.program) {
      if (ty.count(op.output))
        continue;
      for (const ProgramOp &user : m.program)
        if (keepsType(user) && ty.count(user.output) &&
            std::count(user.inputs.begin(), user.inputs.end(), op.output)) {
          ty[op.output] = ty.at(user.output);
          changed = true;
          break;
        }
    }
  }
  // A matmul whose value only a kb.convert reads: its f32 accumulator.
  for (const ProgramOp &op : m.program)
    if (op.op == "kb.matmul" && !ty.count(op.output))
      ty[op.output] = DType::F32;
  for (size_t i = 0; i < m.program.size(); ++i)
    if (!ty.count(m.program[i].output))
      fail("program[" + std::to_string(i) + "] (" + m.program[i].op +
           "): the element type of '" + m.program[i].output +
           "' is not known (it is no buffer and no op of known type reads "
           "it)");
  return ty;
}

} // namespace

void checkProgramTypes(Manifest &m) {
  std::map<std::string, DType> ty = valueTypes(m);
  for (size_t i = 0; i < m.program.size(); ++i) {
    ProgramOp &op = m.program[i];
    std::string where = "program[" + std::to_string(i) + "] (" + op.op + ")";
    op.dtype = ty.at(op.output);
    std::string out = dtypeName(op.dtype);
    auto typeOf = [&](size_t a) { return ty.at(op.inputs[a]); };
    if (op.op == "kb.matmul") {
      DType a = typeOf(0), b = typeOf(1);
      if (a != b)
        fail(where + " multiplies " + dtypeName(a) + " by " + dtypeName(b) +
             ": a matmul's operands share one element type");
      std::string p = op.attrString("precision", isHalf(a) ? "native" : "ieee");
      if (isHalf(a) && p != "native")
        fail(where + ".attrs.precision is '" + p + "': a matmul of " +
             dtypeName(a) + " operands has precision native");
      if (!isHalf(a) && p == "native")
        fail(where + ".attrs.precision is 'native', which is for f16 or bf16 "
                     "operands; f32 operands need ieee, tf32 or tf32x3");
      if (op.dtype != DType::F32 && op.dtype != a)
        fail(where + " of " + dtypeName(a) + " operands gives " + out +
             "; its result is f32 or " + dtypeName(a));
    } else if (op.op == "kb.convert") {
      // Any two of f32, f16 and bf16 (data buffers only have those).
    } else if (op.op == "kb.rotary") {
      // The input's type out; the tables f32 or the input's type.
      if (typeOf(0) != op.dtype)
        fail(where + " reads '" + op.inputs[0] + "' of " +
             dtypeName(typeOf(0)) + " and writes " + out +
             ": a rotary keeps its input's type");
      for (size_t a = 1; a < 3; ++a)
        if (typeOf(a) != op.dtype && typeOf(a) != DType::F32)
          fail(where + " table '" + op.inputs[a] + "' is " +
               dtypeName(typeOf(a)) + "; tables are f32 or the input's " +
               out);
    } else if (op.op == "kb.split_sum") {
      if (typeOf(0) != DType::F32)
        fail(where + " sums partials of " + dtypeName(typeOf(0)) +
             "; a split-K matmul's partials are f32");
    } else {
      // Elementwise, softmax, transpose, pad: one type in and out (16-bit
      // only at loads and stores; a transpose or pad copies the bytes).
      for (size_t a = 0; a < op.inputs.size(); ++a)
        if (typeOf(a) != op.dtype)
          fail(where + " reads '" + op.inputs[a] + "' of " +
               dtypeName(typeOf(a)) + " and writes " + out + " '" +
               op.output + "': its operands and result share one element "
               "type (kb.convert converts)");
    }
  }
}

} // namespace kb::runtime::manifest
