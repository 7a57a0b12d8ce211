"""bench/shapes_report.py on a stored H200 run (bench/results): the
memory-bound classes' three fractions of the copy bandwidth (kb, the
strongest peer over the same bytes, a copy of the same bytes), each
recomputed here from the report's own fields."""
import importlib.util
import json

import pytest
from conftest import ROOT

RUN = "2026-12-04-suite"  # memory/: kb_results.json and torch_peer.json from its raw.tar.xz
spec = importlib.util.spec_from_file_location("shapes_report", ROOT / "bench" / "shapes_report.py")
shapes_report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shapes_report)


def test_fractions_of_copy_come_from_the_report(recorded):
    run = recorded(RUN) / "memory"
    reports = json.loads((run / "kb_results.json").read_text())
    rows = {r["name"]: r for r in shapes_report.rows_of(str(run))}
    name = "shape-skinny-3x4093x4099-bt-sm90a"  # torch 1.07x faster
    rep, row = reports[name], rows[name]
    bw = rep["copy_bandwidth_gbs"] * 1e9
    kb = rep["minimal_bytes"] / (rep["time"]["median_ms"] * 1e-3) / bw
    peer = rep["minimal_bytes"] / (row["strongest_ms"] * 1e-3) / bw
    assert row["fraction_of_copy"] == pytest.approx(kb, rel=1e-3)
    # The peer faster than kb reaches more of the copy, not less.
    assert row["peer_fraction_of_copy"] == pytest.approx(peer, rel=1e-3)
    assert row["same_size_copy"] == rep["copy_same_size"]["fraction_of_copy"]
    line = next(l for l in shapes_report.table([row]).splitlines() if "3x4093x4099" in l)
    assert f"{100 * kb:.0f}% / {100 * peer:.0f}% / {100 * row['same_size_copy']:.0f}%" in line


def test_compute_bound_rows_print_no_fraction(recorded):
    rows = [r for r in shapes_report.rows_of(str(recorded(RUN) / "memory")) if r["class"] == "longk"]
    assert rows
    for line in shapes_report.table(rows).splitlines()[2:]:
        if line.startswith("| longk"):
            assert line.split("|")[6].strip() == ""


def test_png_with_the_tab16_palette_keeps_each_class_colour(recorded, tmp_path):
    """docs/shapes.png's flags (--palette tab16 --dpi 90): a 4-bit PNG in
    which each class's bar keeps its tab10 colour (C0-C7); without the flags
    the 64-colour, 8-bit PNG at 100 dpi."""
    pytest.importorskip("matplotlib")
    Image = pytest.importorskip("PIL.Image")
    from matplotlib.colors import to_rgb
    run = recorded(RUN)
    rows = shapes_report.rows_of(str(run / "memory")) + shapes_report.rows_of(str(run / "compute"))
    classes = {r["class"] for r in rows}
    assert len(classes) == 8
    small, big = tmp_path / "s.png", tmp_path / "s100.png"
    shapes_report.plot(rows, str(small), "tab16", 90)
    shapes_report.plot(rows, str(big))
    assert small.read_bytes()[24] == 4 and big.read_bytes()[24] == 8
    assert Image.open(small).width * 100 == pytest.approx(Image.open(big).width * 90, abs=100)
    used = {c for _, c in Image.open(small).convert("RGB").getcolors(256)}
    assert len(used) <= 16
    for i, c in enumerate(shapes_report.CLASSES):
        assert tuple(round(255 * v) for v in to_rgb(f"C{i}")) in used, c
