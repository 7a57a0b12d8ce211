#!/usr/bin/env bash
# The GPU half of the differential run (issue #17): unpacks the tarball that
# scripts/differential.sh wrote (default build/diff/bundles.tar.xz), runs
# every compiled bundle with kb-run --json (checked, not timed), then
# compute-sanitizer memcheck and racecheck over a sample, and writes under
# $OUT:
#   differential-summary.json  counts (ok, wrong, fault, run_refused,
#                              refused at compile time, failure at compile
#                              time, timeout, not_run), the same per op class,
#                              sanitizer counts, and one row per program;
#   reports/NAME.json          kb-run's report of each program that was not ok;
#   log.txt                    kb-run's and compute-sanitizer's output.
# Exit 0 when nothing was wrong, faulted or timed out, 1 otherwise.
# A device call runs at most 10 minutes: split a batch with
# KB_DIFF_SHARD=i/n (programs i, i+n, ...; 0-based) and KB_DIFF_PHASE=run|
# sanitize|all (default all), and stop in time with KB_DIFF_BUDGET seconds
# (default 540; programs not started by then are counted not_run).
# KB_DIFF_ONLY: a regex of program names to run only (e.g. '^r-' for the
# regression bundles). bench/fuzz/summarize.py merges the summaries of
# several calls.
# Env: KB_RUN (default build/bin/kb-run), KB_DIFF_TARBALL, KB_DIFF_SANITIZE
# (how many bundles each sanitizer tool runs, default 60: the smallest half
# and a random half), KB_DIFF_TIMEOUT (seconds per kb-run, default 120).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kb-diff-out}
KB_RUN=${KB_RUN:-build/bin/kb-run}
TARBALL=${KB_DIFF_TARBALL:-build/diff/bundles.tar.xz}
SHARD=${KB_DIFF_SHARD:-0/1}
PHASE=${KB_DIFF_PHASE:-all}
BUDGET=${KB_DIFF_BUDGET:-540}
SANITIZE=${KB_DIFF_SANITIZE:-60}
TIMEOUT=${KB_DIFF_TIMEOUT:-120}
START=$(date +%s)
mkdir -p "$OUT/reports"
log="$OUT/log.txt"
: > "$log"
[ -f "$TARBALL" ] || { echo "differential-gpu: no $TARBALL (run scripts/differential.sh and carry it)"; exit 2; }
. scripts/gpu-env.sh
"$KB_RUN" --check-device >> "$log" 2>&1 || { echo "differential-gpu: no GPU (kb-run --check-device)"; exit 2; }
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$SAN" ] || SAN=""

WORK=$(mktemp -d /tmp/kb-diff.XXXXXX)
tar -C "$WORK" -xJf "$TARBALL" || { echo "differential-gpu: cannot unpack $TARBALL"; exit 2; }

# This shard's programs, in order: NAME STATUS(compile) BYTES.
python3 - "$WORK/compile.json" "$SHARD" "${KB_DIFF_ONLY:-}" > "$WORK/list.txt" <<'EOF'
import json, re, sys
i, n = map(int, sys.argv[2].split("/"))
only = sys.argv[3]
rows = json.load(open(sys.argv[1]))["results"]
if only:
    rows = [r for r in rows if re.search(only, r["name"])]
for j, r in enumerate(rows):
    if j % n == i:
        print(r["name"], r["status"], r["bytes"])
EOF

# kb-run over every compiled bundle: NAME OUTCOME RC SECONDS.
: > "$WORK/run.txt"
if [ "$PHASE" = run ] || [ "$PHASE" = all ]; then
  # KB_DIFF_JOBS kb-run processes at once (default 8): a check is mostly the
  # float64 reference on the CPU, so the GPU is shared without changing any
  # result (kb-run times nothing here).
  run_one() {
    name=$1
    if [ $(( $(date +%s) - START )) -ge "$BUDGET" ]; then
      echo "$name not_run -1 0" >> "$WORK/run.txt"
      return
    fi
    t0=$(date +%s)
    timeout "$TIMEOUT" "$KB_RUN" "$WORK/bundles/$name" --no-time --json \
      > "$WORK/$name.json" 2> "$WORK/$name.err"
    rc=$?
    # clean, error, timeout or library_hazard (scripts/san-triage.sh).
    outcome=$(bash scripts/san-triage.sh "$tool" "$rc" "$WORK/san-$tool-$name.txt")
    echo "$name $tool $outcome" >> "$WORK/san.txt"
  }
  export -f san_one
  export SAN WORK OUT KB_RUN TIMEOUT BUDGET START
  for tool in ${KB_DIFF_TOOLS:-memcheck racecheck}; do
    sed "s/^/$tool /" "$WORK/sample.txt" |
      xargs -P "${KB_DIFF_SAN_JOBS:-4}" -n 2 bash -c 'san_one "$1" "$2"' _
    while read -r name; do
      [ -f "$WORK/san-$tool-$name.txt" ] || continue
      { echo "=== $tool $name"; tail -n 25 "$WORK/san-$tool-$name.txt"; } >> "$log"
    done < "$WORK/sample.txt"
  done
fi

python3 - "$WORK" "$OUT" "$SHARD" "$PHASE" <<'EOF'
import collections, json, os, sys
work, out, shard, phase = sys.argv[1:5]
compile_rows = {r["name"]: r for r in json.load(open(os.path.join(work, "compile.json")))["results"]}
listed = [l.split()[0] for l in open(os.path.join(work, "list.txt"))]
run = {l.split()[0]: l.split() for l in open(os.path.join(work, "run.txt"))}
san = collections.defaultdict(dict)
for l in open(os.path.join(work, "san.txt")):
    name, tool, outcome = l.split()
    san[name][tool] = outcome
rows, counts, per_class = [], collections.Counter(), {}
san_counts = {"memcheck": collections.Counter(), "racecheck": collections.Counter()}
for name in listed:
    c = compile_rows[name]
    if c["status"] != "compiled":
        outcome = c["status"]            # refused / failure at compile time
    elif name in run:
        outcome = run[name][1]
    else:
        outcome = "not_run"
    row = {"name": name, "kind": c["kind"], "chip": c["chip"], "fuse": c["fuse"],
           "classes": c["classes"], "bytes": c["bytes"], "outcome": outcome}
    if name in run:
        row["rc"], row["seconds"] = int(run[name][2]), int(run[name][3])
        try:
            rep = json.load(open(os.path.join(work, name + ".json")))
            row["checks"] = [{k: ch.get(k) for k in ("kernel", "ok", "detail")}
                             for ch in rep.get("checks", [])]
        except Exception:
            pass
    if c["status"] != "compiled":
        row["message"] = c.get("message", "")
    for tool, o in san.get(name, {}).items():
        row[tool] = o
        san_counts[tool][o] += 1
    rows.append(row)
    counts[outcome] += 1
    for cl in c["classes"]:
        per_class.setdefault(cl, collections.Counter())[outcome] += 1
summary = {"shard": shard, "phase": phase, "programs": len(rows), "counts": dict(counts),
           "sanitizer": {t: dict(v) for t, v in san_counts.items()},
           "per_class": {c: dict(v) for c, v in sorted(per_class.items())},
           "results": rows}
json.dump(summary, open(os.path.join(out, "differential-summary.json"), "w"), indent=1)
print("differential-gpu:", json.dumps(summary["counts"]), "sanitizer:", json.dumps(summary["sanitizer"]))
bad = sum(counts[k] for k in ("wrong", "fault", "timeout", "run_refused"))
bad += sum(v for t in san_counts.values() for k, v in t.items() if k in ("error", "timeout"))
sys.exit(1 if bad else 0)
EOF
rc=$?
rm -rf "$WORK"
exit $rc
