//===- BundleRecord.cpp - the manifest a kernel's PTX was compiled for ----===//
//
// See BundleRecord.h. The record is compared as JSON values (so key order
// and spacing do not matter); nlohmann's json::diff names the first field
// that differs.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/BundleRecord.h"
#include "kb/Runtime/Manifest.h"

#include <cctype>

namespace kb::runtime {

using json = nlohmann::json;

json bundleRecordOf(const json &manifest) {
  json r = manifest;
  if (!r.is_object())
    return r;
  r.erase("compiler");
  if (auto it = r.find("kernels"); it != r.end() && it->is_array())
    for (json &k : *it)
      if (k.is_object())
        for (const char *f : {"ptx", "cubin", "resources"})
          k.erase(f);
  if (auto it = r.find("buffers"); it != r.end() && it->is_array())
    for (json &b : *it)
      if (b.is_object())
        b.erase("init");
  return r;
}

std::string fieldPathOf(const std::string &pointer) {
  std::string out;
  size_t at = 0;
  while (at < pointer.size() && pointer[at] == '/') {
    size_t end = pointer.find('/', at + 1);
    std::string part = pointer.substr(at + 1, end == std::string::npos
                                                  ? std::string::npos
                                                  : end - at - 1);
    bool index = !part.empty();
    for (char c : part)
      index = index && std::isdigit(static_cast<unsigned char>(c));
    // JSON pointer escapes: ~1 is '/', ~0 is '~'.
    for (size_t p; (p = part.find("~1")) != std::string::npos;)
      part.replace(p, 2, "/");
    for (size_t p; (p = part.find("~0")) != std::string::npos;)
      part.replace(p, 2, "~");
    out += index ? "[" + part + "]" : (out.empty() ? "" : ".") + part;
    if (end == std::string::npos)
      break;
    at = end;
  }
  return out.empty() ? "the manifest" : out;
}

namespace {

std::string shortDump(const json &v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

} // namespace

void checkBundleRecord(const Manifest &m, size_t index, const std::string &ptx) {
  const Kernel &k = m.kernels.at(index);
  std::string where = "manifest: kernels[" + std::to_string(index) + "] (" +
                      k.name + ")";
  std::string tag = kBundleRecordTag;
  size_t at = ptx.find(tag);
  if (at == std::string::npos || (at > 0 && ptx[at - 1] != '\n'))
    throw ManifestError(where + ": " + k.ptx +
                        " has no kb.bundle-record line (a PTX kb-opt did not "
                        "write, or of a kb older than the record): recompile "
                        "the bundle with kb-opt --kb-compile");
  size_t end = ptx.find('\n', at);
  if (ptx.find(tag, end == std::string::npos ? ptx.size() : end) !=
      std::string::npos)
    throw ManifestError(where + ": " + k.ptx +
                        " has more than one kb.bundle-record line");
  std::string line = ptx.substr(at + tag.size(), end == std::string::npos
                                                    ? std::string::npos
                                                    : end - at - tag.size());
  json rec = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (rec.is_discarded() || !rec.is_object() || !rec.contains("kernel") ||
      !rec.contains("manifest"))
    throw ManifestError(where + ": " + k.ptx +
                        "'s kb.bundle-record line is not a JSON object with "
                        "\"kernel\" and \"manifest\"");
  const json &ki = rec["kernel"];
  if (!ki.is_number_unsigned() || ki.get<uint64_t>() != index)
    throw ManifestError(where + ": " + k.ptx + " was compiled as kernel " +
                        shortDump(ki) + " of its bundle, not kernel " +
                        std::to_string(index));
  json expected = bundleRecordOf(m.raw);
  const json &compiled = rec["manifest"];
  if (compiled == expected)
    return;
  json patch = json::diff(compiled, expected);
  // The first operation of the patch that turns the compiled manifest into
  // this one names a field that differs.
  const json &op = patch.at(0);
  std::string ptr = op.value("path", "");
  std::string field = fieldPathOf(ptr);
  std::string kind = op.value("op", "");
  std::string detail;
  if (kind == "add" && ptr.size() >= 2 && ptr.compare(ptr.size() - 2, 2, "/-") == 0)
    detail = fieldPathOf(ptr.substr(0, ptr.size() - 2)) + " has an entry (" +
             shortDump(op["value"]) + ") more than " + k.ptx + " was compiled with";
  else if (kind == "add")
    detail = field + " is " + shortDump(op["value"]) + " but " + k.ptx +
             " was compiled without it";
  else if (kind == "remove")
    detail = field + " is missing but " + k.ptx + " was compiled with " +
             shortDump(compiled.at(json::json_pointer(ptr)));
  else
    detail = field + " is " + shortDump(op["value"]) + " but " + k.ptx +
             " was compiled for " +
             shortDump(compiled.at(json::json_pointer(ptr)));
  throw ManifestError("manifest: " + detail +
                      " (its kb.bundle-record): recompile the bundle instead "
                      "of editing it");
}

} // namespace kb::runtime
