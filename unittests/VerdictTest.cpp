// kb-run's verdict (lib/Runtime/Verdict.cpp): the roofline's ridge decides
// memory- or compute-bound; the fraction is of the binding ceiling; below a
// quarter of it the text says latency-bound. The texts are kb-run's report
// lines, so they are checked to the letter.
#include "kb/Runtime/Verdict.h"

#include <gtest/gtest.h>

using namespace kb::runtime;

TEST(Verdict, CopyOnly) {
  // softmax 8192x32768: 2147.5 MB in 0.5177 ms against a 4185 GB/s copy.
  Verdict v = classify(0, 2147.5e6, 4148, 0, 4185, 0);
  EXPECT_TRUE(v.memoryBound);
  EXPECT_NEAR(v.fraction, 4148.0 / 4185, 1e-12);
  EXPECT_EQ(v.ridge, 0);
  EXPECT_EQ(v.text, "memory-bound (99% of the copy bandwidth)");
  v = classify(0, 16e6, 500, 0, 4185, 0);
  EXPECT_EQ(v.text,
            "latency-bound (memory-bound work at 12% of the copy bandwidth)");
}

TEST(Verdict, Roofline) {
  // fp32 4096^3 as kb-run reported it (run 32): 137 GFLOP, 1365.3
  // flop/byte, far above the ridge of 51.2 TFLOP/s over 4220 GB/s (12.1).
  double flops = 2.0 * 4096 * 4096 * 4096, bytes = 6.0 * 4096 * 4096;
  Verdict v = classify(flops, bytes, 0, 48.4, 4220, 51.2);
  EXPECT_FALSE(v.memoryBound);
  EXPECT_NEAR(v.ridge, 51.2e12 / 4220e9, 1e-9);
  EXPECT_NEAR(v.fraction, 48.4 / 51.2, 1e-12);
  EXPECT_EQ(v.text, "compute-bound (intensity 1365.3 flop/byte, ridge 12.1; "
                    "95% of the compute ceiling)");
  // The same flops over 200x the bytes: below the ridge, judged by GB/s.
  v = classify(flops, bytes * 200, 3000, 0, 4220, 51.2);
  EXPECT_TRUE(v.memoryBound);
  EXPECT_NEAR(v.fraction, 3000.0 / 4220, 1e-12);
  EXPECT_EQ(v.text, "memory-bound (intensity 6.8 flop/byte, ridge 12.1; 71% of "
                    "the copy ceiling)");
  // Far from either ceiling.
  v = classify(flops, bytes, 0, 5.0, 4220, 51.2);
  EXPECT_EQ(
      v.text,
      "compute-bound in principle, latency-bound in practice (intensity 1365.3 "
      "flop/byte, ridge 12.1; 10% of the compute ceiling)");
}

TEST(Verdict, DeviceRidge) {
  // wgmma 16x24x32 (2026-11-30 run 42): cuBLAS at that shape reaches 0.0002
  // TFLOP/s, which made the ridge 0.0 and the kernel "compute-bound, 96% of
  // the compute ceiling". The ridge is the device's: 324 TFLOP/s over
  // 4200 GB/s (77.1); at 3.7 flop/byte the program is memory-bound, and far
  // from the copy bandwidth.
  double flops = 2.0 * 16 * 24 * 32,
         bytes = 4.0 * (16 * 32 + 24 * 32 + 16 * 24);
  Verdict v = classify(flops, bytes, 1.0, 0.0002, 4200, 0.00021, 324);
  EXPECT_TRUE(v.memoryBound);
  EXPECT_NEAR(v.ridge, 324e12 / 4200e9, 1e-9);
  EXPECT_EQ(
      v.text,
      "memory-bound in principle, latency-bound in practice (intensity 3.7 "
      "flop/byte, ridge 77.1; 0% of the copy ceiling)");
  // Above the device's ridge, near cuBLAS at the same shape, but that shape
  // is too small for the device: cuBLAS itself at 20% of its peak.
  v = classify(2e9, 1e7, 0, 60, 4200, 64, 324);
  EXPECT_FALSE(v.memoryBound);
  EXPECT_NEAR(v.fraction, 60.0 / 64, 1e-12);
  EXPECT_EQ(
      v.text,
      "compute-bound in principle, latency-bound at this size (the compute "
      "ceiling here, cuBLAS at this shape, is 20% of the device's) (intensity "
      "200.0 flop/byte, ridge 77.1; 94% of the compute ceiling)");
  // A large shape: the device's ridge, the fraction of cuBLAS at the shape.
  v = classify(2.0 * 4096 * 4096 * 4096, 6.0 * 4096 * 4096, 0, 318, 4200, 362,
               324);
  EXPECT_EQ(v.text,
            "compute-bound (intensity 1365.3 flop/byte, ridge 77.1; 88% of the "
            "compute ceiling)");
}

TEST(Verdict, NamesTheCeiling) {
  // A fused wgmma matmul (no cuBLAS at its shape): the fraction is of the
  // wgmma ceiling, and the text says so.
  double flops = 2.0 * 2048 * 4096 * 4096,
         bytes = 4.0 * 2048 * 4096 * 2 + 4.0 * 4096 * 4096 + 4 * 4096;
  Verdict v =
      classify(flops, bytes, 0, 352, 4230, 356, 356, "the wgmma_tf32 ceiling");
  EXPECT_NEAR(v.fraction, 352.0 / 356, 1e-12);
  EXPECT_EQ(v.text, "compute-bound (intensity 511.9 flop/byte, ridge 84.2; "
                    "99% of the wgmma_tf32 ceiling)");
  // Memory-bound: always the copy ceiling, whatever the compute name.
  v = classify(flops, bytes * 100, 3000, 0, 4230, 356, 356, "cuBLAS TF32");
  EXPECT_NE(v.text.find("of the copy ceiling)"), std::string::npos);
}

TEST(Verdict, BoardNoteAtThePowerLimit) {
  // bench/results/2026-12-04-cublas-form call 2: kb's 4096^3 B^T kernel and
  // F.linear back to back on the H200, both near the 700 W limit: the same
  // cycles (time x clock 1.00x) at a 0.97x clock.
  BoardFacts kb{689, 1515, 700, 0.4158}, peer{686, 1560, 700, 0.4050};
  EXPECT_EQ(boardNote(kb, peer, "cuBLAS TF32"),
            "kb ran at 689 W of its 700 W limit, SM clock 1515 MHz; cuBLAS "
            "TF32 at 686 W, 1560 MHz: both at the power limit, where the "
            "clock it allows sets the time; kb's time x clock is 1.00x the "
            "baseline's, its clock 0.97x");
}

TEST(Verdict, BoardNoteBelowTheLimitOrWithoutReadings) {
  BoardFacts kb{420, 1980, 700, 0.05}, peer{690, 1600, 700, 0.04};
  // One of the two under 95% of the limit: no claim about the clock.
  std::string note = boardNote(kb, peer, "cuBLAS fp32");
  EXPECT_EQ(note, "kb ran at 420 W of its 700 W limit, SM clock 1980 MHz; "
                  "cuBLAS fp32 at 690 W, 1600 MHz");
  // No baseline reading (--no-baselines, or not a matmul).
  EXPECT_EQ(boardNote(kb, BoardFacts{}, ""),
            "kb ran at 420 W of its 700 W limit, SM clock 1980 MHz");
  // No limit known: no "of its ... limit", never "at the power limit".
  BoardFacts noLimit{690, 1500, 0, 0.4}, peerNoLimit{690, 1550, 0, 0.39};
  EXPECT_EQ(boardNote(noLimit, peerNoLimit, "x"),
            "kb ran at 690 W, SM clock 1500 MHz; x at 690 W, 1550 MHz");
  // No reading for kb (no NVML): nothing to say.
  EXPECT_EQ(boardNote(BoardFacts{}, peer, "cuBLAS fp32"), "");
}
