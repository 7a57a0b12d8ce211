#!/usr/bin/env python3
"""The matmul shape suite of issue #19: the shapes users bring besides large
squares, one tf32 program each, compiled for sm_90a (the names end in
-sm90a, which scripts/build-bench.sh compiles for that chip).

Usage: bench/shapes.py OUT_DIR        writes shape-<class>-<dims>-sm90a.mlir
       bench/shapes.py --list         prints name, class, M, N, K, batch, B layout
       bench/shapes.py --dtype bf16 OUT_DIR (or f16, also with --list)
                                      the 57 shapes only, 16-bit operands and
                                      result (no precision keyword), named
                                      shape-bf16-<class>-<dims>-sm90a.mlir

Classes (the issue's): longk (few output tiles, very long K), skinny (M =
1..128 against nn.Linear weights, B transposed), matvec (N = 1, and M = 1
with a row-major B), smallk (K <= 64, large outputs), batched (batch 8-256,
B row-major and transposed), odd (primes, K % 4 != 0, odd N), medium (fewer
128 x 128 tiles than SMs, K in the thousands), square (large squares: a
regression guard). Each is timed by gpu-check.sh against every
cuBLAS route and PyTorch (bench/peers/torch_peer.py) in the same call, after
kb-run's check."""
import os
import sys

# (class, m, n, k, batch, trans_b)
SHAPES = [
    ("longk", 256, 256, 262144, 1, False),
    ("longk", 128, 128, 1048576, 1, False),
    ("longk", 512, 512, 131072, 1, False),
    ("longk", 256, 1024, 65536, 1, True),
    ("longk", 384, 384, 200000, 1, False),
    ("longk", 192, 160, 300000, 1, True),
    ("skinny", 1, 4096, 4096, 1, True),
    ("skinny", 8, 4096, 4096, 1, True),
    ("skinny", 16, 11008, 4096, 1, True),
    ("skinny", 32, 4096, 11008, 1, True),
    ("skinny", 64, 16384, 4096, 1, True),
    ("skinny", 128, 4096, 4096, 1, True),
    ("skinny", 4, 28672, 8192, 1, True),
    ("skinny", 96, 12288, 4096, 1, True),
    ("matvec", 4096, 1, 4096, 1, True),
    ("matvec", 256, 1, 1048576, 1, True),
    ("matvec", 8192, 1, 8192, 1, False),
    ("matvec", 1, 4096, 4096, 1, False),
    ("matvec", 1, 8192, 8192, 1, False),
    # Run 3 (the gemv kernel): decode shapes (M = 2 and 16 against a 4096^2
    # weight, a Llama-8B MLP's up and down projections at M = 1), a few
    # row-major columns (N = 8), and edges (K % 4 != 0 and odd N: one float
    # a load).
    ("skinny", 2, 4096, 4096, 1, True),
    ("skinny", 16, 4096, 4096, 1, True),
    ("skinny", 1, 14336, 4096, 1, True),
    ("skinny", 1, 4096, 14336, 1, True),
    ("skinny", 3, 4093, 4099, 1, True),
    ("matvec", 4096, 8, 4096, 1, False),
    ("matvec", 1, 4099, 4093, 1, False),
    ("smallk", 16384, 16384, 32, 1, False),
    ("smallk", 8192, 8192, 64, 1, False),
    ("smallk", 32768, 4096, 16, 1, False),
    ("smallk", 65536, 2048, 32, 1, True),
    ("batched", 512, 512, 512, 128, False),
    ("batched", 512, 512, 512, 128, True),
    ("batched", 2048, 2048, 2048, 8, False),
    ("batched", 256, 256, 256, 256, True),
    ("batched", 1024, 1024, 1024, 32, True),
    ("batched", 384, 384, 384, 64, False),
    ("odd", 1009, 1013, 1019, 1, False),
    ("odd", 2003, 2011, 2017, 1, True),
    ("odd", 2048, 2048, 2050, 1, False),
    ("odd", 3000, 3000, 3001, 1, True),
    ("odd", 2048, 2047, 2048, 1, False),
    ("odd", 1000, 700, 1500, 1, False),
    ("odd", 4000, 4000, 4000, 1, False),
    ("odd", 4099, 4093, 4096, 1, True),
    # Medium shapes with fewer output tiles of 128 x 128 than SMs and K in
    # the thousands (added in session 13 after bench/results/2026-12-02-
    # medium measured kb at 0.74-0.91x of PyTorch on six of them).
    ("medium", 768, 768, 2048, 1, False),
    ("medium", 768, 768, 2048, 1, True),
    ("medium", 800, 600, 2500, 1, False),
    ("medium", 900, 800, 1900, 1, True),
    ("medium", 1024, 704, 1504, 1, False),
    ("medium", 1100, 1000, 1100, 1, True),
    ("medium", 1300, 700, 1700, 1, False),
    ("medium", 1500, 500, 3000, 1, True),
    ("square", 2048, 2048, 2048, 1, False),
    ("square", 4096, 4096, 4096, 1, False),
    ("square", 4096, 4096, 4096, 1, True),
    ("square", 6144, 6144, 6144, 1, True),
    ("square", 8192, 8192, 8192, 1, False),
]


# Ablations, timed in the same call: these shapes with `split = 1` by hand
# (kb's config before split-K), named ...-nosplit-sm90a.
NOSPLIT = [
    ("longk", 256, 256, 262144, 1, False),
    ("skinny", 16, 11008, 4096, 1, True),
    ("matvec", 4096, 1, 4096, 1, True),
    ("matvec", 256, 1, 1048576, 1, True),
]

# Ablations: these row-major-B shapes the way kb compiled them before wgmma
# read a row-major B (a kb.transpose in front, the matmul transpose_b),
# written out in the program, named ...-tfront-sm90a.
TFRONT = [
    ("square", 4096, 4096, 4096, 1, False),
    ("batched", 512, 512, 512, 128, False),
    ("batched", 2048, 2048, 2048, 8, False),
    ("longk", 512, 512, 131072, 1, False),
]
# Ablations: the shapes with K % 4 != 0 on mma.sync by hand (kb's unit for
# them before the kb.pad in front of wgmma), named ...-mmasync-sm90a.
MMASYNC = [s for s in SHAPES if s[3] % 4]


# Tile variants (run 5): the same program with a hand-set tile, split and
# stages, to measure what kb-tile's choice for few output tiles should be.
# Named ...-v<BM>x<BN>s<S>[p<stages>]-sm90a. (shape, [(bm, bn, split, stages)])
VARIANTS = [
    (("longk", 512, 512, 131072, 1, False),
     [(256, 128, 16, 0), (128, 128, 8, 0), (128, 256, 8, 0), (256, 128, 8, 0)]),
    (("longk", 384, 384, 200000, 1, False),
     [(128, 128, 10, 0), (64, 128, 10, 0), (192, 128, 25, 0)]),
    (("longk", 256, 256, 262144, 1, False),
     [(256, 128, 64, 0), (128, 128, 32, 0)]),
    (("longk", 256, 1024, 65536, 1, True),
     [(128, 256, 16, 0), (128, 128, 8, 0)]),
    (("longk", 192, 160, 300000, 1, True),
     [(192, 160, 125, 0), (64, 160, 25, 0)]),
    (("skinny", 128, 4096, 4096, 1, True),
     [(128, 64, 2, 0), (128, 32, 1, 0), (128, 128, 4, 0), (128, 64, 2, 6)]),
    (("skinny", 96, 12288, 4096, 1, True),
     [(128, 96, 1, 0), (128, 192, 2, 0)]),
    (("skinny", 16, 11008, 4096, 1, True),
     [(64, 64, 2, 0), (64, 32, 1, 0), (64, 128, 2, 0)]),
    (("skinny", 8, 4096, 4096, 1, True),
     [(64, 32, 2, 0), (64, 64, 4, 8)]),
    (("square", 4096, 4096, 4096, 1, False),
     [(128, 256, 1, 0)]),
    (("longk", 512, 512, 131072, 1, False), [(128, 256, 8, 0)]),
    # Run 8: uneven splits (chunks of ceil(k tiles / S)); the default is
    # 256 x 128 in 22 chunks.
    (("longk", 384, 384, 200000, 1, False), [(128, 128, 14, 0)]),
    # Run 8: a persistent grid (grid = 132: one block an SM walking the
    # output tiles) against kb's default tile, one block a tile.
    (("square", 4096, 4096, 4096, 1, False), [(256, 128, 1, 0, 132)]),
    (("square", 4096, 4096, 4096, 1, True), [(128, 256, 1, 0, 132)]),
    (("square", 8192, 8192, 8192, 1, False), [(256, 128, 1, 0, 132)]),
    (("smallk", 16384, 16384, 32, 1, False), [(256, 128, 1, 0, 132)]),
    (("smallk", 8192, 8192, 64, 1, False), [(256, 128, 1, 0, 132)]),
    (("smallk", 32768, 4096, 16, 1, False), [(256, 128, 1, 0, 132)]),
    (("smallk", 65536, 2048, 32, 1, True), [(128, 256, 1, 0, 132)]),
    (("batched", 2048, 2048, 2048, 8, False), [(256, 128, 1, 0, 132)]),
    (("odd", 4000, 4000, 4000, 1, False), [(256, 128, 1, 0, 132)]),
    # Run 9: B^T's K <= 64 shape gained nothing from the persistent grid
    # at 128 x 256 (0.1932 -> 0.1920 ms); narrower tiles, persistent too.
    (("smallk", 65536, 2048, 32, 1, True), [(128, 128, 1, 0), (128, 192, 1, 0)]),
    # Run 10: B^T's K <= 64 shape at 256 x 128 (four consumer warpgroups);
    # splits of the odd shape (K % 32 != 0, 47 k tiles, kb-tile's 64 x 128
    # in 96 blocks) and wider tiles for skinny 128 rows.
    (("smallk", 65536, 2048, 32, 1, True), [(256, 128, 1, 0)]),
    (("odd", 1000, 700, 1500, 1, False), [(64, 128, 2, 0), (128, 128, 2, 0), (128, 128, 3, 0)]),
    (("skinny", 128, 4096, 4096, 1, True), [(128, 256, 8, 0), (128, 192, 6, 0)]),
    # Run 18: kb-promote-shared-memory's fifth wgmma stage (where it keeps
    # the blocks an SM) against the four these shapes had before.
    (("skinny", 128, 4096, 4096, 1, True), [(128, 128, 4, 4)]),
    (("skinny", 96, 12288, 4096, 1, True), [(128, 192, 2, 4)]),
    (("longk", 192, 160, 300000, 1, True), [(192, 160, 125, 4)]),
    # Run 19: the fifth stage in small grids (wgmmaDefaultStages) and
    # kb-tile's few-tiles model counting it: each changed default's old
    # tile and stages, and the five-stage 64 x 128 for 64 x 16384 x 4096.
    (("odd", 1000, 700, 1500, 1, False), [(256, 128, 4, 4)]),
    (("longk", 128, 128, 1048576, 1, False), [(128, 64, 128, 4)]),
    (("matvec", 4096, 8, 4096, 1, False), [(64, 64, 4, 4)]),
    (("skinny", 64, 16384, 4096, 1, True), [(64, 128, 1, 4), (64, 128, 1, 5)]),
    # Run 20: the few-tiles model with one read of the larger operand in a
    # grid of one wave: 384 x 384 x 200000's old default.
    (("longk", 384, 384, 200000, 1, False), [(256, 128, 22, 4)]),
]
# Session 25 (issue #44): bf16 4096^3 at 0.91x cuBLAS on an H100 with kb's
# default 128 x 256 x 64, 4 stages, persistent grid 132, raster 16
# (-v128x256s1p4g132r16 is that default, timed in the same batch): the
# grid, stages, raster, a 256 x 128 tile of four consumer warpgroups,
# 128 x 128 and stream-K. (shape, tag, config). Since store = "tma" became
# the default of a 16-bit C on a persistent grid (2026-12-07), a variant
# that does not name the store says store = "direct" (_direct), as each was
# measured before.
def _direct(cfg):
    return cfg if "store =" in cfg else cfg + ', store = "direct"'


# A 16-bit variant's whole config: the gemv kernel's tiles (thread = / warp
# =) as they are, wgmma's with direct stores unless the config says (_direct)
# and TMA copies.
def _half(cfg):
    if "thread = [" in cfg or "warp = [" in cfg:
        return cfg + ', mma = "gemv"'
    return _direct(cfg) + ', mma = "wgmma_bf16", copy = "tma"'


HALF_VARIANTS = [
    (("square", 4096, 4096, 4096, 1, tb), tag, _half(cfg))
    for tb, tag, cfg in (
        (False, "-v128x256s1p4g132r16", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 16"),
        (False, "-v128x256s1p4", "block = [128, 256, 64], threads = 288, stages = 4, raster = 16"),
        (False, "-v128x256s1p3g132r16", "block = [128, 256, 64], threads = 288, stages = 3, grid = 132, raster = 16"),
        (False, "-v128x256s1p4g132r8", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8"),
        (False, "-v128x256s1p4g132r32", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 32"),
        (False, "-v256x128s1p4g132r16", "block = [256, 128, 64], threads = 544, stages = 4, grid = 132, raster = 16"),
        (False, "-v128x256s1p4g132stream", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 16, reduce = "stream"'),
        (False, "-v128x128s1p4g132r16", "block = [128, 128, 64], threads = 288, stages = 4, grid = 132, raster = 16"),
        (False, "-v128x128s1p3r16", "block = [128, 128, 64], threads = 288, stages = 3, raster = 16"),
        (True, "-v128x256s1p4g132r16", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 16"),
        (True, "-v128x256s1p4g132stream", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 16, reduce = "stream"'),
        (True, "-v256x128s1p4g132r16", "block = [256, 128, 64], threads = 544, stages = 4, grid = 132, raster = 16"),
        # Clusters (B's tile multicast to the blocks of one column of
        # tiles): pairs in the persistent grid, or plain clusters of 2 / 4.
        (False, "-v128x256s1p4g132r8c2", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, cluster = 2"),
        (False, "-v128x256s1p4r8c2", "block = [128, 256, 64], threads = 288, stages = 4, raster = 8, cluster = 2"),
        (False, "-v128x256s1p4r8c4", "block = [128, 256, 64], threads = 288, stages = 4, raster = 8, cluster = 4"),
        (True, "-v128x256s1p4g132r8c2", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, cluster = 2"),
        (True, "-v128x256s1p4r8c2", "block = [128, 256, 64], threads = 288, stages = 4, raster = 8, cluster = 2"),
        # C through shared memory and TMA stores (store = "tma", 16-bit since
        # 2026-12-07), alone and with the persistent pairs.
        (False, "-v128x256s1p4g132r8t", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, store = "tma"'),
        (False, "-v128x256s1p4g132r8c2t", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, cluster = 2, store = "tma"'),
        (True, "-v128x256s1p4g132r8t", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, store = "tma"'),
        (True, "-v128x256s1p4g132r8c2t", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, cluster = 2, store = "tma"'),
    )
] + [
    # 8192^3: kb's default tile in the persistent grid, alone and in pairs.
    (("square", 8192, 8192, 8192, 1, tb), tag, _half(cfg))
    for tb in (False, True)
    for tag, cfg in (
        ("-v128x256s1p4g132r8", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8"),
        ("-v128x256s1p4g132r8c2", "block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, cluster = 2"),
        ("-v128x256s1p4r8c2", "block = [128, 256, 64], threads = 288, stages = 4, raster = 8, cluster = 2"),
        ("-v128x256s1p4g132r8t", 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 8, store = "tma"'),
    )
] + [
    # The bf16 losses of 2026-12-07 (docs/shapes.md, "bf16 losses,
    # 2026-12-07: why"). longk 192 x 160 x 300000 B^T: the default before
    # the few-tiles model took split lines over more than 128 k tiles (the
    # medium rule's 128 x 128 in 2 chunks, 8 blocks); the default is now
    # 192 x 160 in 115.
    (shape, tag, _half(cfg))
    for shape, tag, cfg in (
        (("longk", 192, 160, 300000, 1, True), "-v128x128s2", "block = [128, 128, 64], split = 2"),
        # medium 768 x 768 x 2048 (both forms of B): the default 64 x 64 in
        # 144 blocks (12 SMs run two), against 72 blocks of 128 x 64 or of
        # 128 x 128 in 2 chunks (the tf32 default's tile and split, without
        # its cluster reduce, which has no 16-bit form) and stream-K.
        (("medium", 768, 768, 2048, 1, False), "-v128x64s1", "block = [128, 64, 64]"),
        (("medium", 768, 768, 2048, 1, False), "-v128x128s2", "block = [128, 128, 64], split = 2"),
        (("medium", 768, 768, 2048, 1, False), "-v128x128s1g132stream", 'block = [128, 128, 64], grid = 132, reduce = "stream"'),
        (("medium", 768, 768, 2048, 1, True), "-v128x64s1", "block = [128, 64, 64]"),
        (("medium", 768, 768, 2048, 1, True), "-v128x128s2", "block = [128, 128, 64], split = 2"),
        (("medium", 768, 768, 2048, 1, True), "-v128x128s1g132stream", 'block = [128, 128, 64], grid = 132, reduce = "stream"'),
        # batched: the persistent 128 x 256 default against one block a
        # tile and 128 x 128 persistent (8 k tiles a tile at K = 512: the
        # epilogue is a larger part of a tile than in tf32's 16); 8 x 2048^3
        # (one block a tile) on the persistent grid.
        (("batched", 512, 512, 512, 128, True), "-v128x256s1p4", "block = [128, 256, 64], stages = 4"),
        (("batched", 512, 512, 512, 128, True), "-v128x128s1g132", "block = [128, 128, 64], grid = 132"),
        (("batched", 512, 512, 512, 128, False), "-v128x256s1p4", "block = [128, 256, 64], stages = 4"),
        (("batched", 2048, 2048, 2048, 8, False), "-v128x256s1p4g132r8", "block = [128, 256, 64], stages = 4, grid = 132, raster = 8"),
        # A batched C through TMA stores (C's 3-D map, since 2026-12-07):
        # 128 x 512^3's default before it (persistent 128 x 256, direct
        # stores; the default bundle now takes the TMA store), 128 x 128
        # persistent with it, and 8 x 2048^3 persistent with it.
        (("batched", 512, 512, 512, 128, True), "-v128x256s1p4g132", "block = [128, 256, 64], stages = 4, grid = 132"),
        (("batched", 512, 512, 512, 128, False), "-v128x256s1p4g132", "block = [128, 256, 64], stages = 4, grid = 132"),
        (("batched", 256, 256, 256, 256, True), "-v128x256s1p4g132", "block = [128, 256, 64], stages = 4, grid = 132"),
        (("batched", 512, 512, 512, 128, True), "-v128x128s1g132t", 'block = [128, 128, 64], grid = 132, store = "tma"'),
        (("batched", 512, 512, 512, 128, False), "-v128x128s1g132t", 'block = [128, 128, 64], grid = 132, store = "tma"'),
        (("batched", 2048, 2048, 2048, 8, False), "-v128x256s1p4g132r8t", 'block = [128, 256, 64], stages = 4, grid = 132, raster = 8, store = "tma"'),
        # odd 4000^3: edges keep the persistent grid (and so the TMA store)
        # off, a rule from a tf32 sweep; in 16 bits with a row-major B it
        # spills nothing (23 random edge shapes, 159-168 registers).
        (("odd", 4000, 4000, 4000, 1, False), "-v128x256s1p4g132r16", "block = [128, 256, 64], stages = 4, grid = 132, raster = 16"),
        (("odd", 4000, 4000, 4000, 1, False), "-v128x256s1p4g132r16t", 'block = [128, 256, 64], stages = 4, grid = 132, raster = 16, store = "tma"'),
        # Call 1 of 2026-12-07 (session 28): skinny 128 x 4096 x 4096 B^T at
        # 0.70x (the default 64 x 64, 128 blocks of one consumer warpgroup,
        # 32 FLOP a byte of shared memory filled) against 128-row tiles
        # split along K; square 2048^3 at 0.82x (128 x 256 in 128 blocks, a
        # direct store: the persistent grid, and with it the TMA store, is
        # off below one wave) against the persistent grid.
        (("skinny", 128, 4096, 4096, 1, True), "-v128x128s4", "block = [128, 128, 64], split = 4"),
        (("skinny", 128, 4096, 4096, 1, True), "-v128x128s2", "block = [128, 128, 64], split = 2"),
        (("skinny", 128, 4096, 4096, 1, True), "-v128x64s2", "block = [128, 64, 64], split = 2"),
        (("skinny", 128, 4096, 4096, 1, True), "-v128x64s1", "block = [128, 64, 64]"),
        (("square", 2048, 2048, 2048, 1, False), "-v128x256s1p4g132r8", "block = [128, 256, 64], stages = 4, grid = 132, raster = 8"),
        (("square", 2048, 2048, 2048, 1, False), "-v128x256s1p4g132r8t", 'block = [128, 256, 64], stages = 4, grid = 132, raster = 8, store = "tma"'),
        (("square", 2048, 2048, 2048, 1, False), "-v128x128s1p4g132r8", "block = [128, 128, 64], stages = 4, grid = 132, raster = 8"),
        (("square", 2048, 2048, 2048, 1, False), "-v128x128s1p4", "block = [128, 128, 64], stages = 4"),
    # matvec 256 x 1 x 2^20 B^T (gemv, 4 rows a block, BK 512): kb-tile's
    # gemv counted a vector of 4 elements as 16 bytes, 8 in 16 bits, and
    # split it in 8 chunks; it counts bytes now and takes 16. The old
    # default (-v4x1s8k512p2), and twice the BK (the f32 bytes a k tile).
    (("matvec", 256, 1, 1048576, 1, True), "-v4x1s8k512p2", "block = [4, 1, 512], warp = [1, 1], split = 8, stages = 2"),
    (("matvec", 256, 1, 1048576, 1, True), "-v4x1s8k1024p2", "block = [4, 1, 1024], warp = [1, 1], split = 8, stages = 2"),
    (("matvec", 256, 1, 1048576, 1, True), "-v4x1s16k1024p2", "block = [4, 1, 1024], warp = [1, 1], split = 16, stages = 2"),
    # matvec 1 x 4099 x 4093 (row-major B, N odd: one column a thread,
    # 2-byte loads, 16 rows of K a thread in flight; 0.75x): 32 rows in
    # flight, and split in 2 or 4 (two or four blocks an SM).
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s1k512r32", "block = [1, 32, 512], thread = [1, 1, 32], stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s2k256r16", "block = [1, 32, 256], thread = [1, 1, 16], split = 2, stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s2k512r32", "block = [1, 32, 512], thread = [1, 1, 32], split = 2, stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s4k256r16", "block = [1, 32, 256], thread = [1, 1, 16], split = 4, stages = 2"),
    # The same with realigned 16-byte loads (thread TN = 8; hand-set until
    # its first GPU check, then kb-tile's default as -v1x32s1k1024r8t8):
    # that; one stage; 16 rows a thread at one stage in blocks of 256
    # threads; 64 columns a block (65 blocks); 256-thread blocks split in 2.
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s1k1024r8t8", "block = [1, 32, 1024], thread = [1, 8, 8], stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s1k1024r8t8p1", "block = [1, 32, 1024], thread = [1, 8, 8], stages = 1"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s1k1024r16t8p1", "block = [1, 32, 1024], thread = [1, 8, 16], stages = 1"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x64s1k512r8t8", "block = [1, 64, 512], thread = [1, 8, 8], stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x32s2k512r8t8", "block = [1, 32, 512], thread = [1, 8, 8], split = 2, stages = 2"),
    # medium 768 x 768 x 2048 (0.73x / B^T 0.77x): 144 blocks of 64 x 64 read
    # 75 MB from L2 (32 k tiles of 16 KB each), 12x the operands; 64 x 128
    # tiles (72 blocks) read 55 MB, and sharing B's tile in clusters of 2 (4)
    # 37 MB (47 MB for 64 x 64 in pairs): all slower (session 29).
    (("medium", 768, 768, 2048, 1, False), "-v64x128s1p4", "block = [64, 128, 64], threads = 160, stages = 4"),
    (("medium", 768, 768, 2048, 1, False), "-v64x128s1p4c2", "block = [64, 128, 64], threads = 160, stages = 4, cluster = 2"),
    (("medium", 768, 768, 2048, 1, True), "-v64x64s1p5c2", "block = [64, 64, 64], threads = 160, stages = 5, cluster = 2"),
    (("medium", 768, 768, 2048, 1, True), "-v64x64s1p5c4", "block = [64, 64, 64], threads = 160, stages = 5, cluster = 4"),
    (("medium", 768, 768, 2048, 1, True), "-v64x128s1p4c2", "block = [64, 128, 64], threads = 160, stages = 4, cluster = 2"),
    # cuBLAS's form (nvjet 64 x 80, 11 stages, 120 blocks: one wave; ncu,
    # session 29): B^T tiles of 64 x 80 / 64 x 96 at 8 stages.
    (("medium", 768, 768, 2048, 1, True), "-v64x80s1p8", "block = [64, 80, 64], threads = 160, stages = 8"),
    (("medium", 768, 768, 2048, 1, True), "-v64x96s1p8", "block = [64, 96, 64], threads = 160, stages = 8"),
    # 8 x 2048^3 one block a tile (the default until the persistent rule
    # took a batched 16-bit C at any K, session 29).
    (("batched", 2048, 2048, 2048, 8, False), "-v128x256s1p4", "block = [128, 256, 64], stages = 4"),
    # medium 1024 x 704 x 1504 (0.86x; 96 blocks of 64 x 128): B's tile
    # shared by pairs, and 64 x 64 (176 blocks).
    (("medium", 1024, 704, 1504, 1, False), "-v64x128s1p5c2", "block = [64, 128, 64], threads = 160, stages = 5, cluster = 2"),
    (("medium", 1024, 704, 1504, 1, False), "-v64x64s1p5", "block = [64, 64, 64], threads = 160, stages = 5"),
    # A row-major B in boxes of 16 or 32 columns (BN a multiple of 16 or
    # 32, 32- or 64-byte swizzled; session 30): cuBLAS's nvjet 64 x 80 (120
    # blocks, one wave; 11 stages) and 64 x 96 (96 blocks) on 768 x 768 x
    # 2048, and 64 x 96 on 1024 x 704 x 1504 (16 x 8 = 128 blocks, one wave,
    # the last column tile 32 wide).
    (("medium", 768, 768, 2048, 1, False), "-v64x80s1p8", "block = [64, 80, 64], threads = 160, stages = 8"),
    (("medium", 768, 768, 2048, 1, False), "-v64x80s1p10", "block = [64, 80, 64], threads = 160, stages = 10"),
    (("medium", 768, 768, 2048, 1, False), "-v64x80s1p11", "block = [64, 80, 64], threads = 160, stages = 11"),
    (("medium", 768, 768, 2048, 1, False), "-v64x96s1p6", "block = [64, 96, 64], threads = 160, stages = 6"),
    (("medium", 768, 768, 2048, 1, False), "-v64x96s1p8", "block = [64, 96, 64], threads = 160, stages = 8"),
    (("medium", 1024, 704, 1504, 1, False), "-v64x96s1p6", "block = [64, 96, 64], threads = 160, stages = 6"),
    (("medium", 1024, 704, 1504, 1, False), "-v64x96s1p7", "block = [64, 96, 64], threads = 160, stages = 7"),
    (("medium", 1024, 704, 1504, 1, False), "-v64x96s1p8", "block = [64, 96, 64], threads = 160, stages = 8"),
    # operands = "ba" (session 31, swapab: C^T = B^T A^T): the narrow side
    # of the tile moved from B's contiguous columns to A's rows (wgmma's N,
    # any multiple of 8), B's tile in 128-byte boxes of 64 columns as
    # wgmma's A operand (MN-major); one consumer warpgroup per 64 columns and
    # a producer warpgroup. 80 x 64 (10 x 12 = 120 blocks: cuBLAS's 64 x 80
    # with its sides swapped) in 8 and 11 stages and 96 x 64 (96 blocks) on
    # 768 x 768 x 2048; 88 x 64 (12 x 11 = 132 blocks, one whole wave) in 6
    # and 8 stages and 96 x 64 (121) on 1024 x 704 x 1504.
    (("medium", 768, 768, 2048, 1, False), "-v80x64s1p8ba", 'block = [80, 64, 64], threads = 256, stages = 8, operands = "ba"'),
    (("medium", 768, 768, 2048, 1, False), "-v80x64s1p11ba", 'block = [80, 64, 64], threads = 256, stages = 11, operands = "ba"'),
    (("medium", 768, 768, 2048, 1, False), "-v96x64s1p8ba", 'block = [96, 64, 64], threads = 256, stages = 8, operands = "ba"'),
    (("medium", 1024, 704, 1504, 1, False), "-v88x64s1p6ba", 'block = [88, 64, 64], threads = 256, stages = 6, operands = "ba"'),
    (("medium", 1024, 704, 1504, 1, False), "-v88x64s1p8ba", 'block = [88, 64, 64], threads = 256, stages = 8, operands = "ba"'),
    (("medium", 1024, 704, 1504, 1, False), "-v96x64s1p8ba", 'block = [96, 64, 64], threads = 256, stages = 8, operands = "ba"'),
    )
]


# Run 6: kb's defaults before chooseFewTiles (kb-tile's tile, chooseSplitK's
# split), as ablations of the shapes whose default it changed.
OLD_DEFAULTS = [
    (("longk", 256, 256, 262144, 1, False), (64, 64, 16, 0)),
    (("longk", 128, 128, 1048576, 1, False), (64, 64, 64, 0)),
    (("longk", 512, 512, 131072, 1, False), (64, 64, 4, 0)),
    (("longk", 256, 1024, 65536, 1, True), (64, 64, 4, 0)),
    (("longk", 384, 384, 200000, 1, False), (64, 64, 50, 0)),
    (("longk", 192, 160, 300000, 1, True), (64, 64, 375, 0)),
    (("skinny", 8, 4096, 4096, 1, True), (64, 64, 4, 0)),
    (("skinny", 16, 11008, 4096, 1, True), (64, 64, 1, 0)),
    (("skinny", 32, 4096, 11008, 1, True), (64, 64, 4, 0)),
    (("skinny", 64, 16384, 4096, 1, True), (64, 128, 1, 0)),
    (("skinny", 128, 4096, 4096, 1, True), (64, 64, 1, 0)),
    (("skinny", 96, 12288, 4096, 1, True), (128, 64, 1, 0)),
    (("skinny", 16, 4096, 4096, 1, True), (64, 64, 4, 0)),
]


# Run 10: gemv tiles set by hand (kb-tile's defaults: 4 warps a block, four
# 16-byte weight loads in flight a lane, BK = 512; a row-major B: 512
# columns a block, 8 rows of K a k tile, split 64): more loads in flight a
# lane (BK), more warps a block. (shape, tag, config); tags keep the -v..s..
# form gpu-check.sh runs as variants.
GEMV_VARIANTS = [
    (("skinny", 1, 4096, 4096, 1, True), "-v1x4s1k1024", "block = [1, 4, 1024], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 4096, 1, True), "-v1x4s1k2048", "block = [1, 4, 2048], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 4096, 1, True), "-v1x8s1k512", "block = [1, 8, 512], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 4096, 1, True), "-v1x2s1k1024", "block = [1, 2, 1024], warp = [1, 1], stages = 1"),
    (("matvec", 4096, 1, 4096, 1, True), "-v4x1s1k1024", "block = [4, 1, 1024], warp = [1, 1], stages = 1"),
    (("matvec", 4096, 1, 4096, 1, True), "-v4x1s1k2048", "block = [4, 1, 2048], warp = [1, 1], stages = 1"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s64k16", "block = [1, 512, 16], thread = [1, 4], split = 64, stages = 1"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s32k16", "block = [1, 512, 16], thread = [1, 4], split = 32, stages = 1"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x256s64k8", "block = [1, 256, 8], thread = [1, 4], split = 64, stages = 1"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s128k8", "block = [1, 512, 8], thread = [1, 4], split = 128, stages = 1"),
    # Session 7: with the sum's grid fixed (run 12), more rows in flight a
    # thread (BK 32) and a longer split, not yet timed.
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s64k32", "block = [1, 512, 32], thread = [1, 4], split = 64, stages = 1"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s128k16", "block = [1, 512, 16], thread = [1, 4], split = 128, stages = 1"),
    (("skinny", 4, 28672, 8192, 1, True), "-v4x4s1k1024", "block = [4, 4, 1024], warp = [4, 1], stages = 1"),
    # Run 11: BK = 1024 became the default for one row or column; the old
    # BK = 512 as the ablation, for every shape the change moved.
    (("skinny", 1, 4096, 4096, 1, True), "-v1x4s1k512", "block = [1, 4, 512], warp = [1, 1], stages = 1"),
    (("skinny", 1, 14336, 4096, 1, True), "-v1x4s1k512", "block = [1, 4, 512], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 14336, 1, True), "-v1x4s1k512", "block = [1, 4, 512], warp = [1, 1], stages = 1"),
    (("matvec", 4096, 1, 4096, 1, True), "-v4x1s1k512", "block = [4, 1, 512], warp = [1, 1], stages = 1"),
    (("matvec", 256, 1, 1048576, 1, True), "-v4x1s16k512", "block = [4, 1, 512], warp = [1, 1], split = 16, stages = 1"),
    (("matvec", 8192, 1, 8192, 1, False), "-v4x1s1k512", "block = [4, 1, 512], warp = [1, 1], stages = 1"),
    # The few-tiles model for K % 32 != 0 (1000 x 700 x 1500): the old
    # lines-split tile as the ablation; B^T (kb-tile: 128 x 192 in 4).
    (("odd", 1000, 700, 1500, 1, False), "-v64x128s1", 'block = [64, 128, 32], copy = "tma"'),
    (("odd", 1000, 700, 1500, 1, True), "-v64x128s1", 'block = [64, 128, 32], copy = "tma"'),
    (("odd", 1000, 700, 1500, 1, True), "-v128x192s4", 'block = [128, 192, 32], copy = "tma", split = 4'),
    (("odd", 1000, 700, 1500, 1, True), "-v128x128s2", 'block = [128, 128, 32], copy = "tma", split = 2'),
    # Session 8: the register pipeline (stages = 2, the default since). Each
    # gemv shape's default before it (one stage, the split chooseGemvSplit
    # made for one) as the ablation ("p1"), and two stages at other splits
    # and block widths.
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s64k8p1", "block = [1, 512, 8], thread = [1, 4], split = 64, stages = 1"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s64k8p2", "block = [1, 512, 8], thread = [1, 4], split = 64, stages = 2"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s16k8p2", "block = [1, 512, 8], thread = [1, 4], split = 16, stages = 2"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s32k16p2", "block = [1, 512, 16], thread = [1, 4], split = 32, stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x128s32k16p1", "block = [1, 128, 16], thread = [1, 1], split = 32, stages = 1"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x128s32k16p2", "block = [1, 128, 16], thread = [1, 1], split = 32, stages = 2"),
    (("matvec", 1, 8192, 8192, 1, False), "-v1x512s32k8p1", "block = [1, 512, 8], thread = [1, 4], split = 32, stages = 1"),
    (("matvec", 1, 8192, 8192, 1, False), "-v1x512s32k8p2", "block = [1, 512, 8], thread = [1, 4], split = 32, stages = 2"),
    (("matvec", 256, 1, 1048576, 1, True), "-v4x1s16k512p1", "block = [4, 1, 512], warp = [1, 1], split = 16, stages = 1"),
    (("matvec", 256, 1, 1048576, 1, True), "-v4x1s16k512p2", "block = [4, 1, 512], warp = [1, 1], split = 16, stages = 2"),
    (("matvec", 4096, 1, 4096, 1, True), "-v4x1s1k1024p1", "block = [4, 1, 1024], warp = [1, 1], stages = 1"),
    (("matvec", 4096, 1, 4096, 1, True), "-v8x1s1k1024p2", "block = [8, 1, 1024], warp = [1, 1], stages = 2"),
    (("matvec", 8192, 1, 8192, 1, False), "-v4x1s1k1024p1", "block = [4, 1, 1024], warp = [1, 1], stages = 1"),
    (("skinny", 1, 14336, 4096, 1, True), "-v1x4s1k1024p1", "block = [1, 4, 1024], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 14336, 1, True), "-v1x4s1k1024p1", "block = [1, 4, 1024], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 4096, 1, True), "-v1x4s1k1024p1", "block = [1, 4, 1024], warp = [1, 1], stages = 1"),
    (("skinny", 1, 4096, 4096, 1, True), "-v1x8s1k1024p2", "block = [1, 8, 1024], warp = [1, 1], stages = 2"),
    (("skinny", 2, 4096, 4096, 1, True), "-v2x4s1k512p1", "block = [2, 4, 512], warp = [2, 1], stages = 1"),
    (("skinny", 3, 4093, 4099, 1, True), "-v3x4s1k256p1", "block = [3, 4, 256], warp = [3, 1], stages = 1"),
    (("skinny", 4, 28672, 8192, 1, True), "-v4x4s1k512p1", "block = [4, 4, 512], warp = [4, 1], stages = 1"),
    # Run 15: four rows lost 11% at two stages in run 14 (64 registers
    # against 48): two stages of half the k tile (as many bytes in flight
    # as one stage of 512).
    (("skinny", 4, 28672, 8192, 1, True), "-v4x4s1k256p2", "block = [4, 4, 256], warp = [4, 1], stages = 2"),
    # Run 17: k groups (thread = [M, TN, R], no split) became the default of
    # the row-major matvecs; run 16's defaults (split-K, two stages) as the
    # ablations, and the k groups at 64 and 32 columns a block.
    (("matvec", 1, 4096, 4096, 1, False), "-v1x512s32k8p2", "block = [1, 512, 8], thread = [1, 4], split = 32, stages = 2"),
    (("matvec", 1, 8192, 8192, 1, False), "-v1x512s16k8p2", "block = [1, 512, 8], thread = [1, 4], split = 16, stages = 2"),
    (("matvec", 1, 8192, 8192, 1, False), "-v1x32s1k512p2", "block = [1, 32, 512], thread = [1, 4, 8], stages = 2"),
    (("matvec", 1, 4099, 4093, 1, False), "-v1x128s16k16p2", "block = [1, 128, 16], thread = [1, 1], split = 16, stages = 2"),
    (("matvec", 1, 4096, 4096, 1, False), "-v1x64s1k256p2", "block = [1, 64, 256], thread = [1, 4, 8], stages = 2"),
    # Run 19: four rows with two weight rows a warp (WN = 2: each vector
    # of A read from L1 serves two of B; L1 carries 3 times the DRAM bytes
    # instead of 5).
    (("skinny", 4, 28672, 8192, 1, True), "-v4x8s1k256", "block = [4, 8, 256], warp = [4, 2], stages = 1"),
    (("skinny", 4, 28672, 8192, 1, True), "-v4x8s1k256p2", "block = [4, 8, 256], warp = [4, 2], stages = 2"),
    # Run 20: two weight rows a warp were tried as the default for 3 and 4
    # rows (kept for 4 rows of 16-byte loads only); three rows' old default.
    (("skinny", 3, 4093, 4099, 1, True), "-v3x4s1k256p2", "block = [3, 4, 256], warp = [3, 1], stages = 2"),
]


def variant_name(shape, v):
    bm, bn, s, st, g = (tuple(v) + (0,))[:5]
    tag = f"-v{bm}x{bn}s{s}" + (f"p{st}" if st else "") + (f"g{g}" if g else "")
    return name(*shape).replace("-sm90a", tag + "-sm90a")


def variant_config(v):
    """(BM, BN, split, stages[, grid]): stages and grid 0 for kb's own."""
    bm, bn, s, st, g = (tuple(v) + (0,))[:5]
    cfg = f"block = [{bm}, {bn}, 32], copy = \"tma\", split = {s}"
    return cfg + (f", stages = {st}" if st else "") + (f", grid = {g}" if g else "")

def name(cls, m, n, k, batch, tb, dtype="f32"):
    dims = f"{batch}x{m}x{n}x{k}" if batch > 1 else f"{m}x{n}x{k}"
    dt = "" if dtype == "f32" else dtype + "-"
    return f"shape-{dt}{cls}-{dims}{'-bt' if tb else ''}-sm90a"


def t(shape, dtype="f32"):
    return "tensor<" + "x".join(map(str, shape)) + "x" + dtype + ">"


def program(m, n, k, batch, tb, config=None, tfront=False, dtype="f32"):
    pre = (batch,) if batch > 1 else ()
    cfg = f" {{config = #kb.config<{config}>}}" if config else ""
    if dtype != "f32":
        # A 16-bit matmul has no precision keyword (tensor cores in its
        # type, f32 accumulation); its result in the operands' type.
        at, ct = t(pre + (m, k), dtype), t(pre + (m, n), dtype)
        bt = t(pre + ((n, k) if tb else (k, n)), dtype)
        tbs = " transpose_b" if tb else ""
        return f"""func.func @matmul(%a: {at} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}}) -> ({ct} {{kb.name = "c"}}) {{
  %0 = kb.matmul %a, %b{tbs}{cfg} : {at}, {bt} -> {ct}
  return %0 : {ct}
}}
"""
    at, bt, ct = t(pre + (m, k)), t(pre + ((n, k) if tb else (k, n))), t(pre + (m, n))
    tbs = " transpose_b" if tb else ""
    if tfront:
        # B row-major, transposed by an explicit kb.transpose (K % 32 == 0:
        # no row padding).
        btt = t(pre + (n, k))
        return f"""func.func @matmul(%a: {at} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}}) -> ({ct} {{kb.name = "c"}}) {{
  %t = kb.transpose %b : {bt} -> {btt}
  %0 = kb.matmul %a, %t precision(tf32) transpose_b{cfg} : {at}, {btt} -> {ct}
  return %0 : {ct}
}}
"""
    return f"""func.func @matmul(%a: {at} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}}) -> ({ct} {{kb.name = "c"}}) {{
  %0 = kb.matmul %a, %b precision(tf32){tbs}{cfg} : {at}, {bt} -> {ct}
  return %0 : {ct}
}}
"""


def main():
    args = sys.argv[1:]
    dtype = "f32"
    if len(args) >= 2 and args[0] == "--dtype":
        dtype = args[1]
        args = args[2:]
        if dtype not in ("bf16", "f16"):
            print(f"bench/shapes.py: --dtype takes bf16 or f16, not {dtype}",
                  file=sys.stderr)
            return 1
    if len(args) == 1 and args[0] == "--list":
        for s in SHAPES:
            cls, m, n, k, batch, tb = s
            print(name(*s, dtype=dtype), cls, m, n, k, batch, "bt" if tb else "b")
        return 0
    if len(args) != 1:
        print(__doc__)
        return 1
    out = args[0]
    os.makedirs(out, exist_ok=True)
    if dtype != "f32":
        for s in SHAPES:
            cls, m, n, k, batch, tb = s
            with open(os.path.join(out, name(*s, dtype=dtype) + ".mlir"), "w") as f:
                f.write(program(m, n, k, batch, tb, dtype=dtype))
        for shape, tag, cfg in HALF_VARIANTS:
            nm = name(*shape, dtype=dtype).replace("-sm90a", tag + "-sm90a")
            cfg = cfg.replace("wgmma_bf16", "wgmma_" + dtype)
            with open(os.path.join(out, nm + ".mlir"), "w") as f:
                f.write(program(*shape[1:], config=cfg, dtype=dtype))
        return 0
    for s in SHAPES:
        cls, m, n, k, batch, tb = s
        with open(os.path.join(out, name(*s) + ".mlir"), "w") as f:
            f.write(program(m, n, k, batch, tb))
    for s in NOSPLIT:
        cls, m, n, k, batch, tb = s
        nm = name(*s).replace("-sm90a", "-nosplit-sm90a")
        with open(os.path.join(out, nm + ".mlir"), "w") as f:
            f.write(program(m, n, k, batch, tb, config="split = 1"))
    for s in TFRONT:
        cls, m, n, k, batch, tb = s
        assert not tb and k % 32 == 0
        nm = name(*s).replace("-sm90a", "-tfront-sm90a")
        with open(os.path.join(out, nm + ".mlir"), "w") as f:
            f.write(program(m, n, k, batch, tb, tfront=True))
    for s in MMASYNC:
        nm = name(*s).replace("-sm90a", "-mmasync-sm90a")
        with open(os.path.join(out, nm + ".mlir"), "w") as f:
            f.write(program(*s[1:], config='mma = "mma_sync_tf32"'))
    for shape, v in OLD_DEFAULTS:
        with open(os.path.join(out, variant_name(shape, v) + ".mlir"), "w") as f:
            f.write(program(*shape[1:], config=variant_config(v)))
    for shape, tag, cfg in GEMV_VARIANTS:
        nm = name(*shape).replace("-sm90a", tag + "-sm90a")
        with open(os.path.join(out, nm + ".mlir"), "w") as f:
            f.write(program(*shape[1:], config=cfg))
    for shape, vs in VARIANTS:
        for v in vs:
            with open(os.path.join(out, variant_name(shape, v) + ".mlir"), "w") as f:
                f.write(program(*shape[1:], config=variant_config(v)))
    print(f"{len(SHAPES)} shapes and {len(NOSPLIT) + len(TFRONT) + len(MMASYNC)} "
          f"ablations and {sum(len(v) for _, v in VARIANTS)} tile variants "
          f"written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
