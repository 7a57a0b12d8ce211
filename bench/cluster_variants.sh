#!/usr/bin/env bash
# Builds the next measurement of wgmma's TMA-multicast clusters (`cluster =
# 2, 4, 8`; docs/design.md "Clusters of 4 and 8"): the medium shapes at
# kb's default and at 64 x 128 unsplit in clusters of 1 (none), 2, 4 and 8
# (where BN and the row tiles allow), named BASE-v64x128s1c<C>-sm90a so
# that bench/ab.sh pairs each with its default; and small programs with
# edges in M, N and K for compute-sanitizer (cl-<form>-<M>x<N>x<K>-c<C>).
# Then, on the GPU machine (carry build/bin and build/gpu):
#   KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
#   KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
#   KB_AB='^med-' KB_AB_REPS=3 KB_AB_MS=60 \
#   KB_MEMCHECK_EXTRA="$(cat build/gpu/sanitize.txt)" KB_RACECHECK="$(cat build/gpu/sanitize.txt)" \
#   bash scripts/gpu-check.sh
# (synccheck is not in gpu-check.sh: run compute-sanitizer --tool synccheck
# over the same bundles by hand.)
set -euo pipefail
cd "$(dirname "$0")/.."
B=build/gpu/bundles P=build/gpu/programs
rm -rf build/gpu && mkdir -p "$B" "$P"
python3 - <<'PY'
import sys
sys.path.insert(0, "bench")
import shapes
medium = [(1000, 700, 1500), (1024, 704, 1504), (1100, 1000, 1100), (1200, 900, 1000),
          (1300, 700, 1700), (1500, 500, 3000), (768, 768, 2048), (800, 600, 2500), (900, 800, 1900)]
for m, n, k in medium:
    for tb in (False, True):
        name = f"med-{m}x{n}x{k}{'-bt' if tb else ''}-sm90a"
        open(f"build/gpu/programs/{name}.mlir", "w").write(shapes.program(m, n, k, 1, tb))
# Edges in N and K, with whole clusters of row tiles (512 rows: 8 tiles of
# 64) and with the grid rounded up past M (300 rows: 5 tiles, run in 6 or
# 8 blocks, the extra ones wholly past M and storing nothing).
for form, (m, n, k), tb in (("bt", (512, 200, 300), True), ("bt", (300, 200, 300), True),
                            ("rm", (512, 500, 300), False), ("rm", (300, 500, 300), False)):
    open(f"build/gpu/programs/cl-{form}-{m}x{n}x{k}.mlir", "w").write(shapes.program(m, n, k, 1, tb))
PY
# variant PROGRAM NAME C: 64 x 128 unsplit in clusters of C; where kb-opt
# refuses it (BN not a multiple of 8C with B^T or 32C with a row-major B),
# its one-line reason.
variant() {
  local err
  if ! err=$(bash scripts/build-variant.sh "$1" "$2" \
               "block = [64, 128, 32], split = 1, cluster = $3" 2>&1 >/dev/null); then
    echo "no $2: $(echo "$err" | grep -m1 -o "error: .*" || echo "$err" | head -n 1)"
    return 1
  fi
}
: > build/gpu/sanitize.txt
for f in "$P"/*.mlir; do
  name=$(basename "$f" .mlir)
  case "$name" in
    med-*)
      build/bin/kb-opt "$f" --kb-compile="output=$B/$name chip=sm_90a" -o /dev/null
      for c in 1 2 4 8; do
        variant "$f" "${name%-sm90a}-v64x128s1c$c-sm90a" $c || true
      done ;;
    cl-*)
      for c in 2 4 8; do
        if variant "$f" "$name-c$c" $c; then
          echo -n "$name-c$c " >> build/gpu/sanitize.txt
        fi
      done ;;
  esac
done
echo "$(ls "$B" | wc -l) bundles; to sanitize: $(cat build/gpu/sanitize.txt)"
