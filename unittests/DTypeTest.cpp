//===- DTypeTest.cpp - f16/bf16 conversions and their .npy files ----------===//
//
// The host conversions kb-run uploads and downloads 16-bit buffers with:
// round to nearest even, NaN and inf, f16's subnormals and overflow, held
// against known bit patterns and against the independent float64 rounding
// (roundTo) over every 16-bit value and every midpoint between two; and
// .npy files of f16 ('<f2') and bf16 bits ('<u2') written and read back.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/DType.h"
#include "kb/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

using namespace kb::runtime;

namespace {
float floatOf(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}
const float kInf = std::numeric_limits<float>::infinity();
} // namespace

TEST(DType, Names) {
  EXPECT_EQ(parseDType("bf16"), DType::BF16);
  EXPECT_EQ(parseDType("f16"), DType::F16);
  EXPECT_FALSE(parseDType("f64").has_value());
  EXPECT_EQ(dtypeBytes(DType::BF16), 2);
  EXPECT_EQ(dtypeBytes(DType::F32), 4);
  EXPECT_STREQ(dtypeName(DType::F16), "f16");
}

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(-2.0f), 0xc000);
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7: to 1.
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f), 0x3f80);
  // 1 + 3 2^-8: halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(floatToBf16(1.0f + 3 * 0x1p-8f), 0x3f82);
  // Just past halfway: up.
  EXPECT_EQ(floatToBf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(bf16ToFloat(0x3f81), 1.0f + 0x1p-7f);
  // The largest finite bf16, and FLT_MAX past it rounds to inf.
  EXPECT_EQ(floatToBf16(std::ldexp(2.0f - 0x1p-7f, 127)), 0x7f7f);
  EXPECT_EQ(floatToBf16(FLT_MAX), 0x7f80);
  EXPECT_EQ(floatToBf16(kInf), 0x7f80);
  EXPECT_EQ(floatToBf16(-kInf), 0xff80);
  // A signalling NaN whose payload lies in the dropped bits stays a NaN
  // (a plain truncation would give inf).
  uint16_t nan = floatToBf16(floatOf(0x7f800001u));
  EXPECT_TRUE(std::isnan(bf16ToFloat(nan)));
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
  // f32 subnormals are bf16 subnormals (same exponent range).
  EXPECT_EQ(bf16ToFloat(floatToBf16(0x1p-133f)), 0x1p-133f);
}

TEST(DType, F16RoundsToNearestEvenWithSubnormals) {
  EXPECT_EQ(floatToF16(1.0f), 0x3c00);
  EXPECT_EQ(floatToF16(-0.0f), 0x8000);
  EXPECT_EQ(floatToF16(1.0f + 0x1p-11f), 0x3c00);     // tie, to even
  EXPECT_EQ(floatToF16(1.0f + 3 * 0x1p-11f), 0x3c02); // tie, to even
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff);
  EXPECT_EQ(floatToF16(65519.0f), 0x7bff);
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00); // halfway past the largest: inf
  EXPECT_EQ(floatToF16(-1e6f), 0xfc00);
  EXPECT_EQ(floatToF16(kInf), 0x7c00);
  uint16_t nan = floatToF16(std::nanf(""));
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(floatOf(0x7f800001u)))));
  // Subnormals: units of 2^-24.
  EXPECT_EQ(floatToF16(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToF16(0x1p-25f), 0x0000);     // tie between 0 and 1: 0
  EXPECT_EQ(floatToF16(3 * 0x1p-25f), 0x0002); // tie between 1 and 2: 2
  EXPECT_EQ(floatToF16(1023 * 0x1p-24f), 0x03ff);
  EXPECT_EQ(floatToF16(1023.5f * 0x1p-24f), 0x0400); // to the smallest normal
  EXPECT_EQ(floatToF16(0x1p-14f), 0x0400);
  EXPECT_EQ(f16ToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(f16ToFloat(0x83ff), -1023 * 0x1p-24f);
  EXPECT_EQ(f16ToFloat(0x7bff), 65504.0f);
}

/// Every 16-bit value converts to f32 and back to itself, and every
/// midpoint between neighbours rounds to the even one, as the float64
/// rounding says.
TEST(DType, EveryValueAndMidpointAgreesWithTheFloat64Rounding) {
  for (DType t : {DType::F16, DType::BF16}) {
    auto toF = [&](uint32_t h) {
      return t == DType::F16 ? f16ToFloat(uint16_t(h))
                             : bf16ToFloat(uint16_t(h));
    };
    auto toH = [&](float x) {
      return t == DType::F16 ? floatToF16(x) : floatToBf16(x);
    };
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000; ++h) {
      float x = toF(h);
      if (std::isnan(x))
        continue;
      bad += toH(x) != h;
      bad += roundTo(t, double(x)) != double(x);
      uint32_t next = h + 1;
      float y = toF(next);
      if ((h & 0x7fff) >= (t == DType::F16 ? 0x7c00u : 0x7f80u) ||
          std::isnan(y) || std::isinf(y))
        continue;
      float mid = x / 2 + y / 2; // exact: 12 or 9 significand bits
      uint16_t even = (h & 1) ? uint16_t(next) : uint16_t(h);
      bad += toH(mid) != even;
      bad += roundTo(t, double(mid)) != double(toF(even));
    }
    EXPECT_EQ(bad, 0) << dtypeName(t);
  }
  // And random f32s of every magnitude.
  std::mt19937 rng(7);
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    float x = floatOf(rng());
    if (std::isnan(x))
      continue;
    bad += double(f16ToFloat(floatToF16(x))) != roundTo(DType::F16, x);
    bad += double(bf16ToFloat(floatToBf16(x))) != roundTo(DType::BF16, x);
  }
  EXPECT_EQ(bad, 0);
}

TEST(DType, Float64IsRoundedOnce) {
  // Rounded to f32 first, 1 + 2^-8 + 2^-40 would be a tie and go to 1.
  EXPECT_EQ(roundTo(DType::BF16, 1 + 0x1p-8 + 0x1p-40), 1 + 0x1p-7);
  EXPECT_EQ(roundTo(DType::F16, 65519.99), 65504.0);
  EXPECT_TRUE(std::isinf(roundTo(DType::F16, 65520.0)));
  EXPECT_EQ(roundTo(DType::F16, 0x1p-26), 0.0);
  EXPECT_EQ(unitRoundoff(DType::BF16), 0x1p-8);
  EXPECT_EQ(unitRoundoff(DType::F16), 0x1p-11);
}

TEST(Npy16, RoundTripsOfF16AndBf16Bits) {
  std::vector<float> v = {1.0f, -2.5f, 0x1p-24f, 65504.0f, 0.0f, 3.140625f};
  std::string f16 = testing::TempDir() + "/kb_npy16_f16.npy";
  writeNpy(f16, {2, 3}, v.data(), DType::F16);
  NpyArray a = readNpy(f16);
  EXPECT_EQ(a.descr, "<f2");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, v);

  std::vector<float> b = {1.0f, -0x1p-133f, 3.0e38f, 0.0078125f};
  for (float &x : b)
    x = roundFloatTo(DType::BF16, x);
  std::string bf = testing::TempDir() + "/kb_npy16_bf16.npy";
  writeNpy(bf, {4}, b.data(), DType::BF16);
  NpyArray c = readNpy(bf);
  EXPECT_EQ(c.descr, "<u2");
  EXPECT_EQ(c.data, b);
  // The file holds the raw bits, little-endian, after the 64-byte-aligned
  // header: 1.0 is 0x3f80.
  std::ifstream in(bf, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(bytes.size() % 2, 0u);
  EXPECT_EQ(bytes.size(), 128u + 8u);
  EXPECT_NE(bytes.find("'descr': '<u2'"), std::string::npos);
  EXPECT_EQ((unsigned char)bytes[128], 0x80);
  EXPECT_EQ((unsigned char)bytes[129], 0x3f);
}

TEST(Npy16, InputFilesForSixteenBitBuffers) {
  // '<f4' fits any buffer, rounded to nearest even.
  NpyArray f4;
  f4.descr = "<f4";
  f4.data = {1.0f + 3 * 0x1p-8f, 70000.0f};
  NpyArray g = f4;
  fitNpyToType(g, DType::BF16);
  EXPECT_EQ(g.data[0], 1.0f + 0x1p-6f);
  fitNpyToType(f4, DType::F16);
  EXPECT_TRUE(std::isinf(f4.data[1]));
  // '<f2' is for f16 only, '<u2' for bf16 only.
  NpyArray f2;
  f2.descr = "<f2";
  EXPECT_NO_THROW(fitNpyToType(f2, DType::F16));
  try {
    fitNpyToType(f2, DType::BF16);
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "a '<f2' array (float16) for a bf16 buffer; give "
                           "'<f4' or '<u2'");
  }
  NpyArray u2;
  u2.descr = "<u2";
  try {
    fitNpyToType(u2, DType::F32);
    FAIL() << "no error";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "a '<u2' array (bfloat16 bits) for a f32 buffer; "
                           "give '<f4'");
  }
}

// f32: an output with elements near zero, fused and unfused differing by
// a tf32 chain's noise (1e-5 of the output's scale), agrees; a program with
// another scale, or one element far off, does not.
TEST(BaselineOutputs, F32NearZeroElementsAgainstTheOutputsScale) {
  using namespace kb::runtime;
  std::vector<float> fused, unfused, other;
  for (int i = 0; i < 65536; ++i) {
    double y = 0.026 * std::sin(0.011 * i * i); // many elements near 0
    unfused.push_back(float(y));
    fused.push_back(float(y + 3e-7 * std::cos(0.7 * i)));
    other.push_back(float(y * 1.01));
  }
  double worst = 0, limit = 0;
  EXPECT_TRUE(baselineOutputsAgree(fused, unfused, DType::F32, &worst, &limit));
  EXPECT_LT(worst, 1e-4);
  EXPECT_EQ(limit, 1e-3);
  EXPECT_FALSE(baselineOutputsAgree(other, unfused, DType::F32));
  std::vector<float> broken = fused;
  broken[100] += 0.01f;
  EXPECT_FALSE(baselineOutputsAgree(broken, unfused, DType::F32));
}

// kb-run --baseline's comparison of a fused bundle's output with its
// unfused baseline's (the bf16 bias + GELU + dropout of 2026-12-07 was
// refused at a max relative difference of 0.088 under the f32 rule).
TEST(BaselineOutputs, SixteenBitBaselinesRoundEachIntermediate) {
  using namespace kb::runtime;
  std::vector<float> fused, unfused, other;
  for (int i = 0; i < 4096; ++i) {
    double x = std::sin(0.37 * i) * 3; // a chain's pre-activation values
    auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
    // Fused: f32 inside, one rounding. Unfused: rounded after each op.
    fused.push_back(roundFloatTo(DType::BF16, float(gelu(x + 0.1) * 1.25)));
    float b = roundFloatTo(DType::BF16, float(x + 0.1));
    float g = roundFloatTo(DType::BF16, float(gelu(b)));
    unfused.push_back(roundFloatTo(DType::BF16, g * 1.25f));
    other.push_back(roundFloatTo(DType::BF16, float(std::tanh(x) * 1.25)));
  }
  double worst = 0, limit = 0;
  // The f32 rule refuses the honest 16-bit baseline...
  EXPECT_FALSE(baselineOutputsAgree(fused, unfused, DType::F32, &worst));
  EXPECT_GT(worst, 1e-3);
  // ...the 16-bit rule accepts it, and still refuses another program.
  EXPECT_TRUE(baselineOutputsAgree(fused, unfused, DType::BF16, &worst, &limit));
  EXPECT_LT(worst, limit);
  EXPECT_FALSE(baselineOutputsAgree(fused, other, DType::BF16));
  // A shift of 10% of the output's size is another program too.
  std::vector<float> shifted = unfused;
  for (float &v : shifted)
    v += 0.3f;
  EXPECT_FALSE(baselineOutputsAgree(fused, shifted, DType::BF16));
  // f32: the same arithmetic within 1e-3; NaN and a size mismatch never agree.
  std::vector<float> a = {1.0f, 2.0f, -3.0f}, b = {1.0005f, 2.0f, -3.0f};
  EXPECT_TRUE(baselineOutputsAgree(a, b, DType::F32));
  b[1] = NAN;
  EXPECT_FALSE(baselineOutputsAgree(a, b, DType::F32));
  EXPECT_FALSE(baselineOutputsAgree(a, {1.0f, 2.0f}, DType::F32));
}
