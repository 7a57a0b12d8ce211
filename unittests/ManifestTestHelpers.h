//===- ManifestTestHelpers.h - refusals of mutated manifests --------------===//
//
// Shared by the manifest tests of one op family each (rows, attention): the
// message Manifest::parse refuses a manifest with, and a table of mutations
// of a valid manifest, each of which must be refused with its message.
//
//===----------------------------------------------------------------------===//

#ifndef KB_UNITTESTS_MANIFESTTESTHELPERS_H
#define KB_UNITTESTS_MANIFESTTESTHELPERS_H

#include "kb/Runtime/Manifest.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace kb::runtime::test {

/// Manifest::parse's message for j ("" where it parses); an exception that
/// is not a ManifestError is named as such, so that no table entry can pass
/// on it.
inline std::string manifestErrorOf(const nlohmann::json &j) {
  try {
    Manifest::parse(j.dump(), "/tmp");
  } catch (const ManifestError &e) {
    return e.what();
  } catch (const std::exception &e) {
    return std::string("NOT A ManifestError: ") + e.what();
  }
  return "";
}

/// One mutation of a valid manifest and (a part of) the message it must get.
struct Mutation {
  const char *what;
  std::function<void(nlohmann::json &)> apply;
  const char *message;
};

/// Each mutation applied to a copy of `valid` is refused with its message.
inline void expectEachRefused(const nlohmann::json &valid,
                              const std::vector<Mutation> &mutations) {
  for (const auto &m : mutations) {
    nlohmann::json j = valid;
    m.apply(j);
    std::string e = manifestErrorOf(j);
    EXPECT_NE(e.find(m.message), std::string::npos)
        << m.what << ": got '" << e << "'";
  }
}

} // namespace kb::runtime::test

#endif // KB_UNITTESTS_MANIFESTTESTHELPERS_H
