#!/usr/bin/env bash
# Compiles the fused attention kernel's GPU check cases
# (scripts/attention-cases.py) into bundles under build/gpu/attention/, each
# for sm_90 (the kernel is mma.sync, so sm_90a gives the same code). Carry
# build/bin/kb-run, scripts/check-attention.py, python/kb and
# build/gpu/attention/bundles to the GPU machine and run
#   for b in build/gpu/attention/bundles/*; do build/bin/kb-run --no-baselines "$b"; done
#   python3 scripts/check-attention.py build/gpu/attention/bundles/*
# kb-run checks each kernel against its float64 reference (issue #46);
# check-attention.py against a torch float64 one, through kb.load.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/gpu/attention && mkdir -p build/gpu/attention/bundles
python3 scripts/attention-cases.py build/gpu/attention/programs
status=0
for f in build/gpu/attention/programs/*.mlir; do
  name=$(basename "$f" .mlir)
  if ! build/bin/kb-opt "$f" --kb-compile="output=build/gpu/attention/bundles/$name chip=sm_90" \
      -o /dev/null 2> "build/gpu/attention/$name.err"; then
    echo "FAILED $name: $(head -n 1 "build/gpu/attention/$name.err")"; status=1; continue
  fi
  echo "built $name"
done
exit $status
