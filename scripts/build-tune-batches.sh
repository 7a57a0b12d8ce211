#!/usr/bin/env bash
# Compiles kb-tune's exhaustive batches for the programs of docs/kb-tune.md's
# results (bench/tune_programs.py) on this machine (MLIR, ptxas, no GPU):
# build/tune/plans/NAME/ (plan.json, pool/, the batch c*/ and kb's default
# config as default/), and packs what the GPU machine needs, the batch
# bundles only, into build/tune/batches.tar.gz. Then carry build/bin and
# build/tune/batches.tar.gz and run scripts/gpu-tune.sh there.
# KB_TUNE_ONLY: a regex of the program names to compile (default: all).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/tune && mkdir -p build/tune/programs build/tune/plans
python3 bench/tune_programs.py build/tune/programs
start=$(date +%s)
python3 -c '
import json, sys
for p in json.load(open("build/tune/programs/programs.json")):
    print(p["name"], " ".join(p["args"]))' | while read -r name args; do
  if [ -n "${KB_TUNE_ONLY:-}" ] && ! echo "$name" | grep -Eq "$KB_TUNE_ONLY"; then continue; fi
  t0=$(date +%s)
  # shellcheck disable=SC2086
  if ! nice -n 10 build/bin/kb-tune compile "build/tune/programs/$name.mlir" --mode exhaustive \
      --out "build/tune/plans/$name" --quiet $args > "build/tune/plans/$name.summary.txt" 2>&1; then
    echo "FAILED $name: $(tail -n 1 "build/tune/plans/$name.summary.txt")"; continue
  fi
  echo "$name: $(sed -n 2p "build/tune/plans/$name.summary.txt" | sed 's/^ *//') ($(( $(date +%s) - t0 )) s)"
done
# The GPU machine needs the batch bundles (c*/, default/) only.
tar -C build/tune -czf build/tune/batches.tar.gz --exclude=pool --exclude=plan.json \
  --exclude='*.summary.txt' plans
echo "compiled in $(( $(date +%s) - start )) s; $(du -h build/tune/batches.tar.gz | cut -f1) to carry"
