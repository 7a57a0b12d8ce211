#===- kb/bench/overhead.py - The kb backend's Python launch cost ----------===#
#
# The suite of kind "backend-overhead" (bench/suites.py): what the
# torch.compile backend's Python path costs a kernel (issue #47: at most 10 us
# over a CUDA-graph replay of the same kernels). For the suite's model (the
# kb.models MLP, one kb piece) at each M of its rows (64, and 50: padded to
# bucket 64), from the bundle cache, it times in one process, each the median
# of 200 wall-clock calls after warm-up (synchronized): the compiled model
# (Dynamo's guards + the stitched graph + KbPiece: bucket, pad, slice), the
# piece alone, the bundle's kb.load callable alone, and a CUDA-graph replay of
# that callable; the model three times: captured whole (the default,
# kb.whole_graph; whole_graph_replays counts its replays), with the pieces'
# own graphs (whole_graph=False, kb.piece_graphs) and with cuda_graphs=False
# (direct launches through kb.load); the piece with and without its graphs. Until 2026-12-07 this was the script
# bench/backend_overhead.py (last at commit 8631282). A dry run checks the
# cache holds every bundle.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Dict, List

from ..ir import KbError
from .models import Entry, build, example, progress

TARGET_US = 10.0  # issue #47: Python's cost a kernel over a graph replay


def options(spec: Dict[str, Any], cache: Path, chip: str, **more) -> Dict[str, Any]:
    return {"cache_dir": str(cache), "chip": chip, "precision": spec.get("precision", "tf32"),
            "buckets": tuple(spec["buckets"]), **more}


def entry(spec: Dict[str, Any], m: int) -> Entry:
    e = Entry(spec["name"], dict(spec["model"]), "f32")
    e.spec["input"] = [m] + list(e.spec["input"][1:])
    return e


def precompile(spec: Dict[str, Any], cache: Path, chip: str) -> Dict[str, Any]:
    """The model's static graph at M = 1 (Dynamo's first call below) and its
    dynamic graph at each bucket."""
    from .. import backend as B
    t0 = time.time()
    progress(f"precompile {spec['name']} (M = 1 and buckets {', '.join(map(str, spec['buckets']))})")
    e = entry(spec, 1)
    keys = B.precompile(build(e), (example(e, zeros=True),), buckets=tuple(spec["buckets"]),
                        **{k: v for k, v in options(spec, cache, chip).items() if k != "buckets"})
    return {"keys": keys, "seconds": round(time.time() - t0, 1)}


def median_us(fn, sync, reps=200) -> float:
    for _ in range(20):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1e6


def compiled(mod, x, spec, cache, chip, dry, graphs: bool, whole: bool = True):
    """The compiled model as a server calls it: Dynamo's static graph at
    M = 1, then (the next call) its dynamic one."""
    import torch
    torch._dynamo.reset()
    fast = torch.compile(mod, backend="kb", options=options(spec, cache, chip, cache_only=True,
                                                            compile_only=dry, cuda_graphs=graphs,
                                                            whole_graph=whole))
    fast(x[:1])
    fast(x)
    return fast


def measure_m(spec: Dict[str, Any], m: int, cache: Path, chip: str, dry: bool) -> Dict[str, Any]:
    import torch
    from .. import backend as B
    from .. import piece_graphs as G
    from ..partition import partition
    dev = "cpu" if dry else "cuda"
    e = entry(spec, m)
    mod, x = build(e, dev), example(e, dev)
    opts = {g: B.Options.make(options(spec, cache, chip, cache_only=True, compile_only=dry, cuda_graphs=g))
            for g in (True, False)}
    row: Dict[str, Any] = {"name": f"{spec['name']} M={m}", "M": m,
                           "bucket": B.bucket_for(m, opts[True].buckets)}
    with torch.no_grad():
        # The piece alone, as the backend runs it (its bundle from the cache),
        # with and without its CUDA graphs.
        (gm, ex), = B._capture(mod, [x], dynamic_dim0=True)
        p = partition(gm, ex).pieces[0]
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        args = [dict(zip(names, ex))[n] for n in p.inputs]
        kp, kp_direct = B.KbPiece(p, opts[True]), B.KbPiece(p, opts[False])
        kp_direct(*args)  # B.CacheMiss where the cache lacks its bundle
        if dry:
            compiled(mod, x, spec, cache, chip, dry, True)
            torch._dynamo.reset()
            row.update(ok=True, status="dry-run")
            return row
        binds, _ = kp_direct._binds(args)
        fn = kp_direct.loaded.get(kp_direct.prepare(binds)[0])
        if fn is None or isinstance(fn, B.Bundle):
            row.update(ok=False, status="fallback", error="no kb bundle ran (see the warning)")
            return row
        ins = kp_direct.inputs(args, binds)
        sync = torch.cuda.synchronize
        # The graph's outputs equal direct launches', twice with other rows
        # (a stale static input would show in the second).
        replays = G.STATS["replays"]
        vary = set(p.bucket.padded) if p.bucket is not None else set()
        for k in range(2):
            call = [torch.randn_like(a) if k and i in vary else a for i, a in enumerate(args)]
            want, got = kp_direct(*call)[0], kp(*call)[0]
            if G.STATS["replays"] == replays:
                why = (kp.graphs.why_not or G.why_not_call([a for a in call if isinstance(a, torch.Tensor)])
                       or "the capture failed (see the warning)")
                row.update(ok=False, status="no graph", error=f"the piece ran no CUDA graph: {why}")
                return row
            err = ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()
            if not err <= 1e-5:  # the same kernels on the same (padded) inputs
                row.update(ok=False, status="wrong", error=f"graph replay differs from direct launches "
                           f"by {err:.3g} of max |y| (call {k + 1})")
                return row
        fast = compiled(mod, x, spec, cache, chip, dry, False)
        t_model_direct = median_us(lambda: fast(x), sync)
        fast = compiled(mod, x, spec, cache, chip, dry, True, whole=False)
        t_model_pieces = median_us(lambda: fast(x), sync)
        from .. import whole_graph as W
        W.KEEP_ARGS = True
        try:
            fast = compiled(mod, x, spec, cache, chip, dry, True)
            before = W.STATS["replays"]
            t_model = median_us(lambda: fast(x), sync)
            whole_replays = W.STATS["replays"] - before
        finally:
            W.KEEP_ARGS = False
        # Where the whole-graph call's time goes: Dynamo in front of kb's
        # WholeGraph call, the call (key, moved inputs), the replay with
        # its input copies and output clones, the bare graph replay.
        wg = next((w for w in list(W.INSTANCES) if w.graphs and w.last_args is not None), None)
        split = {}
        if wg is not None:
            a = wg.last_args
            c = next(iter(wg.graphs.values()))
            split = {"wholegraph_call_us": round(median_us(lambda: wg(*a), sync), 1),
                     "replay_and_clone_us": round(median_us(lambda: c.replay(a), sync), 1),
                     "whole_graph_replay_us": round(median_us(c.graph.replay, sync), 1),
                     "whole_graph_args": len(a), "whole_graph_fills": len(c.fills),
                     "whole_graph_pins": len(c.pins)}
            split["dynamo_us"] = round(t_model - split["wholegraph_call_us"], 1)
            wg.last_args = None
        t_piece = median_us(lambda: kp(*args), sync)
        t_piece_direct = median_us(lambda: kp_direct(*args), sync)
        t_loaded = median_us(lambda: fn(*ins), sync)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            fn(*ins)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            fn(*ins)
        t_graph = median_us(g.replay, sync)
        n = len(fn.kernels)
        per = (t_model - t_graph) / n
        row.update(ok=per <= TARGET_US, status="ok" if per <= TARGET_US else "over target",
                   kernels=n, model_us=round(t_model, 1), model_direct_us=round(t_model_direct, 1),
                   model_piece_graphs_us=round(t_model_pieces, 1), whole_graph_replays=whole_replays,
                   python_us_per_kernel_piece_graphs=round((t_model_pieces - t_graph) / n, 1),
                   kb_piece_us=round(t_piece, 1), kb_piece_direct_us=round(t_piece_direct, 1),
                   kb_load_us=round(t_loaded, 1), graph_replay_us=round(t_graph, 1),
                   python_us_per_kernel=round(per, 1),
                   python_us_per_kernel_direct=round((t_model_direct - t_graph) / n, 1),
                   target_us=TARGET_US, **split)
        if per > TARGET_US:
            row["error"] = f"{per:.1f} us a kernel over the graph replay (target {TARGET_US:.0f})"
        torch._dynamo.reset()
    return row


def block_entries(spec: Dict[str, Any]):
    """The suite's "blocks": models of many kernels (a GPT-2 block, a Llama
    block) at one small, launch-bound shape, each an Entry of its dtype."""
    from .models import Entry as E
    return [E(name, b, b.get("dtype", "f32")) for name, b in spec.get("blocks", {}).items()]


def precompile_blocks(spec: Dict[str, Any], cache: Path, chip: str) -> Dict[str, Any]:
    from .models import precompile as pre
    todo = block_entries(spec)
    return pre(todo, cache, chip)["entries"] if todo else {}


def measure_block(entry, cache: Path, chip: str, dry: bool) -> Dict[str, Any]:
    """A whole model compiled by the kb backend (captured whole: one CUDA
    graph of kb's kernels and PyTorch's between them): its call's median
    time against a bare replay of that graph, over the graph's kernel
    count. Checked against eager first."""
    import torch
    from .. import whole_graph as W
    from .models import TOL, backend_options, build, example, kernel_profile, rel_err
    dev = "cpu" if dry else "cuda"
    row: Dict[str, Any] = {"name": f"{entry.model}/{entry.dtype} {'x'.join(map(str, entry.spec['input']))}",
                           "M": entry.spec["input"][0], "bucket": "-", "block": True}
    mod, x = build(entry, dev), example(entry, dev)
    torch._dynamo.reset()
    fast = torch.compile(mod, backend="kb", options=backend_options(entry, cache, chip, cache_only=True,
                                                                     compile_only=dry))
    with torch.no_grad():
        want = mod(x)
        got = fast(x)
        if dry:
            row.update(ok=True, status="dry-run")
            torch._dynamo.reset()
            return row
        got = fast(x)  # the shape key's second call captures the whole graph
        err, tol = rel_err(got, want), TOL[entry.dtype]
        if not err <= tol:
            row.update(ok=False, status="wrong", error=f"max error {err:.2e} against eager (tolerance {tol:.0e})")
            return row
        sync = torch.cuda.synchronize
        W.KEEP_ARGS = True
        try:
            t_model = median_us(lambda: fast(x), sync)
        finally:
            W.KEEP_ARGS = False
        wg = next((w for w in list(W.INSTANCES) if w.graphs and w.last_args is not None), None)
        if wg is None:
            row.update(ok=False, status="no graph", error="the model was not captured whole (kb.explain says why)")
            return row
        c = next(iter(wg.graphs.values()))
        wg.last_args = None
        t_replay = median_us(c.graph.replay, sync)
        prof = kernel_profile(c.graph.replay, calls=1)
        n = prof.get("launches", 0)
        if n == 0:
            row.update(ok=False, status="error", error="torch.profiler saw no kernel in the graph's replay"
                       + (f" ({prof['error']})" if "error" in prof else ""))
            return row
        per = (t_model - t_replay) / n
        row.update(ok=per <= TARGET_US, status="ok" if per <= TARGET_US else "over target", kernels=n,
                   model_us=round(t_model, 1), graph_replay_us=round(t_replay, 1),
                   python_us_per_kernel=round(per, 1), max_err=err, target_us=TARGET_US)
        if per > TARGET_US:
            row["error"] = f"{per:.1f} us a kernel over the graph replay (target {TARGET_US:.0f})"
    torch._dynamo.reset()
    return row


def measure(spec: Dict[str, Any], cache: Path, chip: str, dry: bool) -> List[Dict[str, Any]]:
    from .. import backend as B
    rows = []
    for i, m in enumerate(spec["rows"], 1):
        progress(f"[{i}/{len(spec['rows'])}] {spec['name']} M={m}" + (" dry run" if dry else ""))
        try:
            r = measure_m(spec, m, cache, chip, dry)
        except B.CacheMiss as e:
            r = {"name": f"{spec['name']} M={m}", "M": m, "ok": False, "status": "missing", "error": str(e)}
        except (KbError, RuntimeError) as e:
            r = {"name": f"{spec['name']} M={m}", "M": m, "ok": False, "status": "error",
                 "error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
        progress(f"[{i}/{len(spec['rows'])}] {r['name']}: {r['status']}"
                 + (f", {r['python_us_per_kernel']} us a kernel over a graph replay"
                    if "python_us_per_kernel" in r else "") + (f" ({r['error'][:160]})" if r.get("error") else ""))
        rows.append(r)
    blocks = block_entries(spec)
    for i, e in enumerate(blocks, 1):
        progress(f"[block {i}/{len(blocks)}] {e.name}" + (" dry run" if dry else ""))
        try:
            r = measure_block(e, cache, chip, dry)
        except B.CacheMiss as err:
            r = {"name": e.name, "ok": False, "status": "missing", "error": str(err)}
        except (KbError, RuntimeError) as err:
            r = {"name": e.name, "ok": False, "status": "error",
                 "error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
        progress(f"[block {i}/{len(blocks)}] {r['name']}: {r['status']}"
                 + (f", {r['python_us_per_kernel']} us a kernel over a graph replay of {r['kernels']}"
                    if "python_us_per_kernel" in r else "") + (f" ({r['error'][:160]})" if r.get("error") else ""))
        rows.append(r)
    return rows


def format_table(rows: List[Dict[str, Any]]) -> str:
    head = ("case", "bucket", "kernels", "model us (piece graphs; direct)", "piece us (direct)", "kb.load us",
            "graph replay us", f"python us / kernel (piece graphs; direct; target {TARGET_US:.0f})")
    lines = [head]
    for r in rows:
        if "python_us_per_kernel" not in r:
            lines.append((r["name"], str(r.get("bucket", "")), r.get("status", "").upper(),
                          r.get("error", "")[:60], "", "", "", ""))
            continue
        if r.get("block"):  # a whole model captured whole: model and replay only
            lines.append((r["name"], "-", str(r["kernels"]), str(r["model_us"]), "-", "-",
                          str(r["graph_replay_us"]), str(r["python_us_per_kernel"])))
            continue
        lines.append((r["name"], str(r["bucket"]), str(r["kernels"]),
                      f"{r['model_us']} ({r.get('model_piece_graphs_us', '-')}; {r['model_direct_us']})",
                      f"{r['kb_piece_us']} ({r['kb_piece_direct_us']})", str(r["kb_load_us"]),
                      str(r["graph_replay_us"]),
                      f"{r['python_us_per_kernel']} ({r.get('python_us_per_kernel_piece_graphs', '-')}; "
                      f"{r['python_us_per_kernel_direct']})"))
    widths = [max(len(str(l[i])) for l in lines) for i in range(len(head))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(l, widths)).rstrip() for l in lines)
