#!/usr/bin/env bash
# Builds one GPU call that measures half of the shape suite (bench/shapes.py,
# the 57 programs at kb's defaults, no ablations or tile variants) against
# the strongest peer, in one call: gpu-check.sh with every cuBLAS route of
# the program's precision and PyTorch's torch.matmul / F.linear, and
# split-K's run-to-run determinism. Two calls cover the suite:
#   bash bench/suite_check.sh memory    long K, skinny, matvec and K <= 64
#       (30 programs), and compute-sanitizer's memcheck over a skinny-reduce
#       program with an edge in M (80x14336x4096 B^T; racecheck and
#       synccheck of that kernel ran on small shapes in
#       bench/results/2026-12-03-reduce).
#   bash bench/suite_check.sh compute   batched, odd, medium and squares
#       (27 programs); compute-sanitizer's memcheck, racecheck and
#       synccheck over two small batched programs on kb-tile's persistent
#       grid; and an A/B of that grid out of sample:
#       four batched programs at kb's default against the same program
#       compiled by the kb-opt of KB_OLD_OPT (before the rule: name it, e.g.
#       a kb-opt built at 040fa89), 3 interleaved turns.
# Then on the GPU machine (carry build/bin and build/gpu): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "memory|compute"
if [ "$mode" = compute ] && [ ! -x "${KB_OLD_OPT:-}" ]; then
  echo "$0 compute: KB_OLD_OPT must name an older kb-opt to build the A/B's base" >&2
  exit 2
fi
python3 bench/shapes.py build/gpu/programs > /dev/null
case $mode in
  memory) keep='^shape-(longk|skinny|matvec|smallk)-[0-9x]+(-bt)?-sm90a$' ;;
  compute) keep='^shape-(batched|odd|medium|square)-[0-9x]+(-bt)?-sm90a$' ;;
esac
for f in build/gpu/programs/*.mlir; do
  basename "$f" .mlir | grep -Eq -- "$keep" || rm "$f"
done
python3 - "$mode" <<'PY'
import sys
sys.path.insert(0, "bench")
import shapes
from gpu_call import P
if sys.argv[1] == "memory":
    open(f"{P}/san-skinny-80x14336x4096-bt-sm90a.mlir", "w").write(shapes.program(80, 14336, 4096, 1, True))
else:
    for b, m, n, k, tb in [(140, 256, 256, 256, True), (70, 512, 256, 256, False)]:
        open(f"{P}/san-bat-{b}x{m}x{n}x{k}{'-bt' if tb else ''}-sm90a.mlir", "w").write(shapes.program(m, n, k, b, tb))
    for b, m, n, k, tb in [(16, 768, 768, 768, True), (48, 512, 1024, 512, False),
                           (200, 256, 512, 256, True), (12, 1024, 1024, 1024, False)]:
        open(f"{P}/oos-bat-{b}x{m}x{n}x{k}{'-bt' if tb else ''}-sm90a.mlir", "w").write(shapes.program(m, n, k, b, tb))
PY
gpu_call_compile
if [ "$mode" = compute ]; then
  # The A/B's bases: each out-of-sample program by the older kb-opt.
  gpu_call_old oos-
fi
gpu_call_show
san=$(ls build/gpu/bundles | grep '^san-' | tr '\n' ' ')
{
  gpu_call_header
  race=$san
  [ "$mode" = memory ] && race=none
  cat <<SH
SAN='$san'
RACE='$race'
SH
  cat <<'SH'
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
  KB_SKIP='^(oos|san)-' KB_TORCH_PEER='^shape-' KB_TORCH_NO_COMPILE='^shape-' \
  KB_MEMCHECK_EXTRA="$SAN" KB_RACECHECK="$RACE" KB_SYNCCHECK="$RACE" \
  OUT=$OUT/check timeout 540 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
grep -E "^=== |WRONG|rror|determinism|torch peer exit" $OUT/check_log.txt | grep -v "^=== shape" | head -40
grep -c "^=== shape" $OUT/check_log.txt
SH
  if [ "$mode" = compute ]; then cat <<'SH'
left=$(( 570 - $(date +%s) + start )); [ $left -ge 30 ] || left=30
KB_AB_REPS=3 KB_AB_MS=60 timeout $left bash bench/ab.sh build/gpu/bundles/oos-*/ > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 6 $OUT/ab_log.txt
SH
  fi
  echo '(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)'
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
echo "built: $(ls build/gpu/bundles | wc -l) bundles"
