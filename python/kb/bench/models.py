#===- kb/bench/models.py - The torch.compile backend on model sizes -------===#
#
# The suites of kind "models" (bench/suites.py: models, models-tiny): for each
# model x dtype of the suite, kb.models' block at its size, run through
# torch.compile(model, backend="kb"). Two halves, as the kb-run suites:
#   precompile (a machine with kb-opt, no GPU): kb.backend.precompile of each
#     model's static graph at its shapes into one bundle cache, and
#     precompile.json there (what was compiled, and how long it took);
#   measure (the GPU machine: the cache, the python package, no MLIR): the
#     kb-compiled model with cache_only (a bundle missing from the cache is an
#     error, never compiled), its output against eager's, then eager, kb,
#     Inductor (mode max-autotune-no-cudagraphs, then the default mode) timed
#     in this one process (CUDA events, median), with the partition (pieces
#     kb runs, ops left to PyTorch) of the graph kb compiled.
# A dry run (--dry-run) is the measure half on the CPU without timing: it
# checks every piece's bundle is in the cache and the stitched model's output.
# The report, table and plot: models_report.py.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..ir import KbError

# An f32 model runs with TF32 matmuls everywhere (PyTorch's "high" float32
# matmul precision for eager and Inductor, precision tf32 for kb); a bf16
# model is bf16 end to end.
DTYPES = {"f32": ("float32", "tf32"), "bf16": ("bfloat16", "tf32")}
# The check: max |kb - eager| / max |eager| over the block's output. tf32: the
# KernelBench runner's tf32 tolerance (problems.TOL); bf16: the GPU test's
# (python/tests/gpu/test_backend_gpu.py), a few bf16 ulps of the largest
# output after the residual adds.
TOL = {"f32": 5e-3, "bf16": 6e-2}
MODES = ("max-autotune-no-cudagraphs", "default")  # Inductor's, timed in this order


@dataclass
class Entry:
    """One model x dtype of a suite."""
    model: str  # the suite's name for it (gpt2-768)
    spec: Dict[str, Any]  # {"model": class in kb.models, "args", "kwargs", "input"}
    dtype: str  # a key of DTYPES

    @property
    def name(self) -> str:
        return f"{self.model}/{self.dtype}"


def _names(arg: Optional[str], known: List[str], what: str) -> List[str]:
    if not arg:
        return list(known)
    want = [a.strip() for a in arg.split(",") if a.strip()]
    bad = [a for a in want if a not in known]
    if bad:
        raise KbError(f"--{what} {', '.join(bad)}: not in the suite (it has {', '.join(known)})")
    return [k for k in known if k in want]


def entries(spec: Dict[str, Any], models: Optional[str] = None, dtypes: Optional[str] = None) -> List[Entry]:
    """The suite's model x dtype entries, filtered by --models / --dtypes
    (comma-separated names); KbError for a name the suite lacks."""
    table = spec["models"]
    chosen = _names(models, list(table), "models")
    kinds = _names(dtypes, list(spec.get("dtypes", DTYPES)), "dtypes")
    for d in kinds:
        if d not in DTYPES:
            raise KbError(f"bench/suites.py: dtype {d!r} (known: {', '.join(DTYPES)})")
    return [Entry(m, table[m], d) for m in chosen for d in kinds]


def torch_dtype(dtype: str):
    import torch
    return getattr(torch, DTYPES[dtype][0])


def build(entry: Entry, device: str = "cpu"):
    """The entry's model (seeded) on `device` in its dtype, in eval mode."""
    import torch
    from .. import models as kb_models
    cls = getattr(kb_models, entry.spec["model"], None)
    if not isinstance(cls, type):
        raise KbError(f"bench/suites.py: model {entry.model}: kb.models has no {entry.spec['model']!r}")
    torch.manual_seed(0)
    with torch.device(device):
        mod = cls(*entry.spec.get("args", ()), **entry.spec.get("kwargs", {}))
    return mod.eval().to(torch_dtype(entry.dtype))


def example(entry: Entry, device: str = "cpu", zeros: bool = False):
    import torch
    shape, dt = tuple(entry.spec["input"]), torch_dtype(entry.dtype)
    if zeros:
        return torch.zeros(shape, dtype=dt, device=device)
    g = torch.Generator(device=device).manual_seed(1)
    return torch.randn(shape, dtype=dt, device=device, generator=g)


def backend_options(entry: Entry, cache: Path, chip: str, **more) -> Dict[str, Any]:
    """The kb backend's options, the same when the cache is filled and read
    (the cache key holds chip and precision); the model is called at one
    shape, so no buckets."""
    return {"cache_dir": str(cache), "chip": chip, "precision": DTYPES[entry.dtype][1],
            "buckets": (), **more}


def progress(msg: str) -> None:
    print(f"kb.bench: {msg}", file=sys.stderr, flush=True)


# -- precompile (kb-opt, no GPU) ---------------------------------------------

def precompile(todo: List[Entry], cache: Path, chip: str) -> Dict[str, Any]:
    """Fills `cache` with each entry's bundles (its static graph at its
    shapes); returns what precompile.json records: per entry its keys and
    seconds, and the cache's size."""
    from .. import backend as B
    cache.mkdir(parents=True, exist_ok=True)
    done: Dict[str, Any] = {}
    t_all = time.time()
    for i, e in enumerate(todo, 1):
        progress(f"[{i}/{len(todo)}] precompile {e.name} (input {'x'.join(map(str, e.spec['input']))})")
        t0 = time.time()
        mod = build(e)
        before = B.STATS["compiles"]
        opts = backend_options(e, cache, chip)
        keys = B.precompile(mod, (example(e, zeros=True),), buckets=opts.pop("buckets"),
                            dynamic=False, **opts)
        refused = [k for k in keys if (cache / f"{k}.refused.mlir").is_file()]
        done[e.name] = {"keys": keys, "seconds": round(time.time() - t0, 1),
                        "compiled": B.STATS["compiles"] - before, "refused": refused}
        progress(f"[{i}/{len(todo)}] {e.name}: {len(set(keys))} bundles "
                 f"({len(refused)} refused by kb-opt) in {time.time() - t0:.1f} s")
        del mod
    return {"entries": done, "seconds": round(time.time() - t_all, 1), "chip": chip,
            "cache_mb": round(cache_bytes(cache) / 2 ** 20, 2)}


def cache_bytes(cache: Path) -> int:
    return sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())


# -- measure (the GPU machine, or a dry run on the CPU) ------------------------

@dataclass
class Budget:
    """The run's deadline: a stage starts only where what it took last time
    (an Inductor mode's compile on the previous entry; nothing known: 0)
    still fits before it; the rest is recorded as skipped."""
    seconds: float
    start: float = field(default_factory=time.time)
    took: Dict[str, float] = field(default_factory=dict)  # stage -> seconds, last time

    def left(self) -> float:
        return self.seconds - (time.time() - self.start)

    def fits(self, stage: str) -> bool:
        return self.left() > self.took.get(stage, 0.0)


def rel_err(got, want) -> float:
    """max |got - want| / max |want|, in float64."""
    g, w = got.double(), want.double()
    den = w.abs().max().item() or 1.0
    return (g - w).abs().max().item() / den


def partition_summary(parts) -> Dict[str, Any]:
    """kb.explain's view of the graphs kb compiled: counts, and each
    partition's pieces and ops left to PyTorch."""
    return {"graphs": len(parts),
            "pieces": sum(len(p.pieces) for p in parts),
            "kb_ops": sum(len(x.nodes) for p in parts for x in p.pieces),
            "left_to_torch": sum(len(p.left_out) for p in parts),
            "kernels": sum(len(x.kernels) for p in parts for x in p.pieces),
            "partitions": [p.as_dict() for p in parts],
            "text": "\n".join(p.text() for p in parts)}


def _first_call(fn, x, sync):
    t0 = time.time()
    y = fn(x)
    sync()
    return y, time.time() - t0


def check_kb(entry: Entry, mod, x, want, cache: Path, chip: str, dry: bool):
    """The kb-compiled model's first call (cache_only) against eager: the
    row's check fields, and the compiled callable (None where it failed)."""
    import torch
    from .. import backend as B
    torch._dynamo.reset()
    opts = backend_options(entry, cache, chip, cache_only=True, compile_only=dry)
    fast = torch.compile(mod, backend="kb", options=opts)
    n_parts, stats = len(B.PARTITIONS), dict(B.STATS)
    row: Dict[str, Any] = {}
    sync = torch.cuda.synchronize if x.is_cuda else (lambda: None)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            got, secs = _first_call(fast, x, sync)
        except B.CacheMiss as e:
            return {"ok": False, "status": "missing", "error": str(e)}, None
    msgs = [str(m.message) for m in w if str(m.message).startswith("kb:")]
    row["partition"] = partition_summary(B.PARTITIONS[n_parts:])
    row["kb_compile_s"] = round(secs, 2)
    row["cache_hits"] = B.STATS["cache_hits"] - stats["cache_hits"]
    row["kb_calls"] = B.STATS["kb_calls"] - stats["kb_calls"]
    row["fallback_calls"] = B.STATS["fallback_calls"] - stats["fallback_calls"]
    row["warnings"] = msgs
    row["max_err"], row["tol"] = rel_err(got, want), TOL[entry.dtype]
    # Only a piece kb-opt refused when the cache was filled may run in PyTorch.
    unexpected = [m for m in msgs if "refused" not in m]
    problems = []
    if not row["max_err"] <= row["tol"]:
        problems.append(f"max error {row['max_err']:.2e} over the tolerance {row['tol']:.0e}")
    if unexpected:
        problems.append(unexpected[0][:200])
    if not dry and row["kb_calls"] == 0:
        problems.append("kb ran no piece")
    row["ok"] = not problems
    row["status"] = ("dry-run" if dry else "ok") if row["ok"] else "wrong"
    if problems:
        row["error"] = "; ".join(problems)
    return row, fast


def kernel_profile(fn, calls: int = 3, top: int = 15) -> Dict[str, Any]:
    """The CUDA kernels of `calls` calls of fn (after one warm call), by
    torch.profiler: the `top` kernels by total time, each with its
    microseconds and launches a call, the call's kernel total and its
    launches (kernels, copies, memsets) over all kernels; a profiler failure
    is recorded, not raised."""
    import torch
    try:
        from torch.profiler import ProfilerActivity, profile
        fn()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        cuda = torch.autograd.DeviceType.CUDA
        rows = [(a.key, a.self_device_time_total / calls, a.count / calls)
                for a in prof.key_averages() if a.device_type == cuda]
    except Exception as err:  # noqa: BLE001 - a bench aid, never the measurement
        return {"error": f"{type(err).__name__}: {str(err).splitlines()[0][:160] if str(err) else ''}"}
    rows.sort(key=lambda r: -r[1])
    return {"total_us": round(sum(r[1] for r in rows), 1), "distinct": len(rows),
            "launches": round(sum(r[2] for r in rows)),
            "kernels": [{"name": n[:120], "us": round(us, 1), "count": c} for n, us, c in rows[:top]]}


def measure_entry(entry: Entry, cache: Path, chip: str, timer, budget: Budget, dry: bool,
                  profile: bool = False) -> Dict[str, Any]:
    """One model x dtype: the check, then (on the GPU) eager, kb and each
    Inductor mode timed; each stage only while the budget lasts."""
    import torch
    dev = "cpu" if dry else "cuda"
    row: Dict[str, Any] = {"model": entry.model, "dtype": entry.dtype, "name": entry.name,
                           "class": entry.spec["model"], "input": list(entry.spec["input"]),
                           "precision": DTYPES[entry.dtype][1], "skipped": []}
    t0 = time.time()
    mod = build(entry, dev)
    x = example(entry, dev)
    with torch.no_grad():
        want = mod(x)
        check, fast = check_kb(entry, mod, x, want, cache, chip, dry)
        row.update(check)
        if dry or fast is None:
            row["seconds"] = round(time.time() - t0, 1)
            return row
        row["eager"] = timer(lambda: mod(x))
        row["kb"] = timer(lambda: fast(x))
        if profile:
            row["profile"] = {"eager": kernel_profile(lambda: mod(x)), "kb": kernel_profile(lambda: fast(x))}
        budget.took["entry"] = time.time() - t0  # the next entry's start needs as long
        del fast
        for mode in MODES:
            key = "inductor" if mode == "default" else "inductor_max_autotune"
            if not budget.fits(key):
                row["skipped"].append(f"{key}: {max(budget.left(), 0):.0f} s of the budget left, "
                                      f"its last compile took {budget.took.get(key, 0):.0f} s")
                continue
            torch._dynamo.reset()
            ind = torch.compile(mod, mode=None if mode == "default" else mode)
            y, secs = _first_call(ind, x, torch.cuda.synchronize)
            budget.took[key] = secs
            row[key] = timer(lambda: ind(x))
            row[key].update(compile_s=round(secs, 1), max_err=rel_err(y, want))
            if profile:
                row["profile"][key] = kernel_profile(lambda: ind(x))
            progress(f"  {entry.name}: inductor {mode}: compiled in {secs:.0f} s, "
                     f"{row[key]['median_ms']:.4f} ms")
            del ind, y
        # kb's pieces with the ops it leaves out compiled by Inductor (the
        # backend's fallback="inductor": the pieces opaque ops, no whole-graph
        # capture), the user's other choice.
        if budget.fits("kb_inductor"):
            torch._dynamo.reset()
            opts = backend_options(entry, cache, chip, cache_only=True, fallback="inductor")
            kbi = torch.compile(mod, backend="kb", options=opts)
            try:
                y, secs = _first_call(kbi, x, torch.cuda.synchronize)
                budget.took["kb_inductor"] = secs
                row["kb_inductor"] = timer(lambda: kbi(x))
                row["kb_inductor"].update(compile_s=round(secs, 1), max_err=rel_err(y, want))
                if profile:
                    row["profile"]["kb_inductor"] = kernel_profile(lambda: kbi(x))
                progress(f"  {entry.name}: kb + inductor: compiled in {secs:.0f} s, "
                         f"{row['kb_inductor']['median_ms']:.4f} ms")
                del y
            except Exception as err:  # noqa: BLE001 - recorded; the kb row stands
                row["kb_inductor"] = {"error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
            del kbi
        else:
            row["skipped"].append("kb_inductor: budget")
        torch._dynamo.reset()
    row["seconds"] = round(time.time() - t0, 1)
    return row


def measure(todo: List[Entry], cache: Path, chip: str, budget_s: float, dry: bool,
            profile: bool = False) -> List[Dict[str, Any]]:
    """Every entry in order (a row each; those after the budget is spent
    are rows with status "budget")."""
    import torch
    if not dry:
        # TF32 for f32 matmuls in eager and Inductor, as kb's precision tf32.
        torch.set_float32_matmul_precision("high")
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    from .problems import Timer
    timer = None if dry else Timer(warmup=3, min_runs=10, min_ms=50.0)
    budget = Budget(budget_s)
    rows = []
    for i, e in enumerate(todo, 1):
        if not budget.fits("entry"):
            rows.append({"model": e.model, "dtype": e.dtype, "name": e.name, "ok": False,
                         "status": "budget", "error": f"not run: {max(budget.left(), 0):.0f} s of the "
                         f"{budget_s:.0f} s budget left (--models / --dtypes run it in another call)"})
            progress(f"[{i}/{len(todo)}] {e.name}: skipped (budget)")
            continue
        progress(f"[{i}/{len(todo)}] {e.name} (input {'x'.join(map(str, e.spec['input']))})"
                 + (" dry run" if dry else ""))
        try:
            r = measure_entry(e, cache, chip, timer, budget, dry, profile=profile)
        except (KbError, RuntimeError) as err:  # e.g. out of memory, or a bad bundle
            r = {"model": e.model, "dtype": e.dtype, "name": e.name, "ok": False, "status": "error",
                 "error": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
        rows.append(r)
        t = {k: r[k]["median_ms"] for k in ("eager", "kb", "inductor_max_autotune", "inductor") if k in r}
        progress(f"[{i}/{len(todo)}] {e.name}: {r['status']}"
                 + (f", max error {r['max_err']:.1e}" if "max_err" in r else "")
                 + "".join(f", {k} {v:.4f} ms" for k, v in t.items())
                 + (f" ({r['error'][:120]})" if r.get("error") else "")
                 + f" [{budget.seconds - budget.left():.0f} s]")
        if not dry:
            torch.cuda.empty_cache()
    return rows
