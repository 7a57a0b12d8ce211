"""The KernelBench-style runner without a GPU: problem loading, every
example problem imports into kb, --compile-only writes bundles."""
import json
import sys
from pathlib import Path

import pytest

import kb
from kb import bench
from conftest import EXAMPLES

PROBLEMS = sorted(EXAMPLES.glob("*.py"))


def test_there_are_at_least_six_problems():
    assert len(PROBLEMS) >= 6


@pytest.mark.parametrize("path", PROBLEMS, ids=[p.stem for p in PROBLEMS])
def test_problem_loads_and_imports(path):
    prob = bench.load_problem(path)
    model, inputs = bench.instantiate(prob)
    imp = kb.import_torch(model, inputs, name=prob.name)
    assert "kb." in imp.program.mlir()


BAD = {
    "no_model.py": ("def get_inputs(): return []\ndef get_init_inputs(): return []\n", "lacks Model"),
    "no_inputs.py": ("import torch.nn as nn\nclass Model(nn.Module):\n    pass\n", "lacks get_inputs, get_init_inputs"),
    "not_module.py": ("class Model: pass\ndef get_inputs(): return []\ndef get_init_inputs(): return []\n", "nn.Module"),
    "syntax.py": ("def (:\n", "importing it failed"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_problem_files(tmp_path, name):
    text, msg = BAD[name]
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(kb.KbError) as e:
        bench.load_problem(f)
    assert msg in str(e.value)


def test_missing_file():
    with pytest.raises(kb.KbError, match="no such problem file"):
        bench.load_problem("/nonexistent/problem.py")


def test_get_inputs_must_be_tensors(tmp_path):
    f = tmp_path / "p.py"
    f.write_text("import torch.nn as nn\nclass Model(nn.Module):\n    def forward(self, x): return x\n"
                 "def get_inputs(): return [3]\ndef get_init_inputs(): return []\n")
    with pytest.raises(kb.KbError, match="kb takes tensors"):
        bench.instantiate(bench.load_problem(f))


def test_compile_only_writes_bundles(tmp_path, can_compile, capsys):
    small = tmp_path / "small_linear.py"
    small.write_text(
        "import torch, torch.nn as nn\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n        super().__init__(); self.fc = nn.Linear(64, 32)\n"
        "    def forward(self, x):\n        y = self.fc(x)\n        return y * torch.sigmoid(y) + 1.0\n"
        "def get_inputs(): return [torch.randn(128, 64)]\n"
        "def get_init_inputs(): return []\n")
    out = tmp_path / "bundles"
    rep = tmp_path / "r.json"
    rc = bench.main([str(small), "--compile-only", "--bundles", str(out), "--precision", "tf32",
                     "--json", str(rep)])
    assert rc == 0, capsys.readouterr().err
    b = kb.Bundle.open(out / "small_linear")
    assert [k["name"] for k in b.kernels] == ["k0_fused_matmul_bias_add_sigmoid_mul_add_scalar"]
    sig = b.signature
    assert sig["precision"] == "tf32" and [s["source"] for s in sig["inputs"]] == [
        ["arg", 0], ["param", "fc.weight"], ["param", "fc.bias"]]
    assert json.loads(rep.read_text())["problems"][0]["kernels"] == [k["name"] for k in b.kernels]


def test_measure_without_gpu_fails_clearly(tmp_path, can_compile, capsys):
    pytest.importorskip("torch")
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    rc = bench.main([str(EXAMPLES / "softmax.py"), "--bundles", str(tmp_path / "b"), "--no-time"])
    err = capsys.readouterr().err
    assert rc == 1 and "needs a CUDA GPU" in err
