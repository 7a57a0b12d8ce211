#===- bench/backend_overhead.py - the kb backend's Python launch cost ----===#
#
# What the torch.compile backend's Python path costs a kernel (issue #47:
# at most 10 us over a CUDA-graph replay of the same kernels). For the
# kb.models MLP (one kb piece) at M = 64 and M = 50 (padded to bucket 64),
# from the bundle cache python/tests/gpu/test_backend_gpu.py --prepare
# fills, it times in one process, each as the median of 200 calls after
# warm-up: the compiled model (Dynamo guards + stitched graph + KbPiece:
# bucket, pad, slice), the bundle's kb.load callable alone, and a CUDA
# graph replay of that callable. Prints one JSON line per M.
#
#   KB_BACKEND_CACHE=build/pybundles/backend-cache python3 bench/backend_overhead.py
#
#===----------------------------------------------------------------------===#
import json
import os
import sys
import time
from pathlib import Path

root = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(root / "python"), str(root / "python" / "tests" / "gpu")]

import torch  # noqa: E402

import kb.backend as B  # noqa: E402
import test_backend_gpu as T  # noqa: E402

DEV = "cuda" if torch.cuda.is_available() else "cpu"  # cpu: a dry run of the script's setup


def median_us(fn, reps=200):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e6


def main():
    from kb.partition import partition
    cache = os.environ.get("KB_BACKEND_CACHE", "build/pybundles/backend-cache")
    opts = B.Options.make({"cache_dir": cache})
    _, mod, _, _ = T.models(torch.float32)[0]
    mod = mod.to(DEV)
    with torch.no_grad():
        for m in (64, 50):
            x = torch.randn(m, T.DIM, device=DEV)
            # The piece alone, as the backend runs it (its bundle from the cache).
            (gm, ex), = B._capture(mod, [x], dynamic_dim0=True)
            p = partition(gm, ex).pieces[0]
            names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
            args = [dict(zip(names, ex))[n] for n in p.inputs]
            kp = B.KbPiece(p, opts)
            kp(*args)
            binds, _ = kp._binds(args)
            fn = kp.loaded.get(kp.prepare(binds)[0])
            if fn is None or isinstance(fn, B.Bundle):
                print(json.dumps({"M": m, "error": "no kb bundle ran (see the warning)"}))
                continue
            ins = kp.inputs(args, binds)
            torch._dynamo.reset()
            fast = torch.compile(mod, backend="kb", options={"cache_dir": cache})
            fast(x[:1])  # Dynamo's static graph; the next call makes the dynamic one
            fast(x)
            n_kernels = len(fn.kernels)
            t_model = median_us(lambda: fast(x))
            t_piece = median_us(lambda: kp(*args))
            t_loaded = median_us(lambda: fn(*ins))
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                fn(*ins)
            torch.cuda.synchronize()
            with torch.cuda.graph(g):
                fn(*ins)
            t_graph = median_us(g.replay)
            print(json.dumps({"M": m, "bucket": B.bucket_for(m, opts.buckets), "kernels": n_kernels,
                              "model_us": round(t_model, 1), "kb_piece_us": round(t_piece, 1),
                              "kb_load_us": round(t_loaded, 1), "graph_replay_us": round(t_graph, 1),
                              "python_us_per_kernel": round((t_model - t_graph) / n_kernels, 1),
                              "device": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
