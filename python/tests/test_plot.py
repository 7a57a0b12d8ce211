"""kb.plot draws from stored reports: a real kb-run report set from the
H200 (bench/results) and kb.bench's format (a fixture)."""
import json
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")
from kb import plot  # noqa: E402

KBRUN_RUN = "2026-12-01-run4"  # its kb_results.json, from raw.tar.xz
BENCH = Path(__file__).parent / "data" / "bench_report_fixture.json"


def test_kbrun_report_set_points_come_from_the_report(recorded):
    reports = json.loads((recorded(KBRUN_RUN) / "kb_results.json").read_text())
    pts, ceil, bars = plot.points_from_kbrun(reports)
    names = {p["label"] for p in pts}
    assert "matmul-tf32-4096-sm90a" in names
    mm = next(p for p in pts if p["label"] == "matmul-tf32-4096-sm90a")
    r = reports["matmul-tf32-4096-sm90a"]
    assert mm["intensity"] == pytest.approx(r["flops"] / r["minimal_bytes"])
    assert mm["tflops"] == pytest.approx(r["flops"] / (r["time"]["median_ms"] * 1e-3) / 1e12)
    assert mm["unit"] != "ffma"  # a tensor-core kernel sits under the TF32 roof
    assert ceil["copy_gbs"] == max(v["copy_bandwidth_gbs"] for v in reports.values() if "copy_bandwidth_gbs" in v)
    labels = {k for _, sp in bars for k in sp}
    assert "cuBLAS TF32" in labels and "unfused" in labels


def test_bench_report_points():
    rep = json.loads(BENCH.read_text())
    pts, ceil, bars = plot.points_from_bench(rep)
    assert [p["label"] for p in pts] == ["softmax:k0_softmax", "matmul:k0_transpose", "matmul:k1_matmul"]
    assert ceil["tf32_tflops"] == 400.0
    assert bars[0] == ("softmax", {"vs eager": 1.5, "vs torch.compile": 1.1})
    assert all(name != "broken" for name, _ in bars)


@pytest.mark.parametrize("which", ["kb-run", "bench"])
def test_cli_draws_a_png(tmp_path, recorded, which):
    src = recorded(KBRUN_RUN) / "kb_results.json" if which == "kb-run" else BENCH
    out = tmp_path / "fig.png"
    assert plot.main([str(src), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000


def test_single_kbrun_report(tmp_path, recorded):
    reports = json.loads((recorded(KBRUN_RUN) / "kb_results.json").read_text())
    one = tmp_path / "one.json"
    one.write_text(json.dumps(reports["softmax-8192x32768"]))
    assert plot.main([str(one), "-o", str(tmp_path / "one.png")]) == 0


def test_refuses_what_is_not_a_report(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hello": 1}))
    assert plot.main([str(bad), "-o", str(tmp_path / "x.png")]) == 1
    assert "not a kb.bench report" in capsys.readouterr().err


def test_cli_reads_an_archive_member_and_writes_a_palette_png(tmp_path):
    """The tutorial's command: the report read straight from the recorded
    run's archive; the PNG has a palette of kb.plot.PALETTE (64) colours,
    as the docs' figures."""
    Image = pytest.importorskip("PIL.Image")
    arc = Path(__file__).resolve().parents[2] / "bench" / "results" / KBRUN_RUN / "raw.tar.xz"
    out = tmp_path / "run4.png"
    assert plot.main([f"{arc}:kb_results.json", "-o", str(out)]) == 0
    img = Image.open(out)
    assert img.mode == "P" and len(img.getpalette()) <= 3 * 64


def test_cli_names_a_missing_archive_member(tmp_path, capsys):
    arc = Path(__file__).resolve().parents[2] / "bench" / "results" / KBRUN_RUN / "raw.tar.xz"
    assert plot.main([f"{arc}:nothing.json", "-o", str(tmp_path / "x.png")]) == 1
    assert "no file nothing.json in" in capsys.readouterr().err


def _png_bit_depth(path):
    return path.read_bytes()[24]  # IHDR: 8 signature, 8 chunk head, 8 width/height


def test_tab16_palette_is_four_bit_and_keeps_the_tab_colours(tmp_path):
    """The docs' figure's command (--palette tab16 --dpi 80): a 4-bit PNG
    of at most 16 colours, the roofline's blue and red and the bars' orange
    and green kept as matplotlib's C0-C3 (a median cut to 16 merged green
    into gray and red into orange), 80 px an inch."""
    Image = pytest.importorskip("PIL.Image")
    from matplotlib.colors import to_rgb
    arc = Path(__file__).resolve().parents[2] / "bench" / "results" / KBRUN_RUN / "raw.tar.xz"
    out, wide = tmp_path / "run4.png", tmp_path / "run4-100.png"
    assert plot.main([f"{arc}:kb_results.json", "-o", str(out), "--palette", "tab16", "--dpi", "80"]) == 0
    assert plot.main([f"{arc}:kb_results.json", "-o", str(wide), "--palette", "tab16"]) == 0
    img = Image.open(out)
    assert img.mode == "P" and _png_bit_depth(out) == 4
    assert img.width * 100 == pytest.approx(Image.open(wide).width * 80, abs=100)
    used = {c for _, c in img.convert("RGB").getcolors(256)}
    assert len(used) <= 16
    for c in ("C0", "C1", "C2", "C3"):
        assert tuple(round(255 * v) for v in to_rgb(c)) in used, c
    # The default stays the 64-colour median cut.
    default = tmp_path / "default.png"
    assert plot.main([f"{arc}:kb_results.json", "-o", str(default)]) == 0
    assert _png_bit_depth(default) == 8


def test_refuses_a_bad_dpi_and_palette(tmp_path, capsys):
    rep = str(BENCH)
    assert plot.main([rep, "-o", str(tmp_path / "x.png"), "--dpi", "0"]) == 1
    assert "--dpi 0: expected 20 to 600" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        plot.main([rep, "-o", str(tmp_path / "x.png"), "--palette", "tab8"])
    assert e.value.code == 2
    with pytest.raises(plot.KbError, match="unknown palette 'tab8'"):
        plot.save(None, tmp_path / "x.png", 100, "tab8")
