#===- kb/bench/catalog.py - The benchmark programs and the suites --------===#
#
# Every program a suite can name, read from the generators that already
# write them (bench/programs.py, bench/shapes.py, bench/tune/programs.py)
# and examples/*.mlir, and the suites of bench/suites.py resolved into
# lists of programs. Nothing here runs kb-opt or a GPU.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List

from ..ir import KbError

# kb.mish: the activations chain (bench/programs.py "activations").
FUSED_OPS = ("kb.dropout", "kb.gelu", "kb.bias_add", "kb.scale", "kb.mish")


def root() -> Path:
    """The repository: KB_ROOT, else the checkout this package lies in."""
    env = os.environ.get("KB_ROOT")
    return Path(env) if env else Path(__file__).resolve().parents[3]


def commit() -> str:
    """The checkout's commit (12 hex digits) for a report, or "" outside git."""
    import subprocess
    try:
        p = subprocess.run(["git", "-C", str(root()), "rev-parse", "--short=12", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        return p.stdout.strip() if p.returncode == 0 else ""
    except OSError:
        return ""


@dataclass
class Program:
    name: str
    family: str
    text: str
    chip: str = "sm_90"

    @property
    def precision(self) -> str:
        m = re.search(r"precision\((\w+)\)", self.text)
        return m.group(1) if m else ""

    @property
    def fused(self) -> bool:
        """Whether it also gets an unfused bundle to time against."""
        return any(op in self.text for op in FUSED_OPS)


def _module(path: Path, name: str):
    if not path.is_file():
        raise KbError(f"{path}: not found (kb.bench reads its programs from the checkout; "
                      "KB_ROOT names another)")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def catalog() -> Dict[str, Program]:
    """Every program by name."""
    r = root()
    progs: Dict[str, Program] = {}
    gen = _module(r / "bench" / "programs.py", "kb_bench_programs")
    for family, items in gen.PROGRAMS.items():
        for name, text in items.items():
            progs[name] = Program(name, family, text)
    shapes = _module(r / "bench" / "shapes.py", "kb_bench_shapes")
    for s in shapes.SHAPES:
        _, m, n, k, batch, tb = s
        nm = shapes.name(*s)
        progs[nm] = Program(nm, "shapes", shapes.program(m, n, k, batch, tb))
        nm16 = shapes.name(*s, dtype="bf16")  # the same shapes in bf16 (issue #44)
        progs[nm16] = Program(nm16, "shapes-bf16", shapes.program(m, n, k, batch, tb, dtype="bf16"))
    tune = _module(r / "bench" / "tune" / "programs.py", "kb_bench_tune_programs")
    for nm, _cls, text, _args in tune.PROGRAMS:
        progs[nm] = Program(nm, "tune", text)
    for f in sorted((r / "examples").glob("*.mlir")):
        progs[f.stem] = Program(f.stem, "examples", f.read_text())
    for p in progs.values():
        if p.name.endswith("-sm90a"):
            p.chip = "sm_90a"
    return progs


def suites() -> Dict[str, dict]:
    """bench/suites.py's table, and "all"."""
    table = dict(_module(root() / "bench" / "suites.py", "kb_bench_suites").SUITES)
    table["all"] = {"about": "every kb-run suite above, each program once"}
    return table


def suite_programs(name: str, progs: Dict[str, Program] | None = None) -> List[Program]:
    """The programs of one suite, in its order; KbError for an unknown
    suite or a program the catalogue lacks."""
    table = suites()
    if name not in table:
        raise KbError(f"no suite '{name}' (suites: {', '.join(table)}; --list says what each runs)")
    progs = catalog() if progs is None else progs
    if table[name].get("kind"):  # the torch.compile backend's suites: no programs
        return []
    if name == "all":
        out, seen = [], set()
        for s in table:
            if s == "all" or table[s].get("kind"):
                continue
            for p in suite_programs(s, progs):
                if p.name not in seen:
                    seen.add(p.name)
                    out.append(p)
        return out
    spec = table[name]
    if "programs" in spec:
        missing = [n for n in spec["programs"] if n not in progs]
        if missing:
            raise KbError(f"bench/suites.py: suite '{name}' names {', '.join(missing)}, which no "
                          "generator writes (bench/programs.py, bench/shapes.py, "
                          "bench/tune/programs.py, examples/)")
        chosen = [progs[n] for n in spec["programs"]]
    else:
        pat = re.compile(spec.get("match", ""))
        chosen = [p for p in progs.values() if p.family == spec["from"] and pat.search(p.name)]
        if not chosen:
            raise KbError(f"bench/suites.py: suite '{name}' selects no program")
    chip = spec.get("chip")
    if chip:
        chosen = [Program(p.name, p.family, p.text, chip) for p in chosen]
    return chosen
