//===- CopyChecks.cpp - the bit-exact checks of transposes and pads -------===//
//
// A kb.transpose or a kb.pad moves values without arithmetic: every element
// of its output must equal its source (or a padding zero) bit for bit, in
// any element type (the host copies of 16-bit buffers are their exact f32
// values).
//
//===----------------------------------------------------------------------===//

#include "KbRun.h"

#include <cmath>
#include <cstring>

namespace kb::runtime {

/// The verdict of a bit-exact check (transpose, pad): `bad` of `elements`
/// differ, the first at output index `firstBad`; `what` names the elements.
static void finishBitExact(KernelCheck &c, int64_t elements, int64_t bad,
                           int64_t firstBad, const std::string &what) {
  c.ok = bad == 0;
  c.maxErr = bad ? INFINITY : 0.0;
  c.extra["elements"] = elements;
  c.extra["mismatches"] = bad;
  c.detail = what + ", " + std::to_string(bad) + " differ";
  if (bad)
    c.detail += "; first at output index " + std::to_string(firstBad);
}

/// A transpose moves values without arithmetic: every element must equal
/// its source exactly.
KernelCheck checkTranspose(RunState &s, const Kernel &k) {
  KernelCheck c;
  c.kernel = k.name;
  c.method = "transpose: every element bit-identical to its source";
  const ProgramOp &op = s.manifest.program[k.ops.front()];
  const Buffer &in = s.manifest.buffer(op.inputs[0]);
  const std::vector<float> &x = s.host.at(op.inputs[0]);
  const std::vector<float> &got = s.host.at(k.args.back());
  size_t r = in.shape.size();
  int64_t batch = r == 3 ? in.shape[0] : 1, rows = in.shape[r - 2],
          cols = in.shape[r - 1];
  // The output's rows: `rows` long, or padded with zeros (kb.transpose pad).
  int64_t ld = s.manifest.buffer(op.output).shape.back();
  int64_t bad = 0, firstBad = -1;
  const float zero = 0.0f;
  for (int64_t z = 0; z < batch; ++z)
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < ld; ++i) {
        int64_t to = (z * cols + j) * ld + i;
        const float *want = i < rows ? &x[(z * rows + i) * cols + j] : &zero;
        if (std::memcmp(want, &got[to], sizeof(float)) != 0) {
          if (firstBad < 0)
            firstBad = to;
          ++bad;
        }
      }
  char buf[200];
  snprintf(buf, sizeof buf, "%lld elements%s", (long long)(batch * cols * ld),
           ld != rows ? " (padding zeros included)" : "");
  finishBitExact(c, batch * cols * ld, bad, firstBad, buf);
  return c;
}

/// A pad moves values without arithmetic too: every element of a row equals
/// its source exactly, and the padding is +0.0.
KernelCheck checkPad(RunState &s, const Kernel &k) {
  KernelCheck c;
  c.kernel = k.name;
  c.method = "pad: every element bit-identical to its source, the padding "
             "+0.0";
  const ProgramOp &op = s.manifest.program[k.ops.front()];
  const Buffer &in = s.manifest.buffer(op.inputs[0]);
  const std::vector<float> &x = s.host.at(op.inputs[0]);
  const std::vector<float> &got = s.host.at(k.args.back());
  int64_t cols = in.shape.back(), rows = in.elements() / cols;
  int64_t ld = s.manifest.buffer(op.output).shape.back();
  int64_t bad = 0, firstBad = -1;
  const float zero = 0.0f;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < ld; ++j) {
      const float *want = j < cols ? &x[i * cols + j] : &zero;
      if (std::memcmp(want, &got[i * ld + j], sizeof(float)) != 0) {
        if (firstBad < 0)
          firstBad = i * ld + j;
        ++bad;
      }
    }
  char buf[200];
  snprintf(buf, sizeof buf, "%lld elements (rows of %lld padded to %lld)",
           (long long)(rows * ld), (long long)cols, (long long)ld);
  finishBitExact(c, rows * ld, bad, firstBad, buf);
  return c;
}

} // namespace kb::runtime
