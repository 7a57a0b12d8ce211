//===- ManifestBuffers.cpp - the manifest's buffers and tensor maps -------===//
//
// buffers[]: each buffer's name, role, element type ("f32", "f16" or
// "bf16" for data, "i32" for a workspace or a tensor map), shape and
// initialisation; and each tensor map against the buffer it describes, with
// cuTensorMapEncodeTiled's limits for that buffer's element size, so that a
// bad map is a one-line error, not a launch failure.
//
//===----------------------------------------------------------------------===//

#include "ManifestParsing.h"

#include <cmath>

namespace kb::runtime::manifest {

void parseBuffers(const json &j, ParseState &st) {
  const json &bufs = array(field(j, "buffers", "manifest"), "buffers", true);
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::string where = "buffers[" + std::to_string(i) + "]";
    const json &bj = bufs[i];
    Buffer b;
    b.name = str(bj, "name", where);
    if (b.name.empty() || b.name.size() > 256)
      fail(where + ".name must have 1 to 256 characters");
    b.role = str(bj, "role", where);
    if (b.role != "input" && b.role != "output" && b.role != "scratch" &&
        b.role != "workspace" && b.role != "tensor_map")
      fail(where +
           ".role must be input, output, scratch, workspace or tensor_map, "
           "got " +
           b.role);
    where += " (" + b.name + ")";
    b.shape = shapeField(bj, where, st.maxElements, /*scalar=*/b.role == "input");
    std::string dtype = str(bj, "dtype", where);
    std::optional<DType> t = parseDType(dtype);
    if (b.isData() ? (!t || *t == DType::I32) : t != DType::I32)
      fail(where + " has dtype " + bj["dtype"].dump() +
           (b.isData() ? "; a data buffer is f32, f16 or bf16"
                       : "; a " + b.role + " is i32"));
    b.dtype = *t;
    if (b.role == "tensor_map") {
      std::string w = where + ".tensor_map";
      const json &tm = field(bj, "tensor_map", where);
      b.tensorMap.of = str(tm, "of", w);
      b.tensorMap.dims =
          ints(field(tm, "dims", w), w + ".dims", 1, st.maxElements);
      b.tensorMap.box = ints(field(tm, "box", w), w + ".box", 1, st.maxElements);
      std::string swizzle = str(tm, "swizzle", w);
      if (swizzle == "128B" || swizzle == "64B" || swizzle == "32B")
        b.tensorMap.swizzle = std::stoi(swizzle);
      else
        fail(w + ".swizzle must be \"128B\", \"64B\" or \"32B\" (the "
                 "swizzles kb's kernels read), got \"" +
             swizzle + "\"");
      if (b.shape != std::vector<int64_t>{32})
        fail(where + " must have shape [32]: a tensor map is 128 bytes");
    } else if (opt(bj, "tensor_map")) {
      fail(where + ".tensor_map is only for a buffer of role tensor_map");
    }
    if (const json *init = opt(bj, "init")) {
      std::string w = where + ".init";
      if (b.role != "input")
        fail(w + ": only an input is initialised");
      if (!init->is_object())
        fail(w + " must be an object, not " + typeName(*init));
      if (const json *d = opt(*init, "dist"))
        b.dist = asString(*d, w + ".dist");
      if (b.dist != "normal" && b.dist != "uniform")
        fail(w + ".dist must be normal or uniform");
      if (const json *x = opt(*init, "mean"))
        b.mean = asNumber(*x, w + ".mean");
      if (const json *x = opt(*init, "std"))
        b.std = asNumber(*x, w + ".std");
      if (b.std < 0)
        fail(w + ".std must not be negative");
      if (std::fabs(b.mean) > 1e30 || b.std > 1e30)
        fail(w + ": mean and std must be at most 1e30 in magnitude");
      // The values drawn must be finite in the buffer's type (a draw past
      // f16's 65504 is stored as inf, and nothing computed from it can be
      // checked): mean +- 6 std for a normal draw (2e-9 of the values lie
      // further), the interval's ends for a uniform one.
      double reach = std::fabs(b.mean) + (b.dist == "normal" ? 6 : 1) * b.std;
      if (reach > maxFinite(b.dtype))
        fail(w + ": " + b.dist + " values around " + shown(json(b.mean)) +
             " with std " + shown(json(b.std)) + " reach " + shown(json(reach)) +
             ", past " + dtypeName(b.dtype) + "'s largest finite value " +
             shown(json(maxFinite(b.dtype))));
    }
    if (!st.index.emplace(b.name, i).second)
      fail(where + ": buffer name '" + b.name + "' appears twice");
    st.m.buffers.push_back(b);
  }
}

// A tensor map describes another buffer; cuTensorMapEncodeTiled's limits
// are checked here so that a bad one is a one-line error, not a launch
// failure.
void checkTensorMaps(ParseState &st) {
  for (const Buffer &t : st.m.buffers) {
    if (t.role != "tensor_map")
      continue;
    const TensorMapSpec &tm = t.tensorMap;
    std::string where = "tensor map '" + t.name + "'";
    const Buffer *of = st.bufferOf(tm.of);
    if (!of || !of->isData())
      fail(where + " describes '" + tm.of + "', which is not a data buffer");
    size_t r = of->shape.size();
    if (tm.dims.size() != r || tm.box.size() != r || r < 2 || r > 5)
      fail(where + ": dims and box need one size per axis of '" + tm.of +
           "' (" + std::to_string(r) + ", at least 2)");
    for (size_t d = 0; d < r; ++d) {
      if (tm.dims[d] < 1 || tm.dims[d] > of->shape[d])
        fail(where + ": dims[" + std::to_string(d) +
             "] = " + std::to_string(tm.dims[d]) + " must be in [1, " +
             std::to_string(of->shape[d]) + "]");
      if (tm.box[d] < 1 || tm.box[d] > 256)
        fail(where + ": box[" + std::to_string(d) +
             "] = " + std::to_string(tm.box[d]) + " must be in [1, 256]");
    }
    // A box row is at most the swizzle's bytes (128: 32 floats, 64 16-bit
    // elements; 64 or 32 bytes); the row pitch a multiple of 16 bytes.
    int64_t eb = dtypeBytes(of->dtype);
    if (tm.box.back() * eb > tm.swizzle)
      fail(where + ": a " + std::to_string(tm.swizzle) +
           "-byte swizzled box row holds at most " +
           std::to_string(tm.swizzle / eb) + " elements of " +
           dtypeName(of->dtype) + ", got " + std::to_string(tm.box.back()));
    if (of->shape.back() * eb % 16)
      fail(where + ": rows of '" + tm.of + "' (" + dtypeName(of->dtype) +
           ") are " + std::to_string(of->shape.back() * eb) +
           " bytes, not a multiple of 16 as a tensor map needs");
  }

}

} // namespace kb::runtime::manifest
