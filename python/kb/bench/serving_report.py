#===- kb/bench/serving_report.py - The serving suites' report and table --===#
#
# From what serving.py measures (per entry the serving loop's record, per
# sample M a row): issue #47's targets counted (compiles <= 8; bucketed time
# within 5% of the exact shape's), the worst ratio a bucket, the text table
# (table.txt), the report's JSON (<suite>.json, docs/bench.md) and its plot
# (<suite>.png, kb.plot.draw_serving: time against M, bucketed and exact).
# Pure functions of the rows: no GPU.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from .serving import TARGET_COMPILES, TARGET_RATIO

TOOL = "kb.bench.serving"
SCHEMA = 1


def worst_by_bucket(rows: List[Dict[str, Any]]) -> Dict[str, Dict[str, Dict[str, Any]]]:
    """entry -> bucket (as a string) -> the timed row of the highest ratio:
    {"ratio", "M"}."""
    out: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for r in rows:
        if "ratio" not in r:
            continue
        cur = out.setdefault(r["name"], {}).get(str(r["bucket"]))
        if cur is None or r["ratio"] > cur["ratio"]:
            out[r["name"]][str(r["bucket"])] = {"ratio": r["ratio"], "M": r["M"]}
    return out


def summary(loops: List[Dict[str, Any]], rows: List[Dict[str, Any]]) -> Dict[str, Any]:
    worst = worst_by_bucket(rows)
    buckets = [w for e in worst.values() for w in e.values()]
    ran = [l for l in loops if "compiles" in l]
    top = max(buckets, key=lambda w: w["ratio"], default=None)
    return {"entries": len(loops),
            "targets": {"compiles": TARGET_COMPILES, "ratio": TARGET_RATIO},
            "compiles": {l["name"]: l["compiles"] for l in ran},
            "max_compiles": max((l["compiles"] for l in ran), default=None),
            "meets_compiles": sum(1 for l in ran if l["compiles"] <= TARGET_COMPILES),
            "timed": sum(1 for r in rows if "ratio" in r), "samples": len(rows),
            "worst_by_bucket": worst,
            "worst_ratio": top["ratio"] if top else None,
            "worst_at": ({"name": next(n for n, e in worst.items() if top in e.values()), "M": top["M"]}
                         if top else None),
            "buckets_timed": len(buckets),
            "buckets_within": sum(1 for w in buckets if w["ratio"] <= TARGET_RATIO),
            "wrong_or_failed": sum(1 for l in loops if not l.get("ok")) + sum(1 for r in rows if not r.get("ok"))}


def build_report(suite: str, loops: List[Dict[str, Any]], rows: List[Dict[str, Any]], **meta) -> Dict[str, Any]:
    rep = {"tool": TOOL, "schema": SCHEMA, "suite": suite, "loops": loops, "rows": rows,
           "summary": summary(loops, rows)}
    rep.update(meta)
    return rep


def _cols(lines) -> str:
    widths = [max(len(str(l[i])) for l in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(l, widths)).rstrip() for l in lines)


def format_table(rep: Dict[str, Any]) -> str:
    lines = [("entry", "M", "bucket", "graph", "bucketed ms", "exact ms", "ratio", "path", "max err")]
    for r in rep["rows"]:
        if not r.get("ok") and "ratio" not in r:
            lines.append((r["name"], r["M"], r["bucket"], r.get("graph", ""), r.get("status", "error").upper(),
                          r.get("error", "")[:70], "", "", ""))
            continue
        ms = [f"{r[k]['median_ms']:.4f}" if isinstance(r.get(k), dict) else "" for k in ("bucketed", "exact")]
        err = f"{max(r['max_err'], r['exact_max_err']):.1e}" if "exact_max_err" in r else ""
        ratio = f"{r['ratio']:.3f}" if "ratio" in r else r.get("status", "")
        graph = r["graph"] + (" (same bundle)" if r.get("same_bundle") else "")
        lines.append((r["name"], r["M"], r["bucket"], graph, *ms, ratio, r.get("path", ""),
                      err + ("" if r.get("ok") else " " + r.get("status", "").upper())))
    text = _cols(lines)
    for l in rep["loops"]:
        if "compiles" not in l:
            text += f"\n{l['name']}: serving loop {l.get('status', 'error').upper()}: {l.get('error', '')[:200]}"
            continue
        text += (f"\n{l['name']}: serving loop over M 1..{l['max_m']} ({l['calls']} calls, first "
                 f"{', '.join(map(str, l['first'][:4]))}, ...): {l['dynamo_graphs']} Dynamo graphs, "
                 f"{l['compiles']} compiles (target <= {TARGET_COMPILES}), {l['bundles']} bundles")
        if "max_err" in l:
            text += f"; max error {l['max_err']:.1e} (tol {l['tol']:.0e}) at M {l['max_err_m']}"
        if "loop_s" in l:
            text += f"; {l['loop_s']:.1f} s"
        if l.get("error"):
            text += f"\n  {l.get('status', '').upper()}: {l['error'][:200]}"
    s = rep["summary"]
    for name, by in s["worst_by_bucket"].items():
        text += f"\n{name}: worst ratio a bucket: " + ", ".join(
            f"{b}: {w['ratio']:.3f} (M {w['M']})" for b, w in sorted(by.items(), key=lambda kv: int(kv[0])))
    text += (f"\ncompiles: at most {s['max_compiles']} (target <= {TARGET_COMPILES}; {s['meets_compiles']} of "
             f"{s['entries']} entries meet it); buckets within {TARGET_RATIO:.2f}x of the exact shape: "
             f"{s['buckets_within']} of {s['buckets_timed']}")
    if s["worst_ratio"] is not None:
        text += f"; worst {s['worst_ratio']:.3f} ({s['worst_at']['name']} M {s['worst_at']['M']})"
    if s["wrong_or_failed"]:
        text += f"\n{s['wrong_or_failed']} loop(s) or sample(s) wrong or not run"
    return text


def write(rep: Dict[str, Any], out: Path) -> None:
    """OUT/<suite>.json, OUT/table.txt and, where anything was timed,
    OUT/<suite>.png."""
    from .models_report import write_suite
    write_suite(rep, out, format_table(rep), bool(rep["summary"]["timed"]), "draw_serving")
