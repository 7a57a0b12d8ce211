//===- Npy.h - read and write float32 .npy files ----------------*- C++ -*-===//
//
// Enough of NumPy's .npy format (version 1.0, little-endian '<f4', C order)
// for kb-run's --input and --save-outputs.
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

/// Reads a float32 C-order array; throws std::runtime_error naming the problem.
NpyArray readNpy(const std::string &path);
/// Writes a float32 C-order array; throws std::runtime_error on failure.
void writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              const float *data);

} // namespace kb::runtime

#endif
