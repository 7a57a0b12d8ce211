//===- Occupancy.h - theoretical occupancy and its limiter ------*- C++ -*-===//
//
// How many blocks of a kernel fit on one multiprocessor, and which resource
// (threads, registers, shared memory or the block limit) binds. kb-run shows
// this next to the driver's own answer
// (cuOccupancyMaxActiveBlocksPerMultiprocessor).
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_OCCUPANCY_H
#define KB_RUNTIME_OCCUPANCY_H

#include <string>

namespace kb::runtime {

struct SMLimits {
  int maxThreads = 2048, maxBlocks = 32, maxWarps = 64;
  int registers = 65536, registerAllocUnit = 256; // per warp, in registers
  int sharedBytes = 233472, sharedReservedPerBlock = 1024;
};

struct Occupancy {
  int blocksPerSM = 0;
  double fraction = 0; // active warps / max warps
  std::string limiter; // threads, registers, shared memory, blocks
};

Occupancy theoreticalOccupancy(int threadsPerBlock, int registersPerThread,
                               int sharedBytesPerBlock,
                               const SMLimits &sm = SMLimits());

} // namespace kb::runtime

#endif
