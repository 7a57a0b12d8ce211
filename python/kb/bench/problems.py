"""KernelBench-style runner: python3 -m kb.bench PROBLEM.py [PROBLEM.py ...]

A problem file defines `class Model(nn.Module)`, `get_inputs()` and
`get_init_inputs()` (the KernelBench format). For each problem the runner
builds `Model(*get_init_inputs())`, imports its forward into kb (kb.fx),
compiles it (kb-opt), loads the bundle (kb.load), checks kb's output against
PyTorch on five fresh sets of inputs from get_inputs(), and times kb, PyTorch
eager and torch.compile in the same call (CUDA events, L2 flushed between
runs, median). It prints a table, and the whole report with --json FILE.

Split use (kb-opt and the GPU on different machines):
    python3 -m kb.bench --compile-only --bundles DIR PROBLEMS...   # kb-opt machine (compile_only.py)
    python3 -m kb.bench --bundles DIR PROBLEMS... --json out.json  # GPU machine
The measure step imports each model again (no kb-opt needed) for the
reference, warns when the program it gets differs from the bundle's, and
checks the bundle's output against PyTorch either way.

Precision: --precision ieee|tf32|tf32x3 (default: ieee, PyTorch's own fp32
default). The baselines run at the same precision: with tf32 (or tf32x3),
PyTorch may use TF32 too (torch.backends.cuda.matmul.allow_tf32 = True).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..ir import KbError

# The check: max |kb - ref| / max |ref| against a float64 PyTorch reference,
# within TOL[precision] or 10x what PyTorch's own fp32 (same precision
# setting) errs by on the same inputs, whichever is larger.
TOL = {"ieee": 1e-4, "tf32x3": 1e-4, "tf32": 5e-3}
EAGER_FACTOR = 10.0


class Problem:
    def __init__(self, path: Path, module):
        self.path = path
        self.name = path.stem
        self.module = module
        self.Model = module.Model
        self.get_inputs = module.get_inputs
        self.get_init_inputs = module.get_init_inputs


def load_problem(path) -> Problem:
    """Imports a KernelBench-style file; KbError if it lacks a part."""
    path = Path(path)
    if not path.is_file():
        raise KbError(f"{path}: no such problem file")
    name = "kb_problem_" + "".join(c if c.isalnum() else "_" for c in path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise KbError(f"{path}: importing it failed: {type(e).__name__}: {e}")
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(mod, n)]
    if missing:
        raise KbError(f"{path}: a problem file defines class Model(nn.Module), get_inputs() and "
                      f"get_init_inputs(); this one lacks {', '.join(missing)}")
    import torch
    if not (isinstance(mod.Model, type) and issubclass(mod.Model, torch.nn.Module)):
        raise KbError(f"{path}: Model must be a torch.nn.Module subclass")
    if not callable(mod.get_inputs) or not callable(mod.get_init_inputs):
        raise KbError(f"{path}: get_inputs and get_init_inputs must be functions")
    return Problem(path, mod)


def instantiate(problem: Problem, seed: int = 0):
    import torch
    torch.manual_seed(seed)
    init = problem.get_init_inputs()
    model = problem.Model(*init)
    torch.manual_seed(seed + 1)
    inputs = problem.get_inputs()
    if not isinstance(inputs, (list, tuple)):
        raise KbError(f"{problem.path}: get_inputs() must return a list of tensors")
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor):
            raise KbError(f"{problem.path}: get_inputs()[{i}] is a {type(t).__name__}; kb takes tensors")
    return model, list(inputs)


def compile_problem(problem: Problem, out_dir: Path, chip: str, precision: str, seed: int = 0):
    from .. import compile as kb_compile
    model, inputs = instantiate(problem, seed)
    t0 = time.time()
    bundle = kb_compile(model, inputs, chip=chip, precision=precision,
                        output=out_dir, name=problem.name, seed=seed)
    return bundle, model, inputs, time.time() - t0


# -- timing ------------------------------------------------------------------

class Timer:
    """CUDA-event timing with the L2 flushed (a 256 MiB write) before each
    run; the median of at least `min_runs` runs and `min_ms` of timed work."""

    def __init__(self, warmup=5, min_runs=20, min_ms=50.0, max_runs=2000):
        import torch
        self.torch = torch
        self.warmup, self.min_runs, self.min_ms, self.max_runs = warmup, min_runs, min_ms, max_runs
        self.flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")

    def __call__(self, fn) -> Dict[str, float]:
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        total = 0.0
        while len(times) < self.min_runs or (total < self.min_ms and len(times) < self.max_runs):
            batch = []
            for _ in range(10):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                self.flush.zero_()
                s.record()
                fn()
                e.record()
                batch.append((s, e))
            torch.cuda.synchronize()
            for s, e in batch:
                t = s.elapsed_time(e)
                times.append(t)
                total += t
        times.sort()
        return {"median_ms": statistics.median(times), "min_ms": times[0], "max_ms": times[-1], "runs": len(times)}


def measure_ceilings(timer: "Timer") -> Dict[str, float]:
    """This GPU's ceilings as PyTorch reaches them: copy bandwidth (a 1 GiB
    device copy), fp32 FFMA (cuBLAS fp32 at 8192^3) and TF32 tensor cores
    (cuBLAS TF32 at 8192^3): the roofs the roofline draws."""
    import torch
    a = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    t = timer(lambda: b.copy_(a))
    copy = 2 * a.numel() * 4 / (t["median_ms"] * 1e-3) / 1e9
    del a, b
    n = 8192
    x = torch.randn(n, n, device="cuda")
    y = torch.randn(n, n, device="cuda")
    old = torch.backends.cuda.matmul.allow_tf32
    out = {"copy_gbs": copy}
    for key, tf32 in (("ffma_tflops", False), ("tf32_tflops", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        t = timer(lambda: x @ y)
        out[key] = 2 * n ** 3 / (t["median_ms"] * 1e-3) / 1e12
    torch.backends.cuda.matmul.allow_tf32 = old
    return out


# -- the model of a bundle's work: flops and bytes per kernel -------------------

def _numel(shape):
    return math.prod(shape) if shape else 1


ELEMENTWISE_FLOPS = {"kb.add": 1, "kb.sub": 1, "kb.mul": 1, "kb.div": 1, "kb.bias_add": 1,
                     "kb.scale": 1, "kb.add_scalar": 1, "kb.relu": 1, "kb.leaky_relu": 2,
                     "kb.exp": 1, "kb.tanh": 1, "kb.sigmoid": 3, "kb.silu": 4, "kb.gelu": 8,
                     "kb.dropout": 2, "kb.pow": 2, "kb.softmax": 5, "kb.transpose": 0,
                     "kb.pad": 0}
# The activations of issue #45 (the same rough count: one per arithmetic step).
ELEMENTWISE_FLOPS.update({"kb.softplus": 4, "kb.elu": 3, "kb.selu": 4, "kb.hardtanh": 2,
                          "kb.hardsigmoid": 4, "kb.hardswish": 5, "kb.mish": 6, "kb.softsign": 3,
                          "kb.abs": 1, "kb.neg": 1, "kb.sqrt": 1, "kb.rsqrt": 2, "kb.log": 1,
                          "kb.clamp": 2, "kb.minimum": 1, "kb.maximum": 1})


def kernel_work(manifest) -> List[Dict[str, Any]]:
    """Per kernel: flops (2MNK per matmul, a small count per element for the
    rest), minimal bytes (its data buffers, read or written once) and the
    unit (from its config's mma, else the CUDA cores)."""
    bufs = {b["name"]: b for b in manifest["buffers"]}
    out = []
    for i, k in enumerate(manifest["kernels"]):
        flops = 0.0
        for op in manifest.get("program", []):
            if op.get("kernel") != k["name"]:
                continue
            if op["op"] == "kb.matmul":
                shape = op["shape"]
                a = op["inputs"][0]
                kdim = bufs[a]["shape"][-1] if a in bufs else None
                if kdim is None:
                    kdim = 0
                flops += 2.0 * _numel(shape) * kdim
            else:
                flops += ELEMENTWISE_FLOPS.get(op["op"], 1) * _numel(op["shape"])
        nbytes = sum(4 * _numel(bufs[a]["shape"]) for a in k["args"]
                     if a in bufs and bufs[a]["role"] in ("input", "output", "scratch"))
        cfg = k.get("config", "")
        unit = "ffma"
        for u in ("wgmma_tf32", "mma_sync_tf32x3", "mma_sync_tf32", "gemv"):
            if f'mma = "{u}"' in cfg:
                unit = u
                break
        out.append({"name": k["name"], "flops": flops, "bytes": float(nbytes), "unit": unit,
                    "matmul": any(op["op"] == "kb.matmul" and op.get("kernel") == k["name"]
                                  for op in manifest.get("program", []))})
    return out


# -- one problem ------------------------------------------------------------------

def _rel_err(got, ref):
    import torch
    got = got.double()
    if not torch.isfinite(got).all():
        return math.inf
    denom = ref.abs().max().item()
    d = (got - ref).abs().max().item()
    return d / denom if denom > 0 else d


def check_problem(problem, model, fast, imported, precision, sets=5, seed=0, device="cuda"):
    """Five fresh input sets: kb against PyTorch in float64 (with kb's
    dropout mask), and PyTorch fp32 against the same reference."""
    import torch
    from ..fx import reference
    results = []
    tol = TOL[precision]
    for s in range(sets):
        torch.manual_seed(1000 + seed + s)
        inputs = [t.to(device) for t in problem.get_inputs()]
        got = fast(*inputs)
        ref = reference(imported, model, inputs)
        eager = reference(imported, model, inputs, dtype=torch.float32)
        gots = got if isinstance(got, tuple) else (got,)
        refs = ref if isinstance(ref, (tuple, list)) else (ref,)
        eags = eager if isinstance(eager, (tuple, list)) else (eager,)
        for g, r, e in zip(gots, refs, eags):
            if tuple(g.shape) != tuple(r.shape):
                results.append({"set": s, "ok": False, "why": f"shape {tuple(g.shape)} vs {tuple(r.shape)}"})
                continue
            kerr = _rel_err(g, r)
            eerr = _rel_err(e, r)
            allowed = max(tol, EAGER_FACTOR * eerr)
            results.append({"set": s, "kb_err": kerr, "eager_err": eerr, "allowed": allowed,
                            "ok": kerr <= allowed})
    ok = all(r["ok"] for r in results)
    return {"ok": ok, "sets": sets, "tolerance": tol,
            "max_kb_err": max((r.get("kb_err", math.inf) for r in results), default=math.inf),
            "max_eager_err": max((r.get("eager_err", 0) for r in results), default=0),
            "metric": "max|x - ref| / max|ref|, ref = PyTorch in float64 with kb's dropout mask",
            "per_set": results}


def time_problem(problem, model, fast, inputs, timer, with_compile=True):
    import torch
    out = {}
    with torch.no_grad():
        out["kb"] = timer(lambda: fast(*inputs))
        out["eager"] = timer(lambda: model(*inputs))
        if with_compile:
            try:
                t0 = time.time()
                compiled = torch.compile(model)
                compiled(*inputs)
                torch.cuda.synchronize()
                out["torch_compile_build_s"] = time.time() - t0
                out["torch_compile"] = timer(lambda: compiled(*inputs))
            except Exception as e:  # torch.compile is missing or fails here
                out["torch_compile_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return out


def run_problem(path, args, timer=None) -> Dict[str, Any]:
    import torch
    from ..bundle import Bundle
    from ..fx import import_torch
    from ..loader import load
    problem = load_problem(path)
    rec: Dict[str, Any] = {"problem": problem.name, "file": str(path), "precision": args.precision,
                           "chip": args.chip}
    bdir = Path(args.bundles) / problem.name if args.bundles else None
    have = bdir is not None and (bdir / "manifest.json").is_file()
    if args.recompile or not have:
        out = bdir or Path(tempfile_dir()) / problem.name
        bundle, _, _, secs = compile_problem(problem, out, args.chip, args.precision, args.seed)
        rec["compile_s"] = round(secs, 2)
        rec["bundle"] = str(bundle.path)
        bdir = bundle.path
    bundle = Bundle.open(bdir)
    rec["bundle"] = str(bundle.path)
    rec["kernels"] = [k["name"] for k in bundle.kernels]
    sig_prec = bundle.signature.get("precision")
    if sig_prec and sig_prec != args.precision:
        raise KbError(f"{bundle.path} was compiled with precision {sig_prec}, this run asks for "
                      f"{args.precision}: compile again or pass --precision {sig_prec}")
    model, inputs = instantiate(problem, args.seed)
    imported = import_torch(model, inputs, precision=args.precision, name=problem.name, seed=args.seed)
    if bundle.mlir and bundle.mlir != imported.program.mlir():
        # Another torch version may trace a little differently; the check
        # against PyTorch below is what decides. Say so in the report.
        rec["warning"] = (f"{bundle.path}/program.mlir differs from what {path} imports to here "
                          f"(torch {torch.__version__}); a stale bundle fails the check below")
        print(f"kb.bench: {problem.name}: warning: {rec['warning']}", file=sys.stderr)
    if not torch.cuda.is_available():
        raise KbError("measuring needs a CUDA GPU (use --compile-only on a machine without one)")
    model = model.cuda()
    tf32 = args.precision != "ieee"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    fast = load(bundle, module=model)
    rec["loaded_from"] = [k["source"] for k in fast.kernels]
    rec["check"] = check_problem(problem, model, fast, imported, args.precision, args.sets, args.seed)
    if not rec["check"]["ok"]:
        rec["ok"] = False
        return rec
    rec["ok"] = True
    if args.no_time:
        return rec
    timer = timer or Timer()
    inputs = [t.cuda() for t in inputs]
    rec["time"] = time_problem(problem, model, fast, inputs, timer, not args.no_torch_compile)
    kb_ms = rec["time"]["kb"]["median_ms"]
    rec["speedup_vs_eager"] = rec["time"]["eager"]["median_ms"] / kb_ms
    if "torch_compile" in rec["time"]:
        rec["speedup_vs_torch_compile"] = rec["time"]["torch_compile"]["median_ms"] / kb_ms
    work = kernel_work(bundle.manifest)
    # Each kernel alone, for the roofline.
    for i, w in enumerate(work):
        w["time"] = timer(lambda i=i: fast.launch_one(i, inputs))
    rec["work"] = work
    rec["flops"] = sum(w["flops"] for w in work)
    rec["bytes"] = sum(4 * math.prod(b["shape"]) for b in bundle.manifest["buffers"]
                       if b["role"] in ("input", "output"))
    return rec


def tempfile_dir():
    import tempfile
    return tempfile.mkdtemp(prefix="kb-bench-")


def format_table(records) -> str:
    rows = [("problem", "check", "kb ms", "eager ms", "compile ms", "vs eager", "vs compile", "kernels")]
    for r in records:
        if "error" in r:
            rows.append((r["problem"], "ERROR", "", "", "", "", "", r["error"].splitlines()[0][:60]))
            continue
        chk = r.get("check")
        c = "-" if chk is None else (f"ok {chk['max_kb_err']:.1e}" if chk["ok"] else f"WRONG {chk['max_kb_err']:.1e}")
        t = r.get("time", {})
        f = lambda k: f"{t[k]['median_ms']:.4f}" if k in t else ("n/a" if t else "")
        sp = lambda k: f"{r[k]:.2f}x" if k in r else ""
        rows.append((r["problem"], c, f("kb"), f("eager"), f("torch_compile"),
                     sp("speedup_vs_eager"), sp("speedup_vs_torch_compile"), str(len(r.get("kernels", [])))))
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kb.bench", description=__doc__.split("\n")[0])
    ap.add_argument("problems", nargs="+", help="KernelBench-style problem files (with --compile-only, "
                    "folders of them too)")
    ap.add_argument("--chip", default="sm_90a", choices=["sm_90a", "sm_90", "sm_80"])
    ap.add_argument("--precision", default="ieee", choices=["ieee", "tf32", "tf32x3"])
    ap.add_argument("--bundles", help="folder of the bundles (one per problem, by file stem): written by "
                    "--compile-only, read by the measure step")
    ap.add_argument("--compile-only", action="store_true", help="import and compile each problem at its "
                    "get_inputs() shapes and stop: one line each (accepted / refused and why), a summary "
                    "(no GPU needed; bundles kept only with --bundles)")
    ap.add_argument("--recompile", action="store_true", help="compile even where --bundles has a bundle")
    ap.add_argument("--sets", type=int, default=5, help="fresh input sets checked (5)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-time", action="store_true", help="check only")
    ap.add_argument("--no-torch-compile", action="store_true", help="skip the torch.compile baseline")
    ap.add_argument("--ceilings", action="store_true", help="also measure this GPU's ceilings (for kb.plot's roofline)")
    ap.add_argument("--json", help="write the report to this file")
    args = ap.parse_args(argv)
    if args.compile_only:
        from .compile_only import main as compile_only_main
        return compile_only_main(args)
    report: Dict[str, Any] = {"tool": "kb.bench", "precision": args.precision, "chip": args.chip,
                              "problems": []}
    try:
        import torch
        report["torch"] = torch.__version__
        if torch.cuda.is_available():
            report["device"] = torch.cuda.get_device_name()
    except ImportError:
        print("kb.bench: needs torch", file=sys.stderr)
        return 2
    timer = None
    if not args.no_time and torch.cuda.is_available():
        timer = Timer()
        if args.ceilings:
            report["ceilings"] = measure_ceilings(timer)
    failed = 0
    for p in args.problems:
        try:
            rec = run_problem(p, args, timer)
        except KbError as e:
            rec = {"problem": Path(p).stem, "file": str(p), "error": str(e)}
        except Exception as e:
            rec = {"problem": Path(p).stem, "file": str(p),
                   "error": f"{type(e).__name__}: {e}\n{traceback.format_exc()}"}
        if "error" not in rec:
            print("kb.bench: " + " ".join(format_table([rec]).splitlines()[-1].split()), file=sys.stderr, flush=True)
        if "error" in rec or rec.get("ok") is False:
            failed += 1
            print(f"kb.bench: {rec['problem']}: " + (rec.get("error") or "WRONG result: " +
                  json.dumps({k: v for k, v in rec['check'].items() if k != 'per_set'})), file=sys.stderr)
        report["problems"].append(rec)
        if args.json:  # after each problem, so that a run cut short keeps what it measured
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(report, indent=1, default=float))
    print(format_table(report["problems"]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1, default=float))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
