//===- Baselines.h - the fastest library route for a matmul -----*- C++ -*-===//
//
// kb's matmul is measured against the best thing a user could run instead.
// For a GEMM that is not one cuBLAS call: the legacy API's strided-batched
// entry point, cublasGemmEx with a workspace, and cuBLASLt's heuristic
// candidates (PyTorch's route) pick different kernels. timeGemmRoutes times
// every route on the same operands, under the same protocol as kb's kernels
// (events, L2 flushed before each run), and returns them fastest first.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TOOLS_BASELINES_H
#define KB_TOOLS_BASELINES_H

#include "KbRun.h"

#include <cublasLt.h>

#include <string>
#include <vector>

namespace kb::runtime {

/// One way to compute C = A B with the vendor libraries, and its timing.
struct GemmRoute {
  /// e.g. "cublasLt algo 3 of 8 (heuristic), 32 MiB workspace".
  std::string name;
  Timing time;
};

/// The libraries' state for the routes: handles and one workspace, made once
/// per kb-run process.
class GemmRoutes {
public:
  /// Bytes of workspace given to cublasGemmEx and cuBLASLt: 32 MiB, the size
  /// PyTorch gives cuBLASLt on Hopper.
  static constexpr size_t kWorkspaceBytes = 32u << 20;
  /// cuBLASLt heuristic candidates timed per shape.
  static constexpr int kLtCandidates = 8;

  GemmRoutes();
  ~GemmRoutes();
  GemmRoutes(const GemmRoutes &) = delete;
  GemmRoutes &operator=(const GemmRoutes &) = delete;

  /// Every route for `precision` ("ieee": strict fp32; "tf32": TF32 tensor
  /// cores allowed; "native": d.in operands, fp32 compute, d.out result) at
  /// `d`, on row-major A, B (or B^T when d.transB) and C,
  /// each timed with timeWithEvents; fastest first. Routes the library
  /// refuses for the shape are left out; at least the legacy call remains.
  std::vector<GemmRoute> timeAll(const std::string &precision,
                                 const MatmulDims &d, CUdeviceptr a,
                                 CUdeviceptr b, CUdeviceptr c, int warmup,
                                 int minRuns, double minMillis,
                                 DeviceBuffer *flush, int batch = 1);

private:
  /// A handle as kb-run's checks use it (the library's own workspace), and
  /// one given kWorkspaceBytes.
  cublasHandle_t plain_ = nullptr, withWorkspace_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer workspace_;
};

} // namespace kb::runtime

#endif
