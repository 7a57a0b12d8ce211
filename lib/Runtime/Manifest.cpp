//===- Manifest.cpp - parse and check a bundle's manifest.json ------------===//
//
// A bundle is untrusted input. Every field kb-run relies on is checked here
// for its type, its range and its consistency with the rest of the manifest
// (buffer shapes against each op and each kernel's arguments, launch sizes
// against CUDA's limits, files inside the bundle folder), with a one-line
// message that names the field (`manifest: kernels[0].grid[1]: 70000 exceeds
// CUDA's limit 65535`), so that a malformed bundle stops before anything
// touches the GPU and before any size taken from it is used in arithmetic.
// This file reads the files and the top-level fields; the buffers, the
// program and the kernels are checked by the parts ManifestParsing.h names.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"
#include "ManifestParsing.h"

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

using namespace manifest;


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
  m.raw = j;
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

  ParseState st(m);
  parseBuffers(j, st);
  parseProgram(j, st);
  checkTensorMaps(st);
  parseKernels(j, st);
  checkProgramTypes(m);
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
