#!/usr/bin/env bash
# Runs on the GPU machine, in one call: every bundle under build/gpu/bundles
# checked and timed by kb-run (fusion programs against their unfused bundle),
# compute-sanitizer memcheck over the small bundles (racecheck and synccheck
# over some), and the PyTorch/Triton
# baselines (bench/peers/torch_baselines.py).
# Writes under $OUT: kb_results.json (every kb-run report), kb_log.txt,
# sanitizer.txt, torch_baselines.json, same_harness.json, gpu.txt,
# variants.json (the tile variants, one batch), determinism.json (split-K
# bundles run twice, outputs compared bit for bit), bench/<suite>/ (the
# python3 -m kb.bench suites of KB_BENCH: table.txt, <suite>.json, .png).
# Prepare on the build machine: bash scripts/build-bench.sh; then carry build/bin
# and build/gpu. KB_ONLY / KB_SKIP: regexes of bundle names to run
# only / to leave out; KB_NCU_BUNDLES: the bundles to profile with ncu (names);
# KB_NCU_WARP: the matmul bundles whose stall reasons and SASS to record
# (KB_NCU_KERNEL: the kernel-name regex ncu profiles there, default matmul);
# KB_DEPENDENT_LAUNCH_AB=1 (the dependent-launch A/B below),
# KB_MEMCHECK_EXTRA (more bundles to memcheck), KB_RACECHECK and KB_SYNCCHECK
# (the bundles to racecheck and synccheck instead of the defaults), KB_SASS (bundles whose SASS
# to keep in sass.txt),
# KB_AB (a regex of bundles: bench/ab/ab.sh's interleaved A/B of variants and
# their bases, KB_AB_REPS times each), KB_BENCH (the python3 -m kb.bench
# suites to run from build/gpu/bundles, into bench/<suite>/: default
# "squares", "none" for none; models and backend-overhead read
# build/pybundles/models-cache, serving and serving-tiny
# build/pybundles/serving-cache),
# KB_ROUTES=program (kb-run --routes: only the program precision's cuBLAS
# routes), KB_SKIP_NCU, KB_SKIP_SANITIZER, KB_SKIP_TORCH (also skips bench/peers/same_harness.py:
# kb's softmax and Triton's under one harness; KB_SKIP_SAME_HARNESS alone).
set -u
OUT=${OUT:-/tmp/kb-gpu-out}
mkdir -p "$OUT" "$OUT/tmp"
# Everything under $OUT goes back as one archive (the device returns at most
# 8 files), also when a timeout around this script sends it SIGTERM: bash
# runs the trap once the running step ends (twice in session 29 the call's
# timeout left variants/ and torch_peer.json unpacked, and lost).
pack() { trap - TERM INT
  (cd "$OUT" && tar czf ../kb-gpu-results.tgz . && rm -rf ./* && mv ../kb-gpu-results.tgz results.tgz); }
trap 'echo "gpu-check: stopped by a signal; packing what ran into results.tgz"; pack; exit 124' TERM INT
KB_RUN=build/bin/kb-run
# cuBLAS: the toolkit's, else the one PyTorch ships.
. "$(dirname "${BASH_SOURCE[0]}")/gpu-env.sh"
ldd "$KB_RUN" | grep "not found" && echo "kb-run cannot start here"
"$KB_RUN" --check-device || exit 2
ONLY=${KB_ONLY:-}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
date -u >> "$OUT/gpu.txt"
log="$OUT/kb_log.txt"
: > "$log"
for dir in build/gpu/bundles/*/; do
  name=$(basename "$dir")
  case "$name" in *-unfused) continue ;; esac
  # Tile variants (bench/shapes.py VARIANTS) run below, in one batch.
  if echo "$name" | grep -Eq -- '-v[0-9]+x[0-9]+s[0-9]+'; then continue; fi
  if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
  if [ -n "${KB_SKIP:-}" ] && echo "$name" | grep -Eq -- "$KB_SKIP"; then continue; fi
  args=()
  # KB_ROUTES=program: only the cuBLAS routes of the program's precision
  # (its peers; half of a matmul bundle's baseline time).
  [ -n "${KB_ROUTES:-}" ] && args+=(--routes "$KB_ROUTES")
  [ -d "build/gpu/bundles/$name-unfused" ] && args+=(--baseline "build/gpu/bundles/$name-unfused")
  echo "=== $name" | tee -a "$log"
  start=$(date +%s)
  timeout 240 "$KB_RUN" "$dir" "${args[@]}" --json-out "$OUT/tmp/$name.json" >> "$log" 2>&1
  echo "exit $? after $(( $(date +%s) - start )) s" | tee -a "$log"
  tail -n 5 "$log" | grep -E "time:|verdict|diagnosis|WRONG" || true
done
# The tile variants (bench/shapes.py VARIANTS: a shape with a hand-set tile,
# split and stages), timed in one kb-run process without baselines (each is
# still checked first); their shape's default bundle ran above with every
# baseline, in this call. KB_SKIP_VARIANTS.
variants=()
for dir in build/gpu/bundles/*/; do
  name=$(basename "$dir")
  echo "$name" | grep -Eq -- '-v[0-9]+x[0-9]+s[0-9]+' || continue
  if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
  variants+=("$dir")
done
# Each variant's default bundle as well, timed like the variants (its report
# above is timed for kb-run's default 200 ms, with baselines in between: for
# a compute-bound kernel the two protocols differed by up to 8%, run 9), as
# variants/<name>@default.json: a variant compares with these.
defaults=()
for dir in "${variants[@]}"; do
  base=$(basename "$dir" | sed -E 's/-v[0-9]+x[0-9]+s[0-9]+[a-z0-9]*-sm90a$/-sm90a/')
  [ -d "build/gpu/bundles/$base" ] || continue
  case " ${defaults[*]} " in *" build/gpu/bundles/$base/ "*) continue ;; esac
  defaults+=("build/gpu/bundles/$base/")
done
variants=("${defaults[@]}" "${variants[@]}")
if [ ${#variants[@]} -gt 0 ] && [ -z "${KB_SKIP_VARIANTS:-}" ]; then
  # One process a variant (a report each, kept if the budget runs out),
  # timed for 50 ms of kernel time, not kb-run's default 200.
  echo "=== ${#variants[@]} tile variants" | tee -a "$log"
  mkdir -p "$OUT/variants"
  vstart=$(date +%s)
  for dir in "${variants[@]}"; do
    name=$(basename "$dir")
    if [ $(( $(date +%s) - vstart )) -ge "${KB_VARIANTS_BUDGET:-300}" ]; then
      echo "variants: budget spent, $name and after skipped" | tee -a "$log"; break
    fi
    file="$name"
    echo "$name" | grep -Eq -- '-v[0-9]+x[0-9]+s[0-9]+' || file="$name@default"
    timeout 60 "$KB_RUN" --json --no-baselines -q --min-ms 50 "$dir" > "$OUT/variants/$file.json" 2>> "$log"
    echo "variant $name: exit $?" >> "$log"
  done
  echo "variants: $(( $(date +%s) - vstart )) s" | tee -a "$log"
fi
# Programmatic dependent launch, A/B (KB_DEPENDENT_LAUNCH_AB=1): every
# bundle with a kernel marked dependent_launch, timed like the variants
# (50 ms, no baselines) with it and with --no-dependent-launch, alternating
# on and off twice, into dependent_launch/<name>@{on,off}{1,2}.json.
if [ -n "${KB_DEPENDENT_LAUNCH_AB:-}" ]; then
  mkdir -p "$OUT/dependent_launch"
  for dir in build/gpu/bundles/*/; do
    name=$(basename "$dir")
    grep -q '"dependent_launch": true' "$dir/manifest.json" || continue
    if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
    for i in 1 2; do
      timeout 60 "$KB_RUN" --json --no-baselines -q --min-ms 50 "$dir" > "$OUT/dependent_launch/$name@on$i.json" 2>> "$log"
      timeout 60 "$KB_RUN" --json --no-baselines -q --min-ms 50 --no-dependent-launch "$dir" > "$OUT/dependent_launch/$name@off$i.json" 2>> "$log"
    done
    echo "dependent launch A/B $name: done" | tee -a "$log"
  done
fi
# Split-K's determinism: every bundle with a kb.split_sum kernel or a split
# summed in the kernel (reduce = "cluster", or stream-K's "stream"), run
# twice on the same inputs (--no-time), its outputs compared bit for bit.
if [ -z "${KB_SKIP_DETERMINISM:-}" ]; then
  echo "[" > "$OUT/determinism.json"; sep=""
  for dir in build/gpu/bundles/*/; do
    name=$(basename "$dir")
    ls "$dir" | grep -q "split_sum" || grep -Eq 'reduce = \\"(cluster|stream)\\"' "$dir/manifest.json" || continue
    echo "$name" | grep -Eq -- '-v[0-9]+x[0-9]+s[0-9]+' && continue
    if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
    d1="$OUT/tmp/det/$name/1"; d2="$OUT/tmp/det/$name/2"; mkdir -p "$d1" "$d2"
    timeout 120 "$KB_RUN" -q --no-time --seed 7 --save-outputs "$d1" "$dir" > /dev/null 2>&1; r1=$?
    timeout 120 "$KB_RUN" -q --no-time --seed 7 --save-outputs "$d2" "$dir" > /dev/null 2>&1; r2=$?
    same=true
    for f in "$d1"/*.npy; do cmp -s "$f" "$d2/$(basename "$f")" || same=false; done
    ls "$d1"/*.npy > /dev/null 2>&1 || same=false
    echo "$sep{\"bundle\": \"$name\", \"exit\": [$r1, $r2], \"identical\": $same}" >> "$OUT/determinism.json"; sep=","
    echo "determinism $name: exit $r1 $r2, identical $same" | tee -a "$log"
    rm -rf "$OUT/tmp/det/$name"
  done
  echo "]" >> "$OUT/determinism.json"
  rm -rf "$OUT/tmp/det"
fi
# Nsight Compute's view of a few kernels next to kb-run's own signals, and the
# SASS instruction mix of the TF32 matmul (is the tensor core the bottleneck?).
if [ -z "${KB_SKIP_NCU:-}" ]; then
  : > "$OUT/ncu_log.txt"
  for name in ${KB_NCU_BUNDLES:-softmax-8192x32768 softmax-1024x400000 bgd-16384x8192 matmul-tf32-4096 matmul-tf32-4096-sm90a matmul-ieee-4096}; do
    [ -d "build/gpu/bundles/$name" ] || continue
    if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
    echo "=== ncu $name" >> "$OUT/ncu_log.txt"
    timeout 300 "$KB_RUN" "build/gpu/bundles/$name" --profile --no-time --json-out "$OUT/tmp/ncu-$name.json" >> "$OUT/ncu_log.txt" 2>&1
    echo "exit $?" >> "$OUT/ncu_log.txt"
  done
  # Why the TF32 kernel waits: ncu's warp-state (stall reason) breakdown, and
  # its SASS, to read the inner loop's schedule.
  for name in ${KB_NCU_WARP:-matmul-tf32-4096 matmul-tf32-4096-sm90a matmul-ieee-4096}; do
    [ -d build/gpu/bundles/$name ] || continue
    if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
    echo "=== ncu warp states $name" >> "$OUT/ncu_log.txt"
    # The stall reasons as metrics: this ncu's WarpStateStats section
    # prints no per-reason breakdown without PC sampling.
    stalls=$(for r in barrier long_scoreboard short_scoreboard mio_throttle not_selected \
      math_pipe_throttle wait dispatch_stall selected lg_throttle no_instruction tex_throttle; do
      printf 'smsp__average_warp_latency_issue_stalled_%s,' "$r"; done)
    timeout 300 ncu --clock-control none --section WarpStateStats --section SchedulerStats \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
      --metrics "${stalls%,}" -k "regex:${KB_NCU_KERNEL:-matmul}" -c 1 \
      "$KB_RUN" build/gpu/bundles/$name --no-time >> "$OUT/ncu_log.txt" 2>&1
    # One file for all SASS listings: the device returns at most 8 files.
    echo "=== SASS $name" >> "$OUT/sass.txt"
    cuobjdump -sass build/gpu/bundles/$name/k*${KB_NCU_KERNEL:-matmul}*.cubin >> "$OUT/sass.txt" 2>&1
  done
  for cubin in build/gpu/bundles/matmul-tf32-4096/k0_matmul.cubin build/gpu/bundles/matmul-tf32-4096-sm90a/k0_matmul.cubin build/gpu/bundles/matmul-ieee-4096/k0_matmul.cubin; do
    [ -f "$cubin" ] || continue
    echo "=== SASS opcode mix of $cubin (top 25)" >> "$OUT/ncu_log.txt"
    cuobjdump -sass "$cubin" | grep -oE '^ +/\*[0-9a-f]+\*/ +[A-Z][A-Z0-9_.]+' | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -25 >> "$OUT/ncu_log.txt"
  done
  grep -E "^===|ncu:|exit" "$OUT/ncu_log.txt"
fi
# KB_SASS: bundles whose kernels' SASS to keep (sass.txt), e.g. to see
# where ptxas scheduled a kernel's loads.
for name in ${KB_SASS:-}; do
  for cubin in build/gpu/bundles/$name/k*.cubin; do
    [ -f "$cubin" ] || continue
    echo "=== SASS $cubin" >> "$OUT/sass.txt"
    cuobjdump -sass "$cubin" >> "$OUT/sass.txt" 2>&1
  done
done
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
res = {}
for f in sorted(os.listdir(os.path.join(out, "tmp"))):
    res[f[:-5]] = json.load(open(os.path.join(out, "tmp", f)))
json.dump(res, open(os.path.join(out, "kb_results.json"), "w"), indent=1)
print(f"{len(res)} reports in kb_results.json")
PY
rm -rf "$OUT/tmp"
if [ -z "${KB_SKIP_SANITIZER:-}" ] && command -v compute-sanitizer >/dev/null; then
  : > "$OUT/sanitizer.txt"
  # sanitize TOOL NAME...: compute-sanitizer's TOOL over the bundles present.
  sanitize() {
    tool=$1; shift
    for name in "$@"; do
      [ -d "build/gpu/bundles/$name" ] || continue
      if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
      echo "=== $tool $name" >> "$OUT/sanitizer.txt"
      timeout 300 compute-sanitizer --tool "$tool" --print-limit 5 "$KB_RUN" "build/gpu/bundles/$name" --no-time >> "$OUT/sanitizer.txt" 2>&1
      echo "exit $?" >> "$OUT/sanitizer.txt"
    done
  }
  sanitize memcheck matmul-tf32-1000x700x1500-tb-sm90a shape-medium-1100x1000x1100-bt-sm90a bias_gelu_dropout matmul_awkward softmax-1000x4099 softmax-3x4099 softmax-7x400001 bgd-1000x1001 matmul-tf32-1000x700x1500 matmul-tf32-batch4-512-tb matmul-ieee-batch4-512-tb softmax-1024x400001 matmul-tf32-1000x700x1500-sm90a matmul-tf32-1000x702x1500-sm90a matmul-tf32-1000x701x1500-sm90a mm-bias-gelu-tf32-1000x700x1500-sm90a matmul-tf32-batch4-512-tb-sm90a matmul-tf32-16x24x32-sm90a matmul-tf32-1x8x4-sm90a matmul-ieee-4000-s3 matmul-ieee-1000x700x1500-s3 matmul-ieee-batch4-512-tb-s3 matmul-ieee-4096-s4-w32x64 softmax-7x400001-g16 softmax-2048x65536-g4 softmax-600x65537 attn-probs-256x200000 repro-sgp-odd-a-sm90a repro-sgp-odd-b-sm90a repro-false-wrong-softmax gpu-pad-wgmma-sm90a matmul-tf32-1000x512x256-tb-g20-sm90a matmul-tf32-300x256x10000-s7-g10-sm90a matmul-tf32-batch4-512-tb-g16-sm90a matmul-tf32-300x256x10000-tb-s7-cpasync-sm90a matmul-tf32-300x256x10000-s7 matmul-ieee-300x256x10000-s7 matmul-tf32-300x256x10000-tb-s7-g10-sm90a linear-bias-scale-gelu-tf32-4096x2048x64-sm90a
  # racecheck (shared-memory hazards) over the kernels that stage in shared
  # memory: the reproducers, a split_global and split_shared softmax, a
  # wgmma and an mma.sync matmul.
  # KB_MEMCHECK_EXTRA: more bundles to memcheck (names).
  sanitize memcheck ${KB_MEMCHECK_EXTRA:-}
  sanitize racecheck ${KB_RACECHECK:-repro-sgp-odd-a-sm90a repro-sgp-odd-b-sm90a softmax-7x400001-g16 softmax-1024x400001 matmul-tf32-1000x700x1500-sm90a matmul-tf32-1000x700x1500 matmul-ieee-1000x700x1500-s3 matmul-tf32-1000x512x256-tb-g20-sm90a matmul-tf32-300x256x10000-s7-g10-sm90a matmul-tf32-300x256x10000-tb-s7-g10-sm90a matmul-tf32-1000x700x1500-tb-sm90a shape-medium-1100x1000x1100-bt-sm90a}
  # synccheck (barrier and mbarrier misuse) over the kernels of clusters:
  # kb-tile's cluster rule picks (128 x 128 in two chunks and 64 x 128 in
  # clusters of 4), a split_global softmax. KB_SYNCCHECK: other names.
  sanitize synccheck ${KB_SYNCCHECK:-matmul-tf32-1000x700x1500-tb-sm90a shape-medium-1100x1000x1100-bt-sm90a softmax-7x400001-g16}
  grep -E "^===|ERROR SUMMARY|RACECHECK SUMMARY|exit" "$OUT/sanitizer.txt"
fi
# PyTorch's time for the same programs (eager, F.linear, torch.compile),
# timed like kb-run times kb: bench/peers/torch_peer.py. KB_TORCH_PEER: a regex of
# the bundles to time (default: the matmuls and fused matmuls).
if [ -z "${KB_SKIP_TORCH:-}" ]; then
  peers=()
  for dir in build/gpu/bundles/*/; do
    name=$(basename "$dir")
    case "$name" in *-unfused) continue ;; esac
    echo "$name" | grep -Eq -- "${KB_TORCH_PEER:-^(matmul|mm-|linear|shape-)}" || continue
    if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
    peers+=("$dir")
  done
  if [ ${#peers[@]} -gt 0 ]; then
    timeout 500 python3 bench/peers/torch_peer.py "$OUT/torch_peer.json" "${peers[@]}" > "$OUT/torch_peer_log.txt" 2>&1
    echo "torch peer exit $?"
    tail -n 40 "$OUT/torch_peer_log.txt"
  fi
fi
if [ -z "${KB_SKIP_TORCH:-}" ] && [ -z "${KB_SKIP_TORCH_BASELINES:-}" ] && [ -f bench/peers/torch_baselines.py ]; then
  timeout 300 python3 bench/peers/torch_baselines.py "$OUT/torch_baselines.json" > "$OUT/torch_log.txt" 2>&1
  echo "torch baselines exit $?"
  tail -n 25 "$OUT/torch_log.txt"
fi
# kb's softmax kernels and a Triton one-pass softmax under one harness
# (do_bench, kb's cubin launched through the driver API from Python): the
# launchers' fixed costs differ, which matters at small sizes.
if [ -z "${KB_SKIP_TORCH:-}" ] && [ -z "${KB_SKIP_SAME_HARNESS:-}" ]; then
  bundles=()
  for name in ${KB_SAME_HARNESS:-softmax-4096x4096 softmax-32768x1024 softmax-8192x32768}; do
    [ -d "build/gpu/bundles/$name" ] || continue
    if [ -n "$ONLY" ] && ! echo "$name" | grep -Eq -- "$ONLY"; then continue; fi
    bundles+=("build/gpu/bundles/$name")
  done
  if [ ${#bundles[@]} -gt 0 ]; then
    timeout 300 python3 bench/peers/same_harness.py "$OUT/same_harness.json" "${bundles[@]}" > "$OUT/same_harness_log.txt" 2>&1
    echo "same harness exit $?"
    cat "$OUT/same_harness_log.txt"
  fi
fi
# Issue #49's fuzz sample (build/fuzz-src carried: small bundles, e.g.
# scripts/differential.sh's build/diff/bundles): mutated manifests made here
# until KB_FUZZ_SAMPLE (default 200) pass kb-run --check, each then run and
# checked on the GPU (scripts/mutate-bundles.py); fuzz/result.json.
# KB_SKIP_FUZZ_SAMPLE; KB_FUZZ_SAMPLE_SEED.
if [ -d build/fuzz-src ] && [ -z "${KB_SKIP_FUZZ_SAMPLE:-}" ]; then
  mkdir -p "$OUT/fuzz"
  fz=$(mktemp -d)
  python3 scripts/mutate-bundles.py make build/fuzz-src "$fz/mutants" --kb-run "$KB_RUN" \
    --seed "${KB_FUZZ_SAMPLE_SEED:-1}" --accepted "${KB_FUZZ_SAMPLE:-200}" > "$OUT/fuzz/log.txt" 2>&1
  timeout 500 python3 scripts/mutate-bundles.py run "$fz/mutants" build/fuzz-src "$OUT/fuzz/result.json" \
    --kb-run "$KB_RUN" --budget "${KB_FUZZ_SAMPLE_BUDGET:-300}" >> "$OUT/fuzz/log.txt" 2>&1
  echo "fuzz sample exit $?" | tee -a "$log"; tail -n 8 "$OUT/fuzz/log.txt"
  rm -rf "$fz"
fi
# The parts other sessions added, each its own script, run here when what
# it needs was carried (and not switched off):
# - the Python package on torch tensors (build/pybundles; KB_SKIP_PYTHON),
# - kb-run's diagnoses on one bundle per rule (build/diagnose; KB_SKIP_DIAGNOSE),
# - kb-tune's exhaustive batches (build/tune/batches.tar.gz; KB_SKIP_TUNE).
if [ -d build/pybundles ] && [ -z "${KB_SKIP_PYTHON:-}" ]; then
  mkdir -p "$OUT/python"
  export KB_PY_BUDGET=${KB_PY_BUDGET:-240}; OUT="$OUT/python" timeout $(( KB_PY_BUDGET + 30 )) bash scripts/gpu-python-check.sh > "$OUT/python/log.txt" 2>&1
  echo "python check exit $?"; tail -n 15 "$OUT/python/log.txt"
fi
if [ -d build/diagnose ] && [ -z "${KB_SKIP_DIAGNOSE:-}" ]; then
  mkdir -p "$OUT/diagnose"
  OUT="$OUT/diagnose" timeout "${KB_DIAGNOSE_BUDGET:-300}" bash scripts/gpu-diagnose.sh > "$OUT/diagnose/log.txt" 2>&1
  echo "diagnose exit $?"; tail -n 15 "$OUT/diagnose/log.txt"
fi
if [ -f build/tune/batches.tar.gz ] && [ -z "${KB_SKIP_TUNE:-}" ]; then
  export KB_TUNE_BUDGET_S=${KB_TUNE_BUDGET_S:-300}; OUT="$OUT" timeout $(( KB_TUNE_BUDGET_S + 90 )) bash scripts/gpu-tune.sh > "$OUT/tune-log.txt" 2>&1
  echo "tune exit $?"; tail -n 10 "$OUT/tune-log.txt"
fi
# An interleaved A/B (bench/ab/ab.sh): KB_AB, a regex of the bundles (variants
# and their bases) to time in turn KB_AB_REPS times; its table in ab_log.txt.
if [ -n "${KB_AB:-}" ]; then
  ab=()
  for dir in build/gpu/bundles/*/; do
    basename "$dir" | grep -Eq -- "$KB_AB" && ab+=("$dir")
  done
  [ ${#ab[@]} -gt 0 ] && OUT="$OUT" bash bench/ab/ab.sh "${ab[@]}" > "$OUT/ab_log.txt" 2>&1
  echo "ab: ${#ab[@]} bundles" | tee -a "$log"
fi
# The named suites of python3 -m kb.bench (docs/bench.md) from the bundles
# carried here: kb-run and the PyTorch peers in this call, a table with the
# geometric mean, <suite>.json and <suite>.png under bench/<suite>/.
# The torch.compile backend's suites (models, models-tiny, backend-overhead)
# read build/pybundles/models-cache (scripts/build-pybundles.sh) instead,
# the serving suites (serving, serving-tiny) build/pybundles/serving-cache;
# KB_BENCH_ONLY: the kb-run suites' --only (a regex of program names).
# KB_BENCH_MODELS / KB_BENCH_DTYPES / KB_BENCH_BUDGET: their --models /
# --dtypes / --budget-s; KB_BENCH_PROFILE=1: models' --profile (each
# timed callable's CUDA kernels, in the suite's JSON).
for suite in ${KB_BENCH:-squares}; do
  [ "$suite" = none ] && break
  mkdir -p "$OUT/bench/$suite"
  bundles=build/gpu/bundles; extra=()
  # KB_BENCH_ONLY: a regex of the kb-run suites' programs (their --only).
  [ -n "${KB_BENCH_ONLY:-}" ] && extra+=(--only "$KB_BENCH_ONLY")
  case "$suite" in
    models|models-tiny|backend-overhead|serving|serving-tiny)
      bundles=build/pybundles/models-cache; extra=()
      case "$suite" in serving*) bundles=build/pybundles/serving-cache ;; esac
      [ -n "${KB_BENCH_MODELS:-}" ] && extra+=(--models "$KB_BENCH_MODELS")
      [ -n "${KB_BENCH_DTYPES:-}" ] && extra+=(--dtypes "$KB_BENCH_DTYPES")
      [ -n "${KB_BENCH_BUDGET:-}" ] && extra+=(--budget-s "$KB_BENCH_BUDGET")
      [ -n "${KB_BENCH_PROFILE:-}" ] && [ "$suite" = models ] && extra+=(--profile) ;;
  esac
  KB_RUN="$KB_RUN" PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}" timeout 900 \
    python3 -m kb.bench --suite "$suite" --bundles "$bundles" "${extra[@]}" --out "$OUT/bench/$suite" \
    > "$OUT/bench/$suite/table.txt" 2> "$OUT/bench/$suite/log.txt"
  echo "kb.bench $suite: exit $?" | tee -a "$log"
  tail -n 3 "$OUT/bench/$suite/table.txt"
done
# The device returns at most 8 files: everything goes back as one archive
# (unpack with tar xzf into bench/results/<run>/).
trap - TERM INT
pack
ls -la "$OUT"
