//===- Device.cpp - checked CUDA driver calls for kb-run ------------------===//
//
// Implements include/kb/Runtime/Device.h on the CUDA driver API.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Device.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>
#include <type_traits>

namespace kb::runtime {

static Driver gDriver;
static bool gLoaded = false;

const Driver &driver() { return gDriver; }

#define KB_STR(x) #x
#define KB_XSTR(x) KB_STR(x)

/// dlopens libcuda.so.1 and resolves every entry point (by its versioned
/// symbol name, as cuda.h's macros spell it).
static void loadDriver() {
  if (gLoaded)
    return;
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    throw DeviceError("no NVIDIA driver on this machine (libcuda.so.1 not "
                      "found): no GPU to run on",
                      true);
#define KB_DRIVER_LOAD(fn)                                                     \
  gDriver.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, KB_XSTR(fn)));       \
  if (!gDriver.fn)                                                             \
    throw DeviceError(std::string("the NVIDIA driver lacks ") + KB_XSTR(fn),   \
                      true);
  KB_DRIVER_FUNCTIONS(KB_DRIVER_LOAD)
#undef KB_DRIVER_LOAD
#define KB_DRIVER_LOAD_OPTIONAL(fn)                                            \
  gDriver.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, KB_XSTR(fn)));
  KB_DRIVER_OPTIONAL_FUNCTIONS(KB_DRIVER_LOAD_OPTIONAL)
#undef KB_DRIVER_LOAD_OPTIONAL
  gLoaded = true;
}

void check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *desc = nullptr;
  gDriver.cuGetErrorName(r, &name);
  gDriver.cuGetErrorString(r, &desc);
  throw DeviceError(std::string(what) + " failed: " + (name ? name : "?") +
                    " (" + (desc ? desc : "") + ")");
}

/// NVML, the driver's management library, for the board's power and clock
/// while kb-run times (BoardReading). Opened with dlopen like libcuda, on
/// the first timing loop (not for --no-time or a sanitizer's run); the five
/// entry points used are declared here with NVML's C signatures (nvml.h is
/// not part of the toolkit installed on the build machine). Absent, or a
/// device it does not know: timings carry no reading.
namespace {
using NvmlDevice = struct NvmlDeviceOpaque *;
struct Nvml {
  int (*init)() = nullptr;
  int (*byPciBusId)(const char *, NvmlDevice *) = nullptr;
  int (*energyMj)(NvmlDevice, unsigned long long *) = nullptr;
  int (*clockMhz)(NvmlDevice, int, unsigned *) = nullptr;
  int (*limitMw)(NvmlDevice, unsigned *) = nullptr;
  NvmlDevice device = nullptr;
  double limitW = 0;
  bool tried = false;
};
Nvml gNvml;
CUdevice gCuDevice = 0;
constexpr int kNvmlClockSm = 1;

/// Finds the opened device in NVML by its PCI bus id (CUDA's ordinals and
/// NVML's indices need not agree); once a process.
void openNvml() {
  if (gNvml.tried)
    return;
  gNvml.tried = true;
  // KB_RUN_NO_BOARD=1: no reading (an A/B of the timing with and without
  // the sampler thread).
  const char *off = std::getenv("KB_RUN_NO_BOARD");
  if (!gDriver.cuDeviceGetPCIBusId || (off && std::string(off) == "1"))
    return;
  void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return;
  auto sym = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(h, name));
    return fn != nullptr;
  };
  char bus[64] = {0};
  NvmlDevice d = nullptr;
  unsigned long long e = 0;
  if (!sym(gNvml.init, "nvmlInit_v2") ||
      !sym(gNvml.byPciBusId, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !sym(gNvml.energyMj, "nvmlDeviceGetTotalEnergyConsumption") ||
      !sym(gNvml.clockMhz, "nvmlDeviceGetClockInfo") ||
      !sym(gNvml.limitMw, "nvmlDeviceGetEnforcedPowerLimit") ||
      gNvml.init() != 0 ||
      gDriver.cuDeviceGetPCIBusId(bus, sizeof bus, gCuDevice) !=
          CUDA_SUCCESS ||
      gNvml.byPciBusId(bus, &d) != 0 || gNvml.energyMj(d, &e) != 0) {
    dlclose(h);
    return;
  }
  unsigned mw = 0;
  gNvml.limitW = gNvml.limitMw(d, &mw) == 0 ? mw / 1000.0 : 0;
  gNvml.device = d;
}

/// Reads the board over a timing loop on a thread of its own: every 10 ms
/// the SM clock and the energy counter. The counter moves in steps (tens
/// of ms apart), so the mean power is taken between its first and last
/// change inside the loop, where its value and the time agree; with fewer
/// than two changes, between the loop's ends. Any failure: no reading.
class BoardSampler {
public:
  BoardSampler() {
    openNvml();
    if (!gNvml.device)
      return;
    try {
      thread = std::thread([this] { sample(); });
    } catch (const std::system_error &) {
    }
  }
  BoardReading stop() {
    BoardReading r;
    if (!thread.joinable())
      return r;
    finish();
    if (failed || energy.size() < 2 || clocks.empty())
      return r;
    // The first and last change of the counter.
    size_t first = 0, last = energy.size() - 1;
    while (first + 1 < energy.size() &&
           energy[first + 1].second == energy[0].second)
      ++first;
    ++first;
    while (last > 0 && energy[last - 1].second == energy.back().second)
      --last;
    auto secs = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    size_t a = 0, b = energy.size() - 1;
    if (first < last && first < energy.size()) {
      a = first;
      b = last;
    }
    r.seconds = secs(energy[a].first, energy[b].first);
    unsigned long long da = energy[a].second, db = energy[b].second;
    if (r.seconds <= 0 || db <= da)
      return BoardReading{};
    r.watts = (db - da) / 1000.0 / r.seconds;
    r.limitW = gNvml.limitW;
    r.samples = static_cast<int>(clocks.size());
    std::sort(clocks.begin(), clocks.end());
    r.smMhz = clocks[clocks.size() / 2];
    return r;
  }
  ~BoardSampler() { finish(); }

private:
  using Clock = std::chrono::steady_clock;
  void sample() {
    std::unique_lock<std::mutex> lock(m);
    while (true) {
      unsigned long long mj = 0;
      unsigned mhz = 0;
      if (gNvml.energyMj(gNvml.device, &mj) != 0)
        failed = true;
      else
        energy.push_back({Clock::now(), mj});
      if (gNvml.clockMhz(gNvml.device, kNvmlClockSm, &mhz) == 0 && mhz)
        clocks.push_back(mhz);
      if (done || failed)
        return;
      cv.wait_for(lock, std::chrono::milliseconds(10), [this] { return done; });
    }
  }
  void finish() {
    if (!thread.joinable())
      return;
    {
      std::lock_guard<std::mutex> lock(m);
      done = true;
    }
    cv.notify_all();
    thread.join();
  }
  std::mutex m;
  std::condition_variable cv;
  bool done = false, failed = false;
  std::thread thread;
  std::vector<unsigned> clocks;
  std::vector<std::pair<Clock::time_point, unsigned long long>> energy;
};
} // namespace

DeviceInfo openDevice(int ordinal) {
  loadDriver();
  CUresult r = gDriver.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char *name = nullptr;
    gDriver.cuGetErrorName(r, &name);
    throw DeviceError(std::string("no usable CUDA driver or GPU (cuInit: ") +
                          (name ? name : "?") + ")",
                      true);
  }
  int count = 0;
  check(gDriver.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0)
    throw DeviceError("no CUDA GPU found", true);
  if (ordinal < 0 || ordinal >= count)
    throw DeviceError("device " + std::to_string(ordinal) +
                          " does not exist (" + std::to_string(count) +
                          " GPU(s) present)",
                      true);
  CUdevice dev;
  check(gDriver.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  CUcontext ctx;
  check(gDriver.cuDevicePrimaryCtxRetain(&ctx, dev),
        "cuDevicePrimaryCtxRetain");
  check(gDriver.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  DeviceInfo info;
  char name[256] = {0};
  gDriver.cuDeviceGetName(name, sizeof(name), dev);
  info.name = name;
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    gDriver.cuDeviceGetAttribute(&v, a, dev);
    return v;
  };
  info.major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.smCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.l2Bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info.maxSharedOptin =
      attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  info.regsPerSM = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
  info.maxThreadsPerSM =
      attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  gCuDevice = dev;
  return info;
}

DeviceBuffer::DeviceBuffer(size_t n) : bytes(n) {
  check(gDriver.cuMemAlloc(&ptr, std::max<size_t>(n, 4)), "cuMemAlloc");
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    if (ptr)
      gDriver.cuMemFree(ptr);
    ptr = o.ptr;
    bytes = o.bytes;
    o.ptr = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr)
    gDriver.cuMemFree(ptr);
}

void DeviceBuffer::upload(const void *host) {
  check(gDriver.cuMemcpyHtoD(ptr, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void *host) const {
  check(gDriver.cuMemcpyDtoH(host, ptr, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fillBytes(unsigned char v) {
  check(gDriver.cuMemsetD8(ptr, v, bytes), "cuMemsetD8");
}

static std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw DeviceError("cannot read kernel file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

LoadedKernel loadKernel(const std::string &cubinPath,
                        const std::string &ptxPath, const std::string &name,
                        int dynamicShared, int clusterBlocks) {
  LoadedKernel k;
  CUresult r = CUDA_ERROR_INVALID_IMAGE;
  if (!cubinPath.empty()) {
    std::string image = readFile(cubinPath);
    r = gDriver.cuModuleLoadData(&k.module, image.data());
    k.source = "cubin";
  }
  if (r != CUDA_SUCCESS) {
    std::string ptx = readFile(ptxPath);
    char log[8192] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, reinterpret_cast<void *>(sizeof(log))};
    r = gDriver.cuModuleLoadDataEx(&k.module, ptx.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS)
      throw DeviceError("the driver rejected " + ptxPath + ": " + log);
    k.source = "ptx";
  }
  check(gDriver.cuModuleGetFunction(&k.function, k.module, name.c_str()),
        ("cuModuleGetFunction(" + name + ")").c_str());
  if (dynamicShared > 48 * 1024)
    check(gDriver.cuFuncSetAttribute(
              k.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              dynamicShared),
          ("raising the shared-memory limit of " + name).c_str());
  if (clusterBlocks > 8)
    check(
        gDriver.cuFuncSetAttribute(
            k.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
        ("allowing clusters of " + std::to_string(clusterBlocks) +
         " blocks for " + name + " (the device may not support more than 8)")
            .c_str());
  return k;
}

namespace {
/// The L2 promotion of every tensor map: 128 bytes, or what
/// KB_TMA_L2_PROMOTION says (none, 64, 128, 256): an experiment's knob
/// (docs/shapes.md, "Medium shapes": 256 measured 4-16% slower where rows
/// split over two lines), not a setting users need.
CUtensorMapL2promotion tmaL2Promotion() {
  const char *e = std::getenv("KB_TMA_L2_PROMOTION");
  if (!e || !*e)
    return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  std::string v(e);
  if (v == "none")
    return CU_TENSOR_MAP_L2_PROMOTION_NONE;
  if (v == "64")
    return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  if (v == "128")
    return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  if (v == "256")
    return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  throw DeviceError("KB_TMA_L2_PROMOTION must be none, 64, 128 or 256, got '" +
                    v + "'");
}
} // namespace

std::array<unsigned char, 128>
encodeTensorMap(CUdeviceptr base, const std::vector<int64_t> &shape,
                const std::vector<int64_t> &dims,
                const std::vector<int64_t> &box, DType dtype,
                int64_t swizzle) {
  // The driver lists axes innermost first; strides (bytes) for all but the
  // innermost.
  cuuint32_t rank = static_cast<cuuint32_t>(dims.size());
  cuuint64_t globalDim[5], globalStrides[4];
  cuuint32_t boxDim[5], elementStrides[5];
  cuuint64_t stride = static_cast<cuuint64_t>(dtypeBytes(dtype));
  for (cuuint32_t d = 0; d < rank; ++d) {
    size_t axis = rank - 1 - d;
    globalDim[d] = static_cast<cuuint64_t>(dims[axis]);
    boxDim[d] = static_cast<cuuint32_t>(box[axis]);
    elementStrides[d] = 1;
    if (d > 0)
      globalStrides[d - 1] = stride;
    stride *= static_cast<cuuint64_t>(shape[axis]);
  }
  static_assert(sizeof(CUtensorMap) == 128, "a tensor map is 128 bytes");
  // The swizzles kb's kernels read (the manifest parser admits only
  // these); anything else would encode a map the kernel misreads.
  if (swizzle != 128 && swizzle != 64 && swizzle != 32)
    throw DeviceError("a tensor map swizzled by " + std::to_string(swizzle) +
                      " bytes (kb's maps are 128, 64 or 32)");
  if (!gDriver.cuTensorMapEncodeTiled)
    throw DeviceError(
        "the NVIDIA driver lacks cuTensorMapEncodeTiled: this bundle's TMA "
        "kernels need a CUDA 12 or newer driver (compile without chip=sm_90a, "
        "or with copy = \"cp_async\")");
  CUtensorMap map;
  check(gDriver.cuTensorMapEncodeTiled(
            &map,
            dtype == DType::BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
            : dtype == DType::F16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                  : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            rank,
            reinterpret_cast<void *>(base), globalDim, globalStrides, boxDim,
            elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle == 64   ? CU_TENSOR_MAP_SWIZZLE_64B
            : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                            : CU_TENSOR_MAP_SWIZZLE_128B,
            tmaL2Promotion(),
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled");
  std::array<unsigned char, 128> out;
  std::memcpy(out.data(), &map, sizeof map);
  return out;
}

namespace {
bool isCluster(const int64_t cluster[3]) {
  return cluster[0] * cluster[1] * cluster[2] > 1;
}

/// A CUlaunchConfig for cuLaunchKernelEx with its attributes: the cluster
/// dimension (for a cluster other than {1, 1, 1}) and programmatic stream
/// serialization (`dependent`). Not copyable: config.attrs points into it.
struct ExLaunch {
  CUlaunchAttribute attrs[2]{};
  CUlaunchConfig config{};
  ExLaunch(const int64_t grid[3], const int64_t block[3],
           const int64_t cluster[3], int dynamicShared, bool dependent) {
    unsigned n = 0;
    if (isCluster(cluster)) {
      CUlaunchAttribute &a = attrs[n++];
      a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      a.value.clusterDim.x = static_cast<unsigned>(cluster[0]);
      a.value.clusterDim.y = static_cast<unsigned>(cluster[1]);
      a.value.clusterDim.z = static_cast<unsigned>(cluster[2]);
    }
    if (dependent) {
      CUlaunchAttribute &a = attrs[n++];
      a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      a.value.programmaticStreamSerializationAllowed = 1;
    }
    config.gridDimX = grid[0];
    config.gridDimY = grid[1];
    config.gridDimZ = grid[2];
    config.blockDimX = block[0];
    config.blockDimY = block[1];
    config.blockDimZ = block[2];
    config.sharedMemBytes = dynamicShared;
    config.hStream = nullptr;
    config.attrs = attrs;
    config.numAttrs = n;
  }
  ExLaunch(const ExLaunch &) = delete;
  ExLaunch &operator=(const ExLaunch &) = delete;
};
} // namespace

void launch(const LoadedKernel &k, const int64_t grid[3],
            const int64_t block[3], const int64_t cluster[3], int dynamicShared,
            const std::vector<CUdeviceptr> &args, bool dependent) {
  std::vector<CUdeviceptr> values(args);
  std::vector<void *> ptrs;
  for (auto &v : values)
    ptrs.push_back(&v);
  if (isCluster(cluster) || dependent) {
    ExLaunch l(grid, block, cluster, dynamicShared, dependent);
    check(gDriver.cuLaunchKernelEx(&l.config, k.function, ptrs.data(), nullptr),
          dependent ? "cuLaunchKernelEx (programmatic dependent launch)"
                    : "cuLaunchKernelEx (cluster launch)");
    return;
  }
  check(gDriver.cuLaunchKernel(k.function, grid[0], grid[1], grid[2], block[0],
                               block[1], block[2], dynamicShared, nullptr,
                               ptrs.data(), nullptr),
        "cuLaunchKernel");
}

int maxActiveClusters(const LoadedKernel &k, const int64_t grid[3],
                      const int64_t block[3], const int64_t cluster[3],
                      int dynamicShared) {
  ExLaunch l(grid, block, cluster, dynamicShared, /*dependent=*/false);
  int n = 0;
  check(gDriver.cuOccupancyMaxActiveClusters(&n, k.function, &l.config),
        "cuOccupancyMaxActiveClusters");
  return n;
}

Timing timeWithEvents(const std::function<void()> &body, int warmup,
                      int minRuns, double minMillis, DeviceBuffer *flush,
                      int batch) {
  for (int i = 0; i < warmup; ++i)
    body();
  check(gDriver.cuCtxSynchronize(), "warm-up");
  CUevent start, stop;
  check(gDriver.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(gDriver.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  std::vector<double> times;
  double total = 0;
  batch = std::max(batch, 1);
  BoardSampler board;
  while ((int)times.size() < minRuns ||
         (total < minMillis && times.size() < 10000)) {
    if (flush)
      flush->fillBytes(static_cast<unsigned char>(times.size() & 0xff));
    check(gDriver.cuEventRecord(start, nullptr), "cuEventRecord");
    for (int i = 0; i < batch; ++i)
      body();
    check(gDriver.cuEventRecord(stop, nullptr), "cuEventRecord");
    check(gDriver.cuEventSynchronize(stop), "kernel run");
    float ms = 0;
    check(gDriver.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
    times.push_back(ms / batch);
    total += ms;
  }
  BoardReading reading = board.stop();
  gDriver.cuEventDestroy(start);
  gDriver.cuEventDestroy(stop);
  std::sort(times.begin(), times.end());
  Timing t;
  t.board = reading;
  t.runs = static_cast<int>(times.size());
  t.min = times.front();
  t.max = times.back();
  t.median = times[times.size() / 2];
  return t;
}

double measureCopyBandwidth() {
  const size_t bytes = size_t(1) << 30;
  DeviceBuffer a(bytes), b(bytes);
  a.fillBytes(1);
  Timing t = timeWithEvents(
      [&] { check(gDriver.cuMemcpyDtoD(b.ptr, a.ptr, bytes), "cuMemcpyDtoD"); },
      2, 10, 0, nullptr);
  return 2.0 * bytes / (t.median * 1e-3) / 1e9;
}

Timing timeCopyOfSize(double movedBytes, DeviceBuffer *flush, int batch) {
  size_t bytes = std::max<size_t>(16, size_t(movedBytes / 2) / 16 * 16);
  DeviceBuffer a(bytes), b(bytes);
  a.fillBytes(1);
  return timeWithEvents(
      [&] { check(gDriver.cuMemcpyDtoD(b.ptr, a.ptr, bytes), "cuMemcpyDtoD"); },
      2, 20, 100, flush, batch);
}

} // namespace kb::runtime
