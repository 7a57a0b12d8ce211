//===- Npy.cpp - read and write kb's .npy files ---------------------------===//
//
// Reads a version 1.0/2.0/3.0 .npy file as untrusted input: the file must be
// a regular file (no FIFO, no device); the header's length is bounded and
// checked against the file; its dictionary is parsed strictly (exactly the
// keys 'descr', 'fortran_order' and 'shape'; only '<f4', '<f2' and '<u2'
// (bf16's bits) in C order, what kb buffers hold); the element count is computed without overflow and
// checked against the bytes the file holds before anything is allocated.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Npy.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kb::runtime {

namespace {

/// A file descriptor closed on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

bool readAll(int fd, char *to, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, to + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

/// The header dictionary, e.g. {'descr': '<f4', 'fortran_order': False,
/// 'shape': (2, 3), }, parsed as the small Python literal it is.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &path)
      : s(text), path(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool haveDescr = false, haveOrder = false, haveShape = false;
    skipSpace();
    expect('{');
    for (;;) {
      skipSpace();
      if (peek() == '}')
        break;
      std::string key = quoted();
      skipSpace();
      expect(':');
      skipSpace();
      if (key == "descr") {
        once(haveDescr, key);
        h.descr = quoted();
      } else if (key == "fortran_order") {
        once(haveOrder, key);
        h.fortranOrder = boolean();
      } else if (key == "shape") {
        once(haveShape, key);
        h.shape = tuple();
      } else {
        error("unexpected key '" + key + "' in the header");
      }
      skipSpace();
      if (peek() == ',') {
        ++i;
        continue;
      }
      skipSpace();
      if (peek() != '}')
        error("expected ',' or '}' in the header dictionary");
    }
    ++i;
    skipSpace();
    if (i != s.size())
      error("unexpected text after the header dictionary");
    if (!haveDescr || !haveOrder || !haveShape)
      error(std::string("the header has no '") +
            (!haveDescr   ? "descr"
             : !haveOrder ? "fortran_order"
                          : "shape") +
            "'");
    return h;
  }

private:
  const std::string &s;
  const std::string &path;
  size_t i = 0;

  [[noreturn]] void error(const std::string &what) const {
    throw std::runtime_error(path + ": bad .npy header: " + what);
  }
  char peek() const { return i < s.size() ? s[i] : '\0'; }
  void skipSpace() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t'))
      ++i;
  }
  void expect(char c) {
    if (peek() != c)
      error(std::string("expected '") + c + "'");
    ++i;
  }
  void once(bool &seen, const std::string &key) const {
    if (seen)
      error("'" + key + "' appears twice");
    seen = true;
  }
  std::string quoted() {
    char q = peek();
    if (q != '\'' && q != '"')
      error("expected a quoted string");
    size_t end = s.find(q, ++i);
    if (end == std::string::npos || end - i > 64)
      error("unterminated or overlong string");
    std::string r = s.substr(i, end - i);
    i = end + 1;
    return r;
  }
  bool boolean() {
    if (s.compare(i, 4, "True") == 0) {
      i += 4;
      return true;
    }
    if (s.compare(i, 5, "False") == 0) {
      i += 5;
      return false;
    }
    error("fortran_order must be True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    for (;;) {
      skipSpace();
      if (peek() == ')')
        break;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        error("shape must be a tuple of non-negative integers");
      int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        int digit = s[i++] - '0';
        if (d > (std::numeric_limits<int64_t>::max() - digit) / 10)
          error("a shape dimension overflows 64 bits");
        d = d * 10 + digit;
      }
      if (dims.size() == 32)
        error("more than 32 dimensions");
      dims.push_back(d);
      skipSpace();
      if (peek() == ',') {
        ++i;
        continue;
      }
      if (peek() != ')')
        error("expected ',' or ')' in the shape");
    }
    ++i;
    return dims;
  }
};

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

} // namespace

NpyHeader parseNpyHeader(const std::string &dict, const std::string &path) {
  return HeaderParser(dict, path).parse();
}

NpyArray readNpy(const std::string &path) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0)
    throw std::runtime_error("cannot open " + path + ": " +
                             std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw std::runtime_error(path + " is not a regular file");
  const int64_t fileBytes = st.st_size;
  char magic[8];
  if (fileBytes < 10 || !readAll(f.fd, magic, 8) ||
      std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path +
                             " is not a .npy file (no \\x93NUMPY magic)");
  int major = static_cast<unsigned char>(magic[6]);
  if (major < 1 || major > 3)
    throw std::runtime_error(path + ": .npy format version " +
                             std::to_string(major) +
                             " is not supported (1, 2 or 3)");
  int lenBytes = major == 1 ? 2 : 4;
  unsigned char l[4] = {0, 0, 0, 0};
  if (!readAll(f.fd, reinterpret_cast<char *>(l), lenBytes))
    throw std::runtime_error(path + ": the file ends inside its .npy preamble");
  uint32_t headerLen =
      l[0] | (l[1] << 8) | (uint32_t(l[2]) << 16) | (uint32_t(l[3]) << 24);
  int64_t dataStart = 8 + lenBytes + int64_t(headerLen);
  if (headerLen > kNpyMaxHeaderBytes)
    throw std::runtime_error(path + ": .npy header of " +
                             std::to_string(headerLen) +
                             " bytes; kb-run reads headers of at most " +
                             std::to_string(kNpyMaxHeaderBytes));
  if (dataStart > fileBytes)
    throw std::runtime_error(path + ": .npy header of " +
                             std::to_string(headerLen) +
                             " bytes is longer than the file");
  std::string header(headerLen, '\0');
  if (!readAll(f.fd, header.data(), headerLen))
    throw std::runtime_error(path + ": the file ends inside its .npy header");
  NpyHeader h = parseNpyHeader(header, path);
  if (h.descr != "<f4" && h.descr != "<f2" && h.descr != "<u2")
    throw std::runtime_error(
        path + ": dtype '" + h.descr +
        "'; kb-run reads float32 ('<f4'), float16 ('<f2') and bfloat16 bits "
        "('<u2') arrays only");
  const int64_t eb = h.descr == "<f4" ? 4 : 2;
  if (h.fortranOrder)
    throw std::runtime_error(path + ": kb-run reads C-order arrays only");
  // The element count, bounded by the bytes the file really holds: nothing
  // is allocated from the header's word alone.
  const int64_t dataBytes = fileBytes - dataStart;
  int64_t n = 1;
  for (int64_t d : h.shape)
    if (n >= 0 && (__builtin_mul_overflow(n, d, &n) ||
                   n > std::numeric_limits<int64_t>::max() / 4))
      n = -1;
  for (int64_t d : h.shape)
    if (d == 0)
      n = 0;
  if (n < 0 || n * eb != dataBytes)
    throw std::runtime_error(
        path + ": shape " + shapeStr(h.shape) + " of " +
        (eb == 4 ? "float32" : h.descr == "<f2" ? "float16" : "bfloat16 bits") +
        " needs " +
        (n < 0 ? std::string("more bytes than the file holds")
               : std::to_string(n * eb) + " bytes of data") +
        "; the file holds " + std::to_string(dataBytes));
  NpyArray a;
  a.shape = h.shape;
  a.descr = h.descr;
  a.data.resize(static_cast<size_t>(n));
  bool ok;
  if (eb == 4) {
    ok = readAll(f.fd, reinterpret_cast<char *>(a.data.data()),
                 static_cast<size_t>(n) * 4);
  } else {
    std::vector<uint16_t> bits(static_cast<size_t>(n));
    ok = readAll(f.fd, reinterpret_cast<char *>(bits.data()),
                 static_cast<size_t>(n) * 2);
    bool f16 = h.descr == "<f2";
    for (size_t i = 0; ok && i < bits.size(); ++i)
      a.data[i] = f16 ? f16ToFloat(bits[i]) : bf16ToFloat(bits[i]);
  }
  if (!ok)
    throw std::runtime_error(path + ": could not read its " +
                             std::to_string(n) + " elements");
  return a;
}

void fitNpyToType(NpyArray &a, DType t) {
  if (a.descr == "<f4") {
    for (float &v : a.data)
      v = roundFloatTo(t, v);
    return;
  }
  if (a.descr != npyDescr(t))
    throw std::runtime_error(
        std::string("a '") + a.descr + "' array (" +
        (a.descr == "<f2" ? "float16" : "bfloat16 bits") + ") for a " +
        dtypeName(t) + " buffer; give '<f4'" +
        (isHalf(t) ? std::string(" or '") + npyDescr(t) + "'" : ""));
}

const char *npyDescr(DType t) {
  return t == DType::F16 ? "<f2" : t == DType::BF16 ? "<u2" : "<f4";
}

void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data, DType t) {
  std::string dims;
  // The element count: zero where any dimension is zero (a shape such as
  // (2^32, 2^32, 0) reads as an empty array, and its product must not be
  // formed), else checked for overflow as readNpy checks it.
  int64_t n = 1;
  bool empty = false, overflow = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    dims += (i ? ", " : "") + std::to_string(shape[i]);
    if (shape[i] < 0)
      throw std::runtime_error("cannot write " + path +
                               ": negative dimension " +
                               std::to_string(shape[i]));
    empty |= shape[i] == 0;
    overflow |= !empty && (__builtin_mul_overflow(n, shape[i], &n) ||
                           n > std::numeric_limits<int64_t>::max() / 4);
  }
  if (empty)
    n = 0;
  else if (overflow)
    throw std::runtime_error("cannot write " + path + ": shape " +
                             shapeStr(shape) +
                             " has more elements than 64 bits count");
  if (shape.size() == 1)
    dims += ",";
  std::string header =
      std::string("{'descr': '") + npyDescr(t) +
      "', 'fortran_order': False, 'shape': (" + dims + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw std::runtime_error("cannot write " + path);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char l[2] = {char(len & 0xff), char(len >> 8)};
  out.write(l, 2);
  out << header;
  if (isHalf(t)) {
    std::vector<uint16_t> bits(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      bits[i] = t == DType::F16 ? floatToF16(data[i]) : floatToBf16(data[i]);
    out.write(reinterpret_cast<const char *>(bits.data()), n * 2);
  } else {
    out.write(reinterpret_cast<const char *>(data), n * 4);
  }
  if (!out)
    throw std::runtime_error("failed writing " + path);
}

} // namespace kb::runtime
