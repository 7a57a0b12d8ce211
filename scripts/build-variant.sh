#!/usr/bin/env bash
# Builds one variant bundle of a single-matmul program by hand: the
# program's kb.matmul gets `{config = #kb.config<CONFIG>}` and is compiled
# for sm_90a into build/gpu/bundles/NAME. kb-opt fills in what CONFIG leaves
# out, as it does for any partial config.
# Usage: bash scripts/build-variant.sh PROGRAM.mlir NAME 'cluster = 2, grid = 132'
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 PROGRAM.mlir NAME CONFIG" >&2; exit 2; }
prog=$1 name=$2 config=$3
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp --suffix=.mlir)
trap 'rm -f "$tmp"' EXIT
# The config goes after the last keyword of the matmul (transpose_b or
# precision(...)), before its type signature.
sed -E "/kb\.matmul/ s/ : tensor/ {config = #kb.config<${config}>} : tensor/" "$prog" > "$tmp"
grep -q 'kb.config' "$tmp" || { echo "$0: no kb.matmul in $prog" >&2; exit 1; }
mkdir -p "$root/build/gpu/bundles"
"$root/build/bin/kb-opt" "$tmp" --kb-compile="output=$root/build/gpu/bundles/$name chip=sm_90a" -o /dev/null
echo "built build/gpu/bundles/$name"
