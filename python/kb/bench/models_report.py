#===- kb/bench/models_report.py - The models suites' report and table -----===#
#
# From the rows models.py measures: kb's speed-ups over eager and each
# Inductor mode per model x dtype, the targets (>= 1.5x eager, >= 1.0x
# Inductor max-autotune-no-cudagraphs) counted, the text table (table.txt),
# the report's JSON (<suite>.json, docs/bench.md) and its bar chart
# (<suite>.png, kb.plot.draw_models). Pure functions of the rows: no GPU.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

from ..ir import KbError

TOOL = "kb.bench.models"
SCHEMA = 1
TARGET_EAGER, TARGET_MAX_AUTOTUNE = 1.5, 1.0  # issue #47
PEERS = (("eager", "eager"), ("inductor_max_autotune", "max-autotune"), ("inductor", "inductor"))


def _ms(r: Dict[str, Any], key: str):
    t = r.get(key)
    return t.get("median_ms") if isinstance(t, dict) else None


def speedups(r: Dict[str, Any]) -> Dict[str, float]:
    """kb's speed-up over each peer timed in the row (peer ms / kb ms)."""
    kb = _ms(r, "kb")
    if not r.get("ok") or not kb:
        return {}
    return {k: _ms(r, k) / kb for k, _ in PEERS if _ms(r, k)}


def summary(rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    timed = [r for r in rows if speedups(r)]
    out: Dict[str, Any] = {"entries": len(rows), "timed": len(timed),
                           "wrong_or_failed": sum(1 for r in rows if not r.get("ok")),
                           "targets": {"vs_eager": TARGET_EAGER, "vs_max_autotune": TARGET_MAX_AUTOTUNE}}
    sp = [speedups(r) for r in timed]
    out["meets_eager"] = sum(1 for s in sp if s.get("eager", 0) >= TARGET_EAGER)
    with_ma = [s for s in sp if "inductor_max_autotune" in s]
    out["with_max_autotune"] = len(with_ma)
    out["meets_max_autotune"] = sum(1 for s in with_ma if s["inductor_max_autotune"] >= TARGET_MAX_AUTOTUNE)
    return out


def speedups_kb_inductor(r: Dict[str, Any]) -> Dict[str, float]:
    """The same for kb with Inductor compiling what kb leaves out
    (fallback="inductor"), where it ran within the tolerance."""
    t = r.get("kb_inductor")
    if not r.get("ok") or not isinstance(t, dict) or not t.get("median_ms") \
            or not t.get("max_err", 1e9) <= r.get("tol", 0):
        return {}
    return {k: _ms(r, k) / t["median_ms"] for k, _ in PEERS if _ms(r, k)}


def build_report(suite: str, rows: List[Dict[str, Any]], **meta) -> Dict[str, Any]:
    for r in rows:
        s = speedups(r)
        if s:
            r["speedup"] = s
        s = speedups_kb_inductor(r)
        if s:
            r["speedup_kb_inductor"] = s
    rep = {"tool": TOOL, "schema": SCHEMA, "suite": suite, "rows": rows, "summary": summary(rows)}
    rep.update(meta)
    return rep


def format_table(rep: Dict[str, Any]) -> str:
    head = ("model", "dtype", "kb pieces (ops kb / torch)", "max err (tol)", "eager ms",
            "max-autotune ms", "inductor ms", "kb ms", "vs eager", "vs max-autotune", "vs inductor",
            "kb+inductor ms", "vs max-autotune")
    lines = [head]
    for r in rep["rows"]:
        p = r.get("partition") or {}
        pieces = (f"{p['pieces']} ({p['kb_ops']} / {p['left_to_torch']})" if p else "")
        err = f"{r['max_err']:.1e} ({r['tol']:.0e})" if "max_err" in r else ""
        if not r.get("ok"):
            lines.append((r["model"], r["dtype"], pieces, err, r.get("status", "error").upper(),
                          r.get("error", "")[:70], "", "", "", "", "", "", ""))
            continue
        ms = [f"{_ms(r, k):.4f}" if _ms(r, k) else "" for k in ("eager", "inductor_max_autotune",
                                                                 "inductor", "kb")]
        sp = r.get("speedup", {})
        ki, spi = r.get("kb_inductor") or {}, r.get("speedup_kb_inductor", {})
        kim = (f"{ki['median_ms']:.4f}" if ki.get("median_ms") else "") + \
            ("" if not ki.get("median_ms") or spi else " (over tol)") + ("error" if ki.get("error") else "")
        lines.append((r["model"], r["dtype"], pieces, err, *ms,
                      *[f"{sp[k]:.2f}x" if k in sp else "" for k, _ in PEERS],
                      kim, f"{spi['inductor_max_autotune']:.2f}x" if "inductor_max_autotune" in spi else ""))
    widths = [max(len(str(l[i])) for l in lines) for i in range(len(head))]
    text = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(l, widths)).rstrip() for l in lines)
    s = rep["summary"]
    text += (f"\n{s['timed']} of {s['entries']} timed; at >= {TARGET_EAGER}x eager: {s['meets_eager']}; "
             f"at >= {TARGET_MAX_AUTOTUNE}x Inductor max-autotune-no-cudagraphs: "
             f"{s['meets_max_autotune']} of {s['with_max_autotune']}")
    if s["wrong_or_failed"]:
        text += f"\n{s['wrong_or_failed']} entr{'y' if s['wrong_or_failed'] == 1 else 'ies'} wrong or not run"
    skipped = [f"{r['name']}: {x}" for r in rep["rows"] for x in r.get("skipped", [])]
    if skipped:
        text += "\nskipped: " + "; ".join(skipped)
    return text


def write(rep: Dict[str, Any], out: Path) -> None:
    """OUT/<suite>.json, OUT/table.txt and, where anything was timed,
    OUT/<suite>.png."""
    write_suite(rep, out, format_table(rep), any(r.get("speedup") for r in rep["rows"]),
                "draw_models")


def write_suite(rep: Dict[str, Any], out: Path, table: str, timed: bool, draw: str) -> None:
    """The backend suites' files: OUT/<suite>.json, OUT/table.txt and, where
    `timed`, OUT/<suite>.png by kb.plot's `draw` (a line on stderr where no
    plot can be drawn)."""
    out.mkdir(parents=True, exist_ok=True)
    js = out / f"{rep['suite']}.json"
    js.write_text(json.dumps(rep, indent=1, default=float))
    (out / "table.txt").write_text(table + "\n")
    print(f"kb.bench: wrote {js} and {out / 'table.txt'}", file=sys.stderr)
    if not timed:
        print("kb.bench: no plot: nothing was timed", file=sys.stderr)
        return
    try:
        from .. import plot
        getattr(plot, draw)(rep, out / f"{rep['suite']}.png")
        print(f"kb.bench: wrote {out / (rep['suite'] + '.png')}", file=sys.stderr)
    except ImportError:
        print("kb.bench: no plot: matplotlib is not installed here", file=sys.stderr)
    except KbError as e:
        print(f"kb.bench: no plot: {e}", file=sys.stderr)
