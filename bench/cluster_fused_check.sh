#!/usr/bin/env bash
# Builds the GPU check that kb-tile's cluster rule waits for before its
# 64 x 128 branch takes a kb.fusion (TileWgmma.cpp, clusterRule): fused
# nn.Linear epilogues in the clustered kernel, 64 x 128 tiles in clusters of
# 4 and 8 set by hand, with the grid rounded up past M (300 rows: 5 row
# tiles in 8 blocks) and at the rule's shapes, each against its default
# (named BASE-v64x128s1c<C>-sm90a for bench/ab.sh). Then on the GPU machine
# (carry build/bin and build/gpu): bash build/gpu/check.sh (kb-run's check,
# memcheck, racecheck and synccheck of every bundle, then the A/B; about
# three minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/gpu && mkdir -p build/gpu/programs build/gpu/bundles
python3 - <<'PY'
import sys
sys.path.insert(0, "bench")
import programs
P = "build/gpu/programs"
for (m, n, k), epi in [((1100, 1000, 1100), ("bias", "gelu_erf")), ((1200, 900, 1000), ("bias", "scale", "swish")),
                       ((300, 500, 300), ("bias", "relu")), ((1000, 1100, 700), ("relu",))]:
    open(f"{P}/linear-{'-'.join(epi)}-{m}x{n}x{k}-sm90a.mlir", "w").write(programs.linear(m, n, k, "tf32", epi))
PY
for f in build/gpu/programs/*.mlir; do
  name=$(basename "$f" .mlir)
  build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$name chip=sm_90a" -o /dev/null
  for c in 4 8; do
    bash scripts/build-variant.sh "$f" "${name%-sm90a}-v64x128s1c$c-sm90a" \
      "block = [64, 128, 32], split = 1, cluster = $c" > /dev/null
  done
done
cat > build/gpu/check.sh <<'SH'
#!/usr/bin/env bash
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
. scripts/gpu-env.sh
: > $OUT/sanitizer.txt
for d in build/gpu/bundles/*-v64x128*/; do
  n=$(basename $d)
  timeout 40 build/bin/kb-run -q --no-time $d > $OUT/check-$n.txt 2>&1; echo "$n check exit $?"; grep -E "check|WRONG" $OUT/check-$n.txt
  for tool in memcheck racecheck synccheck; do
    echo "=== $tool $n" >> $OUT/sanitizer.txt
    timeout 60 compute-sanitizer --tool $tool --print-limit 5 build/bin/kb-run $d --no-time >> $OUT/sanitizer.txt 2>&1
    echo "exit $?" >> $OUT/sanitizer.txt
  done
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^exit" $OUT/sanitizer.txt | sort | uniq -c
KB_AB_REPS=3 KB_AB_MS=60 timeout 240 bash bench/ab.sh build/gpu/bundles/*/ > $OUT/ab_log.txt 2>&1
tail -n 12 $OUT/ab_log.txt
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
chmod +x build/gpu/check.sh
echo "built: $(ls build/gpu/bundles | wc -l) bundles"
