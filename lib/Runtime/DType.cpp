//===- DType.cpp - kb's element types and their host conversions ----------===//
//
// Bit-level f32 <-> f16/bf16 conversions (round to nearest even, as the
// kernels' cvt.rn.f16.f32 and cvt.rn.bf16.f32 do) for kb-run's uploads and
// downloads, and a float64 rounding to any of kb's types for the references.
// The two are independent implementations; the unit tests hold them to each
// other over every 16-bit pattern and the midpoints between them.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/DType.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace kb::runtime {

namespace {
uint32_t bitsOf(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
float floatOf(uint32_t b) {
  float x;
  std::memcpy(&x, &b, 4);
  return x;
}
} // namespace

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  if (name == "f32")
    return DType::F32;
  if (name == "f16")
    return DType::F16;
  if (name == "bf16")
    return DType::BF16;
  if (name == "i32")
    return DType::I32;
  return std::nullopt;
}

uint16_t floatToBf16(float x) {
  uint32_t b = bitsOf(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a quiet NaN
    return static_cast<uint16_t>((b >> 16) | 0x0040u);
  // Round to nearest even on the 16 bits dropped; a carry moves into the
  // exponent, and past the largest finite value into +-inf.
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<uint16_t>(b >> 16);
}

float bf16ToFloat(uint16_t bits) { return floatOf(uint32_t(bits) << 16); }

uint16_t floatToF16(float x) {
  uint32_t b = bitsOf(x);
  uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000u);
  uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) // NaN: quiet, the payload's top bits kept
    return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x3ffu);
  if (a >= 0x477ff000u) // >= 65520 (halfway past 65504): +-inf, inf too
    return sign | 0x7c00u;
  if (a >= 0x38800000u) { // >= 2^-14: a normal f16
    uint32_t v = a - 0x38000000u; // exponent rebiased from 127 to 15
    v += 0xfffu + ((v >> 13) & 1u);
    return sign | static_cast<uint16_t>(v >> 13);
  }
  // Subnormal (or zero): units of 2^-24, rounded to nearest even; 1024
  // units is the smallest normal, whose bits are 0x0400 as well.
  float units = std::nearbyint(floatOf(a) * 0x1p24f);
  return sign | static_cast<uint16_t>(units);
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (e == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (e == 31)
    return floatOf(sign | 0x7f800000u | (mant << 13));
  return floatOf(sign | ((e + 112) << 23) | (mant << 13));
}

float roundFloatTo(DType t, float x) {
  switch (t) {
  case DType::F16:
    return f16ToFloat(floatToF16(x));
  case DType::BF16:
    return bf16ToFloat(floatToBf16(x));
  default:
    return x;
  }
}

double maxFinite(DType t) {
  switch (t) {
  case DType::F16:
    return 65504.0;
  case DType::BF16:
    return std::ldexp(2.0 - 0x1p-7, 127);
  case DType::F32:
    return FLT_MAX;
  case DType::I32:
    return 2147483647.0;
  }
  return 0;
}

double unitRoundoff(DType t) {
  switch (t) {
  case DType::F16:
    return 0x1p-11;
  case DType::BF16:
    return 0x1p-8;
  default:
    return 0x1p-24;
  }
}

double subnormalHalfStep(DType t) {
  switch (t) {
  case DType::F16:
    return 0x1p-25;
  case DType::BF16:
    return 0x1p-134;
  default:
    return 0x1p-150;
  }
}

double roundTo(DType t, double x) {
  if (t == DType::I32 || !std::isfinite(x) || x == 0)
    return x;
  if (t == DType::F32)
    return static_cast<double>(static_cast<float>(x));
  // p significand bits; below 2^emin the spacing stays 2^(emin - p + 1).
  int p = t == DType::F16 ? 11 : 8, emin = t == DType::F16 ? -14 : -126;
  int e = std::max(std::ilogb(x), emin);
  double scale = std::ldexp(1.0, p - 1 - e);
  double r = std::nearbyint(x * scale) / scale; // ties to even
  if (std::fabs(r) > maxFinite(t))
    return std::copysign(std::numeric_limits<double>::infinity(), x);
  return r;
}

bool baselineOutputsAgree(const std::vector<float> &x, const std::vector<float> &y,
                          DType t, double *worst, double *limit) {
  // Each difference against the output's RMS plus the element's size: an
  // element near zero is held to the output's scale, not to its own (a
  // fused f32 attention of 64 x 4096 x 64 against its unfused tf32 chain
  // differed by ~1e-7 on elements of ~1e-4 and was called another program
  // at the old absolute floor of 1e-6, session 31). Another program still
  // differs by a good part of the RMS.
  double eps = t == DType::BF16 ? 0x1p-8 : t == DType::F16 ? 0x1p-11 : 0.0;
  double sq = 0;
  for (float v : y)
    sq += double(v) * v;
  double floor = std::sqrt(sq / double(y.empty() ? 1 : y.size())) + 1e-6;
  double lim = eps > 0 ? 8 * eps : 1e-3;
  double w = x.size() == y.size() ? 0.0 : INFINITY;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    double d = std::fabs(double(x[i]) - y[i]) / (floor + std::fabs(double(y[i])));
    w = std::isnan(d) || std::isnan(w) ? NAN : std::max(w, d);
  }
  if (worst)
    *worst = w;
  if (limit)
    *limit = lim;
  return w < lim; // NaN is no agreement
}

} // namespace kb::runtime
