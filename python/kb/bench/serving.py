#===- kb/bench/serving.py - A serving loop over M through the kb backend -===#
#
# The suites of kind "serving" (bench/suites.py: serving, serving-tiny):
# issue #47's "a serving loop over M = 1..512 with one compile a bucket: no
# more than 8 compiles, each bucket within 5% of a bundle compiled for its
# exact shape". For each model x dtype of the suite, kb.models' module with
# its leading dim M (rows for the MLP, the batch for the GPT-2 block) varying:
#   the serving loop: torch.compile(model, backend="kb") (kb.backend's
#     kb_backend, wrapped only to keep what it returns: the pieces' cache
#     keys are counted) called once at every M of 1..max_m in a seeded
#     shuffled order (what a server sees), each output against eager.
#     Dynamo compiles a static graph at the first M, a dynamic one at the
#     second (served from the buckets, kb.backend.DEFAULT_BUCKETS) and a
#     static one at M = 1; "compiles" is the shapes kb compiled a bundle of
#     each piece for (a graph's most keys of one piece, summed over graphs;
#     target <= 8);
#   the samples: for each bucket its bottom, middle and top M (17, 24, 32
#     for bucket 32; the first bucket's bottom 2, M = 1 being a static
#     graph), the serving model's call timed (its whole graph captured
#     afresh for each M, so kb.whole_graph's 8-key limit does not pick which
#     sample replays) against the same model compiled for that exact M
#     (buckets (), a static graph and its own bundle), each the median of
#     CUDA events (problems.Timer); the ratio per M and the worst a bucket
#     (target <= 1.05).
# Two halves, as the models suites: precompile (kb-opt, no GPU) runs the same
# loop and the exact compiles on meta tensors with compile_only (no numbers
# computed, every bundle compiled into the cache: the build half's compile
# count); measure (the GPU machine, no MLIR) with cache_only: a bundle missing
# from the cache is an error row, never compiled. A dry run (--dry-run) is
# the measure half on meta tensors, untimed: every bundle found, each output's
# shape and dtype eager's (on the CPU PyTorch would run every piece, so
# values would compare PyTorch with itself).
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..ir import KbError
from . import models as M
from .models import Budget, Entry, progress, rel_err

TARGET_COMPILES = 8  # issue #47
TARGET_RATIO = 1.05  # bucketed time / exact time
SAMPLES = ("bottom", "middle", "top")


@dataclass
class Plan:
    """One entry's serving loop and samples."""
    entry: Entry
    order: List[int]  # every M of 1..max_m once
    buckets: Tuple[int, ...]
    samples: List[Tuple[int, int]]  # (bucket, M), by bucket then M

    @property
    def static(self) -> List[int]:
        """The M Dynamo serves from a static graph: the first call's, and 1
        (Dynamo specializes a size of 1)."""
        return sorted({self.order[0], 1})


def samples(buckets, max_m: int, which=SAMPLES) -> List[Tuple[int, int]]:
    """(bucket, M) for each bucket that serves an M of 2..max_m: its bottom
    (the bucket below + 1; 2 for the first, M = 1 being a static graph),
    middle and top (the bucket, or max_m), as `which` names them."""
    bad = [w for w in which if w not in SAMPLES]
    if bad:
        raise KbError(f"bench/suites.py: sample {bad[0]!r} (known: {', '.join(SAMPLES)})")
    out, prev = [], 1
    for b in sorted(buckets):
        if prev >= max_m:
            break
        top = min(b, max_m)
        at = {"bottom": prev + 1, "middle": (prev + top + 1) // 2, "top": top}
        for m in sorted({at[w] for w in which}):
            out.append((b, m))
        prev = b
    return out


def plan(entry: Entry, spec: Dict[str, Any]) -> Plan:
    """The serving loop and samples of one entry of a serving suite."""
    from .. import backend as B
    max_m = int(spec.get("max_m", 512))
    if max_m < 2:
        raise KbError(f"bench/suites.py: serving max_m {max_m}: a loop needs M 1 and 2 at least")
    buckets = tuple(spec.get("buckets", B.DEFAULT_BUCKETS))
    if max(buckets) < max_m:
        raise KbError(f"bench/suites.py: serving max_m {max_m} is past the largest bucket {max(buckets)}")
    order = list(range(1, max_m + 1))
    random.Random(spec.get("seed", 0)).shuffle(order)
    which = entry.spec.get("samples", spec.get("samples", SAMPLES))  # a model's own, else the suite's
    return Plan(entry, order, buckets, samples(buckets, max_m, which))


def plans(spec: Dict[str, Any], models: Optional[str] = None, dtypes: Optional[str] = None) -> List[Plan]:
    return [plan(e, spec) for e in M.entries(spec, models, dtypes)]


def example(entry: Entry, m: int, device: str):
    """The entry's input at leading dim m (seeded by m)."""
    import torch
    shape, dt = (m,) + tuple(entry.spec["input"][1:]), M.torch_dtype(entry.dtype)
    if device == "meta":
        return torch.empty(shape, dtype=dt, device="meta")
    g = torch.Generator(device=device).manual_seed(m)
    return torch.randn(shape, dtype=dt, device=device, generator=g)


class Counted:
    """A Dynamo backend: kb.backend.kb_backend with these options (what
    backend="kb" runs), keeping each graph it returns, so that the pieces'
    cache keys can be counted."""

    def __init__(self, options: Dict[str, Any]):
        self.options = options
        self.compiled: List[Tuple[Any, Any]] = []  # (what kb_backend returned, its partition)

    def __call__(self, gm, example_inputs):
        from .. import backend as B
        fn = B.kb_backend(gm, example_inputs, options=self.options)
        self.compiled.append((fn, B.PARTITIONS[-1]))
        return fn

    def graphs(self) -> List[Dict[str, Any]]:
        """Per Dynamo graph: static or dynamic, and per piece the keys it
        made (bundles found or compiled, and those kb-opt refused)."""
        from .. import whole_graph as W
        out = []
        for fn, part in self.compiled:
            stitched = fn.direct.__self__ if isinstance(fn, W.WholeGraph) else fn.__self__
            pieces = {name: {"keys": sorted(kp.loaded),
                             "refused": sorted(k for k, v in kp.loaded.items() if v is None)}
                      for name, kp in stitched.kb_pieces.items()}
            out.append({"shapes": "static" if part.symbol is None else "dynamic", "pieces": pieces,
                        "bucketed": sorted(n for n, p in zip(stitched.kb_pieces, part.pieces)
                                           if p.bucket is not None)})
        return out

    def whole_graphs(self):
        from .. import whole_graph as W
        return [fn for fn, _ in self.compiled if isinstance(fn, W.WholeGraph)]


def count(graphs: List[Dict[str, Any]]) -> Dict[str, int]:
    """compiles: the shapes kb compiled the pieces for (a graph's most keys
    of one piece, summed over its graphs); bundles: the keys in all;
    dynamo_graphs: Dynamo's graphs."""
    per = [max((len(p["keys"]) for p in g["pieces"].values()), default=0) for g in graphs]
    return {"dynamo_graphs": len(graphs), "compiles": sum(per),
            "bundles": len({k for g in graphs for p in g["pieces"].values() for k in p["keys"]}),
            "refused": len({k for g in graphs for p in g["pieces"].values() for k in p["refused"]})}


def options(p: Plan, cache: Path, chip: str, buckets=None, **more) -> Dict[str, Any]:
    return M.backend_options(p.entry, cache, chip, buckets=p.buckets if buckets is None else buckets, **more)


def _same_shape(got, want) -> str:
    if tuple(got.shape) != tuple(want.shape) or got.dtype != want.dtype:
        return f"output {tuple(got.shape)} {got.dtype}, eager's {tuple(want.shape)} {want.dtype}"
    return ""


def serve(p: Plan, mod, cache: Path, chip: str, mode: str, dev: str):
    """The serving loop: mode "build" (compile_only, bundles compiled into
    the cache), "dry" (compile_only and cache_only: every bundle found) or
    "gpu" (cache_only, outputs against eager). Returns (its record, the
    compiled model and its Counted; None where a bundle was missing)."""
    import torch
    from .. import backend as B
    torch._dynamo.reset()
    more = {"compile_only": True} if mode == "build" else \
        {"compile_only": mode == "dry", "cache_only": True}
    counted = Counted(options(p, cache, chip, **more))
    fast = torch.compile(mod, backend=counted)
    rec: Dict[str, Any] = {"name": p.entry.name, "model": p.entry.model, "dtype": p.entry.dtype,
                           "class": p.entry.spec["model"], "input": list(p.entry.spec["input"][1:]),
                           "calls": len(p.order), "max_m": max(p.order), "first": p.order[:8],
                           "buckets": list(p.buckets), "static": p.static, "tol": M.TOL[p.entry.dtype]}
    compiles0, stats0, t0 = B.STATS["compiles"], dict(B.STATS), time.time()
    wrong: List[Dict[str, Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stopped, worst = _loop(p, fast, mod, dev, rec, counted, wrong)
    rec["warnings"] = list(dict.fromkeys(str(w.message) for w in caught if str(w.message).startswith("kb:")))[:10]
    if stopped:
        return rec, None, None
    rec["loop_s"] = round(time.time() - t0, 2)
    rec["graphs"] = counted.graphs()
    rec.update(count(rec["graphs"]))
    rec["compiled_here"] = B.STATS["compiles"] - compiles0
    for k in ("kb_calls", "fallback_calls"):
        rec[k] = B.STATS[k] - stats0[k]
    if dev != "meta":
        rec["max_err"], rec["max_err_m"] = worst
    rec["wrong"] = wrong[:20]
    problems = []
    if wrong:
        w = wrong[0]
        problems.append(f"{len(wrong)} M wrong, first M = {w['M']}: "
                        + (w["error"] if "error" in w else f"max error {w['max_err']:.2e} over {rec['tol']:.0e}"))
    if rec["refused"]:
        problems.append(f"{rec['refused']} bundle(s) refused by kb-opt (PyTorch ran those pieces)")
    elif dev == "cuda" and rec["fallback_calls"]:  # a bundle that failed to load, say: the warning
        problems.append(f"PyTorch ran a piece {rec['fallback_calls']} time(s)"
                        + (f": {rec['warnings'][0][:160]}" if rec["warnings"] else ""))
    rec["ok"] = not problems
    rec["meets_compiles"] = rec["compiles"] <= TARGET_COMPILES
    rec["status"] = ({"build": "built", "dry": "dry-run", "gpu": "ok"}[mode]) if rec["ok"] else "wrong"
    if problems:
        rec["error"] = "; ".join(problems)
    return rec, fast, counted


def _loop(p: Plan, fast, mod, dev: str, rec, counted, wrong):
    """serve's calls, every M once, each wrong one appended to `wrong`:
    (stopped, the worst (error, M)); stopped where a bundle was missing
    (`rec` says where)."""
    from .. import backend as B
    worst = (0.0, None)
    for i, m in enumerate(p.order):
        x = example(p.entry, m, dev)
        try:
            got = fast(x)
        except B.CacheMiss as e:
            rec.update(ok=False, status="missing", error=f"M = {m} (call {i + 1}): {e}",
                       graphs=counted.graphs())
            rec["before_it"] = count(rec["graphs"])  # not the loop's count: it stopped
            return True, worst
        want = mod(x)
        if dev == "meta":
            bad = _same_shape(got, want)
            if bad:
                wrong.append({"M": m, "error": bad})
            continue
        err = rel_err(got, want)
        if err > worst[0] or worst[1] is None:
            worst = (err, m)
        if not err <= rec["tol"]:
            wrong.append({"M": m, "max_err": err})
        if (i + 1) % 128 == 0:
            progress(f"  {p.entry.name}: {i + 1} of {len(p.order)} calls, {len(counted.compiled)} graphs")
    return False, worst


def exact(p: Plan, mod, m: int, cache: Path, chip: str, mode: str, dev: str):
    """The model compiled for M = m alone (buckets (), Dynamo's static
    graph): (the compiled model, its Counted, its input); B.CacheMiss where
    cache_only and its bundle is missing."""
    import torch
    torch._dynamo.reset()
    more = {"compile_only": True} if mode == "build" else \
        {"compile_only": mode == "dry", "cache_only": True}
    counted = Counted(options(p, cache, chip, buckets=(), **more))
    fast = torch.compile(mod, backend=counted)
    x = example(p.entry, m, dev)
    fast(x)
    return fast, counted, x


# -- precompile (kb-opt, no GPU) ---------------------------------------------

def precompile(todo: List[Plan], cache: Path, chip: str) -> Dict[str, Any]:
    """Fills `cache` with each entry's serving bundles (the loop on meta
    tensors, compile_only) and each sample's exact bundle; returns what
    precompile.json records."""
    from .. import backend as B
    cache.mkdir(parents=True, exist_ok=True)
    done: Dict[str, Any] = {}
    t_all = time.time()
    for i, p in enumerate(todo, 1):
        e = p.entry
        progress(f"[{i}/{len(todo)}] precompile {e.name}: the serving loop over M 1..{max(p.order)} "
                 f"(first {p.order[0]}), then {len(p.samples)} exact shapes")
        t0 = time.time()
        mod = M.build(e, "meta")
        before = B.STATS["compiles"]
        rec, _, _ = serve(p, mod, cache, chip, "build", "meta")
        keys = {"serving": sorted(keys_of(rec["graphs"]))}
        for _, m in p.samples:
            _, counted, _ = exact(p, mod, m, cache, chip, "build", "meta")
            keys[str(m)] = sorted(keys_of(counted.graphs()))
        done[e.name] = {"serving": {k: rec[k] for k in ("dynamo_graphs", "compiles", "bundles", "refused", "calls",
                                                        "first", "buckets", "static", "status")
                                    if k in rec},
                        "keys": keys, "samples": [m for _, m in p.samples],
                        "compiled": B.STATS["compiles"] - before, "seconds": round(time.time() - t0, 1)}
        progress(f"[{i}/{len(todo)}] {e.name}: {rec.get('dynamo_graphs')} Dynamo graphs, "
                 f"{rec['compiles']} compiles (target <= {TARGET_COMPILES}), {rec['bundles']} serving bundles, "
                 f"{len(p.samples)} exact; {B.STATS['compiles'] - before} compiled in {time.time() - t0:.1f} s")
        del mod
    import torch
    torch._dynamo.reset()
    return {"entries": done, "seconds": round(time.time() - t_all, 1), "chip": chip,
            "cache_mb": round(M.cache_bytes(cache) / 2 ** 20, 2)}


# -- measure (the GPU machine, or a dry run on meta tensors) --------------------

def _sample_row(p: Plan, b: int, m: int) -> Dict[str, Any]:
    return {"name": p.entry.name, "model": p.entry.model, "dtype": p.entry.dtype, "M": m, "bucket": b,
            "graph": "static" if m in p.static else "dynamic"}


def _fail(row, status, err) -> Dict[str, Any]:
    row.update(ok=False, status=status, error=err)
    return row


def time_bucketed(p: Plan, fast, counted, mod, timer, budget: Budget, dev: str) -> List[Dict[str, Any]]:
    """Each sample M through the serving model (its whole graph captured
    afresh: the captures of the samples before dropped), checked, timed;
    path: "whole graph" where the timed calls replayed one."""
    from .. import backend as B
    from .. import whole_graph as W
    rows = []
    for b, m in p.samples:
        row = _sample_row(p, b, m)
        rows.append(row)
        if not budget.fits("sample"):
            _fail(row, "budget", f"not timed: {max(budget.left(), 0):.0f} s of the budget left")
            continue
        t0 = time.time()
        x = example(p.entry, m, dev)
        want = mod(x)
        for wg in counted.whole_graphs():
            # Its captures dropped, and the keys the loop called once
            # forgotten: the next call at M runs the stitched graph, the one
            # after it captures with x read in place, as the exact model's.
            wg.graphs.clear()
            wg.seen.clear()
        if dev == "meta":
            bad = _same_shape(fast(x), want)
            row.update(ok=not bad, status="dry-run" if not bad else "wrong", **({"error": bad} if bad else {}))
            continue
        fb = B.STATS["fallback_calls"]
        row["max_err"] = rel_err(fast(x), want)
        replays = W.STATS["replays"]
        row["bucketed"] = timer(lambda: fast(x))
        row["path"] = "whole graph" if W.STATS["replays"] > replays else "pieces"
        row["fallback_calls"] = B.STATS["fallback_calls"] - fb
        budget.took["sample"] = 2 * (time.time() - t0)  # and its exact twin
        del x, want
    return rows


def keys_of(graphs: List[Dict[str, Any]]) -> set:
    return {k for g in graphs for q in g["pieces"].values() for k in q["keys"]}


def time_exact(p: Plan, rows: List[Dict[str, Any]], mod, cache: Path, chip: str, timer, budget: Budget,
               mode: str, dev: str, serving_keys=frozenset()) -> None:
    """Each sample's exact-shape model, checked, timed; the ratio.
    same_bundle: the exact model's bundles are the serving loop's (at a
    bucket's top the static graph's key is the bucket's)."""
    from .. import backend as B
    from .. import whole_graph as W
    for row in rows:
        if row.get("status") == "budget":
            continue
        m = row["M"]
        if not budget.fits("exact"):
            _fail(row, "budget", f"exact shape not timed: {max(budget.left(), 0):.0f} s of the budget left")
            continue
        t0 = time.time()
        fb = B.STATS["fallback_calls"]
        try:
            fast, counted, x = exact(p, mod, m, cache, chip, mode, dev)
        except B.CacheMiss as e:
            _fail(row, "missing", f"exact M = {m}: {e}")
            continue
        want = mod(x)
        mine = keys_of(counted.graphs())
        row["exact_bundles"] = len(mine)
        row["same_bundle"] = bool(mine) and mine <= set(serving_keys)
        if dev == "meta":
            bad = _same_shape(fast(x), want)
            if bad:
                _fail(row, "wrong", f"exact M = {m}: {bad}")
            continue
        row["exact_max_err"] = rel_err(fast(x), want)
        replays = W.STATS["replays"]
        row["exact"] = timer(lambda: fast(x))
        row["exact_path"] = "whole graph" if W.STATS["replays"] > replays else "pieces"
        row["exact_fallback_calls"] = B.STATS["fallback_calls"] - fb
        budget.took["exact"] = time.time() - t0
        row["ratio"] = row["bucketed"]["median_ms"] / row["exact"]["median_ms"]
        tol = M.TOL[p.entry.dtype]
        problems = [f"{k} max error {row[k]:.2e} over {tol:.0e}" for k in ("max_err", "exact_max_err")
                    if not row[k] <= tol]
        if dev == "cuda" and (row["fallback_calls"] or row["exact_fallback_calls"]):
            problems.append(f"PyTorch ran a piece (bucketed {row['fallback_calls']}, exact "
                            f"{row['exact_fallback_calls']} time(s); the loop's warnings say why)")
        row["ok"] = not problems
        row["status"] = "ok" if row["ok"] else "wrong"
        if problems:
            row["error"] = "; ".join(problems)
        del fast, counted, x, want


def measure(todo: List[Plan], cache: Path, chip: str, budget_s: float, dry: bool,
            device: str = "cuda", timer=None):
    """Per plan the serving loop's record and its sample rows; returns
    (loops, rows). `device` and `timer` (a stand-in for problems.Timer):
    the host test's run of the timed path on the CPU, where PyTorch runs
    every piece and no bundle is read."""
    import torch
    mode, dev = ("dry", "meta") if dry else ("gpu", device)
    if dev == "cuda":
        torch.set_float32_matmul_precision("high")
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        from .problems import Timer
        timer = timer or Timer(warmup=3, min_runs=20, min_ms=50.0)
    budget = Budget(budget_s)
    loops, rows = [], []
    for i, p in enumerate(todo, 1):
        e = p.entry
        if not budget.fits("loop"):
            loops.append({"name": e.name, "model": e.model, "dtype": e.dtype, "ok": False, "status": "budget",
                          "error": f"not run: {max(budget.left(), 0):.0f} s of the {budget_s:.0f} s budget left "
                                   f"(--models / --dtypes run it in another call)"})
            progress(f"[{i}/{len(todo)}] {e.name}: skipped (budget)")
            continue
        progress(f"[{i}/{len(todo)}] {e.name}: serving loop over M 1..{max(p.order)}"
                 + (" (dry run, meta tensors)" if dry else ""))
        t0 = time.time()
        try:
            with torch.no_grad():
                mod = M.build(e, dev)
                rec, fast, counted = serve(p, mod, cache, chip, mode, dev)
                loops.append(rec)
                progress(f"[{i}/{len(todo)}] {e.name}: {rec['status']}, {rec.get('dynamo_graphs')} "
                         f"Dynamo graphs, {rec.get('compiles')} compiles (target <= {TARGET_COMPILES})"
                         + (f", max error {rec['max_err']:.1e} at M {rec['max_err_m']}" if "max_err" in rec else "")
                         + (f" ({rec['error'][:160]})" if rec.get("error") else "")
                         + f" [{time.time() - t0:.0f} s]")
                budget.took["loop"] = time.time() - t0
                if fast is None:
                    rows += [_fail(_sample_row(p, b, m), "missing", "the serving loop stopped: " + rec["error"])
                             for b, m in p.samples]
                    continue
                mine = time_bucketed(p, fast, counted, mod, timer, budget, dev)
                del fast, counted
                time_exact(p, mine, mod, cache, chip, timer, budget, mode, dev, keys_of(rec["graphs"]))
                rows += mine
                for r in mine:
                    progress(f"  {e.name} M={r['M']} (bucket {r['bucket']}): {r['status']}"
                             + (f", bucketed {r['bucketed']['median_ms']:.4f} ms, exact "
                                f"{r['exact']['median_ms']:.4f} ms, ratio {r['ratio']:.3f}" if "ratio" in r else "")
                             + (f" ({r['error'][:160]})" if r.get("error") else ""))
        except (KbError, RuntimeError) as err:  # e.g. out of memory, or a bad bundle
            loops.append({"name": e.name, "model": e.model, "dtype": e.dtype, "ok": False, "status": "error",
                          "error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"})
            progress(f"[{i}/{len(todo)}] {e.name}: error ({loops[-1]['error']})")
        torch._dynamo.reset()
        if dev == "cuda":
            torch.cuda.empty_cache()
    return loops, rows
