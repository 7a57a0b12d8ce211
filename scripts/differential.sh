#!/usr/bin/env bash
# The build-machine half of the differential run (issue #17): writes COUNT
# random valid kb programs from SEED (bench/fuzz/gen_programs.py), compiles
# each with build/bin/kb-opt --kb-compile (its chip and fuse option from the
# generator; ptxas when present) into build/diff/bundles/NAME, and sorts the
# outcomes:
#   compiled  exit 0 and a manifest.json written;
#   refused   exit 1 with a located diagnostic ("FILE:LINE:COL: error: ...");
#   failure   anything else: a crash (signal), a timeout, exit 1 without a
#             diagnostic, another exit code, exit 0 without a bundle.
# Writes build/diff/compile.json (per program: status, rc, first error line;
# counts; refusals grouped by reason) and packs the bundles, the programs and
# both JSON files into build/diff/bundles.tar.xz for the GPU machine (carry
# build/bin and build/diff/bundles.tar.xz; run scripts/differential-gpu.sh
# there). Exit 0 when no program failed, 1 otherwise.
# The GPU regression tests test/Target/gpu-*.mlir join every batch.
# Usage: scripts/differential.sh [COUNT=200] [SEED=1]
# Env: KB_DIFF_TIMEOUT (seconds per compile, default 60), KB_DIFF_PTXAS
# (auto|none, default auto), KB_DIFF_MAX_MIB (tarball limit, default 56),
# KB_DIFF_RULES (the share of rule-shaped matmuls, gen_programs.py --rules;
# default 0), KB_DIFF_HALF (the share of bf16/f16 programs, --half; default
# 0). Where build/bin/kb-run is built, every bundle also passes
# `kb-run --check` (no GPU) or counts as a failure.
set -u
cd "$(dirname "$0")/.."
COUNT=${1:-200}
SEED=${2:-1}
TIMEOUT=${KB_DIFF_TIMEOUT:-60}
PTXAS=${KB_DIFF_PTXAS:-auto}
MAX_MIB=${KB_DIFF_MAX_MIB:-56}
KB_OPT=build/bin/kb-opt
[ -x "$KB_OPT" ] || { echo "differential: $KB_OPT is missing: build it first (ninja -C build kb-opt)"; exit 2; }
PY=python3
python3 -c "import json" 2>/dev/null || PY=/usr/bin/python3

D=build/diff
rm -rf "$D"
mkdir -p "$D/programs" "$D/bundles" "$D/logs"
$PY bench/fuzz/gen_programs.py --count "$COUNT" --seed "$SEED" --rules "${KB_DIFF_RULES:-0}" --half "${KB_DIFF_HALF:-0}" --out "$D/programs" || exit 2
# The GPU regression tests (test/Target/gpu-*.mlir: programs kb-run once got
# wrong) join the batch as r-NAME-CHIP, for the chips of their GPU-CHIPS line.
$PY - "$D/programs" test/Target/gpu-*.mlir <<'REG'
import json, os, re, shutil, sys
out, files = sys.argv[1], sys.argv[2:]
index_path = os.path.join(out, "index.json")
index = json.load(open(index_path))
for f in files:
    text = open(f).read()
    m = re.search(r"GPU-CHIPS:(.*)", text)
    stem = os.path.basename(f)[len("gpu-"):-len(".mlir")]
    for chip in (m.group(1).split() if m else ["sm_90"]):
        name = f"r-{stem}-{chip}"
        shutil.copy(f, os.path.join(out, name + ".mlir"))
        index["programs"].append({"name": name, "file": name + ".mlir", "kind": "regression",
                                  "chip": chip, "fuse": True, "classes": ["regression"],
                                  "bytes": 0, "flops": 0, "args": []})
json.dump(index, open(index_path, "w"), indent=1)
REG

# One line per program: NAME STATUS RC (the log holds kb-opt's stderr).
: > "$D/status.txt"
start=$(date +%s)
# KB_DIFF_JOBS compiles at once (default: the cores).
compile_one() {
  name=$1 chip=$2 fuse=$3
  out="$D/bundles/$name"
  log="$D/logs/$name.txt"
  timeout "$TIMEOUT" "$KB_OPT" "$D/programs/$name.mlir" -o /dev/null \
    --kb-compile="output=$out chip=$chip fuse=$fuse ptxas=$PTXAS" > "$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ] && [ -f "$out/manifest.json" ]; then
    status=compiled
    if [ -x "$KB_RUN" ] && ! "$KB_RUN" --check "$out" >> "$log" 2>&1; then
      echo "kb-run --check: the bundle is invalid" >> "$log"
      status=failure
      rc=$((rc + 100))
    fi
  elif [ $rc -eq 1 ] && grep -Eq "^[^ ]+:[0-9]+:[0-9]+: error: " "$log"; then
    status=refused
    rm -rf "$out"
  else
    status=failure
  fi
  echo "$name $status $rc" >> "$D/status.txt"
}
export -f compile_one
KB_RUN=build/bin/kb-run
export D TIMEOUT KB_OPT PTXAS KB_RUN
$PY -c "
import json
for p in json.load(open('$D/programs/index.json'))['programs']:
    print(p['name'], p['chip'], 'true' if p['fuse'] else 'false')" |
  xargs -P "${KB_DIFF_JOBS:-$(nproc)}" -n 3 bash -c 'compile_one "$1" "$2" "$3"' _
secs=$(( $(date +%s) - start ))

$PY - "$D" "$secs" <<'EOF'
import collections, json, os, re, sys
d, secs = sys.argv[1], int(sys.argv[2])
index = {p["name"]: p for p in json.load(open(os.path.join(d, "programs/index.json")))["programs"]}
rows, counts, reasons, per_class = [], collections.Counter(), collections.Counter(), {}
for line in open(os.path.join(d, "status.txt")):
    name, status, rc = line.split()
    log = open(os.path.join(d, "logs", name + ".txt"), errors="replace").read()
    first = next((l for l in log.splitlines() if ": error: " in l), "")
    if not first and status == "failure":
        lines = log.strip().splitlines() or ["(no output)"]
        # A crash: the innermost frame of kb's own code names the culprit.
        frames = [l.strip() for l in lines if re.match(r"\s*#\d+ ", l) and "mlir::kb::" in l]
        first = ("crash in " + re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", frames[0]) if frames
                 else lines[-1])[:300]
    row = dict(index[name], status=status, rc=int(rc), message=first)
    rows.append(row)
    counts[status] += 1
    if status == "refused":
        # The reason without the location and the numbers that vary.
        msg = first.split(": error: ", 1)[-1]
        reasons[re.sub(r"\d+", "N", msg)[:160]] += 1
    for c in row["classes"]:
        per_class.setdefault(c, collections.Counter())[status] += 1
summary = {"programs": len(rows), "seconds": secs, "counts": dict(counts),
           "refusal_reasons": dict(reasons.most_common()),
           "per_class": {c: dict(v) for c, v in sorted(per_class.items())},
           "failures": [r for r in rows if r["status"] == "failure"],
           "results": rows}
json.dump(summary, open(os.path.join(d, "compile.json"), "w"), indent=1)
print(f"differential: {len(rows)} programs in {secs} s: " +
      ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
for msg, n in reasons.most_common():
    print(f"  refused x{n}: {msg}")
for r in summary["failures"]:
    print(f"  FAILURE {r['name']} (rc {r['rc']}): {r['message']}")
EOF

# Bundles, programs and summaries for the GPU machine. PTX compresses about
# tenfold; the device machine takes at most 64 MiB with the tree.
tar -C "$D" -cJf "$D/bundles.tar.xz" bundles programs compile.json
mib=$(( $(stat -c %s "$D/bundles.tar.xz") / 1048576 ))
echo "differential: $D/bundles.tar.xz is $mib MiB"
if [ "$mib" -ge "$MAX_MIB" ]; then
  echo "differential: the tarball is over $MAX_MIB MiB: compile fewer programs per batch"
  exit 1
fi
grep -q " failure " "$D/status.txt" && exit 1
exit 0
