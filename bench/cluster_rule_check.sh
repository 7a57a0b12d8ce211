#!/usr/bin/env bash
# Builds the check of kb-tile's cluster rule (TileWgmma.cpp, defaultWgmmaTile:
# B^T with rows split over two lines gets clusters of 4): every program
# where the rule fires, at its new default and at its old one (the same
# program with a hand-set `cluster = 1`, which the rule leaves alone), named
# BASE-v<BM>x<BN>s<S>old-sm90a so that bench/ab.sh pairs them (ratio = old
# time / new time). In sample: the suite's and bench/programs.py's
# matmuls the rule changes; out of sample (oos-*): shapes of both branches
# of the rule and a fused nn.Linear. Then on the GPU machine (carry
# build/bin and build/gpu), as bench/results/2026-12-03-clusters/call3 ran:
#   KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
#   KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
#   KB_TORCH_PEER='(-bt|-tb|x1700)-sm90a$' KB_AB='.' KB_AB_REPS=3 KB_AB_MS=60 \
#   KB_MEMCHECK_EXTRA="$(cat build/gpu/sanitize.txt)" KB_RACECHECK="$(cat build/gpu/sanitize.txt)" \
#   bash scripts/gpu-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/gpu && mkdir -p build/gpu/programs build/gpu/bundles
P=build/gpu/programs
python3 - <<'PY'
import sys
sys.path.insert(0, "bench")
import shapes, programs
P = "build/gpu/programs"
def w(name, text): open(f"{P}/{name}.mlir", "w").write(text)
for m, n, k in [(1100, 1000, 1100), (900, 800, 1900)]:
    w(shapes.name("medium", m, n, k, 1, True), shapes.program(m, n, k, 1, True))
for m, n, k in [(1000, 700, 1500), (1024, 768, 1500), (1024, 768, 1512)]:
    w(f"matmul-tf32-{m}x{n}x{k}-tb-sm90a", programs.matmul(m, n, k, "tf32", trans_b=True))
# Out of sample: the medium branch (128 x 128 in two chunks, clusters of 4)
# and the one-wave branch (64 x 128 in clusters of 4).
for m, n, k in [(1000, 500, 2100), (900, 600, 2300), (1000, 800, 1700), (760, 700, 2200), (1020, 650, 1900),
                (1150, 950, 1252), (1250, 1000, 900), (1400, 800, 1300), (1100, 900, 2100), (1000, 1100, 700)]:
    w(f"oos-{m}x{n}x{k}-bt-sm90a", shapes.program(m, n, k, 1, True))
w("linear-bias-gelu-oos-1000x800x1700-sm90a", programs.linear(1000, 800, 1700, "tf32", ("bias", "gelu_erf")))
PY
# The config of a bundle's matmul kernel.
cfg() {
  python3 -c "import json, sys; print([k['config'] for k in json.load(open(sys.argv[1]))['kernels'] if 'mma = ' in k.get('config', '')][0])" "$1"
}
: > build/gpu/sanitize.txt
for f in $P/*.mlir; do
  name=$(basename "$f" .mlir)
  build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$name chip=sm_90a" -o /dev/null
  new=$(cfg "build/gpu/bundles/$name/manifest.json")
  if ! echo "$new" | grep -q "cluster = 4"; then
    echo "$name: the rule did not fire: $new"; rm -rf "build/gpu/bundles/$name"; continue
  fi
  tmp=$(mktemp -d)
  KB_VARIANT_DIR=$tmp bash scripts/build-variant.sh "$f" old "cluster = 1" > /dev/null
  old=$(cfg "$tmp/old/manifest.json")
  bm=$(echo "$old" | sed -E 's/.*block = \[([0-9]+), ([0-9]+).*/\1/')
  bn=$(echo "$old" | sed -E 's/.*block = \[([0-9]+), ([0-9]+).*/\2/')
  s=$(echo "$old" | grep -o 'split = [0-9]*' | grep -o '[0-9]*$' || echo 1)
  mv "$tmp/old" "build/gpu/bundles/${name%-sm90a}-v${bm}x${bn}s${s}old-sm90a"; rmdir "$tmp"
  echo "$name: new $new | old $old"
done
# Sanitize the fused program and one of each branch.
for n in linear-bias-gelu-oos-1000x800x1700-sm90a oos-1000x1100x700-bt-sm90a oos-1000x500x2100-bt-sm90a; do
  [ -d build/gpu/bundles/$n ] && echo -n "$n " >> build/gpu/sanitize.txt
done
true
