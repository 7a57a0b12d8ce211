#!/usr/bin/env bash
# Builds one GPU call for the B^T tile widths 160 and 224 (wgmma N = 160 /
# 224 beside kb-tile's 128, 192 and 256; bench/results/2026-12-03-width).
# The waves model (TileWgmma.cpp, defaultWgmmaTile): a grid costs its waves of
# tiles times a tile's time (its width over tileEfficiency); where 128 x 256
# or 128 x 192 leaves the last wave part empty, a width between them may
# fill it (1024 x 5120: 216 tiles of 128 x 192, 1.64 waves; 256 of 128 x
# 160, 1.94 waves; predicted 11% faster). Usage:
#   bash bench/width_check.sh first   call 1: stream-K's correctness set
#       rechecked (gpu_call.streamk_programs; its lowering changed after its
#       last run), hand-set 128 x 160 / 128 x 224 tiles with edges checked
#       and sanitized (wd-*), and A/B of the widths (-v128x160s1,
#       -v128x224s1, with grid = 132 -v...g132) against kb's default on 10
#       nn.Linear programs the model moves, L2 flushed; the defaults' peers.
#   bash bench/width_check.sh rule    call 2: kb-tile's width rule out of
#       sample: programs not in call 1, each against its old default set by
#       hand (-v128x<old>s1old), L2 flushed then back to back; peers.
#       Also the producer warpgroup (-v...w384: threads = 384 against kb's
#       default, the producer warp alone; call 2 ran when 384 was the
#       default, its variants were threads = 288) and its sanitizer runs.
#   bash bench/width_check.sh peers   call 3: issue #18's nn.Linear and
#       fused targets at kb's defaults against their peers (cuBLAS's routes,
#       eager, F.linear, torch.compile), no A/B, no sanitizers.
# Then on the GPU machine (carry build/bin and build/gpu): bash build/gpu/call.sh.
set -euo pipefail
mode=${1:-}
. "$(dirname "$0")/gpu_call.sh"
gpu_call_start "$mode" "first|rule|peers"
python3 - "$mode" <<'PY'
import sys
sys.path.insert(0, "bench")
from gpu_call import fixed, prog, streamk_programs, variant, write_variants
mode = sys.argv[1]
if mode == "first":
    streamk_programs()
    # The new widths where tiles are cut: edges in M, N and K, persistent
    # grids smaller than the tiles, a fused epilogue.
    fixed("odd-1000x700x1500-bt-160", 1000, 700, 1500, True, "block = [128, 160, 32]", prefix="wd")
    fixed("odd-1000x700x1500-bt-160-g20", 1000, 700, 1500, True, "block = [128, 160, 32], grid = 20", prefix="wd")
    fixed("gelu-999x1000x1500-224", 999, 1000, 1500, True, "block = [128, 224, 32]", "gelu", prefix="wd")
    fixed("odd-1000x1000x1500-bt-224-g7", 1000, 1000, 1500, True, "block = [128, 224, 32], grid = 7", prefix="wd")
    for m, n, k, e, widths in [
            (1024, 5120, 13824, "plain", [160]), (1024, 5120, 13824, "relu", [160]),
            (640, 8192, 4096, "swish", [160]), (1536, 3072, 4096, "plain", [160]),
            (1024, 5120, 5120, "swish", [160]), (2048, 5120, 5120, "gelu", [224, 160]),
            (2048, 5120, 13824, "plain", [224]), (512, 14336, 4096, "plain", [224]),
            (768, 14336, 4096, "relu", [224]), (1024, 14336, 4096, "gelu", [224])]:
        name = prog(m, n, k, e)
        for w in widths:
            variant(name, f"v128x{w}s1", f"block = [128, {w}, 32]")
            if m % 128 == 0:
                variant(name, f"v128x{w}s1g132", f"block = [128, {w}, 32], grid = 132")
elif mode == "peers":
    for m, n, k, e in [
            # F.linear, M 2048-8192, transformer weights
            (2048, 4096, 4096, "plain"), (4096, 4096, 4096, "plain"), (8192, 4096, 4096, "plain"),
            (2048, 3072, 4096, "plain"), (2048, 5120, 13824, "plain"), (4096, 5120, 13824, "plain"),
            (2048, 13824, 5120, "plain"), (4096, 13824, 5120, "plain"), (2048, 8192, 28672, "plain"),
            (2048, 28672, 8192, "plain"), (4096, 8192, 8192, "plain"), (8192, 8192, 8192, "plain"),
            # fused, M 512-4096, weights 4096-16384
            (512, 4096, 4096, "relu"), (768, 8192, 4096, "relu"), (1024, 11008, 4096, "relu"),
            (1024, 5120, 13824, "relu"), (4096, 16384, 4096, "relu"), (2048, 5120, 5120, "gelu"),
            (2048, 11008, 4096, "gelu"), (1024, 14336, 4096, "gelu"), (640, 8192, 4096, "swish"),
            (3072, 4096, 4096, "swish"), (4096, 4096, 4096, "swish")]:
        prog(m, n, k, e)
else:
    # The widths rule out of sample: each program against its old default
    # tile set by hand (the persistent rule decides the grid on both).
    for m, n, k, e, old in [
            (1024, 13824, 5120, "plain", 256), (512, 13824, 5120, "relu", 256),
            (640, 11008, 4096, "gelu", 256), (640, 8192, 8192, "plain", 192),
            (768, 6144, 4096, "swish", 192), (2048, 5120, 5120, "plain", 256)]:
        variant(prog(m, n, k, e), f"v128x{old}s1old", f"block = [128, {old}, 32]")
    # The producer warpgroup (384 threads, setmaxnreg 72 / 216) against the
    # producer warp alone (kb's default, 288 threads) on kb's own tile of
    # each: the width programs of call 1, 128 x 256 and 128 x 128 (pairs)
    # defaults, and fused 128 x 256 kernels that spill at 288 threads (2000
    # x 4096 x 4096 + GELU: 136 bytes; 0 at 384).
    for m, n, k, e in [(1024, 5120, 13824, "plain"), (2048, 5120, 5120, "gelu"),
                       (4096, 4096, 4096, "plain"), (2048, 4096, 4096, "plain"),
                       (2000, 4096, 4096, "gelu"), (3072, 4096, 4096, "swish"),
                       (512, 4096, 4096, "relu"), (768, 14336, 4096, "relu")]:
        # The default's whole config with threads = 384 (-v<BM>x<BN>s1w384).
        variant(prog(m, n, k, e), "{tile}w384", "{default}, threads = 384")
    # Sanitizer cases of the 384-thread form.
    t = "threads = 384"
    fixed("odd-1000x700x1500-bt-384", 1000, 700, 1500, True, "block = [128, 128, 32], " + t, prefix="wd")
    fixed("gelu-999x1000x1500-256", 999, 1000, 1500, True, "block = [128, 256, 32], " + t, "gelu", prefix="wd")
    fixed("odd-1000x1000x1500-bt-224-g7", 1000, 1000, 1500, True, "block = [128, 224, 32], grid = 7, " + t, prefix="wd")
    fixed("relu-1000x1000x1500-128-c2", 1000, 1000, 1500, True, "block = [128, 128, 32], cluster = 2, " + t, "relu", prefix="wd")
    streamk_programs(every=False)
write_variants()
PY
gpu_call_build
cp bench/torch_peer.py build/gpu/
{
  gpu_call_header
  cat <<'SH'
if [ -z "$(ls build/gpu/bundles | grep -E '^(sk|wd)-')" ]; then
  KB_ROUTES=program KB_SKIP_VARIANTS=1 KB_SKIP_NCU=1 KB_SKIP_TORCH_BASELINES=1 \
    KB_SKIP_SAME_HARNESS=1 KB_SKIP_PYTHON=1 KB_SKIP_DIAGNOSE=1 KB_SKIP_TUNE=1 \
    KB_SKIP_SANITIZER=1 KB_TORCH_PEER='^lf-' \
    OUT=$OUT/check timeout 560 bash scripts/gpu-check.sh > $OUT/check_log.txt 2>&1
  echo "gpu-check exit $? at $(( $(date +%s) - start )) s"
  mkdir -p /tmp/peers && tar xzf $OUT/check/results.tgz -C /tmp/peers && python3 bench/peer_ratio.py /tmp/peers
  (cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
  exit 0
fi
SH
  gpu_call_check_ab 'sk-odd-1000x700x1500-bt-sm90a sk-odd-1000x700x1500-sm90a sk-gelu-999x1000x1500-sm90a sk-plain-256x256x16384-bt-sm90a wd-odd-1000x700x1500-bt-160-g20-sm90a wd-gelu-999x1000x1500-224-sm90a wd-odd-1000x1000x1500-bt-224-g7-sm90a wd-odd-1000x700x1500-bt-384-sm90a wd-gelu-999x1000x1500-256-sm90a wd-relu-1000x1000x1500-128-c2-sm90a' \
    '^lf-[a-z]+-[0-9x]+-sm90a$' 570 30
  cat <<'SH'
(cd $OUT && tar czf ../r.tgz . && rm -rf ./* && mv ../r.tgz results.tgz)
SH
} > build/gpu/call.sh
chmod +x build/gpu/call.sh
echo "built ($mode): $(ls build/gpu/bundles | wc -l) bundles"
