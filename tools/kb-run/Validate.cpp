//===- Validate.cpp - everything kb-run checks before looking for a GPU ---===//
//
// A bundle, its files, the --input arrays, the --baseline bundle and the
// names --save-outputs would write are all checked here, on any machine, so
// that `kb-run --check` (and CI) finds every problem that needs no GPU, and
// a run on the GPU machine fails only for what only the GPU can tell.
//
//===----------------------------------------------------------------------===//

#include "Run.h"

#include "kb/Runtime/BundleRecord.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

namespace kb::runtime {

namespace fs = std::filesystem;

std::string saveOutputPath(const std::string &dir, const std::string &name) {
  // kb.name is any string the program's author wrote: only a plain file
  // name is written, so that nothing lands outside DIR.
  bool plain = !name.empty() && name.size() <= 200 && name[0] != '.' &&
               name.find_first_of("/\\") == std::string::npos;
  for (char c : name)
    plain = plain && static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  if (!plain)
    throw InputError(
        "--save-outputs: output buffer name '" + name +
        "' is not a plain file name (it has a '/', a control character or "
        "starts with '.'); not written outside " +
        dir);
  return (fs::path(dir) / (name + ".npy")).string();
}

void saveOutputs(const Options &o, const RunState &s) {
  std::error_code ec;
  fs::create_directories(o.saveDir, ec);
  if (ec || !fs::is_directory(o.saveDir))
    throw InputError("--save-outputs: cannot create the folder " + o.saveDir +
                     (ec ? ": " + ec.message() : ""));
  for (const Buffer &b : s.manifest.buffers) {
    if (b.role != "output")
      continue;
    std::string path = saveOutputPath(o.saveDir, b.name);
    // A symlink planted at DIR/NAME.npy would be followed by the write.
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw InputError("--save-outputs: " + path +
                       " exists and is not a regular file");
    writeNpy(path, b.shape, s.host.at(b.name).data(), b.dtype);
  }
}

Offline validateOffline(const Options &o) {
  Offline off;
  off.manifest = Manifest::load(o.bundle);
  const Manifest &m = off.manifest;
  // A kernel launched while the one before it ends must wait for it first:
  // kb-dependent-launch puts griddepcontrol.wait at its start. A manifest
  // that marks a kernel whose PTX has no wait would let it read its inputs
  // before they are written.
  // Every file kb-run would load: the PTX is not empty and defines the
  // kernel's entry point (the driver would otherwise fail at load, or a
  // renamed kernel run under another name), a cubin is an ELF file.
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    std::string where = "kernels[" + std::to_string(i) + "]";
    std::string ptx =
        readRegularFile(m.filePath(k.ptx, where + ".ptx"),
                        BundleLimits::kernelFileBytes, where + ".ptx");
    if (ptx.find_first_not_of(" \t\r\n") == std::string::npos)
      throw ManifestError("manifest: " + where + ".ptx ('" + k.ptx +
                          "') is empty");
    bool entry = false;
    for (size_t at = ptx.find(".entry " + k.name); at != std::string::npos;
         at = ptx.find(".entry " + k.name, at + 1)) {
      char next = at + 7 + k.name.size() < ptx.size()
                      ? ptx[at + 7 + k.name.size()]
                      : '\0';
      if (next == '(' || next == ' ' || next == '\n' || next == '\t' ||
          next == '\r')
        entry = true;
    }
    if (!entry)
      throw ManifestError("manifest: " + where + ".ptx ('" + k.ptx +
                          "') does not define the kernel's entry point '" +
                          k.name + "' (no .entry " + k.name + ")");
    if (!k.cubin.empty()) {
      std::string cubin =
          readRegularFile(m.filePath(k.cubin, where + ".cubin"),
                          BundleLimits::kernelFileBytes, where + ".cubin");
      if (cubin.compare(0, 4, "\x7f" "ELF") != 0)
        throw ManifestError("manifest: " + where + ".cubin ('" + k.cubin +
                            "') is not an ELF file (a cubin starts with "
                            "0x7f 'ELF')");
    }
  }
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const Kernel &k = m.kernels[i];
    if (!k.dependentLaunch)
      continue;
    std::string where = "kernels[" + std::to_string(i) + "]";
    std::string ptx =
        readRegularFile(m.filePath(k.ptx, where + ".ptx"),
                        BundleLimits::kernelFileBytes, where + ".ptx");
    if (ptx.find("griddepcontrol.wait") == std::string::npos)
      throw ManifestError("manifest: " + where + " (" + k.name +
                          ") has dependent_launch but its PTX has no "
                          "griddepcontrol.wait: it would read its inputs "
                          "before the kernel before it has written them");
  }
  // Last, as the most general: the launch, buffers and program each kernel
  // was compiled for (the record kb-opt ends its PTX with) are the
  // manifest's.
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    std::string where = "kernels[" + std::to_string(i) + "]";
    checkBundleRecord(m, i,
                      readRegularFile(m.filePath(m.kernels[i].ptx, where + ".ptx"),
                                      BundleLimits::kernelFileBytes,
                                      where + ".ptx"));
  }
  for (const std::string &spec : o.inputs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw InputError("--input expects NAME=FILE.npy, got '" + spec + "'");
    std::string name = spec.substr(0, eq), file = spec.substr(eq + 1);
    if (!m.hasBuffer(name) || m.buffer(name).role != "input")
      throw InputError("--input " + name +
                       ": the bundle has no input buffer of that name");
    if (off.given.count(name))
      throw InputError("--input " + name + ": given twice");
    NpyArray a;
    try {
      a = readNpy(file);
    } catch (const std::runtime_error &e) {
      throw InputError("--input " + name + ": " + e.what());
    }
    const Buffer &b = m.buffer(name);
    if (a.shape != b.shape) {
      auto str = [](const std::vector<int64_t> &s) {
        std::string r = "[";
        for (size_t i = 0; i < s.size(); ++i)
          r += (i ? ", " : "") + std::to_string(s[i]);
        return r + "]";
      };
      throw InputError("--input " + name + ": the .npy shape " + str(a.shape) +
                       " does not match the buffer's " + str(b.shape));
    }
    try {
      fitNpyToType(a, b.dtype);
    } catch (const std::runtime_error &e) {
      throw InputError("--input " + name + ": " + e.what());
    }
    off.given.emplace(name, std::move(a));
  }
  if (!o.saveDir.empty()) {
    for (const Buffer &b : m.buffers)
      if (b.role == "output")
        saveOutputPath(o.saveDir, b.name);
    std::error_code ec;
    if (fs::exists(o.saveDir, ec) && !fs::is_directory(o.saveDir, ec))
      throw InputError("--save-outputs: " + o.saveDir +
                       " exists and is not a folder");
  }
  if (!o.baseline.empty()) {
    try {
      off.baseline = Manifest::load(o.baseline);
    } catch (const ManifestError &e) {
      throw ManifestError("--baseline " + o.baseline + ": " + e.what());
    }
  }
  return off;
}

} // namespace kb::runtime
