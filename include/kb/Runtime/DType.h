//===- DType.h - kb's element types and their host conversions --*- C++ -*-===//
//
// The element types a bundle's buffers hold (docs/bundle.md: "f32", "f16",
// "bf16" for data, "i32" for workspaces and tensor maps), their sizes, and
// the host conversions kb-run needs: f32 to f16 and bf16 rounded to nearest
// even (what the kernels' cvt.rn does), back exactly, and a float64 value
// rounded once to a 16-bit type (the references). Plain C++, no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_DTYPE_H
#define KB_RUNTIME_DTYPE_H

#include <cstdint>
#include <vector>
#include <optional>
#include <string>

namespace kb::runtime {

enum class DType { F32, F16, BF16, I32 };

/// "f32", "f16", "bf16", "i32".
const char *dtypeName(DType t);
/// The type a manifest names, or none for any other string.
std::optional<DType> parseDType(const std::string &name);
/// Bytes per element: 4 or 2.
inline int64_t dtypeBytes(DType t) {
  return t == DType::F16 || t == DType::BF16 ? 2 : 4;
}
inline bool isHalf(DType t) { return t == DType::F16 || t == DType::BF16; }

/// f32 to the 16-bit type's bits, rounded to nearest even; NaN stays a
/// (quiet) NaN, values past the largest finite round to +-inf, f16's
/// subnormals are produced (gradual underflow).
uint16_t floatToBf16(float x);
uint16_t floatToF16(float x);
/// The 16-bit bits to f32 (exact: every f16 and bf16 value is an f32).
float bf16ToFloat(uint16_t bits);
float f16ToFloat(uint16_t bits);
/// x rounded to `t` (an f32 value of it); f32 and i32 give x.
float roundFloatTo(DType t, float x);

/// A float64 value rounded once to `t` (nearest even, subnormals and
/// overflow to inf as above), as a double; for F32 rounded to f32.
double roundTo(DType t, double x);
/// The unit roundoff of `t` (a correctly rounded result errs by at most
/// u relative, above the subnormal range): f32 2^-24, bf16 2^-8, f16 2^-11.
double unitRoundoff(DType t);
/// Half the spacing of `t`'s subnormals: the absolute error a rounding may
/// make below the normal range (f16 2^-25, bf16 2^-134, f32 2^-150).
double subnormalHalfStep(DType t);
/// The largest finite value of `t`.
double maxFinite(DType t);

/// kb-run --baseline: whether a baseline bundle's output `y` is the same
/// program's as this bundle's `x` (outputs of type `t`). f32: every element
/// within 1e-3 relative (the same arithmetic). 16-bit: the unfused baseline
/// rounds each intermediate to 16 bits where a fused kernel rounds once, so
/// each element within 8 units of 2^-8 (bf16) or 2^-11 (f16) of its size
/// plus the output's rms (small elements of a GELU differ a lot relative to
/// themselves). `worst` gets the largest scaled difference, `limit` its
/// bound.
bool baselineOutputsAgree(const std::vector<float> &x, const std::vector<float> &y,
                          DType t, double *worst = nullptr, double *limit = nullptr);

} // namespace kb::runtime

#endif
