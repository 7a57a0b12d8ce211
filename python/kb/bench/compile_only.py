#===- kb/bench/compile_only.py - Which problems kb compiles, on the host ---===#
#
# python3 -m kb.bench --compile-only DIR_OR_FILES... [--bundles DIR] [--json OUT]:
# each problem's Model and inputs built on the meta device (shapes only; the
# CPU where meta fails), kb.compile'd whole (no piece left to PyTorch), one
# line each (accepted + kernels, or refused + stage + reason), a summary
# and the JSON table (docs/kernelbench.md).
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

from ..ir import KbError


def expand(paths) -> List[Path]:
    """Files as given; a folder gives its *.py, by leading number, then name."""
    out: List[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            def key(f):
                m = re.match(r"(\d+)", f.name)
                return (int(m.group(1)) if m else 1 << 30, f.name)
            out.extend(sorted((f for f in p.glob("*.py") if f.is_file()), key=key))
        else:
            out.append(p)
    return out


def number_of(path: Path):
    m = re.match(r"(\d+)_", path.name)
    return int(m.group(1)) if m else None


def instantiate_shapes(problem, seed: int = 0):
    """(model, inputs, "meta"), or on the CPU where meta fails."""
    import torch
    from .problems import instantiate
    try:
        with torch.device("meta"):
            model, inputs = instantiate(problem, seed)
        return model, inputs, "meta"
    except KbError:
        raise
    except Exception:
        model, inputs = instantiate(problem, seed)
        return model, inputs, "cpu"


def reason_of(e: BaseException):
    """(stage, one line, the rest) of a refusal."""
    from ..fx import KbImportError
    text = str(e) if isinstance(e, KbError) else f"{type(e).__name__}: {e}"
    lines = [l for l in text.splitlines() if l.strip()] or [type(e).__name__]
    if text.startswith("kb-opt refused"):
        # kb-opt's first diagnostic, without the program text after it.
        body = text.split("\n--- the program ---", 1)[0].splitlines()[1:]
        first = next((l.strip() for l in body if "error:" in l), body[0].strip() if body else lines[0])
        return "kb-opt", first.replace("<program>:", "").strip(), "\n".join(body)
    stage = "import" if isinstance(e, KbImportError) or "cannot import" in text else "load"
    return stage, lines[0], "\n".join(l.strip() for l in lines[1:])


def compile_one(path: Path, out: Path, args) -> Dict[str, Any]:
    from .. import compile as kb_compile
    from .problems import load_problem
    rec: Dict[str, Any] = {"problem": path.stem, "file": str(path), "number": number_of(path)}
    t0 = time.time()
    try:
        problem = load_problem(path)
        model, inputs, device = instantiate_shapes(problem, args.seed)
        rec["traced_on"] = device
        rec["input_shapes"] = [list(t.shape) for t in inputs]
        bundle = kb_compile(model, inputs, chip=args.chip, precision=args.precision,
                            output=out / problem.name, name=problem.name, seed=args.seed)
        rec["accepted"] = True
        rec["kernels"] = [k["name"] for k in bundle.kernels]
        if args.bundles:
            rec["bundle"] = str(bundle.path)
    except Exception as e:  # a refusal is a row, never the end of the run
        rec["accepted"] = False
        rec["stage"], rec["reason"], rest = reason_of(e)
        if rest:
            rec["detail"] = rest
    rec["compile_s"] = round(time.time() - t0, 2)
    return rec


def line(i: int, n: int, rec) -> str:
    if rec["accepted"]:
        k = rec["kernels"]
        what = f"accepted ({len(k)} kernel{'s' if len(k) != 1 else ''}: {', '.join(k)})"
    else:
        what = f"refused ({rec['stage']}): {rec['reason']}"
    return f"[{i}/{n}] {rec['problem']}: {what} [{rec['compile_s']} s]"


def main(args) -> int:
    files = expand(args.problems)
    if not files:
        print("kb.bench: --compile-only: no problem files in " + " ".join(args.problems), file=sys.stderr)
        return 2
    import torch
    report: Dict[str, Any] = {"tool": "kb.bench", "mode": "compile-only", "schema": 1,
                              "precision": args.precision, "chip": args.chip,
                              "torch": torch.__version__, "problems": []}
    tmp = None
    if args.bundles:
        out = Path(args.bundles)
    else:
        tmp = out = Path(tempfile.mkdtemp(prefix="kb-compile-only-"))
    try:
        for i, f in enumerate(files, 1):
            rec = compile_one(f, out, args)
            report["problems"].append(rec)
            print(line(i, len(files), rec), flush=True)
            if args.json:  # after each problem: a run cut short keeps its rows
                _write(args.json, report)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    rows = report["problems"]
    acc = [r for r in rows if r["accepted"]]
    by_stage: Dict[str, int] = {}
    for r in rows:
        if not r["accepted"]:
            by_stage[r["stage"]] = by_stage.get(r["stage"], 0) + 1
    report["summary"] = {"problems": len(rows), "accepted": len(acc), "refused": len(rows) - len(acc),
                         "refused_by_stage": by_stage,
                         "accepted_numbers": [r["number"] for r in acc if r["number"] is not None]}
    stages = ", ".join(f"{v} at {k}" for k, v in sorted(by_stage.items()))
    print(f"kb.bench: {len(acc)} of {len(rows)} accepted, {len(rows) - len(acc)} refused"
          + (f" ({stages})" if stages else ""), flush=True)
    if args.json:
        _write(args.json, report)
    return 0 if len(acc) == len(rows) else 1


def _write(path, report):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(report, indent=1, default=float))
