"""bench/ab/ab_report.py: the interleaved A/B's ratios, on the stored H200
call (bench/results/2026-12-02-cluster/raw.tar.xz:call4, where no effect stood out of
the runs' own spread) and on made-up kb-run reports with a clear one."""
import importlib.util
import json

import pytest
from conftest import ROOT

spec = importlib.util.spec_from_file_location("ab_report", ROOT / "bench" / "ab" / "ab_report.py")
ab_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ab_report)


def test_stored_call_shows_nothing_outside_the_spread(recorded):
    rows = ab_report.pairs(ab_report.load(str(recorded("2026-12-02-cluster") / "call4")))
    assert len(rows) == 7
    square = next(r for r in rows if r["base"] == "shape-square-4096x4096x4096-bt-sm90a")
    # rep 1: 0.37773 / 0.38138, rep 2: 0.38650 / 0.38163 (times.json)
    assert square["ratios"] == pytest.approx([0.9904, 1.0128], abs=1e-3)
    assert square["below_one"] == 1
    for line in ab_report.table(rows).splitlines()[2:]:
        assert line.endswith("| no (within the spread) |")


def report(path, name, rep, ms, ok=True):
    (path / f"{name}@{rep}.json").write_text(json.dumps({"ok": ok, "time": {"median_ms": ms}}))


def test_clear_effect_is_shown_and_failed_checks_are_left_out(tmp_path):
    base, var = "shape-x-64x64x64-sm90a", "shape-x-64x64x64-v64x64s1g2-sm90a"
    for rep, (b, v) in enumerate([(1.00, 0.80), (1.01, 0.81), (1.02, 0.79)], start=1):
        report(tmp_path, base, rep, b)
        report(tmp_path, var, rep, v)
    report(tmp_path, var, 4, 0.10, ok=False)  # a wrong result: no time counts
    report(tmp_path, base, 4, 1.00)
    (rows,) = ab_report.pairs(ab_report.load(str(tmp_path)))
    assert rows["variant"] == var and rows["base"] == base
    assert len(rows["ratios"]) == 3
    # ratios 0.80, 0.81 / 1.01, 0.79 / 1.02: the median is the first
    assert rows["median"] == pytest.approx(0.80)
    assert rows["below_one"] == 3
    assert ab_report.table([rows]).splitlines()[2].endswith("| yes |")


def test_no_pairs_is_an_error(tmp_path, capsys):
    report(tmp_path, "shape-x-64x64x64-sm90a", 1, 1.0)
    assert ab_report.main(["ab_report.py", str(tmp_path)]) == 1
    assert "no variant with its base" in capsys.readouterr().err


def test_save_times_round_trips_and_keeps_only_checked_runs(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    base, var = "shape-x-64x64x64-sm90a", "shape-x-64x64x64-v64x64s1c2-sm90a"
    for rep, (b, v) in enumerate([(1.00, 0.90), (1.10, 0.95)], start=1):
        report(runs, base, rep, b)
        report(runs, var, rep, v)
    report(runs, var, 3, 0.10, ok=False)
    saved = tmp_path / "times.json"
    assert ab_report.main(["ab_report.py", str(runs), "--save-times", str(saved)]) == 0
    first = capsys.readouterr().out
    kept = json.loads(saved.read_text())
    assert kept[var] == {"1": {"median_ms": 0.90}, "2": {"median_ms": 0.95}}
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "times.json").write_text(saved.read_text())
    assert ab_report.main(["ab_report.py", str(tmp_path / "again")]) == 0
    assert capsys.readouterr().out == first


def test_reports_win_over_a_stale_times_json(tmp_path):
    base, var = "shape-x-64x64x64-sm90a", "shape-x-64x64x64-v64x64s1c4-sm90a"
    (tmp_path / "times.json").write_text(json.dumps(
        {base: {"1": {"median_ms": 1.0}}, var: {"1": {"median_ms": 0.9}}}))
    report(tmp_path, base, 1, 1.0)
    report(tmp_path, var, 1, 1.5)
    (row,) = ab_report.pairs(ab_report.load(str(tmp_path)))
    assert row["median"] == pytest.approx(1.5)


def test_norm_config_variants_pair_with_their_base(tmp_path):
    base = "rmsnorm-bf16-16384x1024"
    for rep in (1, 2):
        report(tmp_path, base, rep, 1.0)
        report(tmp_path, base + "-t64", rep, 1.2)
        report(tmp_path, base + "-r4", rep, 0.9)
        report(tmp_path, base + "-g2112", rep, 0.8)
        report(tmp_path, "layernorm-bf16-256x40000-cluster", rep, 1.3)
    rows = {r["variant"]: r for r in ab_report.pairs(ab_report.load(str(tmp_path)))}
    # the cluster's base is absent
    assert set(rows) == {base + "-t64", base + "-r4", base + "-g2112"}
    assert rows[base + "-t64"]["base"] == base
    assert rows[base + "-r4"]["median"] == pytest.approx(0.9)
