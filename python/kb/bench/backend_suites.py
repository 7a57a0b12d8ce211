#===- kb/bench/backend_suites.py - Suites of the torch.compile backend ----===#
#
# python3 -m kb.bench --suite S for the suites of bench/suites.py with a
# "kind" (models, models-tiny: models.py; backend-overhead: overhead.py;
# serving, serving-tiny: serving.py),
# which run kb through torch.compile rather than kb-run:
#   --build-only CACHE   precompile into the bundle cache CACHE (kb-opt, no
#                        GPU), with precompile.json there;
#   --bundles CACHE      measure on this GPU from CACHE (no kb-opt: a bundle
#                        missing from it is an error, never compiled);
#   --dry-run            the measure half on the CPU, untimed (with --bundles
#                        CACHE, or after compiling into OUT/cache).
# --models / --dtypes (comma-separated) choose entries, --budget-s bounds the
# run. Writes OUT/<suite>.json, OUT/table.txt (and OUT/<suite>.png).
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import datetime
import json
import platform
import sys
from pathlib import Path
from typing import Any, Dict

from ..ir import KbError
from . import catalog, models, models_report, overhead, serving, serving_report

KINDS = ("models", "backend-overhead", "serving")
WITH_ENTRIES = ("models", "serving")  # kinds whose entries --models / --dtypes choose


def _precompile(name: str, spec: Dict[str, Any], args, cache: Path) -> int:
    from ..bundle import find_kb_opt
    find_kb_opt()  # KbError, one line, where there is none
    if spec["kind"] == "models":
        rec = models.precompile(models.entries(spec, args.models, args.dtypes), cache, args.chip)
    elif spec["kind"] == "serving":
        rec = serving.precompile(serving.plans(spec, args.models, args.dtypes), cache, args.chip)
    else:
        rec = {"entries": {spec["name"]: overhead.precompile(spec, cache, args.chip),
                           **overhead.precompile_blocks(spec, cache, args.chip)}}
        rec["cache_mb"] = round(models.cache_bytes(cache) / 2 ** 20, 2)
    rec.update(suite=name, commit=catalog.commit(), host=platform.node(),
               finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    log = cache / "precompile.json"
    old = json.loads(log.read_text()) if log.is_file() else {}
    old[name] = rec  # one record a suite: models and backend-overhead may share a cache
    log.write_text(json.dumps(old, indent=1))
    refused = sum(len(e.get("refused", [])) for e in rec["entries"].values())
    print(f"kb.bench: suite '{name}': {len(rec['entries'])} entr{'y' if len(rec['entries']) == 1 else 'ies'} "
          f"precompiled into {cache} in {rec.get('seconds', sum(e['seconds'] for e in rec['entries'].values()))} s "
          f"({refused} piece(s) refused by kb-opt), cache {models.cache_bytes(cache) / 2 ** 20:.2f} MiB; "
          f"on the GPU: python3 -m kb.bench --suite {name} --bundles {cache}")
    return 0


def _cached_plans(name: str, spec: Dict[str, Any], cache: Path):
    """A serving suite run without --models / --dtypes: its plans for the
    entries its record in the cache's precompile.json names, where that is
    fewer than the suite's (scripts/build-pybundles.sh fills serving's cache
    with the MLP alone unless KB_SERVING_MODELS says more); else all."""
    every = serving.plans(spec)
    pre = cache / "precompile.json"
    rec = (json.loads(pre.read_text()).get(name) or {}) if pre.is_file() else {}
    done = set(rec.get("entries", {}))
    if not done or {p.entry.name for p in every} <= done:
        return every
    have = [p for p in every if p.entry.name in done]
    if not have:
        raise KbError(f"--bundles {cache}: its precompile.json holds none of suite '{name}''s entries "
                      f"({', '.join(sorted(done))})")
    models.progress(f"the cache holds {', '.join(p.entry.name for p in have)} of the suite's {len(every)} "
                    f"entries (precompile.json); --models / --dtypes to ask for others")
    return have


def main(name: str, spec: Dict[str, Any], args) -> int:
    if spec.get("kind") not in KINDS:
        raise KbError(f"bench/suites.py: suite '{name}' has kind {spec.get('kind')!r} (known: {', '.join(KINDS)})")
    if args.only:
        raise KbError(f"--only selects programs; suite '{name}' takes --models / --dtypes")
    if spec["kind"] not in WITH_ENTRIES and (args.models or args.dtypes):
        raise KbError(f"--models / --dtypes choose a models suite's entries; '{name}' has none")
    if args.build_only:
        return _precompile(name, spec, args, Path(args.build_only))
    out = Path(args.out or catalog.root() / "build" / "bench" / name)
    if args.bundles:
        cache = Path(args.bundles)
        if not cache.is_dir():
            raise KbError(f"--bundles {cache}: no such folder (--build-only {cache} fills it)")
    else:  # compile here first (kb-opt), into OUT/cache
        cache = out / "cache"
        _precompile(name, spec, args, cache)
    if spec["kind"] == "serving" and not args.models and not args.dtypes:
        todo = _cached_plans(name, spec, cache)
    else:
        todo = models.entries(spec, args.models, args.dtypes) if spec["kind"] == "models" else \
            serving.plans(spec, args.models, args.dtypes) if spec["kind"] == "serving" else []
    import torch
    if not args.dry_run and not torch.cuda.is_available():
        print(f"kb.bench: no CUDA device here; --build-only DIR fills the cache without one, "
              f"--dry-run checks it on the CPU", file=sys.stderr)
        return 2
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    pre = cache / "precompile.json"
    meta: Dict[str, Any] = {
        "started": started, "commit": catalog.commit(), "cache": str(cache), "dry_run": bool(args.dry_run),
        "cache_mb": round(models.cache_bytes(cache) / 2 ** 20, 2), "chip": args.chip,
        "torch": torch.__version__,
        "device": "" if args.dry_run else torch.cuda.get_device_name(),
        "precompile": (json.loads(pre.read_text()).get(name) if pre.is_file() else None)}
    if spec["kind"] == "models":
        rows = models.measure(todo, cache, args.chip, args.budget_s, args.dry_run,
                              profile=getattr(args, "profile", False))
        rep = models_report.build_report(name, rows, budget_s=args.budget_s, **meta)
        models_report.write(rep, out)
        print(models_report.format_table(rep))
        return 1 if rep["summary"]["wrong_or_failed"] else 0
    if spec["kind"] == "serving":
        loops, rows = serving.measure(todo, cache, args.chip, args.budget_s, args.dry_run)
        rep = serving_report.build_report(name, loops, rows, budget_s=args.budget_s, **meta)
        serving_report.write(rep, out)
        print(serving_report.format_table(rep))
        return 1 if rep["summary"]["wrong_or_failed"] else 0
    rows = overhead.measure(spec, cache, args.chip, args.dry_run)
    rep = {"tool": "kb.bench.backend-overhead", "schema": models_report.SCHEMA, "suite": name, "rows": rows,
           "target_us": overhead.TARGET_US, **meta}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(rep, indent=1, default=float))
    table = overhead.format_table(rows)
    (out / "table.txt").write_text(table + "\n")
    print(f"kb.bench: wrote {out / (name + '.json')} and {out / 'table.txt'}", file=sys.stderr)
    print(table)
    return 0 if all(r.get("ok") for r in rows) else 1
