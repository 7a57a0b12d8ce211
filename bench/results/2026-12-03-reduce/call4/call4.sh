#!/usr/bin/env bash
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
start=$(date +%s)
S="$(cat build/gpu/sanitize.txt)"
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
  KB_ONLY='^(shape-|linear-)' KB_SKIP='-v128x128s2old-' KB_TORCH_PEER='sm90a$' \
  KB_SKIP_SANITIZER=1 \
  timeout 230 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
tail -4 $OUT/check_log.txt
KB_AB_REPS=3 KB_AB_MS=60 timeout $(( 390 - $(date +%s) + start )) bash bench/ab.sh build/gpu/bundles/*/ > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 24 $OUT/ab_log.txt
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
