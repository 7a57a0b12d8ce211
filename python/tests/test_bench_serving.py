"""The serving suites of python3 -m kb.bench on the host (no GPU): the plan
(every M once, the samples of each bucket), the compile count of the build
half (serving-tiny's MLP precompiled with the checkout's kb-opt: its serving
loop on meta tensors, then each sample's exact shape), the dry run against
that cache (every bundle found, nothing compiled), a missing bundle as an
error row rather than a crash, and the report, table and plot from rows.
The timed half runs on the GPU only (docs/bench.md, "serving")."""
import json
import re
import shutil

import pytest

torch = pytest.importorskip("torch")

from kb.bench import catalog, models, serving, serving_report, suite  # noqa: E402
from kb.bundle import find_tool  # noqa: E402
from kb.ir import KbError  # noqa: E402

BUCKETS = (16, 32, 64, 128, 256, 512)


def test_samples_are_each_buckets_bottom_middle_and_top():
    got = serving.samples(BUCKETS, 512)
    assert got[:6] == [(16, 2), (16, 9), (16, 16), (32, 17), (32, 24), (32, 32)]
    assert got[-3:] == [(512, 257), (512, 384), (512, 512)]
    assert len(got) == 18
    # max_m inside a bucket: its top is max_m; the buckets past it, none.
    assert serving.samples(BUCKETS, 24, ("bottom", "top")) == [(16, 2), (16, 16), (32, 17), (32, 24)]
    assert serving.samples(BUCKETS, 20) == [(16, 2), (16, 9), (16, 16), (32, 17), (32, 18), (32, 20)]
    with pytest.raises(KbError, match="sample 'edge' \\(known: bottom, middle, top\\)"):
        serving.samples(BUCKETS, 512, ("edge",))


def test_plan_calls_every_m_once_in_a_seeded_order():
    spec = catalog.suites()["serving"]
    plans = serving.plans(spec)
    assert [p.entry.name for p in plans] == ["mlp-1024/f32", "mlp-1024/bf16", "gpt2-768/f32", "gpt2-768/bf16"]
    p = plans[0]
    assert sorted(p.order) == list(range(1, 513)) and p.order != sorted(p.order)
    assert p.order == serving.plans(spec)[0].order  # the build half and the GPU half agree
    assert p.static == sorted({p.order[0], 1}) and p.buckets == BUCKETS
    assert len(p.samples) == 18 and len(plans[2].samples) == 12  # the GPT-2 block: bottom and top
    with pytest.raises(KbError, match="max_m 600 is past the largest bucket 512"):
        serving.plan(p.entry, dict(spec, max_m=600))
    with pytest.raises(KbError, match="--models mlp-9: not in the suite"):
        serving.plans(spec, "mlp-9")


def test_count_compiles_a_graphs_shapes():
    graphs = [{"pieces": {"kb_piece_0": {"keys": ["a"], "refused": []},
                          "kb_piece_1": {"keys": ["b"], "refused": []}}},   # a static graph
              {"pieces": {"kb_piece_0": {"keys": ["c", "d", "e"], "refused": []},
                          "kb_piece_1": {"keys": ["f", "g"], "refused": ["g"]}}}]  # dynamic, 3 buckets
    assert serving.count(graphs) == {"dynamo_graphs": 2, "compiles": 4, "bundles": 7, "refused": 1}
    assert serving.count([]) == {"dynamo_graphs": 0, "compiles": 0, "bundles": 0, "refused": 0}


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """serving-tiny precompiled, as scripts/build-pybundles.sh does."""
    if not find_tool("kb-opt", "KB_OPT"):
        pytest.skip("kb-opt is not built (bash scripts/setup.sh)")
    d = tmp_path_factory.mktemp("serving") / "cache"
    assert suite.main(["--suite", "serving-tiny", "--build-only", str(d)]) == 0
    return d


def _record(cache):
    return json.loads((cache / "precompile.json").read_text())["serving-tiny"]["entries"]["mlp-64/f32"]


def test_build_half_counts_one_compile_a_bucket(cache):
    rec = _record(cache)
    p = serving.plans(catalog.suites()["serving-tiny"])[0]
    s = rec["serving"]
    # Dynamo: a static graph at the first M, a dynamic one at the second, a
    # static one at M = 1; the dynamic graph's MLP piece: buckets 16 and 32.
    assert s["status"] == "built" and s["dynamo_graphs"] == 3
    assert s["compiles"] == 4 == s["bundles"] and s["refused"] == 0
    assert s["static"] == p.static and p.order[0] != 1
    assert rec["samples"] == [2, 16, 17, 24]
    keys = rec["keys"]
    assert len(keys["serving"]) == 4
    # A bucket's top compiled alone is the bucket's bundle; the others are their own.
    assert keys["16"][0] in keys["serving"] and keys["24"][0] not in keys["serving"]
    assert keys["2"][0] not in keys["serving"] and keys["17"][0] not in keys["serving"]
    assert rec["compiled"] == 7
    assert all((cache / k / "manifest.json").is_file() for ks in keys.values() for k in ks)


def test_dry_run_finds_every_bundle_and_compiles_nothing(cache, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    before = sorted(x.name for x in cache.iterdir())
    out = tmp_path / "out"
    rc = suite.main(["--suite", "serving-tiny", "--bundles", str(cache), "--dry-run", "--out", str(out)])
    table = capsys.readouterr().out
    assert rc == 0, table
    rep = json.loads((out / "serving-tiny.json").read_text())
    assert rep["tool"] == "kb.bench.serving" and rep["dry_run"] and rep["precompile"]["entries"]
    (loop,) = rep["loops"]
    assert loop["ok"] and loop["status"] == "dry-run" and loop["calls"] == 24
    assert loop["compiles"] == 4 and loop["compiled_here"] == 0 and loop["dynamo_graphs"] == 3
    assert [(r["M"], r["bucket"], r["status"]) for r in rep["rows"]] == \
        [(2, 16, "dry-run"), (16, 16, "dry-run"), (17, 32, "dry-run"), (24, 32, "dry-run")]
    assert [r["same_bundle"] for r in rep["rows"]] == [False, True, False, False]
    assert rep["summary"]["max_compiles"] == 4 and rep["summary"]["wrong_or_failed"] == 0
    assert sorted(x.name for x in cache.iterdir()) == before
    assert (out / "table.txt").read_text().strip() == table.strip()
    assert "3 Dynamo graphs, 4 compiles (target <= 8), 4 bundles" in table
    assert "16      dynamic (same bundle)" in table


def test_a_missing_bundle_is_an_error_row_not_a_crash(cache, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))  # nothing could compile it
    keys = _record(cache)["keys"]
    # A bucket's bundle gone: the serving loop stops at the first M of the bucket.
    part = tmp_path / "no-bucket"
    shutil.copytree(cache, part)
    shutil.rmtree(part / keys["16"][0])
    rc = suite.main(["--suite", "serving-tiny", "--bundles", str(part), "--dry-run", "--out", str(tmp_path / "a")])
    table = capsys.readouterr().out
    assert rc == 1
    rep = json.loads((tmp_path / "a" / "serving-tiny.json").read_text())
    (loop,) = rep["loops"]
    assert loop["status"] == "missing" and not loop["ok"]
    p = serving.plans(catalog.suites()["serving-tiny"])[0]
    first = next(i for i, m in enumerate(p.order) if m not in p.static and m <= 16)
    assert loop["error"].startswith(f"M = {p.order[first]} (call {first + 1}): kb: no bundle for kb_piece_0")
    assert "cache_only is set" in loop["error"] and "\n" not in loop["error"]
    assert [r["status"] for r in rep["rows"]] == ["missing"] * 4
    assert "mlp-64/f32: serving loop MISSING: M = " in table and "Traceback" not in table
    assert not (part / keys["16"][0]).exists()
    # An exact shape's bundle gone: the loop runs, that sample is the error row.
    part = tmp_path / "no-exact"
    shutil.copytree(cache, part)
    shutil.rmtree(part / keys["2"][0])
    rc = suite.main(["--suite", "serving-tiny", "--bundles", str(part), "--dry-run", "--out", str(tmp_path / "b")])
    capsys.readouterr()
    assert rc == 1
    rep = json.loads((tmp_path / "b" / "serving-tiny.json").read_text())
    assert rep["loops"][0]["ok"]
    assert [r["status"] for r in rep["rows"]] == ["missing", "dry-run", "dry-run", "dry-run"]
    assert rep["rows"][0]["error"].startswith("exact M = 2: kb: no bundle for kb_piece_0")


def test_a_run_without_models_takes_the_caches_entries(tmp_path, capsys, monkeypatch):
    """scripts/build-pybundles.sh fills serving's cache with the MLP alone by
    default: a run without --models runs what precompile.json names (here
    over a cache emptied of bundles: the loop's first call is the error row)."""
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    c = tmp_path / "cache"
    c.mkdir()
    (c / "precompile.json").write_text(json.dumps({"serving": {"entries": {"mlp-1024/f32": {}}}}))
    rc = suite.main(["--suite", "serving", "--bundles", str(c), "--dry-run", "--out", str(tmp_path / "o")])
    out = capsys.readouterr()
    assert rc == 1
    assert "the cache holds mlp-1024/f32 of the suite's 4 entries (precompile.json)" in out.err
    rep = json.loads((tmp_path / "o" / "serving.json").read_text())
    assert [l["name"] for l in rep["loops"]] == ["mlp-1024/f32"] and rep["loops"][0]["status"] == "missing"
    assert len(rep["rows"]) == 18 and not list(c.glob("*/manifest.json"))
    (c / "precompile.json").write_text(json.dumps({"serving": {"entries": {"gpt2-9/f32": {}}}}))
    assert suite.main(["--suite", "serving", "--bundles", str(c), "--dry-run", "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds none of suite 'serving''s entries (gpt2-9/f32)" in err[0]


def test_budget_skips_the_loop(tmp_path):
    loops, rows = serving.measure(serving.plans(catalog.suites()["serving-tiny"]), tmp_path, "sm_90a",
                                  budget_s=0, dry=True)
    assert [l["status"] for l in loops] == ["budget"] and rows == []
    assert "--models / --dtypes" in loops[0]["error"]


def test_the_timed_path_runs_on_the_cpu_with_a_stand_in_timer(tmp_path):
    """The GPU half's code (the loop against eager, each sample through the
    serving model and its exact twin, the ratio) on CPU tensors with a
    stand-in timer: PyTorch runs every piece there, so no bundle is read and
    the numbers are the stand-in's; what the GPU alone shows is not tested."""
    calls = []

    def timer(fn):
        fn()
        calls.append(fn)
        return {"median_ms": 1.1 if len(calls) <= 4 else 1.0}  # the 4 bucketed first, then the exact
    loops, rows = serving.measure(serving.plans(catalog.suites()["serving-tiny"]), tmp_path, "sm_90a",
                                  budget_s=300, dry=False, device="cpu", timer=timer)
    (loop,) = loops
    assert loop["ok"] and loop["status"] == "ok" and loop["max_err"] == 0.0 and loop["dynamo_graphs"] == 3
    assert [(r["M"], r["status"], r["path"]) for r in rows] == [(m, "ok", "pieces") for m in (2, 16, 17, 24)]
    assert all(r["ratio"] == pytest.approx(1.1) and r["exact_max_err"] == 0.0 for r in rows)
    assert len(calls) == 8 and not list(tmp_path.iterdir())
    rep = serving_report.build_report("serving-tiny", loops, rows)
    assert rep["summary"]["buckets_within"] == 0 and rep["summary"]["worst_ratio"] == pytest.approx(1.1)


def _timed(name, m, bucket, bucketed, exact, **more):
    r = {"name": name, "model": name.split("/")[0], "dtype": "f32", "M": m, "bucket": bucket, "graph": "dynamic",
         "ok": True, "status": "ok", "bucketed": {"median_ms": bucketed}, "exact": {"median_ms": exact},
         "ratio": bucketed / exact, "path": "whole graph", "max_err": 1e-4, "exact_max_err": 2e-4}
    r.update(more)
    return r


def test_report_worst_ratio_a_bucket(tmp_path):
    loop = {"name": "mlp/f32", "ok": True, "status": "ok", "calls": 512, "max_m": 512, "first": [371, 27, 154, 117],
            "dynamo_graphs": 3, "compiles": 8, "bundles": 8, "max_err": 1e-3, "max_err_m": 371, "tol": 5e-3,
            "loop_s": 4.2}
    rows = [_timed("mlp/f32", 17, 32, 0.0210, 0.0200), _timed("mlp/f32", 24, 32, 0.0203, 0.0200),
            _timed("mlp/f32", 32, 32, 0.0200, 0.0201, same_bundle=True),
            _timed("mlp/f32", 33, 64, 0.0240, 0.0200),
            {"name": "mlp/f32", "M": 48, "bucket": 64, "graph": "dynamic", "ok": False, "status": "missing",
             "error": "exact M = 48: kb: no bundle"}]
    rep = serving_report.build_report("serving", [loop], rows, device="GPU")
    s = rep["summary"]
    assert s["worst_by_bucket"] == {"mlp/f32": {"32": {"ratio": pytest.approx(1.05), "M": 17},
                                                "64": {"ratio": pytest.approx(1.2), "M": 33}}}
    assert s["worst_ratio"] == pytest.approx(1.2) and s["worst_at"] == {"name": "mlp/f32", "M": 33}
    assert (s["buckets_timed"], s["buckets_within"], s["max_compiles"], s["meets_compiles"]) == (2, 1, 8, 1)
    assert s["timed"] == 4 and s["wrong_or_failed"] == 1
    text = serving_report.format_table(rep)
    assert re.search(r"^mlp/f32\s+17\s+32\s+dynamic\s+0\.0210\s+0\.0200\s+1\.050\s+whole graph\s+2\.0e-04$",
                     text, re.M), text
    assert "dynamic (same bundle)" in text and "MISSING" in text
    assert "worst ratio a bucket: 32: 1.050 (M 17), 64: 1.200 (M 33)" in text
    assert "buckets within 1.05x of the exact shape: 1 of 2; worst 1.200 (mlp/f32 M 33)" in text
    assert "8 compiles (target <= 8)" in text and "max error 1.0e-03 (tol 5e-03) at M 371" in text
    pytest.importorskip("matplotlib")
    serving_report.write(rep, tmp_path)
    assert (tmp_path / "serving.png").stat().st_size > 1000
    assert json.loads((tmp_path / "serving.json").read_text())["summary"]["worst_at"]["M"] == 33


def test_list_names_the_serving_suites(capsys):
    assert suite.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert any(l.startswith("serving ") and "2 models x 2 dtypes" in l for l in out.splitlines())
    assert models.entries(catalog.suites()["serving-tiny"])[0].name == "mlp-64/f32"
