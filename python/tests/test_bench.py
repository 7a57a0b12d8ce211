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


# -- the check that decides acceptance, run on the CPU with stand-ins for the
# kb callable: PyTorch's own result passes, a 1% error and PyTorch's own
# dropout mask (not kb's) fail.

def small_problem(tmp_path, body, inputs):
    f = tmp_path / "p.py"
    f.write_text("import torch, torch.nn as nn, torch.nn.functional as F\n"
                 "class Model(nn.Module):\n"
                 "    def __init__(self):\n        super().__init__(); self.fc = nn.Linear(64, 32)\n"
                 f"    def forward(self, x):\n        return {body}\n"
                 f"def get_inputs(): return [{inputs}]\n"
                 "def get_init_inputs(): return []\n")
    prob = bench.load_problem(f)
    model, ex = bench.instantiate(prob)
    imp = kb.import_torch(model, ex, precision="ieee")
    return prob, model, imp


def test_check_passes_pytorch_and_fails_an_error(tmp_path):
    import torch
    prob, model, imp = small_problem(tmp_path, "F.gelu(self.fc(x))", "torch.randn(16, 64)")
    with torch.no_grad():
        ok = bench.check_problem(prob, model, lambda x: model(x), imp, "ieee", device="cpu")
        bad = bench.check_problem(prob, model, lambda x: model(x) * 1.01, imp, "ieee", device="cpu")
        nan = bench.check_problem(prob, model, lambda x: model(x) * float("nan"), imp, "ieee", device="cpu")
    assert ok["ok"] and len(ok["per_set"]) == 5 and ok["max_kb_err"] < 1e-5
    assert not bad["ok"] and bad["max_kb_err"] > 5e-3
    assert not nan["ok"]


def test_check_uses_kbs_dropout_mask(tmp_path):
    import torch
    from kb.fx import reference
    prob, model, imp = small_problem(tmp_path, "F.dropout(torch.relu(self.fc(x)), 0.3)", "torch.randn(64, 64)")
    assert imp.dropouts  # training mode: a kb.dropout
    with torch.no_grad():
        kb_like = bench.check_problem(prob, model, lambda x: reference(imp, model, [x], torch.float32),
                                      imp, "ieee", device="cpu")
        torch_mask = bench.check_problem(prob, model, lambda x: model(x), imp, "ieee", device="cpu")
    assert kb_like["ok"]
    assert not torch_mask["ok"]


def test_kernel_work_counts_matmul_flops_and_bytes(tmp_path, can_compile):
    import torch
    b = kb.compile(lambda a, w: torch.relu(a @ w), [torch.randn(128, 64), torch.randn(64, 32)],
                   precision="ieee", output=tmp_path / "mm")
    (w,) = bench.kernel_work(b.manifest)
    assert w["matmul"] and w["unit"] == "ffma"
    assert w["flops"] == 2 * 128 * 32 * 64 + 128 * 32  # the product, then one max per element
    assert w["bytes"] == 4 * (128 * 64 + 64 * 32 + 128 * 32)
