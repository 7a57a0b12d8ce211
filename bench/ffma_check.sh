#!/usr/bin/env bash
# Builds one GPU call for issue #18's fp32 ieee target (the FFMA kernel at
# 1.0x cuBLAS fp32 at 4096^3) and, in the same call, kb-tune's exhaustive
# batches of the nn.Linear programs still under F.linear.
# The FFMA A/B: kb's default bundle of each square against the same config
# compiled with the k step's fragments loaded one step ahead (kb-opt
# --kb-ffma-prefetch, -v128x128s3pf), bench/ab.sh interleaved (L2
# flushed), then one kb-run of each with cuBLAS's fp32 routes in the same
# process. kb-tune: scripts/build-tune-batches.sh of the lf_* programs
# (bench/tune_programs.py), measured by scripts/gpu-tune.sh in what is left.
#   bash bench/ffma_check.sh prefetch   call 1: the above.
#   bash bench/ffma_check.sh order      call 2: the FMA order of a k step
#       (kb-opt --kb-ffma-order=1: 4 x 4 quadrants, each a rows' snake, -o1;
#       =2: the rows' snake over rows 0 4 1 5 2 6 3 7, -o2) and the tile
#       order (raster = 16, -r16) against kb's default; the SM clock and
#       board power under kb's 4096^3 kernel (bench/square_power.sh); no
#       kb-tune.
# Then on the GPU machine (carry build/bin, build/gpu and
# build/tune/batches.tar.gz): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "prefetch|order"
python3 - <<'PY'
import sys
sys.path.insert(0, "bench")
from programs import matmul
for n in (2048, 4096, 8192):
    open(f"build/gpu/programs/ff-{n}-sm90a.mlir", "w").write(matmul(n, n, n, "ieee"))
# An edge in every dimension (kb-tile's BK = 16, whole-row warps).
open("build/gpu/programs/ff-4000-sm90a.mlir", "w").write(matmul(4000, 4000, 4000, "ieee"))
PY
gpu_call_compile
# Variants: the default config compiled by kb-opt with an experiment's
# option (a wrapper), or with a field set by hand.
kbopt_with() {
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$PWD/build/bin/kb-opt" "$2" > "build/gpu/kb-opt-$1"
  chmod +x "build/gpu/kb-opt-$1"
  local n
  for n in "${@:3}"; do
    f=build/gpu/programs/ff-$n-sm90a.mlir b=ff-$n
    "build/gpu/kb-opt-$1" "$f" --kb-compile="output=build/gpu/bundles/$b-v128x128s3$1-sm90a chip=sm_90a" -o /dev/null
  done
}
if [ "$mode" = prefetch ]; then
  kbopt_with pf --kb-ffma-prefetch 2048 4096 8192 4000
else
  kbopt_with o1 --kb-ffma-order=1 2048 4096 8192
  kbopt_with o2 --kb-ffma-order=2 2048 4096 8192
  rm -f build/gpu/programs/ff-4000-sm90a.mlir && rm -rf build/gpu/bundles/ff-4000-sm90a
  for n in 4096 8192; do
    python3 -c "
import sys
sys.path.insert(0, 'bench')
from programs import matmul
print(matmul($n, $n, $n, 'ieee'), end='')" > build/gpu/ff.mlir
    bash scripts/build-variant.sh build/gpu/ff.mlir ff-$n-v128x128s3r16-sm90a \
      'block = [128, 128, 32], warp = [32, 64], thread = [8, 8], stages = 3, raster = 16' > /dev/null
  done
fi
gpu_call_show
{
  gpu_call_header
  cat <<'SH'
KB_AB_REPS=3 KB_AB_MS=300 timeout 200 bash bench/ab.sh $(ls -d build/gpu/bundles/ff-*/) > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 12 $OUT/ab_log.txt
mkdir -p $OUT/peer
for d in build/gpu/bundles/ff-*/; do
  n=$(basename $d)
  timeout 60 build/bin/kb-run --json --routes program -q --min-ms 300 $d > $OUT/peer/$n.json 2> $OUT/peer/$n.err
  python3 - $OUT/peer/$n.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("time", {}).get("median_ms")
best = min((b for b in r.get("baselines", []) if b["name"].startswith("cuBLAS")),
           key=lambda b: b["time"]["median_ms"], default=None)
ok = r.get("ok")
print(f"{sys.argv[1].split('/')[-1]:36s} ok {ok} kb {t} ms; best cuBLAS "
      f"{best and best['time']['median_ms']} ms ({best and best['name']}): "
      f"{best and round(best['time']['median_ms'] / t, 3)}x")
PY
done
echo "peers at $(( $(date +%s) - start )) s"
SH
  if [ "$mode" = prefetch ]; then
    cat <<'SH'
left=$(( 560 - $(date +%s) + start ))
KB_TUNE_BUDGET_S=$(( left - 30 )) KB_TUNE_CALIBRATE=0 OUT=$OUT timeout $left bash scripts/gpu-tune.sh > $OUT/tune_log.txt 2>&1
echo "tune exit $? at $(( $(date +%s) - start )) s"
tail -n 8 $OUT/tune_log.txt
SH
  else
    cat <<'SH'
KB_POWER_BUNDLES=ff-4096-sm90a KB_POWER_NO_TORCH=1 KB_POWER_NCU=none KB_POWER_NO_TORCH_NCU=1 \
  OUT=$OUT timeout 60 bash bench/square_power.sh > $OUT/power_log.txt 2>&1
echo "power exit $? at $(( $(date +%s) - start )) s"
cat $OUT/square-power/summary.json
SH
  fi
  cat <<'SH'
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
echo "built ($mode): $(ls build/gpu/bundles | wc -l) bundles"
