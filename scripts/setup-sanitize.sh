#!/usr/bin/env bash
# The one sanitized build, build-asan/: ASan + UBSan on kb's code, with
# libFuzzer's coverage instrumentation (KB_FUZZ=ON, which implies
# KB_SANITIZE), -O1 -gline-tables-only and assertions on. It serves both
# scripts/test-sanitize.sh (the lit and unit suites with the instrumented
# kb-opt, kb-run and kb-unittests) and scripts/fuzz.sh (the fuzz targets), so
# CI compiles kb under the sanitizers once (.ci/run runs this script in the
# background beside scripts/test.sh, so that test-sanitize.sh's call finds
# it built). Installs what it needs on top of
# scripts/setup.sh's packages (compiler-rt for clang-22: ASan, UBSan,
# libFuzzer), configures (idempotent) and builds KB_NINJA_TARGETS (default
# all, which includes the fuzzers). Needs scripts/setup.sh's packages.
# KB_PACKAGES_ONLY=1 stops after the packages.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libclang-rt-22-dev)
bash scripts/install-packages.sh "${packages[@]}"
[ "${KB_PACKAGES_ONLY:-0}" != 1 ] || exit 0

cuda_args=()
if [ -x /usr/local/cuda/bin/nvcc ] || [ -n "${CUDA_HOME:-}" ]; then
  cuda_args+=(-DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}")
fi
# Configured again when the cache is not this configuration (e.g. a
# build-asan/ from before the fuzzers joined it).
if [ ! -f build-asan/build.ninja ] || ! grep -q '^KB_FUZZ:BOOL=ON' build-asan/CMakeCache.txt; then
  cmake -G Ninja -S . -B build-asan -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -gline-tables-only" -DKB_SANITIZE=ON -DKB_FUZZ=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "${cuda_args[@]}" >/dev/null
fi
ninja -C build-asan ${KB_NINJA_TARGETS:-all}
