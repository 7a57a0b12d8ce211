#!/usr/bin/env bash
# Builds one GPU call of bench/results/2026-12-03-linear (issue #18's fused
# target: gemm + bias + ReLU / + scale + GELU(erf) / + swish at nn.Linear
# shapes, M 512-4096, weights 4096-16384 a side, at least 1.1x torch.compile;
# docs/shapes.md "nn.Linear at M = 256-2048"). Usage:
#   bash bench/linear_check.sh fused    call 1: 16 fused and plain programs
#       at kb's defaults with their eager / torch.compile peers; A/B on M =
#       512 of 128 x 256 in two K chunks summed in a cluster (-v128x256s2red)
#       or by kb.split_sum (-v128x256s2ker) against the default 128 x 128,
#       and 128 x 192 (-v128x192s1) against 128 x 256 at 512 x 11008.
#   bash bench/linear_check.sh rules    call 2: the waves and wide-reduce
#       rules (TileWgmma.cpp) on 14 programs, each against its old default set by
#       hand (-v128x256s1old / -v128x128s1old: the config the old kb-tile
#       chose); peers, sanitizers, determinism; ncu (clocks locked) of kb's
#       new and old 512x4096x4096 kernels and cuBLAS's.
#   bash bench/linear_check.sh cluster  call 3: kb's cluster = 2 on 128 x 128
#       (cuBLAS's form at 512x4096x4096) and on 128 x 192 / 128 x 256 at
#       1024x5120x13824; ncu --clock-control none (cycles against clock).
#   bash bench/linear_check.sh warm     call 5: rules' pairs (and cluster = 2
#       at 512x4096x4096) timed back to back with L2 warm (kb-run --warm-l2,
#       torch_peer.py with KB_PEER_WARM_L2=1).
#   bash bench/linear_check.sh c2       2026-12-03-pair: cluster = 2 on
#       the default one wave of 128 x 128 (B^T, K < 8192) out of sample, in
#       both protocols, with the peers (it became kb-tile's pair rule; the
#       defaults now include it, so rebuilding this call compares the
#       clustered default with itself except on 384 x 5120 x 4096).
#   bash bench/linear_check.sh form     2026-12-04-cublas-form: cuBLAS's
#       kernel form at 4096^3 B^T (persistent, clusters of two sharing B^T's
#       tile, C through shared memory by TMA, a producer warpgroup) built up
#       on kb's default 128 x 256 persistent tile, at the eight F.linear
#       shapes of M 2048-8192 under 1.0x: + cluster = 2 (-c2), + store =
#       "tma" (-c2tma), + threads = 384 (-c2tma384); ncu (clocks free) of the
#       4096^3 default, its -c2tma384 and cuBLAS's kernel.
#   bash bench/linear_check.sh energy   2026-12-04-cublas-form call 2: energy
#       a launch (bench/energy.py, the board's energy counter) of kb's
#       4096^3 B^T default, the -c2tma384 form, other raster groups, three
#       stages and one block a tile, against F.linear on the same tensors.
# A/B ratios (bench/ab.sh) are variant / base time: with an -old variant,
# above 1 the new default is faster. After call 5 the wide reduce takes only
# K >= 8192, so rules/warm's lf-{plain,relu}-512x4096x4096 and
# lf-swish-512x4096x6144 now build their old default as the new one.
# Then on the GPU machine (carry build/bin and build/gpu): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "fused|rules|cluster|warm|c2|form|energy"
# The programs (NAME.mlir) and the variants (build/gpu/variants.txt: program,
# variant name, config, tab-separated).
python3 - "$mode" <<'PY'
import sys
sys.path.insert(0, "bench")
import shapes
from gpu_call import P, fixed, prog, variant, write_variants
mode = sys.argv[1]
RED, KER = 'block = [128, 256, 32], split = 2, reduce = "cluster"', 'block = [128, 256, 32], split = 2, reduce = "kernel"'
C2 = "block = [128, 128, 32], cluster = 2"
if mode == "fused":
    for m, n, k, e in [(512, 4096, 4096, "relu"), (512, 4096, 4096, "gelu"), (512, 4096, 4096, "swish"),
                       (512, 4096, 4096, "plain"), (512, 4096, 11008, "relu"), (512, 4096, 16384, "gelu"),
                       (512, 11008, 4096, "swish"), (512, 13824, 5120, "relu"), (512, 5120, 13824, "gelu"),
                       (512, 16384, 4096, "relu"), (1024, 4096, 4096, "gelu"), (1024, 11008, 4096, "relu"),
                       (1024, 4096, 16384, "swish"), (2048, 11008, 4096, "gelu"), (4096, 4096, 4096, "swish"),
                       (4096, 16384, 4096, "relu")]:
        name = prog(m, n, k, e)
        if (m, n) == (512, 4096):
            variant(name, "v128x256s2red", RED)
            variant(name, "v128x256s2ker", KER)
        elif (m, n) == (512, 11008):
            variant(name, "v128x192s1", "block = [128, 192, 32]")
elif mode in ("rules", "warm"):
    for m, n, k, e, old in [
            # waves: 128 x 192 (old: 128 x 256)
            (1024, 5120, 13824, "relu", 256), (1536, 4096, 4096, "plain", 256), (768, 8192, 4096, "relu", 256),
            (2048, 3072, 4096, "plain", 256), (384, 14336, 4096, "gelu", 256), (640, 8192, 4096, "swish", 256),
            (512, 11008, 4096, "swish", 256),
            # wide reduce: 128 x 256 in two chunks summed in a cluster (old: 128 x 128)
            (256, 8192, 8192, "plain", 128), (384, 5120, 8192, "relu", 128), (512, 4096, 8192, "plain", 128),
            (512, 4096, 6144, "swish", 128), (512, 4096, 4096, "relu", 128), (512, 4096, 4096, "plain", 128)]:
        name = prog(m, n, k, e)
        variant(name, f"v128x{old}s1old", f"block = [128, {old}, 32]")
        if mode == "warm" and (m, n, k) == (512, 4096, 4096):
            variant(name, "v128x128s1c2", C2)
    name = "shape-odd-3000x3000x3001-bt-sm90a"
    open(f"{P}/{name}.mlir", "w").write(shapes.program(3000, 3000, 3001, 1, True))
    variant(name, "v128x256s1old", "block = [128, 256, 32]")
elif mode == "c2":
    for m, n, k, e in [(512, 4096, 5120, "plain"), (512, 4096, 6144, "gelu"), (384, 5120, 4096, "relu"),
                       (256, 8192, 4096, "plain"), (1024, 2048, 4096, "swish"), (768, 2816, 4096, "relu"),
                       (512, 4096, 3072, "plain"), (1024, 2048, 8192, "plain"), (512, 4096, 4096, "swish")]:
        variant(prog(m, n, k, e), "v128x128s1c2", C2)
elif mode == "form":
    for m, n, k in [(2048, 4096, 4096), (4096, 4096, 4096), (4096, 5120, 13824), (4096, 13824, 5120),
                    (2048, 8192, 28672), (2048, 28672, 8192), (4096, 8192, 8192), (8192, 8192, 8192)]:
        name = prog(m, n, k, "plain")
        variant(name, "{tile}c2", "{default}, cluster = 2")
        variant(name, "{tile}c2tma", '{default}, cluster = 2, store = "tma"')
        variant(name, "{tile}c2tma384", '{default}, cluster = 2, store = "tma", threads = 384')
    # For the sanitizers: the whole form with edges in N and K, 4 persistent
    # blocks over 16 tiles.
    fixed("c2tma384-512x1000x200", 512, 1000, 200, True,
          'block = [128, 256, 32], cluster = 2, store = "tma", threads = 384, grid = 4', "plain", "lf")
elif mode == "energy":
    name = prog(4096, 4096, 4096, "plain")
    variant(name, "{tile}c2tma384", '{default}, cluster = 2, store = "tma", threads = 384')
    variant(name, "{tile}r8", "{default}, raster = 8")
    variant(name, "{tile}r32", "{default}, raster = 32")
    variant(name, "{tile}st3", "{default}, stages = 3")
    variant(name, "{tile}blocks", "{block}, raster = 16")
else:
    for m, n, k, e in [(512, 4096, 4096, "plain"), (512, 4096, 4096, "relu"), (512, 4096, 16384, "gelu"),
                       (1024, 5120, 13824, "relu")]:
        name = prog(m, n, k, e)
        if m == 512:
            variant(name, "v128x128s1c2", C2)
            variant(name, "v128x128s1old", "block = [128, 128, 32]")
        else:
            variant(name, "v128x192s1c2", "block = [128, 192, 32], cluster = 2")
            variant(name, "v128x256s1c2", "block = [128, 256, 32], cluster = 2")
write_variants()
PY
gpu_call_build
cp bench/peer_mm.py bench/ncu_summary.py bench/torch_peer.py build/gpu/
# The call: a header, then the mode's steps.
{
  gpu_call_header
  cat <<'SH'
mkdir -p $OUT/ncu
SH
  # ncu of kb's 512x4096x4096 kernels (names in $KBN) and cuBLAS's.
  ncu_step() {
    cat <<SH
S="$1 --page raw --csv"
for n in $2; do
  timeout 60 ncu \$S -k regex:matmul --launch-skip 20 --launch-count 3 build/bin/kb-run --no-baselines -q --min-ms 5 build/gpu/bundles/\$n > \$OUT/ncu/kb-\$n.csv 2> \$OUT/ncu/kb-\$n.err
done
timeout 60 ncu \$S -k regex:'gemm|sm90' --launch-skip 20 --launch-count 3 python3 build/gpu/peer_mm.py 512x4096x4096t 40 > \$OUT/ncu/cublas-512x4096x4096t.csv 2> \$OUT/ncu/cublas-512x4096x4096t.err
python3 build/gpu/ncu_summary.py \$OUT/ncu stalled > \$OUT/ncu-summary.txt 2>&1
echo "ncu done at \$(( \$(date +%s) - start )) s"
SH
  }
  # gpu-check.sh over the defaults (checked, cuBLAS's routes, PyTorch's
  # peers, determinism), sanitizers on the bundles named.
  check_step() {
    cat <<SH
SAN="$2"
KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \\
  KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \\
  KB_ONLY='$1' KB_SKIP='-v128x' KB_TORCH_PEER='sm90a\$' \\
  KB_MEMCHECK_EXTRA="\$SAN" KB_RACECHECK="\$SAN" KB_SYNCCHECK="\$SAN" \\
  OUT=\$OUT/check timeout 330 bash scripts/gpu-check.sh > \$OUT/check_log.txt 2>&1
echo "gpu-check exit \$? at \$(( \$(date +%s) - start )) s"
SH
  }
  ab_step() {
    cat <<SH
KB_AB_ARGS='$2' KB_AB_REPS=$3 KB_AB_MS=60 timeout \$(( 570 - \$(date +%s) + start )) bash bench/ab.sh $1 > \$OUT/ab_log.txt 2>&1
echo "ab exit \$? at \$(( \$(date +%s) - start )) s"
tail -n 24 \$OUT/ab_log.txt
SH
  }
  case "$mode" in
    fused)
      check_step '^lf-' 'lf-relu-512x4096x4096-v128x256s2red-sm90a lf-gelu-512x4096x16384-v128x256s2red-sm90a'
      ab_step '$(ls -d build/gpu/bundles/lf-*-512x*/)' '' 4 ;;
    rules)
      stalls=$(for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait \
        dispatch_stall selected lg_throttle no_instruction; do printf 'smsp__average_warp_latency_issue_stalled_%s,' "$r"; done)
      ncu_step "--section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats --section WarpStateStats --metrics ${stalls%,}" \
        'lf-plain-512x4096x4096-sm90a lf-plain-512x4096x4096-v128x128s1old-sm90a'
      check_step '^(lf-|shape-)' 'lf-swish-512x4096x6144-sm90a lf-relu-384x5120x8192-sm90a'
      ab_step 'build/gpu/bundles/*/' '' 4 ;;
    cluster)
      ab_step 'build/gpu/bundles/*/' '' 4
      ncu_step '--clock-control none --section SpeedOfLight --section LaunchStats --metrics gpc__cycles_elapsed.max,gpc__cycles_elapsed.avg.per_second,sm__cycles_active.avg' \
        'lf-plain-512x4096x4096-sm90a lf-plain-512x4096x4096-v128x128s1old-sm90a lf-plain-512x4096x4096-v128x128s1c2-sm90a' ;;
    c2)
      check_step '^lf-' 'lf-relu-768x2816x4096-v128x128s1c2-sm90a'
      ab_step 'build/gpu/bundles/*/' '' 4
      echo 'mv $OUT/ab_log.txt $OUT/ab_flushed_log.txt; mv $OUT/ab $OUT/ab_flushed'
      ab_step 'build/gpu/bundles/*/' '--warm-l2' 3 ;;
    form)
      # ncu (clocks free) of kb's 4096^3 default, its -c2tma384 and cuBLAS's
      # kernel; then the checks and the A/B.
      cat <<'SH'
S="--clock-control none --section SpeedOfLight --section LaunchStats --metrics lts__t_sectors_srcunit_tex_op_read.sum,smsp__inst_executed.sum,sm__cycles_active.avg"
for n in lf-plain-4096x4096x4096-sm90a lf-plain-4096x4096x4096-v128x256s1c2tma384-sm90a; do
  timeout 60 ncu $S -k regex:matmul --launch-skip 20 --launch-count 3 build/bin/kb-run --no-baselines -q --min-ms 20 build/gpu/bundles/$n > $OUT/ncu/kb-$n.txt 2>&1
done
timeout 60 ncu $S -k regex:'gemm|sm90' --launch-skip 20 --launch-count 3 python3 build/gpu/peer_mm.py 4096x4096x4096t 40 > $OUT/ncu/cublas-4096x4096x4096t.txt 2>&1
echo "ncu done at $(( $(date +%s) - start )) s"
export KB_TORCH_NO_COMPILE=.
SH
      check_step '^lf-' 'lf-c2tma384-512x1000x200-sm90a'
      ab_step '$(ls -d build/gpu/bundles/lf-plain-*/)' '' 3 ;;
    energy)
      cat <<'SH'
timeout 400 python3 bench/energy.py $OUT/energy.json $(ls -d build/gpu/bundles/lf-plain-*/) > $OUT/energy_log.txt 2>&1
echo "energy exit $? at $(( $(date +%s) - start )) s"
cat $OUT/energy_log.txt | tail -n 40
SH
      ;;
    warm)
      ab_step 'build/gpu/bundles/*/' '--warm-l2' 3
      cat <<'SH'
KB_PEER_WARM_L2=1 timeout 200 python3 build/gpu/torch_peer.py $OUT/torch_peer_warm.json $(ls -d build/gpu/bundles/*/ | grep -v -- '-v128x') > $OUT/torch_peer_log.txt 2>&1
echo "peers exit $? at $(( $(date +%s) - start )) s"
SH
      ;;
  esac
  echo '(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)'
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
echo "built ($mode): $(ls build/gpu/bundles | wc -l) bundles"
