//===- KernelModel.cpp - a kernel's problem and its modelled bytes --------===//
//
// matmulDims reads a matmul kernel's problem from the manifest (looking
// through a kb.pad to the unpadded operand); modelledBytes counts the bytes
// a kernel moves by kb-run's simple model, a 16-bit operand or result at
// 2 bytes an element (issue #44).
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/KernelModel.h"

#include <cmath>
#include <regex>
#include <stdexcept>

namespace kb::runtime {

MatmulDims matmulDims(const Manifest &m, const Kernel &k) {
  if (k.ops.empty() || m.program.at(k.ops.front()).op != "kb.matmul" ||
      m.program.at(k.ops.front()).inputs.size() != 2)
    throw std::runtime_error("internal: " + k.name + " is not a matmul kernel");
  const ProgramOp &op = m.program[k.ops.front()];
  // An operand that a kb.pad made (its rows lengthened with zeros) stands
  // for the pad's input: the problem is the unpadded one.
  auto unpadded = [&](const std::string &name) {
    for (const ProgramOp &p : m.program)
      if (p.op == "kb.pad" && p.output == name)
        return p.inputs[0];
    return name;
  };
  MatmulDims d;
  d.a = unpadded(op.inputs[0]);
  d.b = unpadded(op.inputs[1]);
  const Buffer &a = m.buffer(d.a);
  const Buffer &b = m.buffer(d.b);
  size_t r = a.shape.size();
  d.batch = r == 3 ? a.shape[0] : 1;
  d.m = a.shape[r - 2];
  d.k = a.shape[r - 1];
  d.transB = op.attrs.value("transpose_b", false);
  d.n = d.transB ? b.shape[r - 2] : b.shape[r - 1];
  d.ldbT = d.transB ? b.shape[r - 1] : d.k;
  d.in = a.dtype;
  d.out = op.dtype;
  d.precision = op.attrString("precision", isHalf(d.in) ? "native" : "ieee");
  return d;
}

double modelledBytes(const Manifest &m, const Kernel &k) {
  double bytes = 0;
  std::smatch match;
  bool online = k.config.find("\"online\"") != std::string::npos;
  bool matmul = false;
  // The row kernels' online strategy (RowNormOnline.cpp) reads a reduce's
  // row once, an rms_norm's twice, a layer_norm's three times.
  double reads = 2;
  for (size_t i : k.ops) {
    matmul |= m.program[i].op == "kb.matmul";
    if (m.program[i].op == "kb.reduce")
      reads = 1;
    if (m.program[i].op == "kb.layer_norm")
      reads = 3;
  }
  if (matmul && std::regex_search(k.config, match,
                                  std::regex("block = \\[(\\d+), (\\d+)"))) {
    MatmulDims d = matmulDims(m, k);
    // The config is text from the bundle: a block size that does not parse
    // as a small positive number leaves the simple model below.
    double bm = 0, bn = 0;
    try {
      bm = std::stod(match[1]);
      bn = std::stod(match[2]);
    } catch (const std::exception &) {
    }
    if (bm >= 1 && bn >= 1 && bm <= 1 << 20 && bn <= 1 << 20) {
      double in = static_cast<double>(dtypeBytes(d.in));
      double out = static_cast<double>(dtypeBytes(d.out));
      return d.batch * (in * (d.m * d.k * std::ceil(d.n / bn) +
                              d.k * d.n * std::ceil(d.m / bm)) +
                        out * d.m * d.n);
    }
  }
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (!m.buffer(k.args[i]).isData())
      continue; // a few counters per row or a tensor map, not the data
    double b = m.buffer(k.args[i]).bytes();
    bytes += (online && i == 0) ? reads * b : b;
  }
  return bytes;
}

} // namespace kb::runtime
