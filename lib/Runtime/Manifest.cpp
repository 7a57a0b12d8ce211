//===- Manifest.cpp - parse and check a bundle's manifest.json ------------===//
//
// Every field kb-run relies on is checked here, with a message that names it,
// so that a malformed bundle stops before anything touches the GPU.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace kb::runtime {

using nlohmann::json;

int64_t Buffer::elements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double ProgramOp::attrDouble(const char *name, double fallback) const {
  if (attrs.is_object() && attrs.contains(name) && attrs[name].is_number())
    return attrs[name].get<double>();
  return fallback;
}

std::string ProgramOp::attrString(const char *name,
                                  const std::string &fallback) const {
  if (attrs.is_object() && attrs.contains(name) && attrs[name].is_string())
    return attrs[name].get<std::string>();
  return fallback;
}

namespace {

[[noreturn]] void fail(const std::string &what) {
  throw ManifestError("manifest: " + what);
}

const json &field(const json &obj, const char *key, const std::string &where) {
  if (!obj.is_object() || !obj.contains(key))
    fail(where + " has no field '" + key + "'");
  return obj[key];
}

std::string str(const json &obj, const char *key, const std::string &where) {
  const json &v = field(obj, key, where);
  if (!v.is_string())
    fail(where + "." + key + " must be a string");
  return v.get<std::string>();
}

std::vector<int64_t> ints(const json &obj, const char *key,
                          const std::string &where) {
  const json &v = field(obj, key, where);
  if (!v.is_array())
    fail(where + "." + key + " must be an array of integers");
  std::vector<int64_t> out;
  for (const json &e : v) {
    if (!e.is_number_integer())
      fail(where + "." + key + " must be an array of integers");
    out.push_back(e.get<int64_t>());
  }
  return out;
}

} // namespace

Manifest Manifest::load(const std::string &path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (fs::is_directory(p))
    p /= "manifest.json";
  std::ifstream in(p);
  if (!in)
    throw ManifestError("cannot open " + p.string() +
                        " (expected a bundle folder written by kb-opt "
                        "--kb-compile, or its manifest.json)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), p.parent_path().string());
}

Manifest Manifest::parse(const std::string &text, const std::string &dir) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error &e) {
    fail(std::string("not valid JSON: ") + e.what());
  }
  Manifest m;
  m.dir = dir;
  if (str(j, "format", "manifest") != "kb-bundle")
    fail("format must be \"kb-bundle\"");
  const json &version = field(j, "version", "manifest");
  if (!version.is_number_integer() || version.get<int>() != 1)
    fail("version " + version.dump() + " is not supported (kb-run reads version 1)");
  m.version = 1;
  m.target = str(j, "target", "manifest");
  m.function = j.value("function", "");

  std::set<std::string> names;
  const json &bufs = field(j, "buffers", "manifest");
  if (!bufs.is_array() || bufs.empty())
    fail("buffers must be a non-empty array");
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::string where = "buffers[" + std::to_string(i) + "]";
    Buffer b;
    b.name = str(bufs[i], "name", where);
    b.role = str(bufs[i], "role", where);
    b.shape = ints(bufs[i], "shape", where);
    if (b.role != "input" && b.role != "output" && b.role != "scratch" &&
        b.role != "workspace" && b.role != "tensor_map")
      fail(where + ".role must be input, output, scratch, workspace or tensor_map, got " +
           b.role);
    std::string dtype = str(bufs[i], "dtype", where);
    if (dtype != (b.isData() ? "f32" : "i32"))
      fail(where + " (" + b.name + ") has dtype " + bufs[i]["dtype"].dump() +
           (b.isData() ? "; kb-run supports f32" : "; a " + b.role + " is i32"));
    if (b.role == "tensor_map") {
      const json &tm = field(bufs[i], "tensor_map", where);
      std::string w = where + ".tensor_map";
      b.tensorMap.of = str(tm, "of", w);
      b.tensorMap.dims = ints(tm, "dims", w);
      b.tensorMap.box = ints(tm, "box", w);
      if (str(tm, "swizzle", w) != "128B")
        fail(w + ".swizzle must be \"128B\" (the only swizzle kb's kernels read)");
      if (b.shape != std::vector<int64_t>{32})
        fail(where + " (" + b.name + ") must have shape [32]: a tensor map is 128 bytes");
    }
    if (b.shape.empty())
      fail(where + ".shape must have at least one dimension");
    for (int64_t d : b.shape)
      if (d <= 0)
        fail(where + ".shape has a non-positive dimension");
    if (bufs[i].contains("init")) {
      const json &init = bufs[i]["init"];
      b.dist = init.value("dist", "normal");
      if (b.dist != "normal" && b.dist != "uniform")
        fail(where + ".init.dist must be normal or uniform");
      b.mean = init.value("mean", 0.0);
      b.std = init.value("std", 1.0);
    }
    if (!names.insert(b.name).second)
      fail("buffer name '" + b.name + "' appears twice");
    m.buffers.push_back(b);
  }
  const json &prog = field(j, "program", "manifest");
  if (!prog.is_array())
    fail("program must be an array");
  std::set<std::string> defined(names); // buffers, then each op's output
  for (size_t i = 0; i < prog.size(); ++i) {
    std::string where = "program[" + std::to_string(i) + "]";
    ProgramOp op;
    op.op = str(prog[i], "op", where);
    op.output = str(prog[i], "output", where);
    op.shape = ints(prog[i], "shape", where);
    op.kernel = prog[i].value("kernel", "");
    for (const json &in : field(prog[i], "inputs", where)) {
      if (!in.is_string())
        fail(where + ".inputs must be strings");
      op.inputs.push_back(in.get<std::string>());
    }
    op.attrs = prog[i].value("attrs", json::object());
    for (const std::string &in : op.inputs)
      if (!defined.count(in))
        fail(where + " (" + op.op + ") reads '" + in +
             "', which is neither a buffer nor an earlier op's output");
    auto shapeOf = [&](const std::string &name) -> const std::vector<int64_t> & {
      for (const Buffer &b : m.buffers)
        if (b.name == name)
          return b.shape;
      fail(where + " (" + op.op + ") operand '" + name + "' must be a buffer");
    };
    auto shapeStr = [](const std::vector<int64_t> &s) {
      std::string r = "[";
      for (size_t i = 0; i < s.size(); ++i)
        r += (i ? ", " : "") + std::to_string(s[i]);
      return r + "]";
    };
    if (op.op == "kb.matmul") {
      // kb-run reads the operands of a matmul from device buffers, and
      // indexes them with the dimensions they imply: they must agree.
      if (op.inputs.size() != 2)
        fail(where + " (kb.matmul) needs 2 inputs, has " + std::to_string(op.inputs.size()));
      const auto &a = shapeOf(op.inputs[0]);
      const auto &b = shapeOf(op.inputs[1]);
      size_t r = a.size();
      if (r != 2 && r != 3)
        fail(where + " (kb.matmul) operand '" + op.inputs[0] + "' must have rank 2 or 3");
      bool transB = op.attrs.value("transpose_b", false);
      // padded_b: B^T's rows may be longer than K (kb.transpose pad).
      bool padded = transB && op.attrs.value("padded_b", false);
      int64_t bk = b.size() == r ? (transB ? b[r - 1] : b[r - 2]) : -1;
      if (b.size() != r || (r == 3 && b[0] != a[0]) ||
          (padded ? bk < a[r - 1] : bk != a[r - 1]))
        fail(where + " (kb.matmul) operands " + shapeStr(a) + " and " + shapeStr(b) +
             (transB ? " (B transposed)" : "") + " do not multiply");
      std::vector<int64_t> c(a.begin(), a.end() - 1);
      c.push_back(transB ? b[r - 2] : b[r - 1]);
      if (op.shape != c)
        fail(where + " (kb.matmul) has shape " + shapeStr(op.shape) + ", its operands give " +
             shapeStr(c));
    }
    if (op.op == "kb.transpose") {
      if (op.inputs.size() != 1)
        fail(where + " (kb.transpose) needs 1 input, has " + std::to_string(op.inputs.size()));
      std::vector<int64_t> t = shapeOf(op.inputs[0]);
      if (t.size() != 2 && t.size() != 3)
        fail(where + " (kb.transpose) operand '" + op.inputs[0] + "' must have rank 2 or 3");
      std::swap(t[t.size() - 2], t[t.size() - 1]);
      int64_t pad = op.attrs.value("pad", int64_t(1));
      if (pad < 1)
        fail(where + " (kb.transpose) pad must be at least 1");
      t.back() = (t.back() + pad - 1) / pad * pad;
      if (!names.count(op.output))
        fail(where + " (kb.transpose) output '" + op.output + "' must be a buffer");
      if (shapeOf(op.output) != t || op.shape != t)
        fail(where + " (kb.transpose) of " + shapeStr(shapeOf(op.inputs[0])) +
             " must give " + shapeStr(t) + ", not " + shapeStr(shapeOf(op.output)));
    }
    defined.insert(op.output);
    m.program.push_back(op);
  }

  // A tensor map describes another buffer; cuTensorMapEncodeTiled's limits
  // are checked here so that a bad one is a one-line error, not a launch
  // failure.
  for (const Buffer &t : m.buffers) {
    if (t.role != "tensor_map")
      continue;
    const TensorMapSpec &tm = t.tensorMap;
    std::string where = "tensor map '" + t.name + "'";
    const Buffer *of = nullptr;
    for (const Buffer &b : m.buffers)
      if (b.name == tm.of)
        of = &b;
    if (!of || !of->isData())
      fail(where + " describes '" + tm.of + "', which is not a data buffer");
    size_t r = of->shape.size();
    if (tm.dims.size() != r || tm.box.size() != r || r < 2 || r > 5)
      fail(where + ": dims and box need one size per axis of '" + tm.of + "' (" +
           std::to_string(r) + ", at least 2)");
    for (size_t d = 0; d < r; ++d) {
      if (tm.dims[d] < 1 || tm.dims[d] > of->shape[d])
        fail(where + ": dims[" + std::to_string(d) + "] = " + std::to_string(tm.dims[d]) +
             " must be in [1, " + std::to_string(of->shape[d]) + "]");
      if (tm.box[d] < 1 || tm.box[d] > 256)
        fail(where + ": box[" + std::to_string(d) + "] = " + std::to_string(tm.box[d]) +
             " must be in [1, 256]");
    }
    if (tm.box.back() * 4 > 128)
      fail(where + ": a 128-byte swizzled box row holds at most 32 floats, got " +
           std::to_string(tm.box.back()));
    if (of->shape.back() * 4 % 16)
      fail(where + ": rows of '" + tm.of + "' are " + std::to_string(of->shape.back() * 4) +
           " bytes, not a multiple of 16 as a tensor map needs");
  }

  const json &ks = field(j, "kernels", "manifest");
  if (!ks.is_array() || ks.empty())
    fail("kernels must be a non-empty array");
  for (size_t i = 0; i < ks.size(); ++i) {
    std::string where = "kernels[" + std::to_string(i) + "]";
    Kernel k;
    k.name = str(ks[i], "name", where);
    k.ptx = str(ks[i], "ptx", where);
    k.cubin = ks[i].value("cubin", "");
    auto grid = ints(ks[i], "grid", where), block = ints(ks[i], "block", where);
    if (grid.size() != 3 || block.size() != 3)
      fail(where + " grid and block need 3 sizes each");
    for (int d = 0; d < 3; ++d) {
      if (grid[d] <= 0 || block[d] <= 0)
        fail(where + " (" + k.name + ") has a non-positive grid or block size");
      k.grid[d] = grid[d];
      k.block[d] = block[d];
    }
    if (k.threads() > 1024)
      fail(where + " (" + k.name + ") asks for " + std::to_string(k.threads()) +
           " threads per block; at most 1024");
    if (ks[i].contains("cluster")) {
      auto cluster = ints(ks[i], "cluster", where);
      if (cluster.size() != 3)
        fail(where + " cluster needs 3 sizes");
      for (int d = 0; d < 3; ++d) {
        if (cluster[d] <= 0 || k.grid[d] % cluster[d] != 0)
          fail(where + " (" + k.name + ") cluster size " + std::to_string(cluster[d]) +
               " does not divide grid size " + std::to_string(k.grid[d]));
        k.cluster[d] = cluster[d];
      }
      if (k.clusterBlocks() > 16)
        fail(where + " (" + k.name + ") asks for clusters of " +
             std::to_string(k.clusterBlocks()) + " blocks; at most 16");
    }
    k.dynamicSharedBytes = ks[i].value("dynamic_shared_bytes", 0);
    if (ks[i].contains("co_resident_blocks")) {
      const json &c = ks[i]["co_resident_blocks"];
      if (!c.is_number_integer() || c.get<int64_t>() < 1)
        fail(where + " (" + k.name + ") co_resident_blocks must be a positive integer");
      k.coResidentBlocks = c.get<int64_t>();
    }
    for (const json &a : field(ks[i], "args", where)) {
      if (!a.is_string() || !names.count(a.get<std::string>()))
        fail(where + " (" + k.name + ") names an unknown buffer " + a.dump());
      k.args.push_back(a.get<std::string>());
    }
    for (size_t a = 0; a < k.args.size(); ++a)
      if (m.buffer(k.args[a]).role == "tensor_map" && a + 1 == k.args.size())
        fail(where + " (" + k.name + ") writes tensor map '" + k.args[a] +
             "' as its output");
    for (const json &o : ks[i].value("ops", json::array())) {
      if (!o.is_number_integer() || o.get<int64_t>() < 0 ||
          o.get<size_t>() >= m.program.size())
        fail(where + " (" + k.name + ") names op " + o.dump() +
             ", which the program does not have");
      k.ops.push_back(o.get<size_t>());
    }
    if (ks[i].contains("config"))
      k.config = ks[i]["config"].is_string() ? ks[i]["config"].get<std::string>()
                                             : ks[i]["config"].dump();
    if (ks[i].contains("resources")) {
      const json &r = ks[i]["resources"];
      k.resources.known = true;
      k.resources.registers = r.value("registers", 0);
      k.resources.sharedStaticBytes = r.value("shared_static_bytes", 0);
      k.resources.stackBytes = r.value("stack_bytes", 0);
      k.resources.spillStoreBytes = r.value("spill_store_bytes", 0);
      k.resources.spillLoadBytes = r.value("spill_load_bytes", 0);
    }
    // A workspace belongs to a split_global softmax, which indexes it by
    // its output's rows and its blocks per row: a hand-edited size would
    // let the kernel write past it. (The compiler's twin of this formula is
    // splitGlobalWorkspaceWords in KBDialect.h.)
    for (const std::string &a : k.args) {
      const Buffer &ws = m.buffer(a);
      if (ws.role != "workspace")
        continue;
      if (k.coResidentBlocks < 1 || k.args.back() == a)
        fail(where + " (" + k.name + ") takes workspace '" + a +
             "' but declares no co_resident_blocks (or writes it as its output)");
      const Buffer &out = m.buffer(k.args.back());
      int64_t rows = out.elements() / out.shape.back();
      int64_t words = 2 + 2 * rows + 2 * rows * k.coResidentBlocks;
      if (ws.elements() != words)
        fail(where + " (" + k.name + ") workspace '" + a + "' has " +
             std::to_string(ws.elements()) + " words; " + std::to_string(rows) +
             " rows of " + std::to_string(k.coResidentBlocks) + " blocks need " +
             std::to_string(words));
    }
    m.kernels.push_back(k);
  }
  return m;
}

bool Manifest::hasBuffer(const std::string &name) const {
  for (const Buffer &b : buffers)
    if (b.name == name)
      return true;
  return false;
}

const Buffer &Manifest::buffer(const std::string &name) const {
  for (const Buffer &b : buffers)
    if (b.name == name)
      return b;
  throw ManifestError("manifest: no buffer named '" + name + "'");
}

} // namespace kb::runtime
