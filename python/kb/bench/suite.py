#===- kb/bench/suite.py - python3 -m kb.bench --suite NAME ---------------===#
#
# The suites' command line: --list, a run (compile with kb-opt or read
# --bundles DIR, then kb-run and the PyTorch peers on this GPU), --build-only
# DIR (the bundles alone, for a GPU machine without MLIR), and --report
# (the table again from a recorded suite report or gpu-check.sh folder).
# A run writes one JSON (docs/bench.md) and one plot, and prints the table.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List

from ..ir import KbError
from . import catalog, report, run

USAGE = """examples:
  python3 -m kb.bench --list
  python3 -m kb.bench --suite squares                      # kb-opt and a GPU here
  python3 -m kb.bench --suite squares --build-only DIR     # build machine: bundles only
  python3 -m kb.bench --suite squares --bundles DIR        # GPU machine: kb-run + PyTorch
  python3 -m kb.bench --suite shapes --report bench/results/RUN/compute
  python3 -m kb.bench --suite models --build-only CACHE    # kb-opt machine: the backend's cache
  python3 -m kb.bench --suite models --bundles CACHE --models gpt2-768 --dtypes bf16   # GPU"""


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python3 -m kb.bench", epilog=USAGE,
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 description="kb's benchmark suites against cuBLAS and PyTorch "
                                 "(docs/bench.md); PROBLEM.py files instead: KernelBench-style problems")
    ap.add_argument("--suite", help="the suite to run (--list names them)")
    ap.add_argument("--list", action="store_true", help="the suites, one line each")
    ap.add_argument("--only", metavar="REGEX", help="only the suite's programs whose name matches")
    ap.add_argument("--bundles", help="read the bundles from this folder (one <program> folder each, "
                    "as --build-only or scripts/build-bench.sh writes them) instead of compiling")
    ap.add_argument("--build-only", metavar="DIR", help="compile the suite's bundles into DIR and stop")
    ap.add_argument("--report", nargs="+", metavar="PATH", help="print the table of recorded runs: "
                    "suite reports, gpu-check.sh folders (kb_results.json, torch_peer.json) or "
                    "such a folder in an archive (bench/results/RUN/raw.tar.xz:FOLDER)")
    ap.add_argument("--out", help="the run's folder: <suite>.json, <suite>.png and, when compiled "
                    "here, bundles/ (default build/bench/<suite>)")
    ap.add_argument("--json", help="write the suite report here instead of OUT/<suite>.json")
    ap.add_argument("--plot", help="write the plot here instead of OUT/<suite>.png")
    ap.add_argument("--no-torch", action="store_true", help="kb-run only, no PyTorch peers")
    ap.add_argument("--timeout", type=int, default=300, help="seconds a kb-run may take (300)")
    # The torch.compile backend's suites (models, models-tiny, backend-overhead): backend_suites.py.
    ap.add_argument("--models", help="models suites: only these models (comma-separated)")
    ap.add_argument("--dtypes", help="models suites: only these dtypes (f32: TF32 matmuls, bf16)")
    ap.add_argument("--dry-run", action="store_true", help="models suites: check the cache on the "
                    "CPU (every piece's bundle present, the stitched model's output), no timing")
    ap.add_argument("--budget-s", type=float, default=300.0, help="models suites: start an entry "
                    "or Inductor compile only where it fits in this many seconds (what it took last "
                    "time, on the entry before; 300)")
    ap.add_argument("--chip", default="sm_90a", help="models suites: the kb backend's chip (sm_90a)")
    ap.add_argument("--profile", action="store_true", help="models suites: also record the CUDA "
                    "kernels of one call of eager, kb and each Inductor mode (torch.profiler: name, "
                    "microseconds, count), to read the gap kernel by kernel")
    return ap


def build_report(suite: str, programs: List[catalog.Program], kb: Dict[str, dict],
                 peers: Dict[str, dict], **meta) -> Dict[str, Any]:
    rows = [report.row(p.name, kb.get(p.name), peers.get(p.name), p.precision, p.family)
            for p in programs]
    device = next((r.get("device", {}).get("name") for r in kb.values()
                   if isinstance(r.get("device"), dict)), "")
    rep = {"tool": report.TOOL, "schema": report.SCHEMA, "suite": suite, "device": device,
           "rows": rows, "summary": report.summary(rows), "kb_run": kb, "torch_peer": peers}
    rep.update(meta)
    return rep


def _write(rep: Dict[str, Any], json_path: Path, plot_path: Path) -> None:
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(rep, indent=1, default=float))
    print(f"kb.bench: wrote {json_path}", file=sys.stderr)
    try:
        from ..plot import draw_suite
        draw_suite(rep, plot_path)
        print(f"kb.bench: wrote {plot_path}", file=sys.stderr)
    except ImportError:
        print("kb.bench: no plot: matplotlib is not installed here", file=sys.stderr)
    except KbError as e:
        print(f"kb.bench: no plot: {e}", file=sys.stderr)


def _only(programs: List[catalog.Program], pattern) -> List[catalog.Program]:
    if not pattern:
        return programs
    try:
        pat = re.compile(pattern)
    except re.error as e:
        raise KbError(f"--only {pattern!r}: not a regular expression ({e})")
    chosen = [p for p in programs if pat.search(p.name)]
    if not chosen:
        raise KbError(f"--only {pattern!r} matches none of the suite's programs")
    return chosen


def _list() -> int:
    progs = catalog.catalog()
    table = catalog.suites()
    w = max(map(len, table))
    for name in table:
        spec = table[name]
        if spec.get("kind") in ("models", "serving"):
            what = f"{len(spec['models'])} models x {len(spec['dtypes'])} dtypes"
        elif spec.get("kind"):
            what = f"{len(spec['rows'])} cases"
        else:
            what = f"{len(catalog.suite_programs(name, progs)):3d} programs"
        print(f"{name.ljust(w)}  {what}  {spec['about']}")
    return 0


def _recorded(args) -> int:
    kb, peers = report.load_recorded(args.report)
    if args.suite:
        programs = _only(catalog.suite_programs(args.suite), args.only)
    else:
        progs = catalog.catalog()
        programs = [progs.get(n) or catalog.Program(n, "", "") for n in sorted(kb)
                    if not n.endswith("-unfused")]
    rep = build_report(args.suite or "recorded", programs, kb, peers, recorded=args.report)
    print(report.format_table(rep["rows"], rep["summary"]))
    if args.json or args.plot:
        _write(rep, Path(args.json or Path(args.plot).with_suffix(".json")),
               Path(args.plot or Path(args.json).with_suffix(".png")))
    return 0


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    try:
        if args.list:
            return _list()
        if args.report:
            return _recorded(args)
        if not args.suite:
            ap.error("name a suite (--suite NAME; --list shows them) or give PROBLEM.py files")
        if args.bundles and args.build_only:
            ap.error("--build-only writes bundles and --bundles reads them: give one")
        spec = catalog.suites().get(args.suite, {})
        if spec.get("kind"):  # run through torch.compile, not kb-run
            from . import backend_suites
            return backend_suites.main(args.suite, spec, args)
        programs = _only(catalog.suite_programs(args.suite), args.only)
        if args.build_only:
            out = Path(args.build_only)
            failed = run.build(programs, out, run.tool("kb-opt", "KB_OPT"))
            print(f"kb.bench: {len(programs) - len(failed)} of {len(programs)} programs of suite "
                  f"'{args.suite}' compiled into {out}; carry it with build/bin/kb-run, then "
                  f"python3 -m kb.bench --suite {args.suite} --bundles {out}")
            return 1 if failed else 0
        kb_run = run.tool("kb-run", "KB_RUN")
        why = run.gpu_problem(kb_run)
        if why:
            print(f"kb.bench: {why}; --build-only DIR builds the bundles without a GPU", file=sys.stderr)
            return 2
        out = Path(args.out or catalog.root() / "build" / "bench" / args.suite)
        bundles = Path(args.bundles) if args.bundles else out / "bundles"
        failed: Dict[str, str] = {}
        if not args.bundles:
            failed = run.build(programs, bundles, run.tool("kb-opt", "KB_OPT"))
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        kb, peers, note = run.measure(programs, bundles, kb_run, args.timeout, not args.no_torch)
        for name, err in failed.items():
            kb[name] = {"ok": False, "status": "compile", "error": f"kb-opt: {err}"}
        rep = build_report(args.suite, programs, kb, peers, started=started, commit=catalog.commit(),
                           bundles=str(bundles), peers_note=note)
        _write(rep, Path(args.json or out / f"{args.suite}.json"),
               Path(args.plot or out / f"{args.suite}.png"))
        print(report.format_table(rep["rows"], rep["summary"]))
        return 1 if rep["summary"]["wrong_or_failed"] else 0
    except KbError as e:
        print(f"kb.bench: {e}", file=sys.stderr)
        return 1
