//===- Manifest.cpp - parse and check a bundle's manifest.json ------------===//
//
// A bundle is untrusted input. Every field kb-run relies on is checked here
// for its type, its range and its consistency with the rest of the manifest
// (buffer shapes against each op and each kernel's arguments, launch sizes
// against CUDA's limits, files inside the bundle folder), with a one-line
// message that names the field (`manifest: kernels[0].grid[1]: 70000 exceeds
// CUDA's limit 65535`), so that a malformed bundle stops before anything
// touches the GPU and before any size taken from it is used in arithmetic.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"
#include "kb/Transforms/StreamK.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <regex>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kb::runtime {

using nlohmann::json;
namespace fs = std::filesystem;

int64_t boundedElements(const std::vector<int64_t> &shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > limit / d)
      return -1;
    n *= d;
  }
  return n <= limit ? n : -1;
}

int64_t Buffer::elements() const {
  return boundedElements(shape, std::numeric_limits<int64_t>::max());
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

std::string readRegularFile(const std::string &path, int64_t maxBytes,
                            const std::string &what) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer; it is then
  // refused as not a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw ManifestError(what + ": cannot open " + path + ": " +
                        std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ManifestError(what + ": " + path + " is not a regular file");
  }
  if (st.st_size > maxBytes) {
    ::close(fd);
    throw ManifestError(what + ": " + path + " is " +
                        std::to_string(st.st_size) + " bytes, more than the " +
                        std::to_string(maxBytes) + " kb-run reads");
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t r = ::read(fd, text.data() + got, text.size() - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  if (got != text.size())
    throw ManifestError(what + ": could not read all of " + path);
  return text;
}

namespace {

/// One line whatever the manifest's strings hold: control characters are
/// shown as \xNN.
std::string oneLine(const std::string &s) {
  std::string r;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", c);
      r += buf;
    } else {
      r += static_cast<char>(c);
    }
  }
  return r;
}

[[noreturn]] void fail(const std::string &what) {
  throw ManifestError("manifest: " + oneLine(what));
}

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

/// A JSON value, shortened for a message.
std::string shown(const json &v) {
  std::string s = v.dump();
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

const char *typeName(const json &v) {
  if (v.is_number_integer())
    return "an integer";
  if (v.is_number())
    return "a number";
  return v.type_name();
}

/// `obj[key]`, or null when absent; `obj` must be an object.
const json *opt(const json &obj, const char *key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json &field(const json &obj, const char *key, const std::string &where) {
  if (!obj.is_object())
    fail(where + " must be an object, not " + typeName(obj));
  const json *v = opt(obj, key);
  if (!v)
    fail(where + " has no field '" + key + "'");
  return *v;
}

std::string join(const std::string &where, const char *key) {
  return where == "manifest" ? std::string(key) : where + "." + key;
}

std::string asString(const json &v, const std::string &path) {
  if (!v.is_string())
    fail(path + " must be a string, not " + typeName(v));
  return v.get<std::string>();
}

std::string str(const json &obj, const char *key, const std::string &where) {
  return asString(field(obj, key, where), join(where, key));
}

/// An integer in [lo, hi]; a float, a string or an integer beyond int64 is
/// refused by name, never converted.
int64_t asInt(const json &v, const std::string &path, int64_t lo, int64_t hi,
              const std::string &limitName = "") {
  if (!v.is_number_integer())
    fail(path + " must be an integer, not " + typeName(v) + " (" + shown(v) +
         ")");
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    fail(path + ": " + shown(v) + " exceeds " +
         (limitName.empty() ? "the limit " + std::to_string(hi) : limitName));
  int64_t x = v.get<int64_t>();
  if (x < lo)
    fail(path + ": " + std::to_string(x) + " is below the minimum " +
         std::to_string(lo));
  if (x > hi)
    fail(path + ": " + std::to_string(x) + " exceeds " +
         (limitName.empty() ? "the limit " + std::to_string(hi) : limitName));
  return x;
}

double asNumber(const json &v, const std::string &path) {
  if (!v.is_number())
    fail(path + " must be a number, not " + typeName(v));
  double d = v.get<double>();
  if (!std::isfinite(d))
    fail(path + " must be finite");
  return d;
}

bool asBool(const json &v, const std::string &path) {
  if (!v.is_boolean())
    fail(path + " must be true or false, not " + typeName(v));
  return v.get<bool>();
}

const json &array(const json &v, const std::string &path,
                  bool nonEmpty = false) {
  if (!v.is_array())
    fail(path + " must be an array, not " + typeName(v));
  if (nonEmpty && v.empty())
    fail(path + " must not be empty");
  return v;
}

std::vector<int64_t> ints(const json &v, const std::string &path, int64_t lo,
                          int64_t hi) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < array(v, path).size(); ++i)
    out.push_back(asInt(v[i], path + "[" + std::to_string(i) + "]", lo, hi));
  return out;
}

/// A static shape: up to 8 positive dimensions of at most `maxElements`
/// elements in all; at least one unless `scalar` (a rank-0 buffer, one
/// element, which no op can read or write: their shapes have an axis).
std::vector<int64_t> shapeField(const json &obj, const std::string &where,
                                int64_t maxElements, bool scalar = false) {
  std::string path = where + ".shape";
  const json &v = field(obj, "shape", where);
  std::vector<int64_t> s = ints(v, path, 1, maxElements);
  if ((s.empty() && !scalar) || s.size() > 8)
    fail(path + " must have " + (scalar ? "0" : "1") +
         " to 8 dimensions, has " + std::to_string(s.size()));
  if (boundedElements(s, maxElements) < 0)
    fail(path + " " + shapeStr(s) + ": more than " +
         std::to_string(maxElements) + " elements (" +
         std::to_string(maxElements * 4) + " bytes) in all");
  return s;
}

/// A PTX identifier: kernel names reach the driver, ncu's command line and
/// file names.
bool isIdentifier(const std::string &s) {
  if (s.empty() || s.size() > 256 ||
      std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '$')
      return false;
  return true;
}

const std::set<std::string> &unaryOps() {
  static const std::set<std::string> ops = {
      "kb.scale",   "kb.relu", "kb.tanh",       "kb.exp",
      "kb.sigmoid", "kb.gelu", "kb.dropout",    "kb.softmax",
      "kb.silu",    "kb.pow",  "kb.add_scalar", "kb.leaky_relu"};
  return ops;
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
      if (p != "ieee" && p != "tf32" && p != "tf32x3")
        fail(path + " must be ieee, tf32 or tf32x3, got '" + p + "'");
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
    }
    // Other attributes are recorded for the reader and not used by kb-run.
  }
}

} // namespace

Manifest Manifest::load(const std::string &path) {
  fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec))
    p /= "manifest.json";
  else if (!fs::exists(p, ec))
    throw ManifestError("cannot open " + p.string() +
                        " (expected a bundle folder written by kb-opt "
                        "--kb-compile, or its manifest.json)");
  std::string text =
      readRegularFile(p.string(), BundleLimits::manifestBytes, "manifest");
  std::string dir = p.parent_path().string();
  Manifest m = parse(text, dir.empty() ? "." : dir);
  m.checkFiles();
  return m;
}

std::string Manifest::filePath(const std::string &rel,
                               const std::string &where) const {
  if (rel.empty())
    fail(where + " is empty");
  if (rel.find('\0') != std::string::npos)
    fail(where + " contains a NUL character");
  fs::path r(rel);
  if (r.is_absolute())
    fail(where + " '" + rel +
         "' is an absolute path; a bundle names files inside its folder");
  for (const fs::path &part : r)
    if (part == "..")
      fail(where + " '" + rel + "' leaves the bundle folder ('..')");
  std::error_code ec;
  fs::path root = fs::canonical(dir, ec);
  if (ec)
    fail("bundle folder " + dir + ": " + ec.message());
  fs::path full = fs::path(dir) / r;
  fs::path real = fs::canonical(full, ec);
  if (ec)
    fail(where + " names " + full.string() + ", which does not exist");
  // Symlinks resolved: the file must still lie inside the bundle folder.
  auto rootStr = root.string(), realStr = real.string();
  if (realStr.compare(0, rootStr.size(), rootStr) != 0 ||
      (realStr.size() > rootStr.size() && realStr[rootStr.size()] != '/' &&
       rootStr != "/"))
    fail(where + " '" + rel + "' resolves to " + realStr +
         ", outside the bundle folder");
  struct stat st;
  if (::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    fail(where + " '" + rel + "' is not a regular file");
  if (st.st_size > BundleLimits::kernelFileBytes)
    fail(where + " '" + rel + "' is " + std::to_string(st.st_size) +
         " bytes, more than the " +
         std::to_string(BundleLimits::kernelFileBytes) + " kb-run reads");
  return real.string();
}

void Manifest::checkFiles() const {
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string where = "kernels[" + std::to_string(i) + "]";
    filePath(kernels[i].ptx, where + ".ptx");
    if (!kernels[i].cubin.empty())
      filePath(kernels[i].cubin, where + ".cubin");
  }
}

Manifest Manifest::parse(const std::string &text, const std::string &dir) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception &e) {
    // The library's message, without its "[json.exception.KIND.N] " tag: a
    // parse error names a byte offset, a number too large for a double
    // (1e400, found by the manifest fuzzer) says so.
    std::string what = e.what();
    size_t at = what.find("parse error");
    if (at == std::string::npos && what.rfind("[json.exception", 0) == 0 &&
        what.find("] ") != std::string::npos)
      at = what.find("] ") + 2;
    fail("not valid JSON (" +
         (at == std::string::npos ? what : what.substr(at)) + ")");
  }
  if (!j.is_object())
    fail("the manifest must be a JSON object, not " + std::string(typeName(j)));
  Manifest m;
  m.dir = dir;
  if (str(j, "format", "manifest") != "kb-bundle")
    fail("format must be \"kb-bundle\"");
  const json &version = field(j, "version", "manifest");
  // 4294967297 is not 1: compared as the integer it is, never truncated.
  bool one = version.is_number_unsigned()  ? version.get<uint64_t>() == 1
             : version.is_number_integer() ? version.get<int64_t>() == 1
                                           : false;
  if (!one)
    fail("version " + shown(version) +
         " is not supported (kb-run reads version 1)");
  m.version = 1;
  m.target = str(j, "target", "manifest");
  {
    const std::string &t = m.target;
    bool ok = t.size() >= 5 && t.size() <= 8 && t.compare(0, 3, "sm_") == 0;
    for (size_t i = 3; ok && i < t.size(); ++i)
      ok = std::isdigit(static_cast<unsigned char>(t[i])) ||
           (i + 1 == t.size() && t[i] == 'a');
    if (!ok)
      fail("target '" + t.substr(0, 40) +
           "' is not a chip name such as sm_90a");
  }
  if (const json *f = opt(j, "function"))
    m.function = asString(*f, "function");
  if (const json *c = opt(j, "compiler"))
    m.compiler = asString(*c, "compiler");

  // Buffers.
  const int64_t maxElements = BundleLimits::bufferBytes / 4;
  std::map<std::string, size_t> index;
  const json &bufs = array(field(j, "buffers", "manifest"), "buffers", true);
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::string where = "buffers[" + std::to_string(i) + "]";
    const json &bj = bufs[i];
    Buffer b;
    b.name = str(bj, "name", where);
    if (b.name.empty() || b.name.size() > 256)
      fail(where + ".name must have 1 to 256 characters");
    b.role = str(bj, "role", where);
    if (b.role != "input" && b.role != "output" && b.role != "scratch" &&
        b.role != "workspace" && b.role != "tensor_map")
      fail(where +
           ".role must be input, output, scratch, workspace or tensor_map, "
           "got " +
           b.role);
    where += " (" + b.name + ")";
    b.shape = shapeField(bj, where, maxElements, /*scalar=*/b.role == "input");
    std::string dtype = str(bj, "dtype", where);
    if (dtype != (b.isData() ? "f32" : "i32"))
      fail(
          where + " has dtype " + bj["dtype"].dump() +
          (b.isData() ? "; kb-run supports f32" : "; a " + b.role + " is i32"));
    if (b.role == "tensor_map") {
      std::string w = where + ".tensor_map";
      const json &tm = field(bj, "tensor_map", where);
      b.tensorMap.of = str(tm, "of", w);
      b.tensorMap.dims =
          ints(field(tm, "dims", w), w + ".dims", 1, maxElements);
      b.tensorMap.box = ints(field(tm, "box", w), w + ".box", 1, maxElements);
      if (str(tm, "swizzle", w) != "128B")
        fail(w +
             ".swizzle must be \"128B\" (the only swizzle kb's kernels read)");
      if (b.shape != std::vector<int64_t>{32})
        fail(where + " must have shape [32]: a tensor map is 128 bytes");
    } else if (opt(bj, "tensor_map")) {
      fail(where + ".tensor_map is only for a buffer of role tensor_map");
    }
    if (const json *init = opt(bj, "init")) {
      std::string w = where + ".init";
      if (b.role != "input")
        fail(w + ": only an input is initialised");
      if (!init->is_object())
        fail(w + " must be an object, not " + typeName(*init));
      if (const json *d = opt(*init, "dist"))
        b.dist = asString(*d, w + ".dist");
      if (b.dist != "normal" && b.dist != "uniform")
        fail(w + ".dist must be normal or uniform");
      if (const json *x = opt(*init, "mean"))
        b.mean = asNumber(*x, w + ".mean");
      if (const json *x = opt(*init, "std"))
        b.std = asNumber(*x, w + ".std");
      if (b.std < 0)
        fail(w + ".std must not be negative");
      if (std::fabs(b.mean) > 1e30 || b.std > 1e30)
        fail(w + ": mean and std must be at most 1e30 in magnitude");
    }
    if (!index.emplace(b.name, i).second)
      fail(where + ": buffer name '" + b.name + "' appears twice");
    m.buffers.push_back(b);
  }
  auto bufferOf = [&](const std::string &name) -> const Buffer * {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &m.buffers[it->second];
  };

  // Program: each op's operands are buffers or earlier ops' outputs, and
  // their shapes agree with what the op computes.
  const json &prog = array(field(j, "program", "manifest"), "program");
  std::map<std::string, std::vector<int64_t>> defined; // name -> shape
  for (const Buffer &b : m.buffers)
    if (b.isData())
      defined[b.name] = b.shape;
  std::set<std::string> written;
  for (size_t i = 0; i < prog.size(); ++i) {
    std::string where = "program[" + std::to_string(i) + "]";
    const json &pj = prog[i];
    ProgramOp op;
    op.op = str(pj, "op", where);
    if (op.op != "kb.matmul" && op.op != "kb.transpose" && op.op != "kb.pad" &&
        op.op != "kb.split_sum" && !unaryOps().count(op.op) &&
        !binaryOps().count(op.op))
      fail(where + ".op '" + op.op.substr(0, 40) +
           "' is not an op kb-run can check");
    where += " (" + op.op + ")";
    op.output = str(pj, "output", where);
    op.shape = shapeField(pj, where, maxElements);
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
    std::vector<std::vector<int64_t>> inShapes;
    for (size_t a = 0; a < op.inputs.size(); ++a) {
      auto it = defined.find(op.inputs[a]);
      if (it == defined.end())
        fail(where + ".inputs[" + std::to_string(a) + "] '" + op.inputs[a] +
             "' is neither a data buffer nor an earlier op's output");
      inShapes.push_back(it->second);
    }
    const Buffer *outBuf = bufferOf(op.output);
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
        if (!bufferOf(op.inputs[a]))
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
      if (!bufferOf(op.inputs[0]))
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
      if (!bufferOf(op.inputs[0]))
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
    } else if (op.op == "kb.bias_add") {
      needInputs(2);
      sameShape(0);
      if (inShapes[1] != std::vector<int64_t>{op.shape.back()})
        fail(where + ".inputs[1] '" + op.inputs[1] + "' has shape " +
             shapeStr(inShapes[1]) + "; a bias of " + shapeStr(op.shape) +
             " has shape [" + std::to_string(op.shape.back()) + "]");
    } else if (binaryOps().count(op.op)) {
      needInputs(2);
      sameShape(0);
      sameShape(1);
    } else {
      needInputs(1);
      sameShape(0);
    }
    if (outBuf && outBuf->shape != op.shape)
      fail(where + " has shape " + shapeStr(op.shape) +
           ", its output buffer '" + op.output + "' has " +
           shapeStr(outBuf->shape));
    defined[op.output] = op.shape;
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
    const Buffer *of = bufferOf(tm.of);
    if (!of || !of->isData())
      fail(where + " describes '" + tm.of + "', which is not a data buffer");
    size_t r = of->shape.size();
    if (tm.dims.size() != r || tm.box.size() != r || r < 2 || r > 5)
      fail(where + ": dims and box need one size per axis of '" + tm.of +
           "' (" + std::to_string(r) + ", at least 2)");
    for (size_t d = 0; d < r; ++d) {
      if (tm.dims[d] < 1 || tm.dims[d] > of->shape[d])
        fail(where + ": dims[" + std::to_string(d) +
             "] = " + std::to_string(tm.dims[d]) + " must be in [1, " +
             std::to_string(of->shape[d]) + "]");
      if (tm.box[d] < 1 || tm.box[d] > 256)
        fail(where + ": box[" + std::to_string(d) +
             "] = " + std::to_string(tm.box[d]) + " must be in [1, 256]");
    }
    if (tm.box.back() * 4 > 128)
      fail(where +
           ": a 128-byte swizzled box row holds at most 32 floats, got " +
           std::to_string(tm.box.back()));
    if (of->shape.back() * 4 % 16)
      fail(where + ": rows of '" + tm.of + "' are " +
           std::to_string(of->shape.back() * 4) +
           " bytes, not a multiple of 16 as a tensor map needs");
  }

  // Kernels.
  const json &ks = array(field(j, "kernels", "manifest"), "kernels", true);
  std::set<std::string> kernelNames;
  std::vector<int> opKernel(m.program.size(), -1);
  std::set<std::string> kernelOutputs;
  for (size_t i = 0; i < ks.size(); ++i) {
    std::string where = "kernels[" + std::to_string(i) + "]";
    const json &kj = ks[i];
    Kernel k;
    k.name = str(kj, "name", where);
    if (!isIdentifier(k.name))
      fail(where + ".name '" + k.name.substr(0, 40) +
           "' is not a PTX identifier");
    if (!kernelNames.insert(k.name).second)
      fail(where + ".name '" + k.name + "' appears twice");
    k.ptx = str(kj, "ptx", where);
    if (const json *c = opt(kj, "cubin"))
      k.cubin = asString(*c, where + ".cubin");
    std::string named = where + " (" + k.name + ")";

    auto dims3 = [&](const char *key) {
      std::string path = where + "." + key;
      const json &v = array(field(kj, key, where), path);
      if (v.size() != 3)
        fail(path + " needs 3 sizes (x, y, z), has " +
             std::to_string(v.size()));
      return path;
    };
    std::string gp = dims3("grid");
    for (int d = 0; d < 3; ++d)
      k.grid[d] = asInt(kj["grid"][d], gp + "[" + std::to_string(d) + "]", 1,
                        d == 0 ? BundleLimits::gridX : BundleLimits::gridYZ,
                        "CUDA's limit " +
                            std::to_string(d == 0 ? BundleLimits::gridX
                                                  : BundleLimits::gridYZ));
    std::string bp = dims3("block");
    for (int d = 0; d < 3; ++d)
      k.block[d] =
          asInt(kj["block"][d], bp + "[" + std::to_string(d) + "]", 1,
                d == 2 ? BundleLimits::blockZ : BundleLimits::blockThreads,
                "CUDA's limit " +
                    std::to_string(d == 2 ? BundleLimits::blockZ
                                          : BundleLimits::blockThreads));
    // Each factor is at most 1024 here, so the product cannot overflow.
    if (k.threads() > BundleLimits::blockThreads)
      fail(bp + ": " + named + " asks for " + std::to_string(k.threads()) +
           " threads per block; at most 1024");
    if (opt(kj, "cluster")) {
      std::string cp = dims3("cluster");
      for (int d = 0; d < 3; ++d) {
        k.cluster[d] = asInt(
            kj["cluster"][d], cp + "[" + std::to_string(d) + "]", 1,
            BundleLimits::clusterBlocks, "the limit of 16 blocks a cluster");
        if (k.grid[d] % k.cluster[d] != 0)
          fail(named + " cluster size " + std::to_string(k.cluster[d]) +
               " does not divide grid size " + std::to_string(k.grid[d]));
      }
      if (k.clusterBlocks() > BundleLimits::clusterBlocks)
        fail(named + " asks for clusters of " +
             std::to_string(k.clusterBlocks()) + " blocks; at most 16");
    }
    if (const json *d = opt(kj, "dynamic_shared_bytes"))
      k.dynamicSharedBytes =
          asInt(*d, where + ".dynamic_shared_bytes", 0,
                BundleLimits::dynamicSharedBytes,
                "the 227 KB (232448 bytes) of shared memory a block can have");
    if (const json *c = opt(kj, "co_resident_blocks"))
      k.coResidentBlocks =
          asInt(*c, where + ".co_resident_blocks", 1, BundleLimits::gridX,
                "CUDA's limit " + std::to_string(BundleLimits::gridX));
    if (const json *d = opt(kj, "dependent_launch"))
      k.dependentLaunch = asBool(*d, where + ".dependent_launch");

    const json &args = array(field(kj, "args", where), where + ".args", true);
    if (args.size() > 512)
      fail(where + ".args: " + std::to_string(args.size()) +
           " arguments exceed the 4 KB of kernel parameters");
    for (size_t a = 0; a < args.size(); ++a) {
      std::string ap = where + ".args[" + std::to_string(a) + "]";
      std::string name = asString(args[a], ap);
      if (!bufferOf(name))
        fail(ap + ": " + named + " names an unknown buffer \"" +
             name.substr(0, 40) + "\"");
      k.args.push_back(name);
    }
    const Buffer &out = *bufferOf(k.args.back());
    if (out.role == "tensor_map")
      fail(named + " writes tensor map '" + out.name + "' as its output");
    if (out.role == "input" || out.role == "workspace")
      fail(where + ".args: " + named + "'s last argument (its output) '" +
           out.name + "' is a buffer of role " + out.role);
    if (out.shape.empty())
      fail(where + ".args: " + named + "'s output '" + out.name +
           "' has rank 0");
    kernelOutputs.insert(out.name);

    if (const json *ops = opt(kj, "ops")) {
      array(*ops, where + ".ops");
      for (size_t q = 0; q < ops->size(); ++q) {
        const json &o = (*ops)[q];
        std::string qp = where + ".ops[" + std::to_string(q) + "]";
        if (!o.is_number_integer() || o.get<int64_t>() < 0 ||
            o.get<uint64_t>() >= m.program.size())
          fail(named + " names op " + shown(o) +
               ", which the program does not have");
        size_t idx = o.get<size_t>();
        if (opKernel[idx] >= 0)
          fail(qp + ": op " + std::to_string(idx) + " is computed by kernels[" +
               std::to_string(opKernel[idx]) + "] already");
        if (!k.ops.empty() && idx <= k.ops.back())
          fail(qp + ": a kernel's ops must be listed in program order");
        opKernel[idx] = static_cast<int>(i);
        k.ops.push_back(idx);
      }
    }
    if (const json *c = opt(kj, "config"))
      k.config = c->is_string() ? c->get<std::string>() : c->dump();
    if (const json *r = opt(kj, "resources")) {
      std::string w = where + ".resources";
      if (!r->is_object())
        fail(w + " must be an object, not " + typeName(*r));
      k.resources.known = true;
      auto res = [&](const char *key, int64_t hi) {
        const json *v = opt(*r, key);
        return v ? static_cast<int>(asInt(*v, w + "." + key, 0, hi)) : 0;
      };
      k.resources.registers = res("registers", 255);
      k.resources.sharedStaticBytes = res("shared_static_bytes", 48 * 1024);
      k.resources.stackBytes = res("stack_bytes", 1 << 24);
      k.resources.spillStoreBytes = res("spill_store_bytes", 1 << 24);
      k.resources.spillLoadBytes = res("spill_load_bytes", 1 << 24);
      res("barriers", 16);
      if (k.resources.sharedStaticBytes + k.dynamicSharedBytes >
          BundleLimits::dynamicSharedBytes)
        fail(w + ".shared_static_bytes: " + named + " uses " +
             std::to_string(k.resources.sharedStaticBytes +
                            k.dynamicSharedBytes) +
             " bytes of shared memory in all, more than 232448");
    }

    // The kernel's ops against its arguments: what the checks read and
    // write must be what the kernel is given.
    if (!k.ops.empty()) {
      std::set<std::string> argSet(k.args.begin(), k.args.end());
      std::set<std::string> local;
      bool hasMatmul = false, hasTranspose = false;
      for (size_t q = 0; q < k.ops.size(); ++q) {
        const ProgramOp &op = m.program[k.ops[q]];
        std::string op_where =
            "program[" + std::to_string(k.ops[q]) + "] (" + op.op + ")";
        if (!op.kernel.empty() && op.kernel != k.name)
          fail(op_where + ".kernel is '" + op.kernel + "', but " + named +
               " lists it");
        for (const std::string &in : op.inputs) {
          if (bufferOf(in)) {
            if (!argSet.count(in))
              fail(op_where + " reads buffer '" + in +
                   "', which is not among " + named + "'s args");
          } else if (!local.count(in)) {
            fail(op_where + " reads '" + in +
                 "', a value of another kernel's registers");
          }
        }
        if (bufferOf(op.output)) {
          if (!argSet.count(op.output))
            fail(op_where + " writes buffer '" + op.output +
                 "', which is not among " + named + "'s args");
        } else {
          local.insert(op.output);
        }
        if (op.op == "kb.matmul") {
          hasMatmul = true;
          if (q != 0)
            fail(op_where + ": a matmul must be its kernel's first op (" +
                 named + ")");
        }
        hasTranspose |= op.op == "kb.transpose" || op.op == "kb.pad";
      }
      if (hasTranspose && k.ops.size() != 1)
        fail(named + ": a transpose or pad is a kernel of its own");
      const ProgramOp &last = m.program[k.ops.back()];
      if (last.output != k.args.back())
        fail(named + "'s last op writes '" + last.output +
             "', but its output (last arg) is '" + k.args.back() + "'");
      if (!hasMatmul && !hasTranspose)
        for (size_t q : k.ops)
          for (const std::string &in : m.program[q].inputs)
            if (const Buffer *b = bufferOf(in))
              if (b->elements() != out.elements() &&
                  !(m.program[q].op == "kb.bias_add" &&
                    in == m.program[q].inputs[1]) &&
                  m.program[q].op != "kb.split_sum")
                fail("program[" + std::to_string(q) + "] (" + m.program[q].op +
                     ") reads '" + in + "' of " + shapeStr(b->shape) +
                     " in a kernel writing " + shapeStr(out.shape));
    }

    // A workspace belongs to a split_global softmax, which indexes it by
    // its output's rows and its blocks per row: a hand-edited size would
    // let the kernel write past it. (The compiler's twin of this formula is
    // splitGlobalWorkspaceWords in KBDialect.h.)
    // A stream-K matmul's (reduce = "stream") holds four flags a block of
    // its persistent grid, then the partial tiles of the tiles it splits,
    // which the kernel indexes by its tile, grid and K
    // (streamKWorkspaceWords, the compiler's own formula).
    bool streamK = k.config.find("reduce = \"stream\"") != std::string::npos;
    for (const std::string &a : k.args) {
      const Buffer &ws = *bufferOf(a);
      if (ws.role != "workspace")
        continue;
      if (streamK) {
        static const std::regex blockRe(
            "block = \\[([0-9]{1,6}), ([0-9]{1,6}), ([0-9]{1,6})\\]");
        std::smatch bmatch;
        // A (M x K): the first input of the kernel's first op, its matmul
        // (a fusion's kernel arguments follow its operands, bias first
        // perhaps).
        const Buffer *lhs = nullptr;
        if (!k.ops.empty() && k.ops.front() < m.program.size() &&
            !m.program[k.ops.front()].inputs.empty())
          lhs = bufferOf(m.program[k.ops.front()].inputs[0]);
        int64_t need = -1;
        if (std::regex_search(k.config, bmatch, blockRe) && lhs &&
            lhs->shape.size() >= 2 && out.shape.size() >= 2 && k.grid[0] > 0) {
          int64_t bm = std::stoll(bmatch[1]), bn = std::stoll(bmatch[2]),
                  bk = std::stoll(bmatch[3]);
          int64_t m = out.shape[out.shape.size() - 2], n = out.shape.back();
          int64_t kk = lhs->shape.back(), g = k.grid[0];
          if (bm > 0 && bn > 0 && bk > 0) {
            int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn);
            need = mlir::kb::streamKWorkspaceWords(tiles, (kk + bk - 1) / bk,
                                                   g, bm, bn);
          }
        }
        if (k.args.back() == a || k.coResidentBlocks != k.grid[0] ||
            ws.elements() != need)
          fail(named + " (stream-K) takes workspace '" + a + "' of " +
               std::to_string(ws.elements()) + " words with " +
               std::to_string(k.coResidentBlocks) +
               " co-resident blocks; its grid of " +
               std::to_string(k.grid[0]) + " blocks needs that many resident" +
               (need >= 0 ? " and " + std::to_string(need) + " words"
                          : " and a config with its block"));
        continue;
      }
      if (k.coResidentBlocks < 1 || k.args.back() == a)
        fail(named + " takes workspace '" + a +
             "' but declares no co_resident_blocks (or writes it as its "
             "output)");
      int64_t rows = out.elements() / out.shape.back();
      // rows < 2^38 and coResidentBlocks < 2^63: compare without overflow.
      int64_t perRow = (ws.elements() - 2) / 2;
      bool fits = ws.elements() >= 2 + 2 * rows &&
                  (ws.elements() - 2) % 2 == 0 && (perRow - rows) % rows == 0 &&
                  (perRow - rows) / rows == k.coResidentBlocks;
      if (!fits) {
        std::string need =
            k.coResidentBlocks <= (INT64_MAX / 4) / std::max<int64_t>(rows, 1)
                ? std::to_string(2 + 2 * rows + 2 * rows * k.coResidentBlocks)
                : "more";
        fail(named + " workspace '" + a + "' has " +
             std::to_string(ws.elements()) + " words; " + std::to_string(rows) +
             " rows of " + std::to_string(k.coResidentBlocks) +
             " blocks need " + need);
      }
    }
    m.kernels.push_back(k);
  }
  for (size_t i = 0; i < m.program.size(); ++i)
    if (opKernel[i] < 0 && !m.program[i].kernel.empty())
      fail("program[" + std::to_string(i) + "] (" + m.program[i].op +
           ") names kernel '" + m.program[i].kernel +
           "', which does not list it in its ops");
  for (const Buffer &b : m.buffers)
    if (b.role == "output" && !kernelOutputs.count(b.name) &&
        !written.count(b.name))
      fail("buffers[" + std::to_string(index.at(b.name)) + "] (" + b.name +
           ") is an output that no kernel writes");
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

std::string targetCannotRun(const std::string &target, int major, int minor) {
  bool archSpecific = !target.empty() && target.back() == 'a';
  std::string digits =
      target.size() > 3
          ? target.substr(3, target.size() - 3 - (archSpecific ? 1 : 0))
          : "";
  if (target.rfind("sm_", 0) != 0 || digits.empty() || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    throw ManifestError("manifest: target: '" + target +
                        "' is not a chip kb knows");
  int want = std::stoi(digits), cc = major * 10 + minor;
  if (archSpecific ? cc == want : cc >= want)
    return "";
  return "targets " + target +
         (archSpecific ? " (instructions of that chip only: wgmma, TMA)" : "") +
         ", which a GPU of compute capability " + std::to_string(major) + "." +
         std::to_string(minor) + " cannot run";
}

} // namespace kb::runtime
