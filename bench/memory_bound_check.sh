#!/usr/bin/env bash
# Builds one GPU call on memory-bound matmuls below issue #19's targets.
# Usage:
#   bash bench/memory_bound_check.sh probe   the split-K skinny shapes of
#       the suite (16x11008x4096, 32x4096x11008, 96x12288x4096 B^T: 77-79%
#       of copy), whose partials kb.split_sum adds in a second kernel: the
#       defaults against the same tile in two chunks summed by kb.split_sum
#       and by reduce = "cluster" (A/B, L2 flushed, 3 turns), and ncu of
#       each default's kernels (DRAM bytes and throughput, time).
#   bash bench/memory_bound_check.sh second   reduce = "cluster" on skinny
#       B^T shapes whose default is two chunks of a two-warpgroup tile (one
#       in the suite, four out of sample), and the batched shapes of the
#       suite (2-32 output tiles a matrix, 8-32 k tiles) on a persistent
#       grid and at 128 x 128 with three stages (two blocks an SM), each
#       against its default (A/B, L2 flushed, 3 turns).
#   probe and second were run at 040fa89 (bench/results/2026-12-04-memory-
#   bound); since d829f11 kb's defaults carry the skinny-reduce rule and
#   the batched persistent grid, so at a later commit `second` compares
#   those defaults with themselves.
#   KB_OLD_OPT=<older kb-opt> bash bench/memory_bound_check.sh gemv   the
#       gemv's columns form (a row-major B, few rows) with its weight read
#       evict-first, at kb's default, against the same program compiled by
#       the older kb-opt (before the policy there; -v0x0s1old), A/B as
#       above; memcheck of a small one with an edge in K.
#   KB_OLD_OPT=<older kb-opt> bash bench/memory_bound_check.sh gemv1   the
#       same for the gemv's one-float loads (K or N % 4 != 0) read
#       evict-first: the suite's matvec 1x4099x4093 and skinny 3x4093x4099
#       B^T, four out of sample, and gpu-check's peers for the two suite
#       programs in the same call.
#   KB_OLD_OPT=<older kb-opt> bash bench/memory_bound_check.sh gemv1oos
#       the one-float rule's window (32-128 MiB) out of sample: four
#       programs at kb's default against the older kb-opt's.
#   KB_OLD_OPT=<older kb-opt> bash bench/memory_bound_check.sh gemvfold
#       the streamed weight loads of a tile with one address register and
#       constant offsets: eleven gemv programs (one-float and 16-byte loads,
#       both forms) against the older kb-opt's; memcheck of one with edges
#       in K and N.
# Then on the GPU machine (carry build/bin and build/gpu): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "probe|second|gemv|gemv1|gemv1oos|gemvfold"
if [[ "$mode" == gemv* ]] && [ ! -x "${KB_OLD_OPT:-}" ]; then
  echo "$0 $mode: KB_OLD_OPT must name an older kb-opt (the A/B's base)" >&2
  exit 2
fi
python3 - "$mode" <<'PY'
import sys
sys.path.insert(0, "bench")
import shapes
from gpu_call import P, variant, write_variants
mode = sys.argv[1]
C = 'reduce = "cluster"'
if mode == "second":
    for m, n, k in [(96, 12288, 4096), (128, 11008, 4096), (80, 14336, 4096),
                    (112, 12288, 5120), (128, 14336, 4096)]:
        name = f"skn-{m}x{n}x{k}-bt-sm90a"
        open(f"{P}/{name}.mlir", "w").write(shapes.program(m, n, k, 1, True))
        variant(name, "{tile}c", "{default}, " + C)
    for b, m, n, k, tb in [(256, 256, 256, 256, True), (128, 512, 512, 512, True),
                           (128, 512, 512, 512, False), (32, 1024, 1024, 1024, True),
                           (64, 384, 384, 384, False)]:
        name = f"bat-{b}x{m}x{n}x{k}{'-bt' if tb else ''}-sm90a"
        open(f"{P}/{name}.mlir", "w").write(shapes.program(m, n, k, b, tb))
        variant(name, "{tile}g132", "{default}, grid = 132")
        variant(name, "v128x128s1p3", "block = [128, 128, 32], stages = 3")
if mode == "gemv":
    for m, n, k in [(1, 4096, 4096), (1, 8192, 8192), (1, 11008, 4096), (1, 4096, 14336),
                    (4, 4096, 4096), (2, 8192, 8192), (3, 4096, 1000)]:
        open(f"{P}/rmv-{m}x{n}x{k}-sm90a.mlir", "w").write(shapes.program(m, n, k, 1, False))
if mode == "gemvfold":
    for m, n, k, tb in [(2, 3001, 4093, True), (3, 4093, 4099, True), (1, 4099, 4093, False),
                        (1, 6143, 4096, False), (4, 4093, 6143, True), (1, 4096, 4096, True),
                        (1, 14336, 4096, True), (2, 4096, 4096, True), (1, 4096, 4096, False),
                        (1, 8192, 8192, False), (4096, 1, 4096, True)]:
        open(f"{P}/rmv-{m}x{n}x{k}{'-bt' if tb else ''}-sm90a.mlir", "w").write(shapes.program(m, n, k, 1, tb))
if mode == "gemv1oos":
    for m, n, k, tb in [(1, 6143, 4096, False), (2, 3001, 4093, True), (1, 2999, 4096, False),
                        (4, 4093, 6143, True)]:
        open(f"{P}/rmv-{m}x{n}x{k}{'-bt' if tb else ''}-sm90a.mlir", "w").write(shapes.program(m, n, k, 1, tb))
if mode == "gemv1":
    for m, n, k, tb in [(1, 4099, 4093, False), (3, 4093, 4099, True), (1, 11007, 4096, False),
                        (2, 8191, 8192, False), (1, 14336, 4095, True), (4, 11008, 4099, True),
                        (3, 1001, 999, True)]:
        open(f"{P}/rmv-{m}x{n}x{k}{'-bt' if tb else ''}-sm90a.mlir", "w").write(shapes.program(m, n, k, 1, tb))
    for name in ["shape-matvec-1x4099x4093-sm90a", "shape-skinny-3x4093x4099-bt-sm90a"]:
        m, n, k = (1, 4099, 4093) if "matvec" in name else (3, 4093, 4099)
        open(f"{P}/{name}.mlir", "w").write(shapes.program(m, n, k, 1, "-bt" in name))
for m, n, k, tiles in ([] if mode != "probe" else [(16, 11008, 4096, [(64, 128)]), (32, 4096, 11008, [(64, 128)]),
                       (96, 12288, 4096, [(128, 192)])]):
    name = f"skn-{m}x{n}x{k}-bt-sm90a"
    open(f"{P}/{name}.mlir", "w").write(shapes.program(m, n, k, 1, True))
    for bm, bn in tiles:
        blk = f"block = [{bm}, {bn}, 32]"
        variant(name, f"v{bm}x{bn}s2", f"{blk}, split = 2")
        variant(name, f"v{bm}x{bn}s2c", f"{blk}, split = 2, {C}")
write_variants()
PY
gpu_call_compile
gpu_call_variants
if [[ "$mode" == gemv* ]]; then
  gpu_call_old rmv-
fi
gpu_call_show
{
  gpu_call_header
  cat <<'SH'
KB_AB_REPS=3 KB_AB_MS=60 timeout 300 bash bench/ab.sh $(ls -d build/gpu/bundles/*/ | grep -v /shape-) > $OUT/ab_log.txt 2>&1
echo "ab exit $? at $(( $(date +%s) - start )) s"
tail -n 16 $OUT/ab_log.txt
SH
  [ "$mode" = gemv ] && cat <<'SH'
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 build/bin/kb-run build/gpu/bundles/rmv-3x4096x1000-sm90a --no-time > $OUT/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|OK|WRONG" $OUT/memcheck.txt | head -5
SH
  [ "$mode" = gemvfold ] && cat <<'SH'
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 build/bin/kb-run build/gpu/bundles/rmv-1x4099x4093-sm90a --no-time > $OUT/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|OK|WRONG" $OUT/memcheck.txt | head -5
SH
  [ "$mode" = gemv1 ] && cat <<'SH'
timeout 120 compute-sanitizer --tool memcheck --print-limit 5 build/bin/kb-run build/gpu/bundles/rmv-3x1001x999-bt-sm90a --no-time > $OUT/memcheck.txt 2>&1
echo "memcheck exit $?"; grep -E "ERROR SUMMARY|OK|WRONG" $OUT/memcheck.txt | head -5
KB_ONLY='^shape-' KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 KB_SKIP_SANITIZER=1 \
  KB_TORCH_PEER='^shape-' KB_TORCH_NO_COMPILE='^shape-' \
  OUT=$OUT/check timeout 200 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
echo "gpu-check exit $?"; grep -E "verdict|torch peer" $OUT/check_log.txt
SH
  [ "$mode" = probe ] && cat <<'SH'
mkdir -p $OUT/ncu
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second
for d in build/gpu/bundles/skn-*-bt-sm90a build/gpu/bundles/skn-*s2c-sm90a; do
  n=$(basename $d)
  timeout 60 ncu --metrics $M --launch-skip 10 --launch-count 2 \
    build/bin/kb-run --no-baselines -q --min-ms 5 $d > $OUT/ncu/$n.txt 2>&1
  grep -E "k[0-9]_|gpu__time|dram__|cycles_elapsed" $OUT/ncu/$n.txt | sed "s/^/$n /"
done
echo "done at $(( $(date +%s) - start )) s"
SH
  echo '(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)'
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
