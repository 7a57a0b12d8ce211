#!/usr/bin/env bash
# Builds the first GPU check of `reduce = "cluster"` (split-K's two chunks
# summed inside the wgmma kernel by a cluster of two blocks, no kb.split_sum
# kernel after it; MatmulWgmma.cpp). Then on the GPU machine (carry build/bin
# and build/gpu): bash build/gpu/check.sh, which writes under $OUT
#   sanitizer.txt  memcheck, racecheck and synccheck of small programs with
#                  edges in M, N and K (both forms of B, a fused epilogue,
#                  64 x 128 tiles);
#   identical.txt  each reduce = "cluster" bundle against its kb.split_sum
#                  twin on the same inputs (--seed 7): C bit for bit;
#   ab_log.txt, ab/  an interleaved A/B of every medium program whose
#                  default splits in two (BASE-sm90a, the default, against
#                  BASE-v128x128s2r-sm90a, the same tile with reduce =
#                  "cluster" and no B multicast; ratio = variant / default);
#   torch_peer.json  PyTorch's time of the defaults' programs, same call.
# Predicted (bench/results/2026-12-03-medium-rule/kb_log.txt: 1024x704x1504
# took 0.0196 ms, its matmul kernel alone 0.0168): the variant about 10%
# faster (ratio ~0.90) where the default has no cluster; against the
# clusters of 4 of the B^T defaults, less.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/gpu && mkdir -p build/gpu/programs build/gpu/bundles build/gpu/small
python3 - <<'PY'
import sys
sys.path.insert(0, "bench")
import shapes, programs
P = "build/gpu/programs"
def w(d, name, text): open(f"{d}/{name}.mlir", "w").write(text)
for m, n, k in [(768, 768, 2048), (1024, 704, 1504), (1000, 700, 1500), (800, 600, 2500), (1300, 700, 1700)]:
    for t in (False, True):
        w(P, shapes.name("medium", m, n, k, 1, t), shapes.program(m, n, k, 1, t))
for m, n, k in [(900, 800, 1900), (1000, 800, 1700), (1000, 500, 2100), (760, 700, 2200), (1500, 500, 3000)]:
    w(P, shapes.name("medium", m, n, k, 1, True), shapes.program(m, n, k, 1, True))
w(P, "linear-bias-gelu_erf-1000x800x1700-sm90a", programs.linear(1000, 800, 1700, "tf32", ("bias", "gelu_erf")))
S = "build/gpu/small"
# Edges everywhere: 300 rows (128-row tiles: 44 past), 200 columns, K = 332
# (11 k tiles: chunks of 6 and 5, the last one past K).
w(S, "small-300x200x332-sm90a", shapes.program(300, 200, 332, 1, False))
w(S, "small-300x200x332-bt-sm90a", shapes.program(300, 200, 332, 1, True))
w(S, "small-linear-bias-gelu_erf-300x200x332-sm90a", programs.linear(300, 200, 332, "tf32", ("bias", "gelu_erf")))
w(S, "small-linear-bias-scale-swish-300x204x332-sm90a", programs.linear(300, 204, 332, "tf32", ("bias", "scale", "swish")))
PY
R='block = [128, 128, 32], split = 2, cluster = 1, reduce = "cluster"'
K='block = [128, 128, 32], split = 2, cluster = 1'
for f in build/gpu/programs/*.mlir; do
  name=$(basename "$f" .mlir)
  build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$name chip=sm_90a" -o /dev/null
  bash scripts/build-variant.sh "$f" "${name%-sm90a}-v128x128s2r-sm90a" "$R" > /dev/null
done
mkdir -p build/gpu/pairs
for f in build/gpu/small/*.mlir; do
  name=$(basename "$f" .mlir)
  KB_VARIANT_DIR=build/gpu/pairs bash scripts/build-variant.sh "$f" "$name-r" "$R" > /dev/null
  KB_VARIANT_DIR=build/gpu/pairs bash scripts/build-variant.sh "$f" "$name-k" "$K" > /dev/null
done
KB_VARIANT_DIR=build/gpu/pairs bash scripts/build-variant.sh build/gpu/small/small-300x200x332-bt-sm90a.mlir \
  small-300x200x332-bt-64x128-r 'block = [64, 128, 32], split = 2, reduce = "cluster"' > /dev/null
KB_VARIANT_DIR=build/gpu/pairs bash scripts/build-variant.sh build/gpu/small/small-300x200x332-bt-sm90a.mlir \
  small-300x200x332-bt-64x128-k 'block = [64, 128, 32], split = 2' > /dev/null
cat > build/gpu/check.sh <<'SH'
#!/usr/bin/env bash
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
. scripts/gpu-env.sh
start=$(date +%s)
: > $OUT/sanitizer.txt; : > $OUT/identical.txt
same() {  # the outputs of two bundles on the same inputs, bit for bit
  local d1=$OUT/tmp/1 d2=$OUT/tmp/2; rm -rf $OUT/tmp; mkdir -p $d1 $d2
  timeout 60 build/bin/kb-run -q --no-time --seed 7 --save-outputs $d1 $1 > $OUT/tmp/log1 2>&1; local r1=$?
  timeout 60 build/bin/kb-run -q --no-time --seed 7 --save-outputs $d2 $2 > $OUT/tmp/log2 2>&1; local r2=$?
  local s=false f; ls $d1/*.npy > /dev/null 2>&1 && s=true
  for f in $d1/*.npy; do cmp -s $f $d2/$(basename $f) || s=false; done
  echo "$(basename $1) vs $(basename $2): exit $r1 $r2, outputs identical $s" | tee -a $OUT/identical.txt
  grep -E "check|WRONG" $OUT/tmp/log1 | head -3 >> $OUT/identical.txt
}
for d in build/gpu/pairs/*-r; do
  same $d ${d%-r}-k
  for tool in memcheck racecheck synccheck; do
    echo "=== $tool $(basename $d)" >> $OUT/sanitizer.txt
    timeout 60 compute-sanitizer --tool $tool --print-limit 5 build/bin/kb-run --no-baselines $d --no-time >> $OUT/sanitizer.txt 2>&1
    echo "exit $?" >> $OUT/sanitizer.txt
  done
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit" $OUT/sanitizer.txt | sort | uniq -c
echo "sanitizers done at $(( $(date +%s) - start )) s"
for d in build/gpu/bundles/*-v128x128s2r-sm90a; do same ${d%-v128x128s2r-sm90a}-sm90a $d; done
echo "identity done at $(( $(date +%s) - start )) s"
KB_AB_REPS=3 KB_AB_MS=60 timeout 300 bash bench/ab.sh build/gpu/bundles/*/ > $OUT/ab_log.txt 2>&1
tail -n 30 $OUT/ab_log.txt
echo "ab done at $(( $(date +%s) - start )) s"
timeout $(( 560 - $(date +%s) + start )) python3 bench/torch_peer.py $OUT/torch_peer.json \
  $(ls -d build/gpu/bundles/*-sm90a | grep -v -- -v128) > $OUT/torch.txt 2>&1
echo "torch exit $? at $(( $(date +%s) - start )) s"
rm -rf $OUT/tmp
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
chmod +x build/gpu/check.sh
echo "built: $(ls build/gpu/bundles | wc -l) bundles, $(ls build/gpu/pairs | wc -l) small"
