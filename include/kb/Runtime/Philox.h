//===- Philox.h - Philox4x32-10 and kb's dropout mask on the CPU -*- C++
//-*-===//
//
// The same counter-based generator that kb's dropout kernels draw from, so
// kb-run can recompute the exact mask: element i uses word (i % 4) of
// Philox4x32-10(counter = (i / 4, 0, 0), key = seed).
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_PHILOX_H
#define KB_RUNTIME_PHILOX_H

#include <array>
#include <cstdint>

namespace kb::runtime {

/// Random123's Philox4x32 with 10 rounds.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key);

/// Keep threshold on the top 24 bits of a word (ceil(p * 2^24)).
uint32_t dropoutThreshold(float p);

/// Whether dropout(p, seed) keeps element `index`.
bool dropoutKeeps(uint64_t index, float p, uint64_t seed);

} // namespace kb::runtime

#endif
