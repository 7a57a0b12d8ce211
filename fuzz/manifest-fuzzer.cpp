//===- manifest-fuzzer.cpp - libFuzzer target over kb-run's manifest loader
//===//
//
// Each input is a manifest.json. It is written into a bundle folder of its
// own and loaded with Manifest::load, as kb-run loads a bundle, before any
// GPU is looked for. A malformed manifest must be refused with a
// ManifestError; any other exception (a JSON library error that names no
// field, std::out_of_range, std::bad_alloc), a crash, a sanitizer report
// (signed overflow in a size, say), a timeout or an out-of-memory is a
// finding. A manifest that loads has its sizes computed as kb-run computes
// them (elements, bytes, threads, cluster blocks), so that an overflow there
// is caught by UBSan too.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <unistd.h>

using namespace kb::runtime;

namespace {
constexpr size_t kMaxInputBytes = 65536;
std::string bundleDir;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/kb-fuzz-manifest-XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("manifest-fuzzer: mkdtemp");
    std::abort();
  }
  bundleDir = templ;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  {
    std::ofstream out(bundleDir + "/manifest.json",
                      std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data),
              static_cast<std::streamsize>(size));
    if (!out) {
      std::perror("manifest-fuzzer: writing manifest.json");
      std::abort();
    }
  }
  try {
    Manifest m = Manifest::load(bundleDir);
    int64_t sum = 0;
    for (const Buffer &b : m.buffers)
      sum ^= b.elements() ^ b.bytes();
    for (const Kernel &k : m.kernels)
      sum ^= k.threads() ^ k.clusterBlocks();
    volatile int64_t sink = sum;
    (void)sink;
  } catch (const ManifestError &) {
    // The documented way to refuse a manifest.
  } catch (const std::exception &e) {
    std::fprintf(stderr,
                 "manifest-fuzzer: Manifest::load threw something other than a "
                 "ManifestError: %s\n",
                 e.what());
    std::abort();
  }
  return 0;
}
