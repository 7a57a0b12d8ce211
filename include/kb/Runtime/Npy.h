//===- Npy.h - read and write kb's .npy files -------------------*- C++ -*-===//
//
// Enough of NumPy's .npy format (versions 1.0-3.0, C order, little-endian
// '<f4' for f32, '<f2' for f16, '<u2' holding the raw bits of bf16, which
// NumPy lacks) for kb-run's --input and --save-outputs. The reader treats the file
// as untrusted: bounded header, strict dictionary, sizes checked against the
// file before any allocation.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_NPY_H
#define KB_RUNTIME_NPY_H

#include "kb/Runtime/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kb::runtime {

struct NpyArray {
  std::vector<int64_t> shape;
  /// The values, exact: every f16 and bf16 value is a float.
  std::vector<float> data;
  /// The file's type: '<f4' (f32), '<f2' (f16) or '<u2' (bf16 bits).
  std::string descr = "<f4";
};

/// The descr kb writes for `t`: '<f4', '<f2' or '<u2' (bf16's bits).
const char *npyDescr(DType t);

/// The header dictionary's three fields.
struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// The longest header kb-run reads (NumPy writes 64-byte aligned headers of
/// a few hundred bytes at most for kb's ranks).
constexpr uint32_t kNpyMaxHeaderBytes = 64 * 1024;

/// Parses a header dictionary strictly; throws std::runtime_error naming
/// `path` and the problem.
NpyHeader parseNpyHeader(const std::string &dict, const std::string &path);

/// Reads a C-order '<f4', '<f2' or '<u2' (read as bf16 bits) array; throws
/// std::runtime_error naming the problem.
NpyArray readNpy(const std::string &path);
/// An --input array for a buffer of type `t`: a '<f4' file fits any data
/// buffer (for a 16-bit one its values are rounded to nearest even), a
/// '<f2' file an f16 buffer, a '<u2' file (bf16 bits) a bf16 buffer. Throws
/// std::runtime_error naming the mismatch otherwise.
void fitNpyToType(NpyArray &a, DType t);
/// Writes a C-order array of `t` (npyDescr) from float values, each rounded
/// to `t` (exact for values of that type); throws std::runtime_error on
/// failure.
void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data, DType t = DType::F32);

} // namespace kb::runtime

#endif
