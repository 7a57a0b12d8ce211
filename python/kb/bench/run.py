#===- kb/bench/run.py - Build a suite's bundles, time them with kb-run ----===#
#
# The two halves of a suite run: compiling its programs with kb-opt into one
# bundle folder each (and <name>-unfused for a fused program), and, on a
# GPU, kb-run over each bundle (--json, with its baselines: every cuBLAS
# route of a lone matmul, the unfused bundle) followed by
# bench/peers/torch_peer.py over all of them (PyTorch eager, F.linear and
# torch.compile, timed the same way, in the same call). Each step prints a
# progress line on stderr.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ..ir import KbError
from .catalog import Program, root


def tool(name: str, env: str) -> Path:
    """kb-opt / kb-run: $KB_OPT / $KB_RUN, else build/bin/ of the checkout."""
    return Path(os.environ.get(env) or root() / "build" / "bin" / name)


def progress(i: int, n: int, what: str) -> None:
    print(f"kb.bench: [{i}/{n}] {what}", file=sys.stderr, flush=True)


def gpu_problem(kb_run: Path) -> Optional[str]:
    """None where kb-run finds a CUDA device, else why not (one line)."""
    if not kb_run.is_file():
        return f"no GPU run here: {kb_run} is not built (KB_RUN names another)"
    try:
        p = subprocess.run([str(kb_run), "--check-device"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"no GPU here: {kb_run} --check-device failed ({e})"
    if p.returncode != 0:
        why = (p.stderr.strip() or p.stdout.strip() or f"exit {p.returncode}").splitlines()[0]
        return f"no GPU here: {kb_run} --check-device: {why}"
    return None


def _compile(kb_opt: Path, src: Path, out: Path, chip: str, extra: str = "") -> Optional[str]:
    opts = f"output={out} chip={chip}{(' ' + extra) if extra else ''}"
    p = subprocess.run([str(kb_opt), str(src), f"--kb-compile={opts}", "-o", os.devnull],
                       capture_output=True, text=True)
    if p.returncode != 0:
        shutil.rmtree(out, ignore_errors=True)
        return (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[0]
    return None


def build(programs: List[Program], out_dir: Path, kb_opt: Path) -> Dict[str, str]:
    """Compiles each program into out_dir/<name> (and <name>-unfused with
    fuse=false for a fused one); returns {name: first error line} of those
    kb-opt refused."""
    if not kb_opt.is_file():
        raise KbError(f"{kb_opt} is not built (KB_NINJA_TARGETS=kb-opt bash scripts/setup.sh), "
                      "and no --bundles DIR was given")
    out_dir.mkdir(parents=True, exist_ok=True)
    failed: Dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="kb-bench-src-") as tmp:
        for i, p in enumerate(programs, 1):
            progress(i, len(programs), f"kb-opt {p.name} (chip={p.chip})")
            src = Path(tmp) / f"{p.name}.mlir"
            src.write_text(p.text)
            err = _compile(kb_opt, src, out_dir / p.name, p.chip)
            if err is None and p.fused:
                err = _compile(kb_opt, src, out_dir / f"{p.name}-unfused", p.chip, "fuse=false")
            if err is not None:
                failed[p.name] = err
                print(f"kb.bench: {p.name}: kb-opt refused it: {err}", file=sys.stderr)
    return failed


def run_kb(kb_run: Path, bundle: Path, unfused: Optional[Path], timeout_s: int) -> dict:
    """kb-run BUNDLE --json with its baselines; its report (a WRONG result
    is a report with ok false), or {ok: false, error} where none came."""
    cmd = [str(kb_run), str(bundle), "--json", "-q"]
    if unfused is not None:
        cmd += ["--baseline", str(unfused)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"ok": False, "status": "timeout", "error": f"kb-run ran past {timeout_s} s"}
    try:
        rep = json.loads(p.stdout)
    except json.JSONDecodeError:
        last = (p.stderr.strip() or p.stdout.strip() or "no output").splitlines()[-1]
        return {"ok": False, "status": "error", "error": f"kb-run exit {p.returncode}: {last}"}
    if not isinstance(rep, dict):
        return {"ok": False, "status": "error", "error": "kb-run printed no report object"}
    return rep


def run_peers(bundles: List[Path], timeout_s: int) -> Tuple[Dict[str, dict], str]:
    """bench/peers/torch_peer.py over the bundles: its times by bundle name, and
    one line on what happened."""
    script = root() / "bench" / "peers" / "torch_peer.py"
    with tempfile.TemporaryDirectory(prefix="kb-bench-peer-") as tmp:
        out = Path(tmp) / "peer.json"
        try:
            p = subprocess.run([sys.executable, str(script), str(out)] + [str(b) for b in bundles],
                               capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return {}, f"bench/peers/torch_peer.py ran past {timeout_s} s: no PyTorch peer"
        if p.returncode != 0 or not out.is_file():
            last = (p.stdout.strip() or p.stderr.strip() or f"exit {p.returncode}").splitlines()[-1]
            return {}, f"bench/peers/torch_peer.py: {last}"
        return json.loads(out.read_text()), f"bench/peers/torch_peer.py: {len(bundles)} programs timed"


def measure(programs: List[Program], bundles: Path, kb_run: Path, timeout_s: int = 300,
            with_torch: bool = True):
    """kb-run over each program's bundle, then the PyTorch peers."""
    kb: Dict[str, dict] = {}
    present: List[Path] = []
    for i, p in enumerate(programs, 1):
        b = bundles / p.name
        if not (b / "manifest.json").is_file():
            kb[p.name] = {"ok": False, "status": "missing",
                          "error": f"no bundle {b} (--build-only DIR writes them)"}
            progress(i, len(programs), f"{p.name}: no bundle")
            continue
        unf = bundles / f"{p.name}-unfused"
        rep = run_kb(kb_run, b, unf if (unf / "manifest.json").is_file() else None, timeout_s)
        kb[p.name] = rep
        t = (rep.get("time") or {}).get("median_ms")
        state = f"{t:.4f} ms" if rep.get("ok") and t else rep.get("status", "error").upper()
        progress(i, len(programs), f"kb-run {p.name}: {state}")
        if rep.get("ok"):
            present.append(b)
    peers: Dict[str, dict] = {}
    note = "PyTorch peers skipped (--no-torch)"
    if with_torch and present:
        print(f"kb.bench: PyTorch peers of {len(present)} programs (bench/peers/torch_peer.py)",
              file=sys.stderr, flush=True)
        peers, note = run_peers(present, timeout_s=max(600, 60 * len(present)))
    print(f"kb.bench: {note}", file=sys.stderr, flush=True)
    return kb, peers, note
