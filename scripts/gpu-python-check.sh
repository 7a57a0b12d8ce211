#!/usr/bin/env bash
# Runs on the GPU machine (CUDA driver, PyTorch; no MLIR, no kb-opt), from
# the repository root, in one call: the Python front end's acceptance.
#  1. python/tests/gpu/test_gpu_load.py: precompiled bundles loaded with
#     kb.load, launched on torch CUDA tensors (current stream, a side stream),
#     compared with PyTorch in float64; kb.load's refusals.
#  2. python3 -m kb.bench in measure mode on python/examples/kernelbench/*.py
#     at tf32 (then ieee unless KB_PY_SKIP_IEEE=1): each problem checked
#     against PyTorch on five fresh input sets and timed against eager and
#     torch.compile (ieee: eager only, unless KB_PY_IEEE_COMPILE=1) in the
#     same call; the GPU's ceilings measured once. About 8 minutes in all.
#  3. python3 -m kb.plot: a roofline and speed-up figure per bench report.
# Writes under $OUT: gpu.txt, pytest-gpu.txt, bench-<prec>.json and .txt,
# bench-<prec>.png, kb-run/ (step 4), summary.txt. Exits 0 only when every
# step passed.
#  4. (when build/bin/kb-run is carried) kb-run --no-time on every bundle:
#     kb's own float64 check with its error bounds, the new ops included.
# Prepare on the kb-opt machine: bash scripts/build-pybundles.sh, then carry
# build/pybundles (the bundles; a few MiB). KB_PY_SKIP_COMPILE=1 leaves out
# the torch.compile baseline (it compiles each model, tens of seconds each).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kb-gpu-python-out}
mkdir -p "$OUT"
. scripts/python-env.sh
# The whole call stays within KB_PY_BUDGET seconds (default 570: one
# 10-minute device call): later steps shrink or are skipped, and say so.
budget=${KB_PY_BUDGET:-570}
SECONDS=0
summary="$OUT/summary.txt"
: > "$summary"
status=0
note() { echo "$*" | tee -a "$summary"; }
fail() { note "FAIL: $*"; status=1; }

if [ ! -d build/pybundles ]; then
  note "FAIL: build/pybundles is missing: run bash scripts/build-pybundles.sh on the kb-opt machine and carry build/pybundles"
  exit 2
fi
note "bundles compiled at commit $(cat build/pybundles/COMMIT 2>/dev/null || echo '?'); this tree: $(git rev-parse HEAD 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1 || true
"$KB_PYTHON" -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name() if torch.cuda.is_available() else '')" >> "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if ! "$KB_PYTHON" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  note "FAIL: $KB_PYTHON has no torch with a CUDA GPU"
  exit 2
fi

echo "== 1. kb.load against PyTorch (pytest)"
if "$KB_PYTHON" -c "import pytest" 2>/dev/null; then
  KB_PYBUNDLES_TESTS=build/pybundles/tests timeout 150 "$KB_PYTHON" -m pytest -v -p no:cacheprovider \
    python/tests/gpu/test_gpu_load.py > "$OUT/pytest-gpu.txt" 2>&1
  rc=$?
else  # no pytest here: the file runs its own tests
  KB_PYBUNDLES_TESTS=build/pybundles/tests timeout 150 "$KB_PYTHON" \
    python/tests/gpu/test_gpu_load.py --no-pytest > "$OUT/pytest-gpu.txt" 2>&1
  rc=$?
fi
tail -n 25 "$OUT/pytest-gpu.txt"
if [ $rc -eq 0 ]; then note "ok: kb.load tests ($(grep -Eo '[0-9]+ passed' "$OUT/pytest-gpu.txt" | tail -1))"
else fail "kb.load tests exit $rc (see pytest-gpu.txt)"; fi

echo "== 1b. torch.compile(model, backend=\"kb\") against eager, and the M = 1..512 serving loop"
if "$KB_PYTHON" -c "import pytest, torch._dynamo" 2>/dev/null; then
  KB_BACKEND_CACHE=build/pybundles/backend-cache timeout 300 "$KB_PYTHON" -m pytest -v -p no:cacheprovider \
    python/tests/gpu/test_backend_gpu.py > "$OUT/pytest-backend.txt" 2>&1
  rc=$?
  tail -n 25 "$OUT/pytest-backend.txt"
  if [ $rc -eq 0 ]; then note "ok: backend tests ($(grep -Eo '[0-9]+ passed' "$OUT/pytest-backend.txt" | tail -1))"
  else fail "backend tests exit $rc (see pytest-backend.txt)"; fi
  # The backend's CUDA graphs (kb.piece_graphs): replays equal to direct
  # launches, call after call with new inputs, on two streams.
  if grep -q "test_graph_mode_matches_direct_launches PASSED" "$OUT/pytest-backend.txt"; then
    note "ok: CUDA-graph pieces equal direct launches (test_graph_mode_matches_direct_launches)"
  else fail "CUDA-graph pieces: test_graph_mode_matches_direct_launches did not pass (see pytest-backend.txt)"; fi
  # Whole-graph capture (kb.whole_graph): one CUDA graph for the stitched
  # graph, against direct launches, the pieces' graphs and eager.
  n=$(grep -c "test_whole_graph_matches_eager_and_direct_launches.* PASSED" "$OUT/pytest-backend.txt")
  if [ "$n" -eq 3 ]; then
    note "ok: whole-graph capture equals direct launches, MLP, GPT-2 and Llama (test_whole_graph_matches_eager_and_direct_launches)"
  else fail "whole-graph capture: $n of 3 test_whole_graph_matches_eager_and_direct_launches cases passed (see pytest-backend.txt)"; fi
else
  note "skipped: backend tests need pytest and torch >= 2 in $KB_PYTHON"
fi

echo "== 1c. the backend's Python launch cost over a CUDA-graph replay: captured whole, with piece graphs, direct (kb.bench --suite backend-overhead)"
if [ -d build/pybundles/models-cache ]; then
  timeout 180 "$KB_PYTHON" -m kb.bench --suite backend-overhead --bundles build/pybundles/models-cache \
    --out "$OUT/backend-overhead" > "$OUT/backend-overhead.txt" 2> "$OUT/backend-overhead-log.txt"
  rc=$?
  cat "$OUT/backend-overhead.txt"
  if [ $rc -eq 0 ]; then note "ok: backend overhead within 10 us a kernel (backend-overhead/table.txt)"
  else fail "kb.bench --suite backend-overhead exit $rc (see backend-overhead.txt, backend-overhead-log.txt)"; fi
else
  note "skipped: backend overhead: no build/pybundles/models-cache (scripts/build-pybundles.sh fills it)"
fi

precs="tf32"
[ -n "${KB_PY_SKIP_IEEE:-}" ] || precs="tf32 ieee"
for prec in $precs; do
  echo "== 2. kb.bench --precision $prec"
  extra=()
  limit=330
  # torch.compile builds each model (tens of seconds): in the tf32 run
  # only, unless KB_PY_IEEE_COMPILE=1, to stay within a 10-minute call.
  if [ -n "${KB_PY_SKIP_COMPILE:-}" ] || { [ "$prec" = ieee ] && [ -z "${KB_PY_IEEE_COMPILE:-}" ]; }; then
    extra+=(--no-torch-compile)
  fi
  [ "$prec" = tf32 ] && extra+=(--ceilings)
  if [ "$prec" = ieee ]; then
    left=$(( budget - SECONDS - 60 ))
    if [ $left -lt 60 ]; then note "skipped: kb.bench ieee (${SECONDS} s used of the ${budget} s budget)"; continue; fi
    limit=$(( left < 150 ? left : 150 ))
  fi
  timeout $limit "$KB_PYTHON" -m kb.bench --bundles "build/pybundles/$prec" --precision "$prec" \
    "${extra[@]}" --json "$OUT/bench-$prec.json" python/examples/kernelbench/*.py \
    > "$OUT/bench-$prec.txt" 2>&1
  rc=$?
  cat "$OUT/bench-$prec.txt"
  if [ $rc -eq 0 ]; then note "ok: kb.bench $prec"; else fail "kb.bench $prec exit $rc (see bench-$prec.txt)"; fi
  if [ -f "$OUT/bench-$prec.json" ]; then
    "$KB_PYTHON" -m kb.plot "$OUT/bench-$prec.json" -o "$OUT/bench-$prec.png" \
      --title "kb vs PyTorch eager and torch.compile ($prec)" >> "$summary" 2>&1 || fail "kb.plot $prec"
  fi
done
# 4. kb-run's own check of the same bundles (float64 reference with its
# error bounds, the new ops' included), when build/bin/kb-run is carried.
if [ -x build/bin/kb-run ] && [ $(( budget - SECONDS )) -lt 45 ]; then
  note "skipped: kb-run's checks (${SECONDS} s used of the ${budget} s budget)"
elif [ -x build/bin/kb-run ]; then
  echo "== 4. kb-run --no-time on build/pybundles/{tests,tf32}"
  pycublas=$("$KB_PYTHON" -c "import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + '/lib')" 2>/dev/null || true)
  export LD_LIBRARY_PATH="/usr/local/cuda/lib64:${pycublas}:${LD_LIBRARY_PATH:-}"
  mkdir -p "$OUT/kb-run"
  bad=0; checked=0
  for d in build/pybundles/tests/*/ build/pybundles/tf32/*/; do
    n=$(basename "$(dirname "$d")")-$(basename "$d")
    [ $(( budget - SECONDS )) -gt 15 ] || { note "kb-run: stopped at $n (budget)"; break; }
    timeout 60 build/bin/kb-run "$d" --no-time --json-out "$OUT/kb-run/$n.json" > "$OUT/kb-run/$n.txt" 2>&1
    rc=$?
    checked=$((checked + 1))
    [ $rc -eq 0 ] || { bad=$((bad + 1)); echo "kb-run $n: exit $rc"; tail -n 3 "$OUT/kb-run/$n.txt"; }
  done
  if [ $bad -eq 0 ]; then note "ok: kb-run checked $checked bundle(s), all OK"; else fail "kb-run: $bad bundle(s) not OK (see kb-run/)"; fi
else
  note "skipped: kb-run's checks (carry build/bin/kb-run to run them)"
fi
note "exit $status after ${SECONDS} s"
exit $status
