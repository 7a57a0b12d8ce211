//===- Verdict.cpp - which ceiling binds a measured program ---------------===//

#include "kb/Runtime/Verdict.h"

#include <cstdio>
#include <string>

using namespace kb::runtime;

Verdict kb::runtime::classify(double flops, double minBytes, double achievedGBs,
                              double achievedTflops, double copyGBs,
                              double computeTflops, double deviceTflops) {
  Verdict v;
  if (flops > 0) {
    double intensity = flops / minBytes;
    double peak = deviceTflops > 0 ? deviceTflops : computeTflops;
    v.ridge = peak * 1e12 / (copyGBs * 1e9);
    v.memoryBound = intensity < v.ridge;
    v.fraction =
        v.memoryBound ? achievedGBs / copyGBs : achievedTflops / computeTflops;
    v.text = v.memoryBound ? "memory-bound" : "compute-bound";
    if (v.fraction < 0.25)
      v.text += " in principle, latency-bound in practice";
    else if (!v.memoryBound && computeTflops < 0.25 * peak)
      v.text += " in principle, latency-bound at this size (the compute "
                "ceiling here, "
                "cuBLAS at this shape, is " +
                std::to_string(int(100 * computeTflops / peak + 0.5)) +
                "% of the device's)";
    char buf[200];
    snprintf(
        buf, sizeof buf,
        " (intensity %.1f flop/byte, ridge %.1f; %.0f%% of the %s ceiling)",
        intensity, v.ridge, 100 * v.fraction,
        v.memoryBound ? "copy" : "compute");
    v.text += buf;
    return v;
  }
  v.fraction = achievedGBs / copyGBs;
  v.text = v.fraction < 0.25 ? "latency-bound (memory-bound work at "
                             : "memory-bound (";
  char buf[100];
  snprintf(buf, sizeof buf, "%.0f%% of the copy bandwidth)", 100 * v.fraction);
  v.text += buf;
  return v;
}
