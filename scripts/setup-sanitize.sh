#!/usr/bin/env bash
# Installs what the sanitizer and fuzzing builds need on top of
# scripts/setup.sh's packages: compiler-rt for clang-22 (ASan, UBSan,
# libFuzzer). Idempotent. Used by scripts/fuzz.sh and scripts/test-sanitize.sh.
set -euo pipefail
packages=(libclang-rt-22-dev)
bash "$(dirname "$0")/install-packages.sh" "${packages[@]}"
