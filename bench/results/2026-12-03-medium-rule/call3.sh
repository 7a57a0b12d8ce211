#!/usr/bin/env bash
# Session 14 call 3: (1) ncu of kb's medium kernels and cuBLAS's on the same
# shapes; (2) gpu-check.sh over every program whose default the medium rule
# changed (checked, cuBLAS routes of its precision, torch peer, split-K
# determinism) and an interleaved A/B against each old default.
set -u
export OUT=${OUT:-/tmp/out}
cd "$(dirname "$0")/../.."
pycublas=$(python3 -c "import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + '/lib')" 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${pycublas}:${LD_LIBRARY_PATH:-}"
mkdir -p $OUT/ncu
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section LaunchStats --page raw --csv"
start=$(date +%s)
for d in build/gpu/ncu-*; do
  n=$(basename $d)
  timeout 40 ncu $S -k regex:matmul --launch-skip 6 --launch-count 1 build/bin/kb-run --no-baselines -q --min-ms 5 $d > $OUT/ncu/$n.csv 2> $OUT/ncu/$n.err
  echo "$n $? $(( $(date +%s) - start )) s"
done
for s in 1000x700x1500t 1000x700x1500 1024x704x1504t; do
  timeout 40 ncu $S -k regex:gemm --launch-skip 10 --launch-count 1 python3 build/gpu/peer_mm.py $s > $OUT/ncu/cublas-$s.csv 2> $OUT/ncu/cublas-$s.err
  echo "cublas $s $? $(( $(date +%s) - start )) s"
done
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_SANITIZER=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
  KB_AB='.' KB_AB_REPS=3 KB_AB_MS=60 timeout $(( 570 - $(date +%s) + start )) bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
tail -5 $OUT/check_log.txt
