#!/usr/bin/env bash
# Runs on the GPU machine (issue #18's diagnosis of the squares): what the SM
# clock and the board power are while kb's wgmma kernel runs, against
# torch.matmul (cuBLAS) on the same shape, and Nsight Compute's
# speed-of-light, memory and compute sections of both kernels. A kernel
# that moves more bytes through L2 and shared memory per flop draws more
# power, and on a power-capped H200 that lowers the clock for the same
# tensor work. Needs the bundles of bench/shapes.py's squares in
# build/gpu/bundles (KB_BENCH_ONLY='^shape-square-(4096x4096x4096(-bt)?|8192x8192x8192)-sm90a$'
# bash scripts/build-bench.sh) and build/bin. Writes $OUT/square-power/:
#   <name>.smi.csv    nvidia-smi samples (100 ms) over a 4-second timing loop
#   <name>.run.json   kb-run's report of that loop (kb), or torch's times
#                     (torch's loop now writes kb-run's 256 MB flush before
#                     each run, so that the two loops do the same work; added
#                     after bench/results/2026-12-02-square-power, whose
#                     torch loop had none, and not run since)
#   ncu-<name>.txt    ncu's sections for one launch
#   summary.json      per run: median SM clock, power, and time
# KB_POWER_BUNDLES: the bundles to loop over (names; default the three
# squares), KB_POWER_NO_TORCH=1: no torch loops, KB_POWER_NCU: the bundles
# to profile (default the two 4096^3 ones), KB_POWER_NO_TORCH_NCU=1: no
# torch kernel under ncu, KB_POWER_TORCH_NCU: which torch kernels (default
# "no bt": torch.matmul and F.linear at 4096).
set -u
OUT=${OUT:-/tmp/kb-square-out}/square-power
mkdir -p "$OUT"
KB_RUN=build/bin/kb-run
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/gpu-env.sh"
sample() { nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 100 > "$1" & echo $!; }
TORCH_LOOP='
import sys, time, json, torch
n, bt, secs = int(sys.argv[1]), sys.argv[2] == "bt", float(sys.argv[3])
torch.backends.cuda.matmul.allow_tf32 = True
a = torch.randn(n, n, device="cuda"); b = torch.randn(n, n, device="cuda")
f = (lambda: torch.nn.functional.linear(a, b)) if bt else (lambda: torch.matmul(a, b))
# kb-run writes a 256 MB buffer before each run (its L2 flush): so does
# this loop, so that both draw the same kind of power between runs.
flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")
for _ in range(3): f()
torch.cuda.synchronize()
times = []; end = time.time() + secs
while time.time() < end:
    flush.fill_(float(len(times) % 256))
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record(); f(); e.record(); e.synchronize(); times.append(s.elapsed_time(e))
times.sort(); print(json.dumps({"median_ms": times[len(times) // 2], "runs": len(times), "flush_mb": 256}))
'
for name in ${KB_POWER_BUNDLES:-shape-square-4096x4096x4096-sm90a shape-square-4096x4096x4096-bt-sm90a shape-square-8192x8192x8192-sm90a}; do
  [ -d "build/gpu/bundles/$name" ] || continue
  pid=$(sample "$OUT/$name.smi.csv")
  timeout 60 "$KB_RUN" --json --no-baselines -q --min-ms 4000 "build/gpu/bundles/$name" > "$OUT/$name.run.json" 2> "$OUT/$name.err"
  kill "$pid"
  [ -n "${KB_POWER_NO_TORCH:-}" ] && continue
  n=$(echo "$name" | grep -oE '[0-9]+' | head -1); bt=no; case "$name" in *-bt-*) bt=bt ;; esac
  pid=$(sample "$OUT/torch-$n-$bt.smi.csv")
  timeout 60 python3 -c "$TORCH_LOOP" "$n" "$bt" 4 > "$OUT/torch-$n-$bt.run.json" 2> "$OUT/torch-$n-$bt.err"
  kill "$pid"
done
# One launch of each under ncu (its own clocks left alone).
# KB_POWER_SECTIONS: other ncu options (for example the instruction mix:
# "--section InstructionStats --section WarpStateStats --print-details all").
SECTIONS=${KB_POWER_SECTIONS:-"--section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy"}
for name in ${KB_POWER_NCU:-shape-square-4096x4096x4096-sm90a shape-square-4096x4096x4096-bt-sm90a}; do
  [ -d "build/gpu/bundles/$name" ] || continue
  timeout 120 ncu --clock-control none $SECTIONS -k regex:k0_ -c 1 "$KB_RUN" --no-time --no-baselines -q "build/gpu/bundles/$name" > "$OUT/ncu-$name.txt" 2>&1
done
for bt in ${KB_POWER_TORCH_NCU:-no bt}; do
  [ -n "${KB_POWER_NO_TORCH_NCU:-}" ] && break
  timeout 120 ncu --clock-control none $SECTIONS -k regex:'gemm|xmma|nvjet|sm90' --launch-skip 3 -c 1 \
    python3 -c "$TORCH_LOOP" 4096 "$bt" 0.01 > "$OUT/ncu-torch-4096-$bt.txt" 2>&1
done
python3 - "$OUT" <<'PY' > "$OUT/summary.json"
import csv, glob, json, os, statistics, sys
out = sys.argv[1]; rows = {}
for f in sorted(glob.glob(f"{out}/*.smi.csv")):
    name = os.path.basename(f)[:-8]
    clk, pw = [], []
    for r in csv.reader(open(f)):
        try:
            clk.append(float(r[1])); pw.append(float(r[2]))
        except (IndexError, ValueError):
            pass
    # The loop's steady part: samples drawing more than half the peak power.
    keep = [i for i, p in enumerate(pw) if pw and p > 0.5 * max(pw)]
    run = {}
    try:
        d = json.load(open(f"{out}/{name}.run.json"))
        run = d["time"] if "time" in d else d
    except Exception as e:
        run = {"error": str(e)}
    rows[name] = {"samples": len(keep),
                  "sm_clock_mhz_median": statistics.median([clk[i] for i in keep]) if keep else None,
                  "power_w_median": statistics.median([pw[i] for i in keep]) if keep else None,
                  "median_ms": run.get("median_ms")}
print(json.dumps(rows, indent=1))
PY
cat "$OUT/summary.json"
