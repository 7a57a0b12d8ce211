//===- Manifest.h - the bundle manifest, as kb-run reads it -----*- C++ -*-===//
//
// Parses and checks manifest.json (docs/bundle.md, format version 1). A
// bundle is untrusted input: every field is checked for its type, its range
// (CUDA's launch limits included) and its consistency with the others, and
// every file it names must be a regular file inside the bundle folder. Any
// problem is a ManifestError whose one-line message names the field.
//
//===----------------------------------------------------------------------===//

#ifndef KB_RUNTIME_MANIFEST_H
#define KB_RUNTIME_MANIFEST_H

#include "kb/Runtime/DType.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb::runtime {

struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A TMA tensor map over buffer `of` (role "tensor_map"): the first `dims`
/// of each axis (row-major, outermost first; the row pitch is the buffer's
/// last axis), copied in boxes of `box`, swizzled by `swizzle` bytes (128;
/// 64 or 32 for a 16-bit row-major B's narrower boxes: "128B", "64B",
/// "32B" in the manifest).
struct TensorMapSpec {
  std::string of;
  std::vector<int64_t> dims, box;
  int64_t swizzle = 128;
};

struct Buffer {
  // role: input, output, scratch, workspace or tensor_map
  std::string name, role;
  std::vector<int64_t> shape;
  /// f32, f16 or bf16 for data; i32 for a workspace or a tensor map.
  DType dtype = DType::F32;
  TensorMapSpec tensorMap;     // role "tensor_map" only
  std::string dist = "normal"; // normal or uniform
  double mean = 0.0, std = 1.0;
  int64_t elements() const;
  int64_t bytes() const { return elements() * dtypeBytes(dtype); }
  /// Data the kernels compute on (not a workspace's counters or a tensor
  /// map): what kb-run fills, checks and counts as bytes moved.
  bool isData() const { return role != "workspace" && role != "tensor_map"; }
};

struct Resources {
  bool known = false;
  int registers = 0, sharedStaticBytes = 0, stackBytes = 0;
  int spillStoreBytes = 0, spillLoadBytes = 0;
};

struct Kernel {
  std::string name, ptx, cubin, config;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  /// Thread-block cluster; {1, 1, 1}: a launch without clusters.
  std::array<int64_t, 3> cluster{1, 1, 1};
  int64_t dynamicSharedBytes = 0;
  /// Blocks that wait for each other and so must be resident at once (a
  /// split_global softmax's blocks of one row); 0: none do.
  int64_t coResidentBlocks = 0;
  /// The kernel starts with griddepcontrol.wait (kb-dependent-launch), so
  /// it may be launched with programmatic stream serialization: scheduled
  /// while the kernel before it ends.
  bool dependentLaunch = false;
  std::vector<std::string> args; // buffer names: inputs..., output
  std::vector<size_t> ops;       // indices into Manifest::program
  Resources resources;
  int64_t threads() const { return block[0] * block[1] * block[2]; }
  int64_t clusterBlocks() const { return cluster[0] * cluster[1] * cluster[2]; }
};

struct ProgramOp {
  std::string op; // e.g. "kb.gelu"
  std::vector<std::string> inputs;
  std::string output, kernel;
  std::vector<int64_t> shape;
  nlohmann::json attrs;
  /// The result's element type (a matmul's accumulates in f32 whatever it
  /// is), and whether the result is stored to a buffer: a 16-bit result is
  /// rounded there (and at a kb.convert), held in f32 registers otherwise.
  DType dtype = DType::F32;
  bool toBuffer = false;
  /// A row op's (layer_norm, rms_norm, reduce): the most rounded adds a
  /// term of its row sums passes through in the kernel that computes it
  /// (rowSumDepth in Reference.h); 0: not known, the bound for any kernel
  /// kb builds (kRowSumDepth). Set by kb-run from the kernel's launch.
  double sumDepth = 0;
  double attrDouble(const char *name, double fallback) const;
  std::string attrString(const char *name, const std::string &fallback) const;
};

/// Limits on what kb-run reads from a bundle (docs/reliability.md, kb-run).
struct BundleLimits {
  static constexpr int64_t manifestBytes = int64_t(16) << 20;
  static constexpr int64_t kernelFileBytes = int64_t(256) << 20;
  /// One buffer's bytes at most (1 TiB: more than any GPU holds, small
  /// enough that no size computed from it overflows).
  static constexpr int64_t bufferBytes = int64_t(1) << 40;
  /// CUDA's launch limits and the H100/H200's shared memory per block.
  static constexpr int64_t gridX = (int64_t(1) << 31) - 1, gridYZ = 65535;
  static constexpr int64_t blockThreads = 1024, blockZ = 64;
  static constexpr int64_t clusterBlocks = 16;
  static constexpr int64_t dynamicSharedBytes = 227 * 1024;
};

/// Reads a regular file of at most `maxBytes` (never a FIFO, a device or a
/// folder; opened without blocking). Throws ManifestError naming `what`.
std::string readRegularFile(const std::string &path, int64_t maxBytes,
                            const std::string &what);

/// The product of `shape`, or -1 when a dimension is negative or the product
/// exceeds `limit`.
int64_t boundedElements(const std::vector<int64_t> &shape, int64_t limit);

struct Manifest {
  std::string dir, target, function;
  /// The compiler that wrote the bundle ("kb 0.3.0 (abc1234)"); may be empty.
  std::string compiler;
  int version = 0;
  std::vector<Buffer> buffers;
  std::vector<Kernel> kernels;
  std::vector<ProgramOp> program;
  /// The manifest as parsed, for the bundle record's check
  /// (BundleRecord.h).
  nlohmann::json raw;

  /// Loads `dir`/manifest.json (or a manifest file path) and checks the
  /// files it names (checkFiles). Throws ManifestError.
  static Manifest load(const std::string &path);
  /// Parses a manifest held in memory; `dir` is where kernel files live.
  static Manifest parse(const std::string &text, const std::string &dir);
  /// Every file a kernel names (ptx, cubin) is a relative path inside `dir`
  /// (no `..`, symlinks resolved) to a regular file of a bounded size.
  void checkFiles() const;
  /// The path of a kernel's file, checked as checkFiles does.
  std::string filePath(const std::string &rel, const std::string &where) const;
  const Buffer &buffer(const std::string &name) const;
  bool hasBuffer(const std::string &name) const;
};

/// Why a GPU of compute capability major.minor cannot run code built for
/// `target` ("sm_90a" runs on 9.0 only: Hopper's wgmma and TMA; "sm_XY" on
/// X.Y or newer), or "" when it can. A target that is not sm_<digits>[a]
/// is a ManifestError.
std::string targetCannotRun(const std::string &target, int major, int minor);

} // namespace kb::runtime

#endif
