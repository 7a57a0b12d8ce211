# Shared steps of the bench/*_check.sh call builders (sourced): compile
# build/gpu/programs/*.mlir for sm_90a into build/gpu/bundles, build the
# hand-set variants of build/gpu/variants.txt (program, name, config;
# scripts/build-variant.sh), and list each matmul kernel's grid, registers,
# spills and config.
gpu_call_compile() {
  local f
  for f in build/gpu/programs/*.mlir; do
    build/bin/kb-opt "$f" --kb-compile="output=build/gpu/bundles/$(basename "$f" .mlir) chip=sm_90a" -o /dev/null
  done
}
# A variant's {tile}, {block} and {default} come from its program's default
# bundle (gpu_call.resolve), which gpu_call_compile built first.
gpu_call_variants() {
  local prog name config
  while IFS=$'\t' read -r prog name config; do
    if [[ "$name$config" == *"{"* ]]; then
      { IFS= read -r name; IFS= read -r config; } < <(python3 -c "
import sys
sys.path.insert(0, 'bench')
from gpu_call import resolve
print(*resolve(*sys.argv[1:]), sep='\n')" "$prog" "$name" "$config")
    fi
    bash scripts/build-variant.sh "build/gpu/programs/$prog.mlir" "$name" "$config" > /dev/null
  done < build/gpu/variants.txt
}
gpu_call_show() {
  local d
  for d in build/gpu/bundles/*/; do
    python3 -c "
import json, sys
for k in json.load(open(sys.argv[1] + 'manifest.json'))['kernels']:
    r = k['resources']
    if 'mma' in k.get('config', ''):
        print(f\"{sys.argv[1].split('/')[-2]:48s} grid {k['grid']} regs {r['registers']} spill {r['spill_store_bytes']}  {k['config']}\")" "$d"
  done
}
# The A/B's bases of a change with no config to switch it off: each
# build/gpu/programs/$1*.mlir compiled by the older kb-opt $KB_OLD_OPT,
# named as a variant (NAME-v0x0s1old-sm90a) so that bench/ab.sh pairs it
# with NAME-sm90a (kb-opt's remarks dropped; a failure said).
gpu_call_old() {
  local f n
  for f in build/gpu/programs/"$1"*.mlir; do
    n=$(basename "$f" .mlir)
    "$KB_OLD_OPT" "$f" --kb-compile="output=build/gpu/bundles/${n%-sm90a}-v0x0s1old-sm90a chip=sm_90a" \
      -o /dev/null 2>/dev/null || { echo "$0: $KB_OLD_OPT failed on $f" >&2; return 1; }
  done
}
# The head of a build/gpu/call.sh: bash, $OUT, the repository root, the GPU
# environment, the start time.
gpu_call_header() {
  cat <<'SH'
#!/usr/bin/env bash
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
. scripts/gpu-env.sh
start=$(date +%s)
SH
}
# The checks and A/B of a call.sh: gpu-check over the call's bundles (the
# variants -v128x... left to the A/B) with cuBLAS's routes, PyTorch's peers
# (bundles matching $2) and compute-sanitizer's memcheck, racecheck and
# synccheck over the bundles named in $1; then bench/ab.sh over the lf-*
# bundles (3 turns, L2 flushed) until $3 s after the start; the last $4
# lines of its table.
gpu_call_check_ab() {
  cat <<SH
SAN='$1'
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \\
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \\
  KB_SKIP='-v128x' KB_TORCH_PEER='$2' \\
  KB_MEMCHECK_EXTRA="\$SAN" KB_RACECHECK="\$SAN" KB_SYNCCHECK="\$SAN" \\
  OUT=\$OUT/check timeout 300 bash scripts/gpu-check.sh > \$OUT/check_log.txt 2>&1
echo "gpu-check exit \$? at \$(( \$(date +%s) - start )) s"
grep -E "^=== |exit|WRONG|error|determinism" \$OUT/check_log.txt | head -60
KB_AB_REPS=3 KB_AB_MS=60 timeout \$(( $3 - \$(date +%s) + start )) bash bench/ab.sh \$(ls -d build/gpu/bundles/lf-*/) > \$OUT/ab_log.txt 2>&1
echo "ab exit \$? at \$(( \$(date +%s) - start )) s"
tail -n $4 \$OUT/ab_log.txt
SH
}
# The programs compiled, the variants built, the kernels listed.
gpu_call_build() {
  gpu_call_compile
  gpu_call_variants
  gpu_call_show
}
# A call builder's start: its mode ($1) checked against the modes it knows
# ($2, "a|b|c"; usage on stderr and exit 2 otherwise), the repository root
# as the working folder, build/gpu emptied for the call.
gpu_call_start() {
  if [ -z "$1" ] || [[ "|$2|" != *"|$1|"* ]]; then
    echo "usage: $0 $2" >&2
    exit 2
  fi
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  rm -rf build/gpu && mkdir -p build/gpu/programs build/gpu/bundles
}
