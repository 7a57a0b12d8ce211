# The kb lit suite: every pass's FileCheck tests, the dialect's round-trip and
# diagnostics, and (where ptxas is present) PTX assembly checks.
import os
import shutil

import lit.formats
from lit.llvm import llvm_config

config.name = "kb"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kb_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%kb_src", config.kb_src_root))
config.substitutions.append(("%kb_bin", config.kb_tools_dir))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kb_tools_dir, append_path=True)
tool_dirs = [config.kb_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["kb-opt", "kb-tune"], tool_dirs)

# ptxas: from PATH, the configured CUDA toolkit, or /usr/local/cuda.
ptxas = shutil.which("ptxas")
for d in [config.cuda_bin_dir, "/usr/local/cuda/bin"]:
    if not ptxas and d and os.path.exists(os.path.join(d, "ptxas")):
        ptxas = os.path.join(d, "ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# kb-run is built only where the CUDA toolkit is; its error paths are tested
# here, and "no GPU" only on machines without an NVIDIA driver (CI).
if os.path.exists(os.path.join(config.kb_tools_dir, "kb-run")):
    config.available_features.add("kb-run")
    llvm_config.add_tool_substitutions(["kb-run"], tool_dirs)
import ctypes.util
if not any(os.path.exists(os.path.join(d, "libcuda.so.1"))
           for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64", "/usr/lib"]):
    config.available_features.add("no-gpu")
