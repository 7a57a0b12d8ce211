#!/usr/bin/env bash
# Installs what kb needs from Debian (only what is missing), then configures
# and builds into build/. Idempotent: a second run installs nothing and
# rebuilds only what changed. Then makes (or finds) the host's torch 2.11
# venv (scripts/setup-python.sh). Used by scripts/test.sh and scripts/run-examples.sh.
# KB_PACKAGES_ONLY=1 stops after the packages (.ci/run, before it starts
# build-asan/ beside build/: apt takes one install at a time).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
          cmake ninja-build ccache nlohmann-json3-dev libcli11-dev libgtest-dev
          python3 python3-numpy python3-torch python3-matplotlib python3-pytest)
bash scripts/install-packages.sh "${packages[@]}"
[ "${KB_PACKAGES_ONLY:-0}" != 1 ] || exit 0

cuda_args=()
if [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDA_HOME:-}" ]; then
  cuda_args+=(-DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}")
else
  echo "kb setup: no CUDA toolkit under /usr/local/cuda (or CUDA_HOME): kb-run and the ptxas checks are skipped"
fi

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "${cuda_args[@]}" >/dev/null
fi
ninja -C build ${KB_NINJA_TARGETS:-all}

# The host's torch 2.x interpreter for the Python suite (scripts/python-env.sh
# picks it up); quick when the venv is present. KB_SKIP_VENV=1 skips it.
if [ -z "${KB_SKIP_VENV:-}" ]; then
  bash scripts/setup-python.sh >/dev/null
fi
