//===- ManifestParsing.h - the manifest check's parts (private) -*- C++ -*-===//
//
// Manifest::parse reads manifest.json in four parts, one file each: the
// typed field readers (ManifestFields.cpp), the buffers and tensor maps
// (ManifestBuffers.cpp), the program (ManifestProgram.cpp) and the kernels
// (ManifestKernels.cpp). They share the parse's state below. Private to
// lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KB_LIB_RUNTIME_MANIFESTPARSING_H
#define KB_LIB_RUNTIME_MANIFESTPARSING_H

#include "kb/Runtime/Manifest.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kb::runtime::manifest {

using nlohmann::json;

/// `s` on one line: control characters shown as \xNN.
std::string oneLine(const std::string &s);
/// Throws ManifestError("manifest: " + what).
[[noreturn]] void fail(const std::string &what);
std::string shapeStr(const std::vector<int64_t> &s);
/// A JSON value, shortened for a message.
std::string shown(const json &v);
const char *typeName(const json &v);
/// `obj[key]`, or null when absent; `obj` must be an object.
const json *opt(const json &obj, const char *key);
const json &field(const json &obj, const char *key, const std::string &where);
std::string join(const std::string &where, const char *key);
std::string asString(const json &v, const std::string &path);
std::string str(const json &obj, const char *key, const std::string &where);
/// An integer in [lo, hi]; a float, a string or an integer beyond int64 is
/// refused by name, never converted.
int64_t asInt(const json &v, const std::string &path, int64_t lo, int64_t hi,
              const std::string &limitName = "");
double asNumber(const json &v, const std::string &path);
bool asBool(const json &v, const std::string &path);
const json &array(const json &v, const std::string &path,
                  bool nonEmpty = false);
std::vector<int64_t> ints(const json &v, const std::string &path, int64_t lo,
                          int64_t hi);
/// A static shape: up to 8 positive dimensions of at most `maxElements`
/// elements in all; at least one unless `scalar`.
std::vector<int64_t> shapeField(const json &obj, const std::string &where,
                                int64_t maxElements, bool scalar = false);
/// A PTX identifier.
bool isIdentifier(const std::string &s);

/// What the parts of one parse share.
struct ParseState {
  explicit ParseState(Manifest &m) : m(m) {}
  Manifest &m;
  /// Buffer name -> index in m.buffers.
  std::map<std::string, size_t> index;
  /// The names the program's ops write.
  std::set<std::string> written;
  /// The most elements a buffer or an op may have.
  int64_t maxElements = BundleLimits::bufferBytes / 4;
  const Buffer *bufferOf(const std::string &name) const {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &m.buffers[it->second];
  }
};

/// buffers[]: names, roles, dtypes, shapes, init, tensor_map fields.
void parseBuffers(const json &j, ParseState &st);
/// Each tensor map against the buffer it describes.
void checkTensorMaps(ParseState &st);
/// program[]: ops, operands, shapes, attrs, element types.
void parseProgram(const json &j, ParseState &st);
/// kernels[]: launch sizes, args, ops, workspaces; then what must be
/// written is.
void parseKernels(const json &j, ParseState &st);
/// A kernel's config parses as #kb.config and agrees with its launch
/// (ManifestConfig.cpp).
void checkKernelConfig(const Kernel &k, const std::string &where);
/// Each op's element types (sets ProgramOp::dtype), once the program and
/// the kernels are known to be well formed.
void checkProgramTypes(Manifest &m);

} // namespace kb::runtime::manifest

#endif
