"""Fixtures: kb-opt (the checkout's build/bin, PATH or KB_OPT), whether
a CUDA toolkit with libdevice is present (kb-compile links exp, erf, tanh
from it), and recorded bench/results runs unpacked. Tests that need one
skip, saying why, when it is absent."""
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
EXAMPLES = ROOT / "python" / "examples" / "kernelbench"


def _kb_opt():
    from kb.bundle import find_tool
    return find_tool("kb-opt", "KB_OPT")


def _toolkit():
    for v in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(v) and (Path(os.environ[v]) / "nvvm/libdevice/libdevice.10.bc").is_file():
            return True
    return Path("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc").is_file()


def recorded_run(run, dest):
    """A bench/results run folder as it was recorded: its tracked text, and
    the rest unpacked from its raw.tar.xz, under dest/run."""
    out = Path(dest) / run
    shutil.copytree(ROOT / "bench" / "results" / run, out, dirs_exist_ok=True)
    arc = out / "raw.tar.xz"
    if arc.is_file():
        with tarfile.open(arc) as t:
            try:
                t.extractall(out, filter="data")
            except TypeError:  # a Python without extraction filters
                t.extractall(out)
    return out


@pytest.fixture
def recorded(tmp_path):
    return lambda run: recorded_run(run, tmp_path / "recorded")


@pytest.fixture
def kb_opt():
    p = _kb_opt()
    if not p:
        pytest.skip("kb-opt is not built (bash scripts/setup.sh)")
    return p


@pytest.fixture
def can_compile(kb_opt):
    if not _toolkit():
        pytest.skip("no CUDA toolkit with libdevice: kb-compile cannot link exp/erf/tanh")
    return kb_opt


def parse_with_kb_opt(kb_opt, text):
    """kb-opt parses and verifies `text`; returns its output or fails the test."""
    r = subprocess.run([kb_opt, "-"], input=text, capture_output=True, text=True)
    assert r.returncode == 0, f"kb-opt refused:\n{r.stderr}\n{text}"
    return r.stdout


# A bf16 program kb-opt accepts once it speaks 16-bit types (issue #44).
PROBE_16 = """func.func @probe(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %0 = kb.matmul %a, %b transpose_b : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xbf16>
  %1 = kb.convert %0 : tensor<64x64xbf16> -> tensor<64x64xf32>
  %2 = kb.relu %1 : tensor<64x64xf32>
  %3 = kb.convert %2 : tensor<64x64xf32> -> tensor<64x64xbf16>
  return %3 : tensor<64x64xbf16>
}
"""


def kb_opt_16_refusal():
    """None when kb-opt parses and verifies a bf16 program (issue #44's
    dialect change is in), else why not (no kb-opt, or its error)."""
    global _REFUSAL_16
    if _REFUSAL_16 is None:
        p = _kb_opt()
        if not p:
            _REFUSAL_16 = "kb-opt is not built (bash scripts/setup.sh)"
        else:
            r = subprocess.run([p, "-"], input=PROBE_16, capture_output=True, text=True)
            _REFUSAL_16 = "" if r.returncode == 0 else (
                "kb-opt does not accept bf16 programs yet: "
                + (r.stderr.strip().splitlines() or ["?"])[0][:160])
    return _REFUSAL_16 or None


_REFUSAL_16 = None

# Tests that need kb-opt to speak 16-bit types: skipped, saying why, until it does.
needs_kb_opt_16 = pytest.mark.skipif(kb_opt_16_refusal() is not None,
                                     reason=f"{kb_opt_16_refusal()} (probe: conftest.PROBE_16)")


@pytest.fixture
def kb_opt_16(kb_opt):
    """kb-opt, when it parses and verifies 16-bit programs; else a skip
    that says kb-opt still refuses them."""
    why = kb_opt_16_refusal()
    if why:
        pytest.skip(why)
    return kb_opt


@pytest.fixture
def can_compile_16(kb_opt_16, can_compile):
    return kb_opt_16
