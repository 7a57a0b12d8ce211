//===- Verdict.h - which ceiling binds a measured program -------*- C++ -*-===//
//
// kb-run's verdict: from a program's flops and minimal bytes, its measured
// rate and the two ceilings of this run (the copy bandwidth, and a compute
// ceiling for matmuls), whether it is memory- or compute-bound by the
// roofline's ridge, how close it came, and one line saying so.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_VERDICT_H
#define KB_RUNTIME_VERDICT_H

#include <string>

namespace kb::runtime {

struct Verdict {
  bool memoryBound = true;
  /// Of the binding ceiling: achieved GB/s over the copy bandwidth, or
  /// achieved TFLOP/s over the compute ceiling.
  double fraction = 0;
  /// flop per byte at which the two ceilings meet (0 without flops).
  double ridge = 0;
  std::string text;
};

/// `flops` 0: a program without arithmetic worth a roofline (elementwise,
/// softmax), judged against the copy bandwidth alone. Below a quarter of
/// the binding ceiling the text says latency-bound.
/// `computeTflops` is what the fraction is of (cuBLAS at the program's own
/// shape, when kb-run timed it); `deviceTflops` the device's compute peak
/// (calibrated or nominal), which places the ridge: the ridge belongs to
/// the machine, not to one shape. 0: the same as `computeTflops`. Where
/// even `computeTflops` is below a quarter of the device's peak, the shape
/// is too small for the device and the text says latency-bound.
Verdict classify(double flops, double minBytes, double achievedGBs,
                 double achievedTflops, double copyGBs, double computeTflops,
                 double deviceTflops = 0);

} // namespace kb::runtime

#endif // KB_RUNTIME_VERDICT_H
