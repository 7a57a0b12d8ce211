#!/usr/bin/env bash
# kb-run on a GPU: what CI cannot test. Run from the repository root after a
# build (build/bin/kb-opt, build/bin/kb-run):
#   bash test/Tools/gpu-kb-run-check.sh [REFERENCE_KB_RUN]
# Checks that a valid bundle runs, checks OK and is timed (exit 0, JSON
# status "ok", schema 1), that --save-outputs/--input round-trip, that
# --baseline works, that a kernel launched on half its grid is caught as
# WRONG with exit 3 and JSON status "wrong", that the error classes only a
# GPU can produce have their exit code and JSON (docs/kb-run-json.md:
# "device", exit 2, for a kernel the driver refuses and a chip this GPU cannot
# run; "error", exit 1, for a --baseline bundle of another program; "no_gpu",
# exit 2, for a --device that does not exist), and (given a kb-run built from
# before the split of run(), e.g. main's) that the per-kernel checks of both
# are identical for the same seed: the split changed no behaviour.
set -uo pipefail
ref=${1:-}
[ "$ref" = --build-only ] && ref=
t=$(mktemp -d)
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

# The GPU machine has no MLIR: KB_PREBUILT=DIR takes the five bundles from
# DIR (made on the build machine by KB_PREBUILT=DIR bash $0 --build-only).
if [ -n "${KB_PREBUILT:-}" ] && [ "${1:-}" != --build-only ]; then
  cp -r "$KB_PREBUILT"/bgd "$KB_PREBUILT"/bgd-unfused "$KB_PREBUILT"/bgd-seed7 \
    "$KB_PREBUILT"/sm "$KB_PREBUILT"/mm "$t"/
else
  build/bin/kb-opt examples/bias_gelu_dropout.mlir --kb-compile="output=$t/bgd" -o /dev/null
  build/bin/kb-opt examples/bias_gelu_dropout.mlir --kb-compile="output=$t/bgd-unfused fuse=false" -o /dev/null
  build/bin/kb-opt examples/softmax.mlir --kb-compile="output=$t/sm" -o /dev/null
  build/bin/kb-opt examples/matmul.mlir --kb-compile="output=$t/mm chip=sm_90a" -o /dev/null
  # Another program with the same buffers (dropout's seed differs).
  sed 's/seed(42)/seed(7)/' examples/bias_gelu_dropout.mlir > $t/seed7.mlir
  build/bin/kb-opt $t/seed7.mlir --kb-compile="output=$t/bgd-seed7" -o /dev/null
  rm $t/seed7.mlir
  if [ "${1:-}" = --build-only ]; then
    rm -rf "$KB_PREBUILT" && mkdir -p "$KB_PREBUILT" && cp -r "$t"/* "$KB_PREBUILT"/ && rm -rf "$t"
    exit 0
  fi
fi

for b in bgd sm mm; do
  build/bin/kb-run $t/$b --json --quiet > $t/$b.json; rc=$?
  [ $rc -eq 0 ] && ok "$b exit 0" || bad "$b exit $rc"
  [ "$(field $t/$b.json "['status']")" = ok ] && [ "$(field $t/$b.json "['schema']")" = 1 ] &&
    [ "$(field $t/$b.json "['exit_code']")" = 0 ] && ok "$b JSON status/schema" || bad "$b JSON fields"
  field $t/$b.json "['time']['median_ms']" > /dev/null && ok "$b timed" || bad "$b not timed"
  if [ -n "$ref" ]; then
    "$ref" $t/$b --json --no-time > $t/$b.ref.json 2>/dev/null
    build/bin/kb-run $t/$b --json --no-time --quiet > $t/$b.new.json
    python3 - "$t/$b.ref.json" "$t/$b.new.json" <<'EOF' && ok "$b checks identical to the reference kb-run" || bad "$b checks differ from the reference kb-run"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if a["checks"] == b["checks"] and a["ok"] == b["ok"] and
         [k["name"] for k in a["kernels"]] == [k["name"] for k in b["kernels"]] else 1)
EOF
  fi
done

# The text report and the baseline bundle.
build/bin/kb-run $t/bgd --baseline $t/bgd-unfused --quiet > $t/bgd.txt; rc=$?
[ $rc -eq 0 ] && grep -q "vs baseline" $t/bgd.txt && grep -q "verdict:" $t/bgd.txt &&
  ok "text report with --baseline" || bad "text report with --baseline (exit $rc)"

# --save-outputs, then the saved output fed back as an input (shape round trip).
build/bin/kb-run $t/sm --no-time --quiet --save-outputs $t/out > /dev/null && [ -f $t/out/y.npy ] &&
  ok "--save-outputs wrote y.npy" || bad "--save-outputs"
build/bin/kb-run $t/sm --no-time --quiet --input x=$t/out/y.npy > /dev/null &&
  ok "--input of a saved .npy" || bad "--input of a saved .npy"

# A wrong result: the kernel launched on half its grid leaves rows unwritten
# (poisoned with NaN): exit 3, status "wrong", no time.
python3 - "$t/sm/manifest.json" <<'EOF'
import json, sys
p = sys.argv[1]; m = json.load(open(p))
g = m["kernels"][0]["grid"]; g[0] = max(1, g[0] // 2)
json.dump(m, open(p, "w"))
EOF
build/bin/kb-run $t/sm --json --quiet > $t/wrong.json; rc=$?
[ $rc -eq 3 ] && ok "half grid: exit 3" || bad "half grid: exit $rc, want 3"
[ "$(field $t/wrong.json "['status']")" = wrong ] && [ "$(field $t/wrong.json "['exit_code']")" = 3 ] &&
  ok "half grid: JSON status wrong" || bad "half grid: JSON status"
# (The output first: under pipefail, kb-run's exit 3 would fail the pipe.)
build/bin/kb-run $t/sm --quiet > $t/wrong.txt 2>&1
grep -q "RESULT WRONG" $t/wrong.txt && ok "half grid: text says RESULT WRONG" ||
  bad "half grid: text"

# The error classes only a GPU produces: exit code, JSON class and message.
errcase() { # NAME WANT_RC WANT_CLASS MESSAGE_REGEX KB_RUN_ARGS...
  local name=$1 rc_want=$2 class=$3 re=$4; shift 4
  build/bin/kb-run "$@" --json --quiet > $t/$name.json 2>/dev/null; local rc=$?
  if [ $rc -eq $rc_want ] && [ "$(field $t/$name.json "['error']")" = "$class" ] &&
     [ "$(field $t/$name.json "['exit_code']")" = "$rc_want" ] &&
     field $t/$name.json "['message']" | grep -Eq "$re"; then
    ok "$name: exit $rc_want, class $class"
  else
    bad "$name: exit $rc (want $rc_want), JSON $(tr -d '\n' < $t/$name.json)"
  fi
}
# A chip this GPU cannot run (the manifest's target edited to sm_100).
cp -r $t/bgd $t/sm100
python3 -c "import json,sys; p=sys.argv[1]; m=json.load(open(p)); m['target']='sm_100'; json.dump(m, open(p, 'w'))" $t/sm100/manifest.json
errcase target-sm100 2 device "recompile with chip=" $t/sm100
# A kernel the driver refuses: its cubin and its PTX (kb-run falls back to
# the PTX when the cubin does not load) overwritten.
cp -r $t/bgd $t/badptx
for kfile in $(python3 -c "import json,sys; k=json.load(open(sys.argv[1]))['kernels'][0]; print(k['ptx'], k.get('cubin') or '')" $t/badptx/manifest.json); do
  echo "this is not a kernel" > "$t/badptx/$kfile"
done
errcase bad-kernel-file 2 device "the driver rejected" $t/badptx
# A --baseline bundle that computes something else: class "error", exit 1.
errcase baseline-other-program 1 error "not the same program" $t/bgd --baseline $t/bgd-seed7
# A GPU ordinal that does not exist.
errcase device-99 2 no_gpu "device 99 does not exist" $t/bgd --device 99

rm -rf "$t"
[ $fail -eq 0 ] && echo "gpu-kb-run-check: all passed" || echo "gpu-kb-run-check: FAILED"
exit $fail
