#!/usr/bin/env bash
# Compiles the bundles scripts/gpu-diagnose.sh runs on the GPU: one program
# per diagnosis rule that a real kernel can show (docs/kb-run-json.md, "The
# diagnosis"), all from bench/programs.py's generators and kb's own passes,
# into build/diagnose/ (a few MB, ptxas run so that registers and spills are
# known). Carry build/bin and build/diagnose to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/diagnose
rm -rf "$out" && mkdir -p "$out/programs" "$out/bundles"
python3 - "$out/programs" <<'PY'
import os, sys
sys.path.insert(0, "bench")
import programs as p
out = sys.argv[1]
progs = {
    # issue #20's matmul: 16 blocks of 128x256 on 132 SMs, K long
    # (grid_underfills_sms -> split_k); and long K with few tiles as kb
    # tiles it by itself.
    "mm-tf32-512x1024x8192-t128x256-sm90a": p.matmul(512, 1024, 8192, "tf32", config="block = [128, 256, 32]"),
    "mm-tf32-256x512x16384-sm90a": p.matmul(256, 512, 16384, "tf32"),
    # a fused wgmma matmul (read 109% of the mma.sync ceiling in run 3).
    "linear-bias-relu-tf32-2048x4096x4096-sm90a": p.linear(2048, 4096, 4096, "tf32", ("bias", "relu")),
    # 96 blocks on 132 SMs with an epilogue (latency, grid_underfills_sms).
    "mm-bias-gelu-tf32-1000x700x1500-sm90a": p.matmul_bias_gelu(1000, 700, 1500, "tf32"),
    # mma.sync on Hopper (mma_sync_not_wgmma -> mma_unit).
    "mm-tf32-4096-sm90": p.matmul(4096, 4096, 4096, "tf32"),
    # precision tf32 forced onto FFMA (tensor_pipe_idle -> mma_unit).
    "mm-tf32-ffma-4096-sm90": p.matmul(4096, 4096, 4096, "tf32", config='mma = "ffma"'),
    # fp32 IEEE on FFMA: its own unit's ceiling.
    "mm-ieee-4096-sm90": p.matmul(4096, 4096, 4096, "ieee"),
    # a wgmma matmul near its ceiling.
    "mm-tf32-8192-sm90a": p.matmul(8192, 8192, 8192, "tf32"),
    # bias + GELU + dropout, fused and not (intermediates_round_trip -> fusion).
    "bgd-16384x8192-sm90": p.bias_gelu_dropout(16384, 8192),
    # softmax: one pass near copy; online reads twice (two_pass_rows).
    "softmax-8192x32768-sm90": p.softmax(8192, 32768),
    "softmax-online-8192x32768-sm90": p.softmax(8192, 32768, strategy="online"),
    # a tiny program: launch_overhead.
    "softmax-64x1024-sm90": p.softmax(64, 1024),
}
for name, text in progs.items():
    with open(os.path.join(out, name + ".mlir"), "w") as f:
        f.write(text)
PY
for f in "$out"/programs/*.mlir; do
  name=$(basename "$f" .mlir)
  chip=sm_90
  case "$name" in *-sm90a) chip=sm_90a ;; esac
  build/bin/kb-opt "$f" --kb-compile="output=$out/bundles/$name chip=$chip" -o /dev/null
done
build/bin/kb-opt "$out/programs/bgd-16384x8192-sm90.mlir" \
  --kb-compile="output=$out/bundles/bgd-16384x8192-unfused-sm90 chip=sm_90 fuse=false" -o /dev/null
build/bin/kb-run --check "$out"/bundles/*/
du -sh "$out"
