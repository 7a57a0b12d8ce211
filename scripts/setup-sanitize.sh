#!/usr/bin/env bash
# Installs what the sanitizer and fuzzing builds need on top of
# scripts/setup.sh's packages: compiler-rt for clang-22 (ASan, UBSan,
# libFuzzer). Idempotent. Used by scripts/fuzz.sh and scripts/test-sanitize.sh.
set -euo pipefail
packages=(libclang-rt-22-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "kb setup-sanitize: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
