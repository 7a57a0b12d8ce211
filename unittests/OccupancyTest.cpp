//===- OccupancyTest.cpp - theoretical occupancy on sm_90 -----------------===//

#include "kb/Runtime/Occupancy.h"

#include <gtest/gtest.h>

using namespace kb::runtime;

TEST(Occupancy, ThreadsBound) {
  Occupancy o = theoreticalOccupancy(1024, 32, 0);
  EXPECT_EQ(o.blocksPerSM, 2);
  EXPECT_DOUBLE_EQ(o.fraction, 1.0);
}

TEST(Occupancy, RegistersBound) {
  // 222 registers -> 224 per thread after rounding; 256 threads = 8 warps of
  // 7168 registers: 65536 / 7168 = 9 warps, one block of 8.
  Occupancy o = theoreticalOccupancy(256, 222, 35840);
  EXPECT_EQ(o.blocksPerSM, 1);
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_DOUBLE_EQ(o.fraction, 8.0 / 64);
}

TEST(Occupancy, SharedMemoryBound) {
  // 100 KB + 1 KB reserved per block: two fit in 228 KB.
  Occupancy o = theoreticalOccupancy(128, 32, 100 * 1024);
  EXPECT_EQ(o.blocksPerSM, 2);
  EXPECT_EQ(o.limiter, "shared memory");
}

TEST(Occupancy, BlockLimit) {
  Occupancy o = theoreticalOccupancy(32, 16, 0);
  EXPECT_EQ(o.blocksPerSM, 32);
  EXPECT_EQ(o.limiter, "blocks");
  EXPECT_DOUBLE_EQ(o.fraction, 0.5);
}

TEST(Occupancy, TooMuchSharedMemoryMeansZero) {
  Occupancy o = theoreticalOccupancy(128, 32, 300 * 1024);
  EXPECT_EQ(o.blocksPerSM, 0);
}
