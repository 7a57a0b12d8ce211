#===- kb/bench/report.py - A suite's rows, table and geometric mean ------===#
#
# From kb-run's reports (each with the cuBLAS routes and baselines it timed in
# the same process) and bench/peers/torch_peer.py's times (same call): one row a
# program with kb's time, the strongest peer (the fastest cuBLAS / cuBLASLt
# route in the program's precision, or PyTorch eager / F.linear /
# torch.compile), kb's speed-up over it and over kb's own unfused bundle; the
# geometric mean of the speed-ups; the text table; and the suite report's
# JSON (docs/bench.md). Pure functions of recorded data: no GPU needed.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Dict, List, Optional

from ..ir import KbError

SCHEMA = 1
TOOL = "kb.bench.suite"


def _ms(t) -> Optional[float]:
    return t.get("median_ms") if isinstance(t, dict) else None


def _route_precision(precision: str) -> str:
    """The cuBLAS routes that are a program's peers: TF32 for tf32, fp32
    (kb-run's "ieee" routes) for ieee and tf32x3 (tf32x3 is fp32-class)."""
    return "tf32" if precision == "tf32" else "ieee"


def row(name: str, rep: Optional[dict], peer: Optional[dict], precision: str = "",
        family: str = "") -> Dict[str, Any]:
    """One program's row from its kb-run report and torch_peer entry."""
    r: Dict[str, Any] = {"name": name, "family": family, "precision": precision}
    if rep is None:
        r.update(ok=False, status="missing", error="no kb-run report")
        return r
    r["ok"] = bool(rep.get("ok"))
    r["status"] = rep.get("status", "ok" if r["ok"] else "error")
    if not r["ok"]:
        # kb-run's error report: "error" is the failure's kind, "message" its text.
        r["error"] = str(rep.get("message") or rep.get("error") or rep.get("verdict")
                         or r["status"])
    kb_ms = _ms(rep.get("time"))
    r["kb_ms"] = kb_ms
    for key in ("fraction_of_copy", "fraction_of_same_size_copy", "achieved_tflops"):
        if rep.get(key) is not None:
            r[key] = rep[key]
    units = sorted({k.get("config", "").split('mma = "')[1].split('"')[0]
                    for k in rep.get("kernels", []) if 'mma = "' in k.get("config", "")})
    r["kernels"] = len(rep.get("kernels", []))
    r["units"] = units
    peers: Dict[str, float] = {}
    routes = rep.get("cublas_routes") or {}
    if routes:
        key = _route_precision(precision) if precision else ("tf32" if "tf32" in routes else "ieee")
        timed = [x for x in routes.get(key, []) if _ms(x.get("time"))]
        if timed:
            best = min(timed, key=lambda x: x["time"]["median_ms"])
            peers[f"cuBLAS {'TF32' if key == 'tf32' else 'fp32'} ({best['route']})"] = best["time"]["median_ms"]
    for b in rep.get("baselines", []):
        t = _ms(b.get("time"))
        name_b = b.get("name", "")
        if t is None:
            continue
        if name_b.startswith("baseline ") and "unfused" in name_b:
            r["unfused_ms"] = t
        elif not routes and name_b.startswith("cuBLAS"):
            want = "TF32" if _route_precision(precision or "tf32") == "tf32" else "fp32"
            if f"cuBLAS {want}" in name_b:
                peers[name_b] = t
    if peer:
        for key, label in (("eager_ms", "torch eager"), ("linear_ms", "F.linear"),
                           ("compile_ms", "torch.compile")):
            if isinstance(peer.get(key), (int, float)):
                peers[label] = peer[key]
    r["peers"] = peers
    # torch.compile's kernels (torch_peer's profile of one call): how many
    # Inductor launched, so a peer whose time moves between calls says why.
    if peer and isinstance(peer.get("compile_kernels"), list):
        r["compile_kernels"] = len(peer["compile_kernels"])
        r["compile_kernel_names"] = peer["compile_kernels"][:8]
    if peers:
        which = min(peers, key=peers.get)
        r["strongest_peer"], r["strongest_peer_ms"] = which, peers[which]
    if r["ok"] and kb_ms:
        if peers:
            r["speedup"] = r["strongest_peer_ms"] / kb_ms
        if r.get("unfused_ms"):
            r["vs_unfused"] = r["unfused_ms"] / kb_ms
    return r


def summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The geometric mean of kb's speed-ups over the strongest peer, over
    the rows that have one; the count at 1.0x or better; the slowest."""
    sp = [(r["speedup"], r["name"]) for r in rows if r.get("speedup")]
    out: Dict[str, Any] = {"programs": len(rows), "with_peer": len(sp),
                           "wrong_or_failed": sum(1 for r in rows if not r.get("ok"))}
    if sp:
        out["geomean_speedup"] = math.exp(sum(math.log(s) for s, _ in sp) / len(sp))
        out["at_least_1x"] = sum(1 for s, _ in sp if s >= 1.0)
        lo = min(sp)
        out["min_speedup"], out["min_program"] = lo[0], lo[1]
    return out


def format_table(rows: List[Dict[str, Any]], summ: Dict[str, Any]) -> str:
    head = ("program", "kb ms", "strongest peer ms (which)", "kb speed-up", "vs unfused",
            "% of copy", "% of same-size copy", "TFLOP/s")
    lines = [head]
    for r in rows:
        if not r.get("ok"):
            lines.append((r["name"], r.get("status", "error").upper(), r.get("error", "")[:60],
                          "", "", "", "", ""))
            continue
        peer = (f"{r['strongest_peer_ms']:.4f} ({r['strongest_peer'].split(' (')[0]})"
                if "strongest_peer" in r else "none timed")
        lines.append((r["name"], f"{r['kb_ms']:.4f}" if r.get("kb_ms") else "",
                      peer, f"{r['speedup']:.2f}x" if "speedup" in r else "",
                      f"{r['vs_unfused']:.2f}x" if "vs_unfused" in r else "",
                      f"{100 * r['fraction_of_copy']:.0f}%" if r.get("fraction_of_copy") else "",
                      (f"{100 * r['fraction_of_same_size_copy']:.0f}%"
                       if r.get("fraction_of_same_size_copy") else ""),
                      f"{r['achieved_tflops']:.1f}" if r.get("achieved_tflops") else ""))
    widths = [max(len(str(l[i])) for l in lines) for i in range(len(head))]
    text = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(l, widths)).rstrip() for l in lines)
    if "geomean_speedup" in summ:
        text += (f"\ngeometric mean {summ['geomean_speedup']:.3f}x over the strongest peer, "
                 f"{summ['with_peer']} programs ({summ['at_least_1x']} at 1.0x or better, "
                 f"slowest {summ['min_speedup']:.2f}x {summ['min_program']})")
    else:
        text += "\nno program has a timed peer: no geometric mean"
    if summ.get("wrong_or_failed"):
        text += f"\n{summ['wrong_or_failed']} program(s) wrong or not run (no speed-up counted)"
    return text


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise KbError(f"{path}: {e}")


def _from_archive(spec: str):
    """ARCHIVE.tar.xz[:FOLDER]: a gpu-check.sh folder inside an archive
    (bench/results/RUN/raw.tar.xz:call4): its kb_results.json and
    torch_peer.json."""
    import tarfile
    arc, _, member = spec.partition(".tar.xz")
    arc += ".tar.xz"
    member = member.lstrip(":").strip("/")
    pre = f"{member}/" if member else ""
    try:
        with tarfile.open(arc) as t:
            names = set(t.getnames())
            if pre + "kb_results.json" not in names:
                raise KbError(f"{spec}: no {pre}kb_results.json in {arc}")
            kb = json.load(t.extractfile(pre + "kb_results.json"))
            peer = (json.load(t.extractfile(pre + "torch_peer.json"))
                    if pre + "torch_peer.json" in names else {})
    except (OSError, tarfile.TarError, json.JSONDecodeError) as e:
        raise KbError(f"{spec}: {e}")
    return kb, peer


def load_recorded(paths: List[str]):
    """kb-run reports and torch_peer times from recorded runs: a suite
    report (kb.bench --suite ... writes one), a folder of a
    scripts/gpu-check.sh run (kb_results.json, torch_peer.json), or such a
    folder inside an archive (RUN/raw.tar.xz:FOLDER). A program in a later
    path replaces an earlier one."""
    kb: Dict[str, dict] = {}
    peer: Dict[str, dict] = {}
    for spec in paths:
        if ".tar.xz" in spec and not Path(spec).is_dir():
            k, pr = _from_archive(spec)
            kb.update(k)
            peer.update(pr)
            continue
        p = Path(spec)
        if p.is_dir():
            if not (p / "kb_results.json").is_file():
                raise KbError(f"{p}: no kb_results.json (a gpu-check.sh run folder holds one)")
            kb.update(_load_json(p / "kb_results.json"))
            if (p / "torch_peer.json").is_file():
                peer.update(_load_json(p / "torch_peer.json"))
            continue
        rep = _load_json(p)
        if not isinstance(rep, dict) or rep.get("tool") != TOOL:
            raise KbError(f"{p}: not a kb.bench suite report (nor a gpu-check.sh run folder)")
        kb.update(rep.get("kb_run", {}))
        peer.update(rep.get("torch_peer", {}))
    return kb, peer
