//===- BundleRecord.h - the manifest a kernel's PTX was compiled for -*- C++ -*-===//
//
// kb-opt ends every kernel's PTX with one comment line,
//   // kb.bundle-record {"kernel": I, "manifest": {...}}
// holding the manifest it wrote less what does not change the kernels'
// work (docs/bundle.md, "The bundle record"); kb-run refuses a manifest
// that differs from it, naming the first field.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_BUNDLERECORD_H
#define KB_RUNTIME_BUNDLERECORD_H

#include <nlohmann/json.hpp>

#include <string>

namespace kb::runtime {

struct Manifest;

/// The comment that starts the record line in a PTX file.
inline constexpr const char *kBundleRecordTag = "// kb.bundle-record ";

/// `manifest` (the parsed manifest.json) less the fields the record leaves
/// out (above).
nlohmann::json bundleRecordOf(const nlohmann::json &manifest);

/// Checks kernel `index`'s PTX text against `m` (its raw JSON): the PTX
/// has exactly one record line, it parses, names this kernel, and its
/// manifest equals bundleRecordOf(m.raw). Throws ManifestError naming the
/// first field that differs (e.g. `buffers[0].shape[1]`) with both values.
void checkBundleRecord(const Manifest &m, size_t index, const std::string &ptx);

/// A JSON pointer ("/buffers/0/shape/1") as the manifest's field path
/// ("buffers[0].shape[1]").
std::string fieldPathOf(const std::string &pointer);

} // namespace kb::runtime

#endif
