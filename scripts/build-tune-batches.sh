#!/usr/bin/env bash
# Compiles kb-tune's exhaustive batches for the programs of docs/kb-tune.md's
# results (bench/tune/programs.py) on this machine (MLIR, ptxas, no GPU):
# build/tune/plans/NAME/ (plan.json, pool/, the batch c*/ and kb's default
# config as default/), and packs what the GPU machine needs, the batch
# bundles only, into build/tune/batches.tar.gz. Then carry build/bin and
# build/tune/batches.tar.gz and run scripts/gpu-tune.sh there.
# KB_TUNE_ONLY: a regex of the program names to compile (default: all); only
#   their plans are replaced (the others in build/tune/plans are kept) and
#   only they go into the tarball, which also lists them, in the order
#   compiled, in plans/ORDER (gpu-tune.sh measures in that order).
# KB_TUNE_ORDER: program names (space-separated) to compile first, in that
#   order (the rest follow in bench/tune/programs.py's order).
# KB_TUNE_JOBS: programs compiled at once (default 1).
# KB_TUNE_BIN: the kb-tune to run (default build/bin/kb-tune, copied first so
#   that rebuilding it meanwhile does not change the batches).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/tune/plans
rm -rf build/tune/programs && mkdir -p build/tune/programs
python3 bench/tune/programs.py build/tune/programs
bin=build/tune/kb-tune.bin
cp "${KB_TUNE_BIN:-build/bin/kb-tune}" "$bin"
start=$(date +%s)
# The selected programs, in order: KB_TUNE_ORDER's first.
python3 - "${KB_TUNE_ONLY:-}" "${KB_TUNE_ORDER:-}" > build/tune/selected.txt <<'EOF'
import json, re, sys
only, order = sys.argv[1], sys.argv[2].split()
progs = json.load(open("build/tune/programs/programs.json"))
names = [p["name"] for p in progs if not only or re.search(only, p["name"])]
first = [n for n in order if n in names]
by = {p["name"]: p for p in progs}
for n in first + [n for n in names if n not in first]:
    print(" ".join([n] + by[n]["args"]))  # no trailing blank: xargs -L would join lines
EOF
compile_one() {
  name=$1; shift
  t0=$(date +%s)
  rm -rf "build/tune/plans/$name"
  if ! nice -n 10 "$bin" compile "build/tune/programs/$name.mlir" --mode exhaustive \
      --out "build/tune/plans/$name" --quiet "$@" > "build/tune/plans/$name.summary.txt" 2>&1; then
    echo "FAILED $name: $(tail -n 1 "build/tune/plans/$name.summary.txt")"; return 0
  fi
  echo "$name: $(sed -n 2p "build/tune/plans/$name.summary.txt" | sed 's/^ *//') ($(( $(date +%s) - t0 )) s)"
}
export -f compile_one
export bin
# shellcheck disable=SC2016
xargs -P "${KB_TUNE_JOBS:-1}" -L 1 bash -c 'compile_one "$@"' _ < build/tune/selected.txt
# The programs that compiled, in order.
while read -r name _; do
  [ -f "build/tune/plans/$name/plan.json" ] && echo "$name"
done < build/tune/selected.txt > build/tune/plans/ORDER
# The GPU machine needs the batch bundles (c*/, default/) only.
mapfile -t names < build/tune/plans/ORDER
tar -C build/tune -czf build/tune/batches.tar.gz --exclude=pool --exclude=plan.json \
  --exclude='*.summary.txt' plans/ORDER "${names[@]/#/plans/}"
echo "compiled ${#names[@]} program(s) in $(( $(date +%s) - start )) s; $(du -h build/tune/batches.tar.gz | cut -f1) to carry"
