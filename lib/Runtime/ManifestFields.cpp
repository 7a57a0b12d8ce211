//===- ManifestFields.cpp - typed reads of manifest.json's fields ---------===//
//
// The helpers every part of the manifest check reads fields with: each
// value's JSON type and range checked, never converted, and every problem
// a one-line ManifestError that names the field's path.
//
//===----------------------------------------------------------------------===//

#include "ManifestParsing.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace kb::runtime::manifest {

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
              const std::string &limitName) {
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
                  bool nonEmpty) {
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
                                int64_t maxElements, bool scalar) {
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

} // namespace kb::runtime::manifest
