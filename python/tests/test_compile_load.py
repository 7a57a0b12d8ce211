"""kb.compile and the bundle's Python side without a GPU: the bundle and its
signature, kb.load's refusals, kb.run's wrapper of kb-run."""
import json

import pytest
import torch
import torch.nn as nn

import kb
from kb.loader import _target_runs_on


def test_compile_a_program(tmp_path, can_compile):
    p = kb.Program("bias_gelu")
    x = p.input("x", (64, 128))
    b = p.input("bias", (128,))
    p.output(p.gelu(p.bias_add(x, b), "tanh"), "y")
    bundle = kb.compile(p, output=tmp_path / "bg")
    assert [k["name"] for k in bundle.kernels] == ["k0_fused_bias_add_gelu"]
    assert (tmp_path / "bg" / "program.mlir").read_text() == p.mlir()
    again = kb.Bundle.open(tmp_path / "bg")
    assert again.signature["inputs"][1]["buffer"] == "bias"


def test_compile_new_ops_to_ptx(tmp_path, can_compile):
    p = kb.Program("new_ops")
    x = p.input("x", (256, 64))
    y = p.leaky_relu(p.silu(p.add_scalar(p.pow(x, 3.0), 0.5)), 0.1)
    p.output(p.pow(y, 0.75), "y")
    bundle = kb.compile(p, output=tmp_path / "n")
    ptx = (tmp_path / "n" / (bundle.kernels[0]["name"] + ".ptx")).read_text()
    assert "__nv_powf" not in ptx or "call" in ptx  # linked from libdevice, not left unresolved
    assert len(bundle.kernels) == 1


def test_compile_refusal_is_one_error(tmp_path, can_compile):
    p = kb.Program("bad")
    x = p.input("x", (4, 101))
    p.output(p.relu(x, config=kb.Config(vector=4)), "y")
    with pytest.raises(kb.KbError, match="vector width 4"):
        kb.compile(p, output=tmp_path / "bad")


def test_compile_module_signature(tmp_path, can_compile):
    m = nn.Sequential(nn.Linear(32, 16), nn.ReLU())
    bundle = kb.compile(m, (torch.randn(2, 8, 32),), output=tmp_path / "seq", precision="tf32")
    sig = bundle.signature
    assert sig["args"] == [{"name": "input", "shape": [2, 8, 32]}]
    assert [s["source"] for s in sig["inputs"]] == [["arg", 0], ["param", "0.weight"], ["param", "0.bias"]]
    assert sig["outputs"][0]["shape"] == [2, 8, 16]
    assert bundle.module is m
    on_disk = json.loads((tmp_path / "seq" / "kb_python.json").read_text())
    assert on_disk["inputs"] == sig["inputs"]


@pytest.mark.parametrize("target, cap, ok", [
    ("sm_90a", (9, 0), True), ("sm_90a", (10, 0), False), ("sm_90", (9, 0), True),
    ("sm_90", (8, 9), False), ("sm_80", (9, 0), True), ("sm_80", (8, 0), True), ("bogus", (9, 0), False),
])
def test_target_check(target, cap, ok):
    assert (_target_runs_on(target, *cap) is None) == ok


def test_load_without_gpu_says_so(tmp_path, can_compile):
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    p = kb.Program("r")
    p.output(p.relu(p.input("x", (4, 8))), "y")
    bundle = kb.compile(p, output=tmp_path / "r")
    with pytest.raises(kb.KbError, match="needs a CUDA GPU"):
        kb.load(bundle)


def test_open_refuses_a_non_bundle(tmp_path):
    with pytest.raises(kb.KbError, match="not a bundle"):
        kb.Bundle.open(tmp_path)


def test_run_wraps_kb_run(tmp_path, can_compile):
    from kb.runner import find_kb_run
    try:
        find_kb_run()
    except kb.KbError:
        pytest.skip("kb-run is not built")
    p = kb.Program("r")
    p.output(p.relu(p.input("x", (4, 8))), "y")
    bundle = kb.compile(p, output=tmp_path / "r")
    if torch.cuda.is_available():
        rep = kb.run(bundle, check_only=True)
        assert rep["ok"] is True
    else:
        # No GPU: kb-run reports it as JSON (exit 2) and kb.run raises with its message.
        with pytest.raises(kb.KbError, match="GPU|driver"):
            kb.run(bundle, check_only=True)


def test_compile_names_kb_does_not_generate(tmp_path, can_compile):
    """Two results, and arguments named like kb's own buffers (t1, out2,
    arg0): the importer renames them (kb-opt refuses a kb.name of the form
    argN, outN, tN, wsN or tmN), and the bundle compiles."""
    def f(t1, out2, arg0):
        return torch.relu(t1 + out2), torch.exp(arg0)
    bundle = kb.compile(f, (torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64)),
                        output=tmp_path / "names", precision="ieee")
    bufs = {b["name"]: b["role"] for b in bundle.manifest["buffers"]}
    assert [n for n, r in bufs.items() if r == "output"] == ["out_0", "out_1"]
    assert {"in_t1", "in_out2", "in_arg0"} <= {n for n, r in bufs.items() if r == "input"}


def _relu_program(name="r"):
    p = kb.Program(name)
    p.output(p.relu(p.input("x", (64, 128))), "y")
    return p


def test_compile_never_deletes_a_users_files(tmp_path, can_compile):
    # kb.compile(output=DIR) removed DIR whole (shutil.rmtree) before
    # compiling: a folder holding anything but an earlier bundle is refused
    # now, and its files stay.
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("mine")
    with pytest.raises(kb.KbError, match="holds no kb bundle"):
        kb.compile(_relu_program(), output=home)
    assert (home / "thesis.tex").read_text() == "mine"
    # An earlier bundle is replaced whole: no kernel of it is left.
    out = tmp_path / "b"
    unfused = kb.Program("two")
    v = unfused.input("x", (64, 128))
    unfused.output(unfused.tanh(unfused.relu(v)), "y")
    first = kb.compile(unfused, output=out, fuse=False)
    assert len(first.kernels) == 2
    again = kb.compile(_relu_program(), output=out)
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".ptx") == [again.kernels[0]["name"] + ".ptx"]
    # ... unless the user put a file of their own in it.
    (out / "notes.txt").write_text("mine")
    with pytest.raises(kb.KbError, match="'notes.txt', which is not a bundle's file"):
        kb.compile(_relu_program(), output=out)
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "manifest.json").is_file()


def test_compile_takes_a_tuning_db(tmp_path, can_compile):
    # The database's key is the kernel's (lib/Transforms/TuningDb.cpp: ops,
    # shapes, precision, chip, kb's version); its entry gives the kernel 128
    # threads, which kb picks for no 64 x 128 relu by itself.
    p = _relu_program()
    plain = kb.compile(p, output=tmp_path / "plain")
    assert "threads = 128" not in plain.kernels[0]["config"]
    version = plain.manifest["compiler"].split()[1]
    db = tmp_path / "db.json"
    db.write_text(json.dumps({"kind": "kb-tuning-db", "schema": 1, "entries": [
        {"key": f"kb.relu|64x128,->64x128|-|sm_90a|kb {version}",
         "config": "#kb.config<threads = 128>"}]}))
    tuned = kb.compile(p, output=tmp_path / "tuned", tuning_db=db)
    assert "threads = 128" in tuned.kernels[0]["config"]
    with pytest.raises(kb.KbError, match="tuning_db"):
        kb.compile(p, output=tmp_path / "t2", tuning_db=tmp_path / "missing.json")
    db.write_text("{")
    with pytest.raises(kb.KbError, match="is not JSON"):
        kb.compile(p, output=tmp_path / "t3", tuning_db=db)
