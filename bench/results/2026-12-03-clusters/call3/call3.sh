#!/usr/bin/env bash
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
KB_TORCH_PEER='(-bt|-tb|x1700)-sm90a$' KB_AB='.' KB_AB_REPS=3 KB_AB_MS=60 \
KB_MEMCHECK_EXTRA="$(cat build/gpu/sanitize.txt)" KB_RACECHECK="$(cat build/gpu/sanitize.txt)" \
timeout 540 bash scripts/gpu-check.sh > /tmp/check_log.txt 2>&1
echo "gpu-check exit $?"
cp /tmp/check_log.txt $OUT/ 2>/dev/null
[ -f $OUT/results.tgz ] || (cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
grep -E "WRONG|verdict|time:|exit [1-9]|ERROR SUMMARY: [1-9]|hazards displayed \([1-9]" /tmp/check_log.txt | head -40
tail -n 40 /tmp/check_log.txt
