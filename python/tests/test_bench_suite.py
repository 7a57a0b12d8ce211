"""python3 -m kb.bench's suites on the host: the listing, every suite's
programs resolved from the generators, the table and geometric mean from
recorded H200 runs (bench/results/2026-12-04-suite/raw.tar.xz, whose table docs/shapes.md
cites: 1.083x) and from a suite report, the one-line no-GPU exit, and
--build-only writing bundles with the checkout's kb-opt."""
import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kb.bench import catalog, report, suite
from kb.ir import KbError

ROOT = Path(__file__).resolve().parents[2]
SUITE_RUN = "2026-12-04-suite"  # memory/ and compute/ from its raw.tar.xz


def test_list_names_every_suite_once(capsys):
    assert suite.main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [l.split()[0] for l in lines]
    assert names == ["squares", "shapes", "shapes-bf16", "linear", "memory-bound", "softmax", "fusion", "llama", "half", "norms", "reductions", "attention", "tune", "models", "models-tiny", "backend-overhead", "serving", "serving-tiny", "all"]
    shapes = next(l for l in lines if l.startswith("shapes "))
    assert " 57 programs " in shapes
    assert " 57 programs " in next(l for l in lines if l.startswith("shapes-bf16"))
    assert " 3 models x 2 dtypes " in next(l for l in lines if l.startswith("models "))
    assert " 2 cases " in next(l for l in lines if l.startswith("backend-overhead "))
    assert " 15 programs " in next(l for l in lines if l.startswith("llama "))


def test_every_suite_resolves_to_generated_programs():
    progs = catalog.catalog()
    total = set()
    table = catalog.suites()
    for name in table:
        chosen = catalog.suite_programs(name, progs)
        if table[name].get("kind"):  # torch.compile's suites (test_bench_models.py): no kb-run programs
            assert chosen == [], name
            continue
        assert chosen, name
        assert all(p.text.lstrip().startswith(("func.func", "//")) or "func.func" in p.text for p in chosen)
        if name != "all":
            total |= {p.name for p in chosen}
    assert {p.name for p in catalog.suite_programs("all", progs)} == total
    sq = {p.name: p for p in catalog.suite_programs("squares", progs)}
    assert sq["matmul-tf32-4096-sm90a"].chip == "sm_90a" and sq["matmul-tf32-4096"].chip == "sm_90"
    assert sq["matmul-tf32x3-2048"].precision == "tf32x3"
    assert catalog.suite_programs("fusion", progs)[0].fused


def test_attention_suite_has_the_three_warpgroup_programs():
    """block = [192, 128] (three consumer warpgroups, issue #46): check cases
    at S 1000 and the timed shapes at S 1024 / 4096 / 8192, on sm_90a;
    the -overlap- timed shapes keep block = [128, 128] written out, since
    the default at D 64 and S 4096 (not causal) is [192, 128]."""
    att = {p.name: p for p in catalog.suite_programs("attention")}
    b192 = sorted(n for n in att if "-b192-" in n and "-bthd-" not in n)
    assert b192 == sorted(
        ["attn-bf16-2x4x1000x64-b192-overlap-sm90a", "attn-bf16-2x4x1000x64-causal-b192-overlap-sm90a",
         "attn-f16-2x4x1000x64-causal-b192-overlap-sm90a"] +
        [f"attn-bf16-16x32x{s}x64{c}-b192-sm90a" for s in (1024, 4096, 8192) for c in ("", "-causal")])
    for n in b192:
        assert att[n].chip == "sm_90a", n
        assert 'block = [192, 128]' in att[n].text and 'schedule = "overlap"' in att[n].text, n
    for n in ("attn-bf16-16x32x4096x64-overlap-sm90a", "attn-bf16-16x32x4096x64-causal-overlap-sm90a",
              "attn-bf16-16x32x8192x64-overlap-sm90a"):
        assert 'block = [128, 128]' in att[n].text and 'schedule = "overlap"' in att[n].text, n
    assert "block" not in att["attn-bf16-16x32x4096x64"].text


def test_attention_suite_has_the_bthd_programs():
    """kb.attention bthd (issue #47): [B, S, H, D] q, k, v and O, check cases
    at S 1000 and the timed shapes beside the BHTD ones."""
    att = {p.name: p for p in catalog.suite_programs("attention")}
    bthd = sorted(n for n in att if "-bthd-" in n)
    timed = [f"attn-bf16-bthd-16x32x4096x{d}{c}" for d in (64, 128) for c in ("", "-causal")]
    assert set(timed) <= set(bthd) and len(bthd) == 9, bthd
    for n in bthd:
        assert " bthd" in att[n].text, n
    assert "tensor<16x4096x32x64xbf16>" in att["attn-bf16-bthd-16x32x4096x64"].text
    assert "tensor<16x32x4096x64xbf16>" in att["attn-bf16-16x32x4096x64"].text
    assert " bthd" not in att["attn-bf16-16x32x4096x64"].text


def test_unknown_suite_is_one_line_error(capsys):
    assert suite.main(["--suite", "nope"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no suite 'nope'" in err[0] and "squares" in err[0]


def _shapes_report_geomean(run):
    """The same maths by bench/shapes_report.py (an independent reading)."""
    spec = importlib.util.spec_from_file_location("shapes_report", ROOT / "bench" / "shapes_report.py")
    sr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sr)
    rows = {}
    for d in ("memory", "compute"):
        rows.update({r["name"]: r for r in sr.rows_of(str(run / d))})
    sp = [r["speedup"] for r in rows.values() if r.get("speedup") and not sr.ablation(r)]
    return math.exp(sum(map(math.log, sp)) / len(sp)), len(sp)


def test_recorded_suite_table_and_geomean(capsys, tmp_path, recorded):
    run = recorded(SUITE_RUN)
    out = tmp_path / "shapes.json"
    rc = suite.main(["--suite", "shapes", "--report", str(run / "memory"), str(run / "compute"), "--json", str(out), "--plot", str(tmp_path / "s.png")])
    assert rc == 0
    table = capsys.readouterr().out
    rep = json.loads(out.read_text())
    s = rep["summary"]
    g, n = _shapes_report_geomean(run)
    assert s["with_peer"] == n == 57
    assert abs(s["geomean_speedup"] - g) < 1e-9
    assert round(s["geomean_speedup"], 3) == 1.083 and s["at_least_1x"] == 35
    assert s["min_program"] == "shape-medium-1100x1000x1100-bt-sm90a"
    assert "geometric mean 1.083x" in table
    assert len([l for l in table.splitlines() if l.startswith("shape-")]) == 57
    # The suite report it wrote reads back to the same table, and so do the
    # folders read inside the archive.
    assert suite.main(["--suite", "shapes", "--report", str(out)]) == 0
    assert capsys.readouterr().out == table
    arc = ROOT / "bench" / "results" / SUITE_RUN / "raw.tar.xz"
    assert suite.main(["--suite", "shapes", "--report", f"{arc}:memory", f"{arc}:compute"]) == 0
    assert capsys.readouterr().out == table
    assert suite.main(["--report", f"{arc}:nowhere"]) == 1
    assert "no nowhere/kb_results.json in" in capsys.readouterr().err


def _kb(ms, routes=None, baselines=()):
    rep = {"ok": True, "status": "ok", "time": {"median_ms": ms}, "kernels": [],
           "baselines": [{"name": n, "time": {"median_ms": t}} for n, t in baselines]}
    if routes:
        rep["cublas_routes"] = {k: [{"route": r, "time": {"median_ms": t}} for r, t in v.items()]
                                for k, v in routes.items()}
    return rep


def test_strongest_peer_per_precision_and_geomean():
    # tf32: the TF32 routes and torch; ieee: the fp32 routes, never TF32's.
    a = report.row("a", _kb(1.0, {"tf32": {"x": 2.0, "y": 1.5}, "ieee": {"z": 9.0}}),
                   {"eager_ms": 3.0}, "tf32")
    b = report.row("b", _kb(2.0, {"tf32": {"x": 0.1}, "ieee": {"z": 4.0}}),
                   {"eager_ms": 1.0, "compile_ms": 8.0}, "ieee")
    c = report.row("c", _kb(1.0, baselines=[("baseline DIR/c-unfused (3 kernels)", 2.5)]),
                   {"eager_ms": 4.0}, "")
    wrong = report.row("w", {"ok": False, "status": "wrong", "error": "WRONG"}, None, "tf32")
    failed = report.row("f", {"ok": False, "status": "error", "error": "error",
                              "message": "kb-run: out of device memory"}, None, "tf32")
    assert failed["error"] == "kb-run: out of device memory"
    assert (a["strongest_peer_ms"], a["speedup"]) == (1.5, 1.5)
    assert (b["strongest_peer"], b["speedup"]) == ("torch eager", 0.5)
    assert c["vs_unfused"] == 2.5 and c["speedup"] == 4.0
    s = report.summary([a, b, c, wrong])
    assert abs(s["geomean_speedup"] - (1.5 * 0.5 * 4.0) ** (1 / 3)) < 1e-12
    assert (s["with_peer"], s["at_least_1x"], s["wrong_or_failed"]) == (3, 2, 1)
    assert (s["min_speedup"], s["min_program"]) == (0.5, "b")
    text = report.format_table([a, b, c, wrong], s)
    assert "WRONG" in text and "1 program(s) wrong" in text


def test_memory_bound_row_carries_both_copy_fractions():
    # Issue #45's measure is the copy of the same bytes (kb-run's
    # fraction_of_same_size_copy), not the 1 GiB copy: both in the row and table.
    rep = _kb(0.05)
    rep.update(fraction_of_copy=0.85, fraction_of_same_size_copy=1.07)
    r = report.row("ln", rep, {"eager_ms": 0.1}, "")
    assert (r["fraction_of_copy"], r["fraction_of_same_size_copy"]) == (0.85, 1.07)
    text = report.format_table([r], report.summary([r]))
    assert "% of same-size copy" in text.splitlines()[0]
    assert "85%" in text.splitlines()[1] and "107%" in text.splitlines()[1]


def test_row_counts_torch_compiles_kernels():
    # residual + dropout + LayerNorm: torch.compile's time swung 2.4x between
    # two calls (session 31); the row says how many kernels Inductor ran.
    names = ["triton_red_fused_add_native_dropout_native_layer_norm_0", "Memset (Device)"]
    r = report.row("ln-drop", _kb(0.07), {"eager_ms": 0.19, "compile_ms": 0.08,
                                          "compile_kernels": names}, "")
    assert (r["compile_kernels"], r["compile_kernel_names"]) == (2, names)
    assert "compile_kernels" not in report.row("x", _kb(0.07), {"eager_ms": 0.1}, "")


def test_report_of_a_bad_file_is_one_line(tmp_path, capsys):
    f = tmp_path / "x.json"
    f.write_text('{"tool": "kb-run"}')
    assert suite.main(["--report", str(f)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a kb.bench suite report" in err[0]


def _run(args, env_extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), **env_extra)
    return subprocess.run([sys.executable, "-m", "kb.bench"] + args, capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=600)


def test_no_gpu_says_so_in_one_line(tmp_path):
    p = _run(["--suite", "squares", "--out", str(tmp_path)], {"KB_RUN": str(tmp_path / "no-kb-run")})
    assert p.returncode == 2
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("kb.bench: no GPU run here") and "--build-only" in err[0]
    assert not list(tmp_path.iterdir())  # nothing compiled, nothing written


def test_no_gpu_with_the_built_kb_run():
    kb_run = ROOT / "build" / "bin" / "kb-run"
    if not kb_run.is_file():
        pytest.skip("kb-run is not built")
    if subprocess.run([str(kb_run), "--check-device"], capture_output=True).returncode == 0:
        pytest.skip("a GPU is present here")
    p = _run(["--suite", "squares"], {"KB_RUN": str(kb_run)})
    assert p.returncode == 2 and p.stderr.startswith("kb.bench: no GPU here: ")
    assert len(p.stderr.strip().splitlines()) == 1


def test_build_only_writes_bundles(can_compile, tmp_path):
    out = tmp_path / "bundles"
    p = _run(["--suite", "fusion", "--only", "^bgd-1000x1001$", "--build-only", str(out)],
             {"KB_OPT": str(can_compile), "KB_RUN": str(tmp_path / "none")})
    assert p.returncode == 0, p.stderr
    assert (out / "bgd-1000x1001" / "manifest.json").is_file()
    unf = json.loads((out / "bgd-1000x1001-unfused" / "manifest.json").read_text())
    fused = json.loads((out / "bgd-1000x1001" / "manifest.json").read_text())
    assert len(unf["kernels"]) > len(fused["kernels"]) == 1
    assert "[1/1] kb-opt bgd-1000x1001 (chip=sm_90)" in p.stderr
    assert f"--bundles {out}" in p.stdout


def test_build_only_without_kb_opt_is_one_line(tmp_path):
    p = _run(["--suite", "squares", "--build-only", str(tmp_path / "b")],
             {"KB_OPT": str(tmp_path / "no-kb-opt")})
    assert p.returncode == 1
    err = p.stderr.strip().splitlines()
    assert len(err) == 1 and "is not built" in err[0]
