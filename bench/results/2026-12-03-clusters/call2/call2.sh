#!/usr/bin/env bash
# Session 15 call 2 (run from build/gpu/ after bench/cluster_variants.sh and
# the variants below were built): (1) interleaved A/B of the medium shapes:
# defaults, 64x128 unsplit in clusters of 1, 2, 4 (row-major B) and of 4
# (B^T, the best of call 1, again as a reference), 128x128 split 2 in
# clusters of 2 and 4 (block = [128, 128, 32], split = 2, cluster = C), 128x64
# in clusters of 2, 4, 8; (2) memcheck, racecheck, synccheck of split +
# cluster on small programs (cl-{bt,rm}-300x..., cl-bt-512x200x300 at
# 128x128 split 2 in clusters of 2 and 4); (3) the torch peer of the defaults.
# The A/B ran into its 380 s limit after 268 of 270 runs (ab.txt from the
# runs made, bench/ab_report.py).
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
pycublas=$(python3 -c "import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + '/lib')" 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${pycublas}:${LD_LIBRARY_PATH:-}"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1
for n in cl-bt-300x200x300-s2c4 cl-rm-300x500x300-s2c4; do
  timeout 30 build/bin/kb-run -q --no-time build/gpu/bundles/$n > $OUT/quick-$n.txt 2>&1
  echo "quick $n exit $? at $(el) s" | tee -a $OUT/log.txt; grep -E "check|WRONG|error" $OUT/quick-$n.txt
done
: > $OUT/sanitizer.txt
for tool in memcheck racecheck synccheck; do
  for n in $(cat build/gpu/sanitize2.txt); do
    echo "=== $tool $n" >> $OUT/sanitizer.txt
    timeout 60 compute-sanitizer --tool $tool --print-limit 5 build/bin/kb-run build/gpu/bundles/$n --no-time >> $OUT/sanitizer.txt 2>&1
    echo "exit $?" >> $OUT/sanitizer.txt
  done
  echo "$tool done at $(el) s" | tee -a $OUT/log.txt
done
ab=()
for d in build/gpu/bundles/med-*/; do
  case "$d" in *-bt-v64x128s1c[128]-*) continue ;; esac
  ab+=("$d")
done
KB_AB_REPS=3 KB_AB_MS=60 timeout 380 bash bench/ab.sh "${ab[@]}" > $OUT/ab_log.txt 2>&1
peers=(); for d in build/gpu/bundles/med-*-sm90a/; do case "$d" in *-v[0-9]*) continue;; esac; peers+=("$d"); done
timeout $(( 580 - $(el) )) python3 bench/torch_peer.py $OUT/torch_peer.json "${peers[@]}" > $OUT/torch_peer_log.txt 2>&1
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
