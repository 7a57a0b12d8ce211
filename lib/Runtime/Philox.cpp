//===- Philox.cpp - Philox4x32-10 and the dropout mask on the CPU ---------===//
//
// Mirrors emitPhilox in lib/Conversion/KBToGPU/Common.cpp word for word; the
// unit tests check it against Random123's known-answer vectors.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Philox.h"

#include <algorithm>
#include <cmath>

namespace kb::runtime {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c,
                                      std::array<uint32_t, 2> k) {
  const uint32_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  const uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(m0) * c[0];
    uint64_t p1 = uint64_t(m1) * c[2];
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += w0;
    k[1] += w1;
  }
  return c;
}

uint32_t dropoutThreshold(float p) {
  double t = std::ceil(static_cast<double>(p) * 16777216.0);
  return static_cast<uint32_t>(std::min(t, 16777216.0));
}

bool dropoutKeeps(uint64_t index, float p, uint64_t seed) {
  uint64_t group = index >> 2;
  auto w = philox4x32_10({uint32_t(group), uint32_t(group >> 32), 0, 0},
                         {uint32_t(seed), uint32_t(seed >> 32)});
  return (w[index & 3] >> 8) >= dropoutThreshold(p);
}

} // namespace kb::runtime
