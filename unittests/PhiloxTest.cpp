//===- PhiloxTest.cpp - Philox4x32-10 known answers and the dropout mask
//---===//

#include "kb/Runtime/Philox.h"

#include <gtest/gtest.h>

using namespace kb::runtime;

// Known-answer vectors of Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST(Philox, KnownAnswerZero) {
  auto r = philox4x32_10({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(r[0], 0x6627e8d5u);
  EXPECT_EQ(r[1], 0xe169c58du);
  EXPECT_EQ(r[2], 0xbc57ac4cu);
  EXPECT_EQ(r[3], 0x9b00dbd8u);
}

TEST(Philox, KnownAnswerOnes) {
  auto r = philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                         {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(r[0], 0x408f276du);
  EXPECT_EQ(r[1], 0x41c83b0eu);
  EXPECT_EQ(r[2], 0xa20bc7c6u);
  EXPECT_EQ(r[3], 0x6d5451fdu);
}

TEST(Philox, KnownAnswerPi) {
  auto r = philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                         {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(r[0], 0xd16cfe09u);
  EXPECT_EQ(r[1], 0x94fdccebu);
  EXPECT_EQ(r[2], 0x5001e420u);
  EXPECT_EQ(r[3], 0x24126ea1u);
}

TEST(Dropout, ThresholdIsCeilOfPTimes2To24) {
  EXPECT_EQ(dropoutThreshold(0.0f), 0u);
  EXPECT_EQ(dropoutThreshold(0.5f), 8388608u);
  EXPECT_EQ(dropoutThreshold(0.3f), 5033165u); // 0.3f * 2^24 = 5033164.99...
  EXPECT_EQ(dropoutThreshold(0.99999994f), 16777215u);
}

TEST(Dropout, KeepsAboutOneMinusP) {
  for (float p : {0.1f, 0.3f, 0.5f, 0.9f}) {
    int64_t n = 1 << 22, kept = 0;
    for (int64_t i = 0; i < n; ++i)
      kept += dropoutKeeps(i, p, 42);
    double frac = double(kept) / n;
    EXPECT_NEAR(frac, 1.0 - p, 1e-3) << "p = " << p;
  }
}

TEST(Dropout, MaskDependsOnSeedAndIndexOnly) {
  int differ = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    EXPECT_EQ(dropoutKeeps(i, 0.3f, 7), dropoutKeeps(i, 0.3f, 7));
    differ += dropoutKeeps(i, 0.3f, 7) != dropoutKeeps(i, 0.3f, 8);
  }
  EXPECT_GT(differ, 1000); // another seed, another mask
  // Large indices use the high word of the counter.
  int64_t big = (int64_t(1) << 34) + 5;
  auto w =
      philox4x32_10({uint32_t(big >> 2), uint32_t(big >> 34), 0, 0}, {7, 0});
  EXPECT_EQ(dropoutKeeps(big, 0.3f, 7), (w[1] >> 8) >= dropoutThreshold(0.3f));
}
