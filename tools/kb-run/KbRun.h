//===- KbRun.h - kb-run's shared state (tool-private) -----------*- C++ -*-===//
//
// The state of one bundle's run (manifest, device and host copies of every
// buffer, loaded kernels) and the per-kernel check results, shared by
// kb-run.cpp (driver, timing, report) and Checks.cpp (validation).
//
//===----------------------------------------------------------------------===//

#ifndef KB_TOOLS_KBRUN_H
#define KB_TOOLS_KBRUN_H

#include "kb/Runtime/Device.h"
#include "kb/Runtime/KernelModel.h"
#include "kb/Runtime/Manifest.h"

#include <cublas_v2.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace kb::runtime {

inline void checkCublas(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw DeviceError(std::string(what) + " failed: cuBLAS status " +
                      std::to_string(static_cast<int>(s)));
}

struct RunState {
  Manifest manifest;
  uint64_t seed = 0;
  cublasHandle_t cublas = nullptr;
  std::map<std::string, DeviceBuffer> dev;
  std::map<std::string, std::vector<float>> host;
  std::vector<LoadedKernel> kernels;
  /// Per kernel: how many of its clusters can be resident (0: no clusters),
  /// and how many of its blocks fit on one SM (the driver's occupancy).
  std::vector<int> maxClusters, blocksPerSM;
  /// Launch kernels marked dependent_launch with programmatic stream
  /// serialization (off with --no-dependent-launch).
  bool dependentLaunch = true;
};

struct KernelCheck {
  std::string kernel, method, detail;
  bool ok = false;
  /// Nothing was checked and nothing was found wrong: every element's bound
  /// is infinite (fp32 may overflow there for these inputs). Not a wrong
  /// result: kb-run refuses the inputs (runAndCheck).
  bool uncheckable = false;
  double maxErr = 0;
  nlohmann::json extra = nlohmann::json::object();
};

/// cuBLAS's data type of `t` (CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF).
cudaDataType_t cudaTypeOf(DType t);
/// C = A B by cuBLAS's strided-batched call in `precision` ("ieee",
/// "tf32"; "native": d.in operands, fp32 compute, a d.out result).
void runCublasGemm(cublasHandle_t h, const std::string &precision,
                   const MatmulDims &d, CUdeviceptr a, CUdeviceptr b,
                   CUdeviceptr c);
KernelCheck checkKernel(RunState &s, const Kernel &k);
/// A kb.transpose's or kb.pad's kernel, bit for bit (CopyChecks.cpp).
KernelCheck checkTranspose(RunState &s, const Kernel &k);
KernelCheck checkPad(RunState &s, const Kernel &k);
/// A kb.attention's kernel against the float64 reference on sampled query
/// rows (AttentionCheck.cpp).
KernelCheck checkAttention(RunState &s, const Kernel &k);

} // namespace kb::runtime

#endif
