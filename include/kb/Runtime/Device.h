//===- Device.h - the CUDA driver and cuBLAS, as kb-run uses them -*- C++
//-*-===//
//
// A thin, checked layer over the CUDA driver API: the device and context,
// buffers, modules loaded from PTX or cubin, launches, event timing and an L2
// flush. Every failing call becomes a DeviceError naming the call; "no GPU"
// is its own kind so that kb-run can exit 2.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_DEVICE_H
#define KB_RUNTIME_DEVICE_H

#include "kb/Runtime/DType.h"

#include <cuda.h>

#include <array>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb::runtime {

struct DeviceError : std::runtime_error {
  bool noDevice = false;
  DeviceError(const std::string &what, bool noDevice = false)
      : std::runtime_error(what), noDevice(noDevice) {}
};

/// The driver API entry points kb-run uses. libcuda is opened with dlopen at
/// run time, so that a machine without a driver gets a one-line error from
/// kb-run (exit 2) instead of a loader failure.
#define KB_DRIVER_FUNCTIONS(X)                                                 \
  X(cuInit)                                                                    \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDevicePrimaryCtxRetain)               \
      X(cuCtxSetCurrent) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(         \
          cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH)             \
          X(cuMemcpyDtoD) X(cuMemsetD8) X(cuModuleLoadData) X(                 \
              cuModuleLoadDataEx) X(cuModuleGetFunction) X(cuFuncSetAttribute) \
              X(cuLaunchKernel) X(cuEventCreate) X(cuEventRecord)              \
                  X(cuEventSynchronize) X(cuEventElapsedTime)                  \
                      X(cuEventDestroy) X(cuCtxSynchronize) X(cuGetErrorName)  \
                          X(cuGetErrorString)                                  \
                              X(cuOccupancyMaxActiveBlocksPerMultiprocessor)   \
                                  X(cuLaunchKernelEx)                          \
                                      X(cuOccupancyMaxActiveClusters)
/// Entry points only some bundles need, or that kb-run can do without (a
/// batch unloads each bundle's modules): a driver without them runs every
/// other bundle (null when absent).
#define KB_DRIVER_OPTIONAL_FUNCTIONS(X)                                        \
  X(cuTensorMapEncodeTiled) X(cuModuleUnload) X(cuDeviceGetPCIBusId)

struct Driver {
#define KB_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KB_DRIVER_FUNCTIONS(KB_DRIVER_MEMBER)
  KB_DRIVER_OPTIONAL_FUNCTIONS(KB_DRIVER_MEMBER)
#undef KB_DRIVER_MEMBER
};

/// The loaded driver; openDevice() loads it first.
const Driver &driver();

/// Throws DeviceError("<what>: <CUDA error name>") unless r is CUDA_SUCCESS.
void check(CUresult r, const char *what);

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0, smCount = 0, l2Bytes = 0;
  int maxSharedOptin = 0, regsPerSM = 0, maxThreadsPerSM = 0;
  std::string arch() const {
    return "sm_" + std::to_string(major * 10 + minor);
  }
};

/// Initialises the driver and opens `ordinal` with a primary context.
/// Throws DeviceError(noDevice=true) when there is no driver or no GPU.
DeviceInfo openDevice(int ordinal);

struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&o) noexcept : ptr(o.ptr), bytes(o.bytes) {
    o.ptr = 0;
  }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  ~DeviceBuffer();
  void upload(const void *host);
  void download(void *host) const;
  void fillBytes(unsigned char v);
};

struct LoadedKernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string source; // "cubin" or "ptx"
};

/// Loads `name` from a cubin (when given and loadable) or else from PTX,
/// raises its dynamic shared-memory limit to `dynamicShared` bytes and, for
/// clusters of more than 8 blocks, allows non-portable cluster sizes.
LoadedKernel loadKernel(const std::string &cubinPath,
                        const std::string &ptxPath, const std::string &name,
                        int dynamicShared, int clusterBlocks = 1);

/// The 128-byte TMA tensor map of a tensor of `dtype` (f32, f16 or bf16:
/// CU_TENSOR_MAP_DATA_TYPE_FLOAT32, FLOAT16, BFLOAT16) at `base` whose row-major
/// `shape` holds it (the last axis is the row pitch), covering the first
/// `dims` of each axis, copied in boxes of `box`, swizzled by `swizzle`
/// bytes (128, 64 or 32: CU_TENSOR_MAP_SWIZZLE_128B, 64B, 32B), with
/// zeros for whatever a box reads outside `dims`.
std::array<unsigned char, 128>
encodeTensorMap(CUdeviceptr base, const std::vector<int64_t> &shape,
                const std::vector<int64_t> &dims,
                const std::vector<int64_t> &box, DType dtype = DType::F32,
                int64_t swizzle = 128);

/// Launches with pointer arguments; with a cluster other than {1, 1, 1}
/// or `dependent`, through cuLaunchKernelEx with a cluster-dimension
/// attribute and/or programmatic stream serialization (the kernel may start
/// while the one before it in the stream ends: it must begin with
/// griddepcontrol.wait, which kb-dependent-launch puts there).
void launch(const LoadedKernel &k, const int64_t grid[3],
            const int64_t block[3], const int64_t cluster[3], int dynamicShared,
            const std::vector<CUdeviceptr> &args, bool dependent = false);

/// How many clusters of the launch can be resident at once (0: the cluster
/// does not fit on the device and the launch would fail).
int maxActiveClusters(const LoadedKernel &k, const int64_t grid[3],
                      const int64_t block[3], const int64_t cluster[3],
                      int dynamicShared);

/// The board while a timing loop ran, from NVML (the driver's management
/// library, opened at run time; none where it is absent): its mean power
/// (the energy counter's change between its first and last step inside the
/// loop, over the time between them), the median of the SM clock read
/// every 10 ms, and the enforced power limit.
struct BoardReading {
  double watts = 0, smMhz = 0, limitW = 0, seconds = 0;
  int samples = 0;
  bool valid() const {
    return seconds > 0 && watts > 0 && samples > 0 && smMhz > 0;
  }
};

/// Median, min and max of repeated timings, in milliseconds.
struct Timing {
  double median = 0, min = 0, max = 0;
  int runs = 0;
  BoardReading board;
};

/// Times `body` with CUDA events: `warmup` untimed runs, then at least
/// `minRuns` (and until `minMillis` of kernel time), each after writing a
/// buffer larger than the L2 cache so that no run starts with warm data.
/// `batch` > 1 (kb-run --warm-l2, with no flush): each sample is the mean
/// of `batch` runs back to back between two events, since a run timed
/// alone after the host has waited for the last one would count the
/// host's launch latency (a flush's kernel hides it by keeping the GPU busy
/// while the run is queued). Timing::runs then counts samples.
Timing timeWithEvents(const std::function<void()> &body, int warmup,
                      int minRuns, double minMillis, DeviceBuffer *flush,
                      int batch = 1);

/// Device-to-device copy bandwidth in GB/s (bytes read + written), 1 GiB.
double measureCopyBandwidth();

/// The same for a copy that moves `movedBytes` in all (half read, half
/// written), timed like a kernel: each run alone between events, after
/// `flush` is written. The ceiling of a memory-bound kernel of that size,
/// launch, ramp-up, tail and the L2's dirty lines included.
Timing timeCopyOfSize(double movedBytes, DeviceBuffer *flush, int batch = 1);

} // namespace kb::runtime

#endif
