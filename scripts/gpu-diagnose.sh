#!/usr/bin/env bash
# Runs on the GPU machine, in one call (its timeouts add up to 555 s; a few
# minutes expected): checks issue #20's kb-run side on real kernels.
# Prepare on the build machine:
#   bash scripts/build-diagnose-bundles.sh     (writes build/diagnose/)
# then carry build/bin and build/diagnose. Writes under $OUT:
#   calibration.json   kb-run --calibrate's cache (FFMA and wgmma ceilings)
#   batch.json         every bundle in one kb-run --json batch, with baselines
#   batch-nobase.json  the same batch with --no-baselines (a tuning batch)
#   single.txt         one bundle alone, as text (the single-bundle output)
#   ncu-NAME.json      --profile --no-time (the diagnosis with ncu's counters)
#   summary.txt        per bundle: verdict, diagnosis, and the wall times
set -u
OUT=${OUT:-/tmp/kb-diagnose-out}
mkdir -p "$OUT"
KB_RUN=build/bin/kb-run
B=build/diagnose/bundles
. "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
# The calibration goes to $OUT (and comes back with it).
export XDG_CACHE_HOME="$OUT/cache"
"$KB_RUN" --check-device > "$OUT/gpu.txt" 2>&1 || { cat "$OUT/gpu.txt"; exit 2; }
timeout 90 "$KB_RUN" --calibrate > "$OUT/calibrate.txt" 2>&1
echo "calibrate exit $?" >> "$OUT/calibrate.txt"
cp "$OUT/cache/kb/calibration.json" "$OUT/calibration.json" 2>/dev/null
t0=$(date +%s.%N)
timeout 180 "$KB_RUN" --json --quiet "$B"/*/ > "$OUT/batch.json" 2> "$OUT/batch.err"
echo "batch exit $?" >> "$OUT/batch.err"
t1=$(date +%s.%N)
timeout 90 "$KB_RUN" --json --quiet --no-baselines "$B"/*/ > "$OUT/batch-nobase.json" 2> "$OUT/batch-nobase.err"
echo "batch --no-baselines exit $?" >> "$OUT/batch-nobase.err"
t2=$(date +%s.%N)
timeout 45 "$KB_RUN" "$B/mm-tf32-512x1024x8192-t128x256-sm90a" > "$OUT/single.txt" 2>&1
echo "exit $?" >> "$OUT/single.txt"
for name in mm-tf32-512x1024x8192-t128x256-sm90a softmax-8192x32768-sm90 mm-tf32-ffma-4096-sm90; do
  timeout 50 "$KB_RUN" "$B/$name" --profile --no-time --json --quiet > "$OUT/ncu-$name.json" 2> "$OUT/ncu-$name.err"
done
python3 - "$OUT" "$t0" "$t1" "$t2" <<'PY' > "$OUT/summary.txt" 2>&1
import glob, json, os, sys
out, t0, t1, t2 = sys.argv[1], *map(float, sys.argv[2:])
print(f"wall: batch with baselines {t1 - t0:.1f} s, --no-baselines {t2 - t1:.1f} s")
for f in ("batch.json", "batch-nobase.json"):
    try:
        b = json.load(open(os.path.join(out, f)))
    except Exception as e:
        print(f, "unreadable:", e)
        continue
    print(f"== {f}: status {b.get('status')}, exit {b.get('exit_code')}, {len(b.get('reports', []))} reports")
    for r in b.get("reports", []):
        name = os.path.basename(r.get("bundle", "").rstrip("/"))
        if r.get("status") == "error":
            print(f"{name}: ERROR {r.get('error')}: {r.get('message')}")
            continue
        d = r.get("diagnosis", {})
        t = r.get("time", {}).get("median_ms")
        print(f"{name}: {t} ms; {r.get('compute_unit', '')} {r.get('device_compute_tflops', '')} ({r.get('device_compute_source', '')})")
        print(f"  verdict: {r.get('verdict')}")
        print(f"  diagnosis: {d.get('bound')} / {d.get('cause')} / {d.get('lever')} {d.get('levers')}")
        print(f"  {d.get('text')}")
for f in sorted(glob.glob(os.path.join(out, "ncu-*.json"))):
    try:
        r = json.load(open(f))
    except Exception as e:
        print(f, "unreadable:", e)
        continue
    d = r.get("diagnosis", {})
    ks = [(k["name"], k.get("ncu_dram_pct"), k.get("ncu_sm_pct"), k.get("ncu_tensor_pipe_pct"), k.get("ncu_achieved_occupancy_pct")) for k in r.get("kernels", [])]
    print(f"== {os.path.basename(f)}: ncu (dram, sm, tensor, occupancy) {ks}; ncu error: {r.get('ncu', {}).get('error') if isinstance(r.get('ncu'), dict) else None}")
    print(f"  diagnosis: {d.get('bound')} / {d.get('cause')} / {d.get('lever')}: {d.get('text')}")
PY
cat "$OUT/summary.txt"
