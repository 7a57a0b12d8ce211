"""python3 -m kb.bench --compile-only over a folder of problems, on the host:
one line per problem (accepted with its kernels, or refused with the stage
and the one-line reason), the summary, the JSON table, and shapes taken on
PyTorch's meta device (a problem whose inputs could not be allocated here
still compiles)."""
import json

from kb import bench

HEAD = "import torch, torch.nn as nn, torch.nn.functional as F\nclass Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
PROBLEMS = {
    # 2^36 floats (256 GiB): only the meta device can build these inputs.
    "1_huge_relu.py": HEAD + "    def forward(self, x):\n        return torch.relu(x) * 2.0\n"
    "def get_inputs(): return [torch.rand(1 << 20, 1 << 16)]\ndef get_init_inputs(): return []\n",
    "2_argmax.py": HEAD + "    def forward(self, x):\n        return torch.argmax(x, dim=1).float()\n"
    "def get_inputs(): return [torch.rand(64, 32)]\ndef get_init_inputs(): return []\n",
    "3_sdpa.py": HEAD + "    def forward(self, q, k, v):\n        return F.scaled_dot_product_attention(q, k, v)\n"
    "def get_inputs(): return [torch.rand(2, 64, 32) for _ in range(3)]\ndef get_init_inputs(): return []\n",
    "10_scalar.py": HEAD + "    def forward(self, x, s):\n        return x * s\n"
    "def get_inputs(): return [torch.rand(64, 32), 3.0]\ndef get_init_inputs(): return []\n",
}


def test_compile_only_folder(tmp_path, can_compile, capsys):
    d = tmp_path / "level"
    d.mkdir()
    for name, text in PROBLEMS.items():
        (d / name).write_text(text)
    rep = tmp_path / "r.json"
    rc = bench.main(["--compile-only", str(d), "--json", str(rep)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 1  # some refused
    assert out[0].startswith("[1/4] 1_huge_relu: accepted (1 kernel: k0_fused_relu_scale)"), out
    assert out[1].startswith("[2/4] 2_argmax: refused (import): kb cannot import torch.argmax"), out
    assert out[2].startswith("[3/4] 3_sdpa: refused (kb-opt): ") and "precision(ieee)" in out[2], out
    assert out[3].startswith("[4/4] 10_scalar: refused (load): "), out  # by number: 10 after 3
    assert "get_inputs()[1] is a float" in out[3]
    assert out[4] == "kb.bench: 1 of 4 accepted, 3 refused (1 at import, 1 at kb-opt, 1 at load)"
    r = json.loads(rep.read_text())
    assert r["mode"] == "compile-only" and r["summary"]["accepted_numbers"] == [1]
    rows = {p["problem"]: p for p in r["problems"]}
    assert rows["1_huge_relu"]["traced_on"] == "meta"
    assert rows["1_huge_relu"]["input_shapes"] == [[1 << 20, 1 << 16]]
    assert rows["2_argmax"]["stage"] == "import" and "2_argmax.py:" in rows["2_argmax"]["detail"]
    assert "bundle" not in rows["1_huge_relu"]  # no --bundles: nothing kept


def test_compile_only_no_files(tmp_path, capsys):
    assert bench.main(["--compile-only", str(tmp_path)]) == 2
    assert "no problem files" in capsys.readouterr().err
