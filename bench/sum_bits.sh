#!/usr/bin/env bash
# Runs on the GPU machine: split-K's sum inside the matmul kernel (#kb.config
# sum = "last_block", bundles named ...-v<BM>x<BN>s<S>lb...) against the same
# config summed by the second kernel (the twin named ...sk...): each bundle is
# run twice on the same seeded inputs (kb-run --no-time --seed 7, checked),
# its outputs saved, and compared bit for bit: L with itself (run to run,
# whichever block of a tile comes last) and lb with sk (the same additions in
# the same order, so the same bits; lb with sk). Writes $OUT/sum_bits.json.
# Usage: bash bench/sum_bits.sh BUNDLE_DIR...   (the lb bundles)
set -u
OUT=${OUT:-/tmp/kb-sum-bits}
mkdir -p "$OUT/sum_bits"
rows=()
for dir in "$@"; do
  dir=${dir%/}
  name=$(basename "$dir")
  # The twin: the lb tag (and any tag after it, e.g. lbg40) replaced by sk.
  twin=$(dirname "$dir")/$(echo "$name" | sed -E 's/(-v[0-9]+x[0-9]+s[0-9]+)lb[a-z0-9]*-/\1sk-/')
  runs=("$dir@1" "$dir@2")
  [ -d "$twin" ] && runs+=("$twin@1")
  codes=()
  for r in "${runs[@]}"; do
    b=${r%@*}; n=${r##*@}
    d="$OUT/sum_bits/$(basename "$b")/$n"; mkdir -p "$d"
    timeout 120 build/bin/kb-run -q --no-time --seed 7 --save-outputs "$d" "$b" > "$d/log.txt" 2>&1
    codes+=("$?")
  done
  same() {
    ls "$1"/*.npy > /dev/null 2>&1 || { echo false; return; }
    for f in "$1"/*.npy; do cmp -s "$f" "$2/$(basename "$f")" || { echo false; return; }; done
    echo true
  }
  L="$OUT/sum_bits/$name"
  runToRun=$(same "$L/1" "$L/2")
  vsKernel=null
  [ -d "$twin" ] && vsKernel=$(same "$L/1" "$OUT/sum_bits/$(basename "$twin")/1")
  rows+=("{\"bundle\": \"$name\", \"twin\": \"$(basename "$twin")\", \"exit\": [$(IFS=,; echo "${codes[*]}")], \"run_to_run_identical\": $runToRun, \"identical_to_sum_kernel\": $vsKernel}")
done
(IFS=,; echo "[${rows[*]}]") | python3 -m json.tool > "$OUT/sum_bits.json"
cat "$OUT/sum_bits.json"
# The saved outputs are large: keep only the logs.
find "$OUT/sum_bits" -name '*.npy' -delete
