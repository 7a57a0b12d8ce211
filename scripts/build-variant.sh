#!/usr/bin/env bash
# Builds one variant bundle of a single-matmul program by hand: the
# program's kb.matmul gets `{config = #kb.config<CONFIG>}` and is compiled
# for sm_90a into build/gpu/bundles/NAME (KB_VARIANT_DIR: another folder;
# KB_OPT: another kb-opt). kb-opt fills in what CONFIG leaves out, as it
# does for any partial config, and refuses a config that does not apply
# with its own diagnostic. Variants named BASE-v<BM>x<BN>s<S><tag>-sm90a
# pair with BASE-sm90a in bench/ab/ab.sh.
# Usage: bash scripts/build-variant.sh PROGRAM.mlir NAME 'grid = 132, cluster = 2'
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 PROGRAM.mlir NAME CONFIG" >&2; exit 2
fi
prog=$1 name=$2 config=$3
root=$(cd "$(dirname "$0")/.." && pwd)
out=${KB_VARIANT_DIR:-$root/build/gpu/bundles}
kbopt=${KB_OPT:-$root/build/bin/kb-opt}
if ! [[ "$name" =~ ^[A-Za-z0-9_][A-Za-z0-9._-]*$ ]]; then
  echo "$0: NAME must be a plain folder name (letters, digits, . _ -), got '$name'" >&2; exit 2
fi
if ! [[ "$config" =~ ^[][A-Za-z0-9_\ =,\"]*$ ]]; then
  echo "$0: CONFIG holds a character a #kb.config does not use: '$config'" >&2; exit 2
fi
[ -f "$prog" ] || { echo "$0: no program file '$prog'" >&2; exit 2; }
n=$(grep -c "kb\.matmul" "$prog" || true)
[ "$n" = 1 ] || { echo "$0: $prog has $n kb.matmul ops; a variant sets the config of exactly one" >&2; exit 2; }
if grep -q "kb\.matmul.*config = " "$prog"; then
  echo "$0: $prog's kb.matmul has a config already" >&2; exit 2
fi
tmp=$(mktemp --suffix=.mlir)
trap 'rm -f "$tmp"' EXIT
# The config goes before the matmul's type signature (after transpose_b or
# precision(...)), which must be on the kb.matmul's line.
sed -E "/kb\.matmul/ s/ : tensor/ {config = #kb.config<${config}>} : tensor/" "$prog" > "$tmp"
if ! grep -q "kb\.matmul.*#kb\.config<" "$tmp"; then
  echo "$0: found no ' : tensor' type signature on the kb.matmul line of $prog to put the config before" >&2; exit 2
fi
mkdir -p "$out"
"$kbopt" "$tmp" --kb-compile="output=$out/$name chip=sm_90a" -o /dev/null
echo "built $out/$name"
