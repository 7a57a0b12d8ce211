#!/usr/bin/env bash
# Session 15 call 1: wgmma clusters of 4 and 8 on the GPU for the first
# time. (1) quick runs that must end and check; (2) compute-sanitizer
# memcheck, racecheck, synccheck over the cl-* programs (edges in M, N, K,
# grids rounded up past M); (3) interleaved A/B of the B^T medium shapes:
# default vs 64x128 unsplit in clusters of 1, 2, 4, 8.
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
pycublas=$(python3 -c "import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + '/lib')" 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${pycublas}:${LD_LIBRARY_PATH:-}"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1
for n in cl-bt-300x200x300-c8 cl-rm-300x500x300-c4 cl-bt-512x200x300-c4 med-1000x700x1500-bt-v64x128s1c8-sm90a med-1000x700x1500-v64x128s1c4-sm90a; do
  timeout 30 build/bin/kb-run -q --no-time build/gpu/bundles/$n > $OUT/quick-$n.txt 2>&1
  echo "quick $n exit $? at $(el) s" | tee -a $OUT/log.txt
  tail -n 3 $OUT/quick-$n.txt
done
: > $OUT/sanitizer.txt
for tool in memcheck racecheck synccheck; do
  for n in $(cat build/gpu/sanitize.txt); do
    echo "=== $tool $n" >> $OUT/sanitizer.txt
    timeout 60 compute-sanitizer --tool $tool --print-limit 5 build/bin/kb-run build/gpu/bundles/$n --no-time >> $OUT/sanitizer.txt 2>&1
    echo "exit $?" >> $OUT/sanitizer.txt
  done
  echo "$tool done at $(el) s" | tee -a $OUT/log.txt
done
grep -E "^===|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK|exit" $OUT/sanitizer.txt | paste - - - | awk '{print $2,$3,$0}' | cut -c1-200 | head -40
ab=()
for d in build/gpu/bundles/med-*-bt-*/; do ab+=("$d"); done
echo "A/B over ${#ab[@]} bundles from $(el) s" | tee -a $OUT/log.txt
KB_AB_REPS=3 KB_AB_MS=60 timeout $(( 575 - $(el) )) bash bench/ab.sh "${ab[@]}" > $OUT/ab_log.txt 2>&1
echo "A/B exit $? at $(el) s" | tee -a $OUT/log.txt
tail -n 50 $OUT/ab_log.txt
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
