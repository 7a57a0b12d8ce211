#!/usr/bin/env bash
# Builds one GPU call for stream-K (#kb.config reduce = "stream",
# MatmulWgmma.cpp; bench/results/2026-12-03-streamk). Usage:
#   bash bench/streamk_check.sh first   call 1: correctness (hand-set
#       stream-K on edge shapes, B^T and row-major B, fused, checked,
#       sanitizers, run-to-run bits) and A/B of stream-K variants against
#       kb's defaults where the last wave of tiles is part empty.
#   bash bench/streamk_check.sh persistent   call 3: the persistent grid
#       alone (grid = 132 on kb's default tile) against kb's default on
#       multi-wave nn.Linear programs not in calls 1-2 (call 2 had it 3-5%
#       faster on two 128 x 192 grids), L2 flushed, then back to back.
# Then on the GPU machine (carry build/bin and build/gpu): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "first|persistent"
python3 - "$mode" <<'PY'
import sys
sys.path.insert(0, "bench")
from gpu_call import prog, streamk_programs, variant, write_variants
mode = sys.argv[1]
SK = 'grid = 132, reduce = "stream"'
# Hand-set stream-K where a tile is cut (gpu_call.streamk_programs): all of
# them in call 1, two in call 3 (after a refactor of the lowering).
streamk_programs(every=mode == "first")
if mode == "first":
    for m, n, k, e in [(1024, 5120, 13824, "relu"), (1024, 5120, 13824, "plain"), (2048, 13824, 5120, "plain"),
                       (4096, 5120, 13824, "plain"), (768, 8192, 4096, "relu"), (1536, 4096, 4096, "plain")]:
        name = prog(m, n, k, e)
        variant(name, "v128x256s1sk", "block = [128, 256, 32], " + SK)
        variant(name, "v128x192s1sk", "block = [128, 192, 32], " + SK)
if mode == "persistent":
    for m, n, k, e in [(2048, 4096, 4096, "plain"), (1024, 11008, 4096, "relu"), (2048, 5120, 5120, "gelu"),
                       (3072, 4096, 4096, "swish"), (1024, 8192, 8192, "plain"), (4096, 4096, 4096, "plain"),
                       (2048, 11008, 4096, "gelu"), (640, 8192, 4096, "swish"), (2048, 3072, 4096, "plain"),
                       (384, 14336, 4096, "gelu")]:
        name = prog(m, n, k, e)
        # The default's own tile on a persistent grid (-v<BM>x<BN>s1g132).
        variant(name, "{tile}g132", "{block}, grid = 132")
write_variants()
PY
gpu_call_build
cp bench/torch_peer.py build/gpu/
{
  gpu_call_header
  if [ "$mode" = first ]; then
    gpu_call_check_ab 'sk-odd-1000x700x1500-bt-sm90a sk-odd-1000x700x1500-sm90a sk-gelu-999x1000x1500-sm90a sk-plain-256x256x16384-bt-sm90a' \
      '^lf-.*sm90a$' 560 16
  else cat <<'SH'
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
  KB_SKIP='-v[0-9]' KB_TORCH_PEER='^lf-.*sm90a$' \
  KB_MEMCHECK_EXTRA=sk-odd-1000x700x1500-bt-sm90a \
  OUT=$OUT/check timeout 200 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
grep -E "^=== sk|determinism|WRONG|ERROR SUMMARY" $OUT/check_log.txt
KB_AB_REPS=3 KB_AB_MS=60 timeout 200 bash bench/ab.sh build/gpu/bundles/lf-*/ > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 10 $OUT/ab_log.txt
mv $OUT/ab_log.txt $OUT/ab_flushed_log.txt; mv $OUT/ab $OUT/ab_flushed
KB_AB_ARGS='--warm-l2' KB_AB_REPS=3 KB_AB_MS=60 timeout $(( 560 - $(date +%s) + start )) bash bench/ab.sh build/gpu/bundles/lf-*/ > $OUT/ab_log.txt 2>&1
echo "ab warm exit $? at $(( $(date +%s) - start )) s"
tail -n 10 $OUT/ab_log.txt
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
  fi
  if [ "$mode" = first ]; then cat <<'SH'
# DRAM bytes and time of one launch each (ncu, clocks locked): kb's
# default and stream-K at 1024x5120x13824.
mkdir -p $OUT/ncu
for n in lf-plain-1024x5120x13824-sm90a lf-plain-1024x5120x13824-v128x256s1sk-sm90a; do
  timeout 60 ncu --metrics dram__bytes_read.sum,lts__t_bytes.sum,gpu__time_duration.sum,sm__cycles_active.avg -k regex:matmul --launch-skip 5 --launch-count 1 \
    build/bin/kb-run --no-baselines -q --min-ms 5 build/gpu/bundles/$n > $OUT/ncu/$n.txt 2>&1
  grep -E "dram__bytes|lts__t_bytes|gpu__time|cycles_active" $OUT/ncu/$n.txt | sed "s/^/$n /"
done
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
  fi
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
echo "built ($mode): $(ls build/gpu/bundles | wc -l) bundles"
