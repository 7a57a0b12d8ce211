#===- kb/bench/hostcost.py - The backend's launch path on the host CPU ---===#
#
# python3 -m kb.bench.hostcost: timeit of the parts of a torch.compile
# piece's call that run on the host without a GPU, for the backend-overhead
# suite's model (kb.models' MLP 256-512-128, its one piece, M = 50: bucket
# 64): finding the call's bundle key (part_mod.bindings and prepare's memo,
# as before 2026-12-07, against KbPiece.lookup's memo of the symbolic
# sizes), padding the inputs (PyTorch on the CPU: zeros and cat), filling a
# kernel's ArgPack, and the graph mode's per-call checks. No kb-opt, no GPU:
# a piece without a bundle. The GPU side is the backend-overhead suite.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import os
import tempfile
import timeit
import warnings


def main() -> int:
    warnings.simplefilter("ignore")
    import torch
    from .. import backend as B
    from .. import models as M
    from .. import piece_graphs as G
    from ..cuda import ArgPack
    from ..partition import partition
    os.environ["KB_OPT"] = os.path.join(tempfile.gettempdir(), "kb-hostcost-no-kb-opt")
    mod = M.MLP(256, 512, 128).eval()
    (gm, ex), = B._capture(mod, [torch.zeros(8, 256)], dynamic_dim0=True)
    p = partition(gm, ex).pieces[0]
    by_name = dict(zip([n.name for n in gm.graph.nodes if n.op == "placeholder"], ex))
    args = [torch.randn(50, 256) if n == "l_x_" else by_name[n] for n in p.inputs]
    with tempfile.TemporaryDirectory() as d:
        kp = B.KbPiece(p, B.Options.make({"cache_dir": d, "buckets": (16, 64)}))
        binds, _ = kp._binds(args)
        kp.prepare(binds)
        kp.lookup(args)
        pack, ptrs = ArgPack(6), [a.data_ptr() for a in args[:6]]
        rows = [("key: bindings + prepare's memo (before)", lambda: kp.prepare(kp._binds(args)[0]), 20000),
                ("key: KbPiece.lookup (after)", lambda: kp.lookup(args), 20000),
                ("pad 50 -> 64 rows (inputs(), CPU torch)", lambda: kp.inputs(args, binds), 5000),
                ("ArgPack.fill, 6 pointers", lambda: pack.fill(ptrs), 20000),
                ("graph mode: why_not_call (CPU: its first test)", lambda: G.why_not_call(args), 20000)]
        print(f"kb.bench.hostcost: {torch.__version__}, MLP 256-512-128 piece at M = 50 (bucket 64)")
        for name, fn, n in rows:
            us = min(timeit.repeat(fn, number=n, repeat=5)) / n * 1e6
            print(f"  {name:48s} {us:7.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
