"""The torch.compile backend's suites of python3 -m kb.bench on the host (no
GPU): models-tiny's gpt2-64 and backend-overhead's MLP precompiled with the
checkout's kb-opt into one cache, then the GPU half's machinery as a dry run
on the CPU (torch.compile(model, backend="kb") with cache_only: every piece's
bundle found in the cache, the stitched model's output against eager, the
partition in the report); an empty cache is refused, entry by entry; the
filters and the no-GPU exit are one line; the report's speed-ups and targets
from rows. The timed half runs on the GPU only (docs/bench.md)."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from kb.bench import catalog, models, models_report, suite  # noqa: E402
from kb.bundle import find_tool  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """models-tiny's gpt2-64 (f32, bf16) and backend-overhead's MLP
    precompiled into one cache, as scripts/build-pybundles.sh does."""
    if not find_tool("kb-opt", "KB_OPT"):
        pytest.skip("kb-opt is not built (bash scripts/setup.sh)")
    d = tmp_path_factory.mktemp("models") / "cache"
    assert suite.main(["--suite", "models-tiny", "--models", "gpt2-64", "--build-only", str(d)]) == 0
    assert suite.main(["--suite", "backend-overhead", "--build-only", str(d)]) == 0
    return d


def test_precompile_records_its_bundles(cache):
    rec = json.loads((cache / "precompile.json").read_text())
    assert set(rec) == {"models-tiny", "backend-overhead"}
    tiny = rec["models-tiny"]["entries"]
    assert set(tiny) == {"gpt2-64/f32", "gpt2-64/bf16"}
    for e in tiny.values():
        assert len(set(e["keys"])) == 3 and not e["refused"]  # ln_1 + c_attn, attention, the rest
        assert all((cache / k / "manifest.json").is_file() for k in e["keys"])
    assert set(tiny["gpt2-64/f32"]["keys"]).isdisjoint(tiny["gpt2-64/bf16"]["keys"])
    mlp = rec["backend-overhead"]["entries"]["mlp-256"]
    assert len(set(mlp["keys"])) == 2  # M = 1 (static) and bucket 64 (dynamic)
    blocks = rec["backend-overhead"]["entries"]
    for name in ("gpt2-768-t64/bf16", "llama-512-t64/bf16"):  # whole models, static shapes
        assert blocks[name]["keys"] and not blocks[name]["refused"], name
        assert all((cache / k / "manifest.json").is_file() for k in blocks[name]["keys"])


def test_dry_run_finds_every_piece_in_the_cache(cache, tmp_path, capsys):
    out = tmp_path / "out"
    rc = suite.main(["--suite", "models-tiny", "--models", "gpt2-64", "--bundles", str(cache),
                     "--dry-run", "--out", str(out)])
    table = capsys.readouterr().out
    assert rc == 0, table
    rep = json.loads((out / "models-tiny.json").read_text())
    assert rep["tool"] == "kb.bench.models" and rep["dry_run"]
    assert rep["precompile"]["entries"]["gpt2-64/f32"]["keys"]
    rows = {r["name"]: r for r in rep["rows"]}
    assert set(rows) == {"gpt2-64/f32", "gpt2-64/bf16"}
    for r in rows.values():
        assert r["ok"] and r["status"] == "dry-run", r
        p = r["partition"]
        assert p["pieces"] == 3 and r["cache_hits"] == 3 and r["fallback_calls"] == 3
        assert p["left_to_torch"] > 0 and p["kernels"] >= 3  # read from the bundles
        assert "kb_piece_1" in p["text"] and not r["warnings"]
        # PyTorch ran the pieces on the CPU; the attention's piece runs SDPA
        # where eager writes the attention out (fold_explicit_attention):
        # equal but for f32 (bf16) rounding.
        assert r["max_err"] < (1e-5 if r["name"].endswith("f32") else 2e-2), r
    assert (out / "table.txt").read_text().strip() == table.strip()
    # 19 ops in 3 pieces, 3 left to PyTorch (the split's getitems; before
    # issue #47's bthd attention 17 / 10).
    assert re.search(r"^gpt2-64\s+f32\s+3 \(19 / 3\)\s+\d\.\de[+-]\d\d \(5e-03\)$", table, re.M), table


def test_an_empty_cache_is_refused_not_compiled(cache, tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))  # and nothing could compile it
    rc = suite.main(["--suite", "models-tiny", "--bundles", str(empty), "--dry-run",
                     "--out", str(tmp_path / "out")])
    assert rc == 1
    rep = json.loads((tmp_path / "out" / "models-tiny.json").read_text())
    assert [r["status"] for r in rep["rows"]] == ["missing"] * 4
    assert all("cache_only is set" in r["error"] and "kb_piece_0" in r["error"] for r in rep["rows"])
    assert not list(empty.iterdir())
    assert "4 entries wrong or not run" in capsys.readouterr().out


def test_backend_overhead_dry_run(cache, tmp_path, capsys):
    out = tmp_path / "o"
    assert suite.main(["--suite", "backend-overhead", "--bundles", str(cache), "--dry-run",
                       "--out", str(out)]) == 0
    rep = json.loads((out / "backend-overhead.json").read_text())
    assert [(r["M"], r["bucket"], r["status"]) for r in rep["rows"]] == [
        (64, 64, "dry-run"), (50, 64, "dry-run"), (1, "-", "dry-run"), (1, "-", "dry-run")]
    assert [r["name"] for r in rep["rows"][2:]] == ["gpt2-768-t64/bf16 1x64x768", "llama-512-t64/bf16 1x64x512"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert suite.main(["--suite", "backend-overhead", "--bundles", str(empty), "--dry-run",
                       "--out", str(out)]) == 1
    assert "MISSING" in capsys.readouterr().out


def test_filters_and_errors_are_one_line(capsys, tmp_path):
    spec = catalog.suites()["models"]
    assert [e.name for e in models.entries(spec, "llama-4096,gpt2-768", "bf16")] == \
        ["gpt2-768/bf16", "llama-4096/bf16"]  # the suite's order
    assert len(models.entries(spec)) == 6
    for args, want in ((["--models", "gpt2-9"], "--models gpt2-9: not in the suite"),
                       (["--dtypes", "f16"], "--dtypes f16: not in the suite"),
                       (["--only", "x"], "takes --models / --dtypes")):
        assert suite.main(["--suite", "models", "--bundles", str(tmp_path)] + args) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and want in err[0], err
    assert suite.main(["--suite", "models", "--bundles", str(tmp_path / "nope")]) == 1
    assert "no such folder" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present here")
def test_no_gpu_without_dry_run_is_one_line(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run([sys.executable, "-m", "kb.bench", "--suite", "models", "--bundles", str(tmp_path),
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 2
    err = [l for l in p.stderr.strip().splitlines() if "triton" not in l]
    assert len(err) == 1 and "no CUDA device" in err[0] and "--dry-run" in err[0]
    assert not (tmp_path / "o").exists()


def _row(name, ok=True, **ms):
    r = {"model": name.split("/")[0], "dtype": name.split("/")[1], "name": name, "ok": ok,
         "status": "ok" if ok else "wrong", "max_err": 1e-3, "tol": 5e-3,
         "partition": {"pieces": 3, "kb_ops": 17, "left_to_torch": 10}}
    r.update({k: {"median_ms": v} for k, v in ms.items()})
    return r


def test_report_speedups_and_targets(tmp_path):
    rows = [_row("a/f32", eager=3.0, kb=1.5, inductor_max_autotune=1.4, inductor=2.0),
            _row("b/bf16", eager=2.0, kb=1.0, inductor_max_autotune=1.0),
            _row("c/f32", eager=1.0, kb=2.0),
            _row("d/f32", ok=False, eager=1.0, kb=0.1)]
    rep = models_report.build_report("models", rows)
    assert rows[0]["speedup"] == {"eager": 2.0, "inductor_max_autotune": 1.4 / 1.5, "inductor": 2.0 / 1.5}
    assert "speedup" not in rows[3]  # a wrong result counts no speed-up
    s = rep["summary"]
    assert (s["timed"], s["meets_eager"], s["with_max_autotune"], s["meets_max_autotune"]) == (3, 2, 2, 1)
    text = models_report.format_table(rep)
    assert "2.00x" in text and "0.93x" in text and "WRONG" in text
    assert "at >= 1.5x eager: 2" in text and "1 of 2" not in text.split("\n")[0]
    pytest.importorskip("matplotlib")
    models_report.write(rep, tmp_path)
    assert (tmp_path / "models.png").stat().st_size > 1000
    assert json.loads((tmp_path / "models.json").read_text())["summary"] == s


def test_budget_skips_what_no_longer_fits(tmp_path):
    spec = catalog.suites()["models-tiny"]
    rows = models.measure(models.entries(spec), tmp_path, "sm_90a", budget_s=0, dry=True)
    assert [r["status"] for r in rows] == ["budget"] * 4  # nothing started, the cache not read
    assert all("--models / --dtypes" in r["error"] for r in rows)
    b = models.Budget(60)
    assert b.fits("inductor")
    b.took["inductor"] = 90.0  # the last compile would not end in time
    assert not b.fits("inductor") and b.fits("entry")


def test_backend_overhead_table_shows_graphs_and_direct_launches():
    from kb.bench import overhead
    row = {"name": "mlp-256 M=50", "M": 50, "bucket": 64, "ok": True, "status": "ok", "kernels": 3,
           "model_us": 31.5, "model_piece_graphs_us": 60.2, "model_direct_us": 331.0, "kb_piece_us": 20.2,
           "kb_piece_direct_us": 300.1, "kb_load_us": 150.0, "graph_replay_us": 9.0, "python_us_per_kernel": 7.5,
           "python_us_per_kernel_piece_graphs": 17.1, "python_us_per_kernel_direct": 107.3, "target_us": 10.0}
    head, line = overhead.format_table([row]).splitlines()
    assert "model us (piece graphs; direct)" in head
    assert "python us / kernel (piece graphs; direct; target 10)" in head
    assert "31.5 (60.2; 331.0)" in line and "20.2 (300.1)" in line
    assert line.rstrip().endswith("7.5 (17.1; 107.3)")
    block = {"name": "gpt2-768-t64/bf16 1x64x768", "M": 1, "bucket": "-", "block": True, "ok": True,
             "status": "ok", "kernels": 14, "model_us": 80.0, "graph_replay_us": 40.0,
             "python_us_per_kernel": 2.9, "target_us": 10.0}
    line = overhead.format_table([block]).splitlines()[1].split()
    assert line[:3] == ["gpt2-768-t64/bf16", "1x64x768", "-"] and line[3:5] == ["14", "80.0"]
    assert line[-2:] == ["40.0", "2.9"]


def test_kb_with_inductor_counts_only_within_tolerance():
    ok = _row("a/f32", eager=3.0, kb=1.5, inductor_max_autotune=1.2)
    ok["kb_inductor"] = {"median_ms": 1.0, "max_err": 1e-4}
    over = _row("b/f32", eager=3.0, kb=1.5, inductor_max_autotune=1.2)
    over["kb_inductor"] = {"median_ms": 1.0, "max_err": 1.0}
    failed = _row("c/f32", eager=3.0, kb=1.5)
    failed["kb_inductor"] = {"error": "RuntimeError: no"}
    rep = models_report.build_report("models", [ok, over, failed])
    assert ok["speedup_kb_inductor"]["inductor_max_autotune"] == pytest.approx(1.2)
    assert "speedup_kb_inductor" not in over and "speedup_kb_inductor" not in failed
    text = models_report.format_table(rep)
    assert "1.0000 (over tol)" in text and "error" in text and "1.20x" in text
