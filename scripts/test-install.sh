#!/usr/bin/env bash
# The installed package, as a user of kb gets it: `cmake --install build`
# into a temporary prefix, then test/install/consumer/ (a CMake project
# outside kb's tree) does find_package(KB), links KB::KBTarget, is built and
# run: it compiles a program through kb's public pipeline entry point and
# checks the bundle. Also checks the installed kb-opt and kb-run run from
# the prefix. Needs build/ built (scripts/setup.sh); run by scripts/test.sh.
# KB_INSTALL_KEEP=1 keeps the prefix (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kb-install.XXXXXX")
[ "${KB_INSTALL_KEEP:-0}" = 1 ] || trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install build --prefix "$prefix" >"$tmp/install.log"
for f in bin/kb-opt include/kb/Target/Pipeline.h include/kb/Version.h \
         include/kb/Dialect/KB/IR/KBOps.h.inc lib/libKBTarget.a lib/libKBRuntime.a \
         lib/cmake/kb/KBConfig.cmake lib/cmake/kb/KBConfigVersion.cmake \
         lib/cmake/kb/KBTargets.cmake; do
  [ -e "$prefix/$f" ] || { echo "test-install: FAIL: $f was not installed"; exit 1; }
done
"$prefix/bin/kb-opt" --version | grep -q '^kb-opt [0-9]' ||
  { echo "test-install: FAIL: the installed kb-opt --version"; exit 1; }
if [ -x build/bin/kb-run ]; then
  [ -x "$prefix/bin/kb-run" ] || { echo "test-install: FAIL: kb-run was not installed"; exit 1; }
  "$prefix/bin/kb-run" --version | grep -q '^kb-run [0-9]' ||
    { echo "test-install: FAIL: the installed kb-run --version"; exit 1; }
fi
installed=$(date +%s)

cmake -G Ninja -S test/install/consumer -B "$tmp/consumer" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
  >"$tmp/configure.log" || { cat "$tmp/configure.log"; exit 1; }
grep "^-- kb " "$tmp/configure.log" || true
ninja -C "$tmp/consumer" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }
built=$(date +%s)
"$tmp/consumer/kb-consumer" "$tmp/bundle"
# The bundle it wrote is one kb-run accepts (validated without a GPU).
if [ -x "$prefix/bin/kb-run" ]; then
  "$prefix/bin/kb-run" --check "$tmp/bundle"
fi
echo "== install: install $((installed - start)) s, consumer configure+build $((built - installed)) s, run $(( $(date +%s) - built )) s"
