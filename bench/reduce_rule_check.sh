#!/usr/bin/env bash
# Builds the check of kb-tile's reduce rule (TileWgmma.cpp, reduceRule: the
# medium rule's 128 x 128 tiles in two chunks, without a cluster, sum the
# chunks in the matmul kernel, reduce = "cluster"): every program of the
# suite (bench/shapes.py), of bench/programs.py and of a few out-of-sample
# shapes (oos-*) where the rule fires, at its new default and at its old one
# (the same program with a hand-set `reduce = "kernel"`: kb.split_sum),
# named BASE-v128x128s2old-sm90a so that bench/ab.sh pairs them (ratio =
# old time / new time). Then on the GPU machine (carry build/bin and
# build/gpu): bash build/gpu/call.sh (gpu-check.sh over the suite's and the
# fused programs: checked, cuBLAS's routes, PyTorch, determinism, memcheck,
# racecheck and synccheck of four; then bench/ab.sh over every pair).
# bench/results/2026-12-03-reduce/call4 ran it with the sanitizers skipped
# (KB_SKIP_SANITIZER=1 in place of the three sanitizer lists, gpu-check's
# timeout 230 s and the A/B's budget 390 s: device time was short) and with
# the rule as it was then (reduce on every medium split without a cluster;
# the narrower rule of TileWgmma.cpp takes 15 of its 20 programs).
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
for cls, m, n, k, batch, tb in shapes.SHAPES:
    if batch == 1:
        w(shapes.name(cls, m, n, k, batch, tb), shapes.program(m, n, k, batch, tb))
for name in ["mm-bias-gelu-tf32-1000x700x1500-sm90a", "matmul-tf32-1024x768x1500-sm90a", "matmul-tf32-1024x768x1536-sm90a",
             "matmul-tf32-1000x701x1500-sm90a"]:
    text = [f[name] for f in programs.PROGRAMS.values() if name in f][0]
    w(name, text)
# Out of sample: row-major B, and B^T with whole-line rows (K % 32 == 0).
for m, n, k, tb in [(900, 700, 1800, False), (1100, 600, 2000, False), (700, 900, 1600, False),
                    (1200, 500, 2400, False), (960, 640, 1920, False), (960, 640, 2560, True),
                    (1000, 600, 2048, True)]:
    w(f"oos-{m}x{n}x{k}{'-bt' if tb else ''}-sm90a", shapes.program(m, n, k, 1, tb))
w("linear-bias-gelu-oos-768x768x2048-sm90a", programs.linear(768, 768, 2048, "tf32", ("bias", "gelu_erf")))
w("linear-bias-swish-oos-900x640x2560-sm90a", programs.linear(900, 640, 2560, "tf32", ("bias", "swish")))
PY
cfg() {
  python3 -c "import json, sys; print([k['config'] for k in json.load(open(sys.argv[1]))['kernels'] if 'mma = ' in k.get('config', '')][0])" "$1"
}
: > build/gpu/sanitize.txt
for f in $P/*.mlir; do
  name=$(basename "$f" .mlir)
  if ! build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$name chip=sm_90a" -o /dev/null 2> /dev/null; then
    rm -rf "build/gpu/bundles/$name"; continue
  fi
  new=$(cfg "build/gpu/bundles/$name/manifest.json" 2> /dev/null || true)
  if ! echo "$new" | grep -q 'reduce = "cluster"'; then
    rm -rf "build/gpu/bundles/$name"; continue
  fi
  bash scripts/build-variant.sh "$f" "${name%-sm90a}-v128x128s2old-sm90a" 'reduce = "kernel"' > /dev/null
  echo "$name: new $new"
  echo "   old $(cfg "build/gpu/bundles/${name%-sm90a}-v128x128s2old-sm90a/manifest.json")"
done
# Sanitize the fused programs and one matmul of each form of B.
for n in linear-bias-gelu-oos-768x768x2048-sm90a linear-bias-swish-oos-900x640x2560-sm90a \
         shape-medium-1024x704x1504-sm90a shape-medium-768x768x2048-bt-sm90a; do
  [ -d build/gpu/bundles/$n ] && echo -n "$n " >> build/gpu/sanitize.txt
done
cat > build/gpu/call.sh <<'SH'
#!/usr/bin/env bash
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
start=$(date +%s)
S="$(cat build/gpu/sanitize.txt)"
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
  KB_ONLY='^(shape-|linear-)' KB_SKIP='-v128x128s2old-' KB_TORCH_PEER='sm90a$' \
  KB_MEMCHECK_EXTRA="$S" KB_RACECHECK="$S" KB_SYNCCHECK="$S" \
  timeout 330 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
tail -4 $OUT/check_log.txt
KB_AB_REPS=3 KB_AB_MS=60 timeout $(( 565 - $(date +%s) + start )) bash bench/ab.sh build/gpu/bundles/*/ > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 24 $OUT/ab_log.txt
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
chmod +x build/gpu/call.sh
echo "built: $(ls build/gpu/bundles | wc -l) bundles; sanitize: $(cat build/gpu/sanitize.txt)"
