//===- npy-fuzzer.cpp - libFuzzer target over kb-run's .npy reader --------===//
//
// Each input is a .npy file, written to a temporary file and read with
// readNpy, as kb-run reads `--input NAME=FILE`. A bad file must be refused
// with a std::runtime_error naming the problem; any other exception
// (std::invalid_argument from a number parse, std::length_error,
// std::bad_alloc), a crash, a sanitizer report, a timeout or an allocation
// beyond -malloc_limit_mb is a finding. An array that reads is written back
// with writeNpy and read again: it must come back with the same shape and
// the same bits.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <unistd.h>

using namespace kb::runtime;

namespace {
constexpr size_t kMaxInputBytes = 65536;
std::string dir;

[[noreturn]] void finding(const char *what) {
  std::fprintf(stderr, "npy-fuzzer: %s\n", what);
  std::abort();
}
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *tmp = std::getenv("TMPDIR");
  std::string templ =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/kb-fuzz-npy-XXXXXX";
  if (!mkdtemp(templ.data())) {
    std::perror("npy-fuzzer: mkdtemp");
    std::abort();
  }
  dir = templ;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  std::string in = dir + "/in.npy", back = dir + "/back.npy";
  {
    std::ofstream out(in, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(data),
              static_cast<std::streamsize>(size));
    if (!out)
      finding("cannot write the input file");
  }
  NpyArray a;
  try {
    a = readNpy(in);
  } catch (const std::runtime_error &) {
    return 0; // refused with a message, as documented
  } catch (const std::exception &e) {
    std::string msg = std::string("readNpy threw a ") + typeid(e).name() +
                      " instead of a std::runtime_error: " + e.what();
    finding(msg.c_str());
  }
  // What was read must survive a write and a second read unchanged.
  try {
    writeNpy(back, a.shape, a.data.data());
    NpyArray b = readNpy(back);
    if (b.shape != a.shape || b.data.size() != a.data.size() ||
        (!a.data.empty() && std::memcmp(a.data.data(), b.data.data(),
                                        a.data.size() * sizeof(float))))
      finding("an array read, written with writeNpy and read again came back "
              "different");
  } catch (const std::exception &e) {
    std::string msg =
        std::string("writing back an array it read failed: ") + e.what();
    finding(msg.c_str());
  }
  return 0;
}
