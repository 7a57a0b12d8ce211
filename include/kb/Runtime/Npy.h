//===- Npy.h - read and write float32 .npy files ----------------*- C++ -*-===//
//
// Enough of NumPy's .npy format (versions 1.0-3.0, little-endian '<f4', C
// order) for kb-run's --input and --save-outputs. The reader treats the file
// as untrusted: bounded header, strict dictionary, sizes checked against the
// file before any allocation.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_NPY_H
#define KB_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace kb::runtime {

struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

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

/// Reads a float32 C-order array; throws std::runtime_error naming the problem.
NpyArray readNpy(const std::string &path);
/// Writes a float32 C-order array; throws std::runtime_error on failure.
void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data);

} // namespace kb::runtime

#endif
