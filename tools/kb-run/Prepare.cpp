//===- Prepare.cpp - load a bundle on the device, run it once, check it ---===//
//
// Loads a validated bundle's kernels (the cubin, else the PTX), checks that
// clusters and co-resident blocks fit the device, allocates every buffer,
// fills the inputs (seeded random or --input arrays) and encodes the TMA
// tensor maps; then runs the program once on poisoned outputs and checks
// every kernel (Checks.cpp).
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include <cstring>
#include <random>
#include <thread>

namespace kb::runtime {

using nlohmann::json;

/// Fills `v` with seeded normal or uniform values, in parallel slices whose
/// seeds depend only on (seed, buffer name, slice), so runs are repeatable.
void fillRandom(std::vector<float> &v, const Buffer &b, uint64_t seed) {
  const int64_t chunk = 1 << 20;
  int64_t n = static_cast<int64_t>(v.size());
  int64_t chunks = (n + chunk - 1) / chunk;
  unsigned workers =
      std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
  std::vector<std::thread> ts;
  uint64_t h =
      std::hash<std::string>()(b.name) ^ (seed * 0x9E3779B97F4A7C15ull);
  for (unsigned w = 0; w < workers; ++w)
    ts.emplace_back([&, w] {
      for (int64_t c = w; c < chunks; c += workers) {
        std::mt19937_64 rng(h + c * 0x632BE59BD9B4E019ull);
        int64_t end = std::min(n, (c + 1) * chunk);
        if (b.dist == "uniform") {
          std::uniform_real_distribution<float> d(b.mean - b.std,
                                                  b.mean + b.std);
          for (int64_t i = c * chunk; i < end; ++i)
            v[i] = d(rng);
        } else {
          std::normal_distribution<float> d(b.mean, b.std);
          for (int64_t i = c * chunk; i < end; ++i)
            v[i] = d(rng);
        }
      }
    });
  for (auto &t : ts)
    t.join();
  // Drawn in f32, then rounded once to the buffer's type (docs/bundle.md).
  if (isHalf(b.dtype))
    for (float &x : v)
      x = roundFloatTo(b.dtype, x);
}

void uploadAs(DeviceBuffer &d, DType t, const float *host) {
  if (!isHalf(t)) {
    d.upload(host);
    return;
  }
  std::vector<uint16_t> bits(d.bytes / 2);
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = t == DType::F16 ? floatToF16(host[i]) : floatToBf16(host[i]);
  d.upload(bits.data());
}

void downloadAs(const DeviceBuffer &d, DType t, float *host) {
  if (!isHalf(t)) {
    d.download(host);
    return;
  }
  std::vector<uint16_t> bits(d.bytes / 2);
  d.download(bits.data());
  for (size_t i = 0; i < bits.size(); ++i)
    host[i] = t == DType::F16 ? f16ToFloat(bits[i]) : bf16ToFloat(bits[i]);
}

RunState prepare(const Manifest &m, const Options &o,
                 const std::map<std::string, NpyArray> &given, int smCount) {
  RunState s;
  s.dependentLaunch = !o.noDependentLaunch;
  s.manifest = m;
  s.seed = o.seed;
  for (size_t i = 0; i < s.manifest.kernels.size(); ++i) {
    const Kernel &k = s.manifest.kernels[i];
    // Checked again (the files may have changed since validateOffline).
    std::string where = "kernels[" + std::to_string(i) + "]";
    std::string ptx = s.manifest.filePath(k.ptx, where + ".ptx");
    std::string cubin =
        k.cubin.empty() ? "" : s.manifest.filePath(k.cubin, where + ".cubin");
    s.kernels.push_back(loadKernel(cubin, ptx, k.name, k.dynamicSharedBytes,
                                   static_cast<int>(k.clusterBlocks())));
    s.maxClusters.push_back(
        k.clusterBlocks() > 1
            ? maxActiveClusters(s.kernels.back(), k.grid.data(), k.block.data(),
                                k.cluster.data(),
                                static_cast<int>(k.dynamicSharedBytes))
            : 0);
    if (k.clusterBlocks() > 1 && s.maxClusters.back() == 0)
      throw DeviceError("kernel " + k.name + " cannot launch: a cluster of " +
                        std::to_string(k.clusterBlocks()) + " blocks of " +
                        std::to_string(k.threads()) + " threads (" +
                        std::to_string(k.resources.registers) +
                        " registers each) does not fit on this device");
    int perSM = 0;
    check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
              &perSM, s.kernels.back().function, static_cast<int>(k.threads()),
              k.dynamicSharedBytes),
          "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    s.blocksPerSM.push_back(perSM);
    if (k.coResidentBlocks > 1) {
      int64_t resident = int64_t(perSM) * smCount;
      if (resident < k.coResidentBlocks)
        throw DeviceError(
            "kernel " + k.name + " needs " +
            std::to_string(k.coResidentBlocks) +
            " blocks resident at once (they wait for each other); this "
            "device holds " +
            std::to_string(resident) +
            ": compile with fewer blocks (#kb.config cluster of a "
            "split_global softmax, grid of a stream-K matmul)");
    }
  }
  for (const Buffer &b : s.manifest.buffers) {
    s.dev.emplace(b.name, DeviceBuffer(b.bytes()));
    std::vector<float> &h = s.host[b.name];
    h.resize(b.elements());
    // A workspace starts zero; its kernel leaves it zero after every launch.
    if (b.role == "workspace")
      s.dev.at(b.name).fillBytes(0);
    if (b.role != "input")
      continue;
    auto it = given.find(b.name);
    if (it != given.end()) {
      h = it->second.data; // its shape was checked by validateOffline
    } else {
      fillRandom(h, b, o.seed);
    }
    uploadAs(s.dev.at(b.name), b.dtype, h.data());
  }
  // Tensor maps, once every buffer has its address.
  for (const Buffer &b : s.manifest.buffers) {
    if (b.role != "tensor_map")
      continue;
    const TensorMapSpec &tm = b.tensorMap;
    const Buffer &of = s.manifest.buffer(tm.of);
    auto bytes = encodeTensorMap(s.dev.at(tm.of).ptr, of.shape, tm.dims,
                                 tm.box, of.dtype, tm.swizzle);
    std::memcpy(s.host.at(b.name).data(), bytes.data(), bytes.size());
    s.dev.at(b.name).upload(bytes.data());
  }
  return s;
}

void poisonOutputs(RunState &s) {
  for (const Buffer &b : s.manifest.buffers)
    if (b.role != "input" && b.isData())
      s.dev.at(b.name).fillBytes(0xFF); // NaN in every type: an unwritten
                                        // element fails
}

void launchOne(RunState &s, size_t i) {
  const Kernel &k = s.manifest.kernels[i];
  std::vector<CUdeviceptr> args;
  for (const std::string &a : k.args)
    args.push_back(s.dev.at(a).ptr);
  launch(s.kernels[i], k.grid.data(), k.block.data(), k.cluster.data(),
         static_cast<int>(k.dynamicSharedBytes), args,
         k.dependentLaunch && s.dependentLaunch);
}

void launchAll(RunState &s) {
  for (size_t i = 0; i < s.manifest.kernels.size(); ++i)
    launchOne(s, i);
}

void unloadKernels(RunState &s) {
  if (!driver().cuModuleUnload)
    return;
  for (LoadedKernel &k : s.kernels)
    if (k.module) {
      driver().cuModuleUnload(k.module); // a failure leaks one module only
      k.module = nullptr;
      k.function = nullptr;
    }
}

void downloadAll(RunState &s) {
  for (const Buffer &b : s.manifest.buffers)
    downloadAs(s.dev.at(b.name), b.dtype, s.host.at(b.name).data());
}

std::vector<KernelCheck> runAndCheck(RunState &s, json &report) {
  poisonOutputs(s);
  launchAll(s);
  check(driver().cuCtxSynchronize(), "running the kernels");
  downloadAll(s);
  bool allOk = true;
  json checks = json::array();
  std::vector<KernelCheck> results;
  for (const Kernel &k : s.manifest.kernels) {
    KernelCheck c = checkKernel(s, k);
    allOk &= c.ok;
    results.push_back(c);
    json cj = c.extra;
    cj["kernel"] = c.kernel;
    cj["method"] = c.method;
    cj["ok"] = c.ok;
    cj["detail"] = c.detail;
    checks.push_back(cj);
  }
  report["checks"] = checks;
  report["ok"] = allOk;
  // A kernel none of whose values could be checked (every bound infinite:
  // fp32 may overflow for these inputs) is not shown wrong: the inputs are
  // refused, unless another kernel failed its check.
  bool otherBad = false;
  for (const KernelCheck &c : results)
    otherBad |= !c.ok && !c.uncheckable;
  for (size_t i = 0; i < results.size() && !otherBad; ++i)
    if (results[i].uncheckable)
      throw InputError(
          "kernels[" + std::to_string(i) + "] (" + results[i].kernel +
          "): no value of it can be checked: for these inputs fp32 may "
          "overflow in every element; draw inputs of smaller magnitude (the "
          "manifest's init, or --input)");
  return results;
}

} // namespace kb::runtime
