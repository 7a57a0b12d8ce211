//===- Occupancy.cpp - theoretical occupancy ------------------------------===//
//
// The occupancy-calculator arithmetic for sm_90: registers are allocated per
// warp in units of 256, shared memory per block plus 1 KB reserved.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Occupancy.h"

#include <algorithm>
#include <climits>

namespace kb::runtime {

Occupancy theoreticalOccupancy(int threads, int regs, int shared,
                               const SMLimits &sm) {
  Occupancy o;
  if (threads <= 0)
    return o;
  int warps = (threads + 31) / 32;
  int byThreads = std::min(sm.maxThreads / (warps * 32), sm.maxWarps / warps);
  int byRegs = INT_MAX;
  if (regs > 0) {
    int perWarp =
        ((regs * 32 + sm.registerAllocUnit - 1) / sm.registerAllocUnit) *
        sm.registerAllocUnit;
    byRegs = (sm.registers / perWarp) / warps;
  }
  int byShared = INT_MAX;
  if (shared > 0)
    byShared = sm.sharedBytes / (shared + sm.sharedReservedPerBlock);
  int blocks = std::min({byThreads, byRegs, byShared, sm.maxBlocks});
  o.blocksPerSM = std::max(blocks, 0);
  o.fraction = double(o.blocksPerSM * warps) / sm.maxWarps;
  if (blocks == byRegs)
    o.limiter = "registers";
  else if (blocks == byShared)
    o.limiter = "shared memory";
  else if (blocks == byThreads)
    o.limiter = "threads";
  else
    o.limiter = "blocks";
  return o;
}

} // namespace kb::runtime
