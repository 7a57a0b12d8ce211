"""kb.load on the GPU: bundles compiled elsewhere (build/pybundles/tests,
written by `python3 python/tests/gpu/test_gpu_load.py --prepare DIR` on a
machine with kb-opt) launched on torch CUDA tensors and compared with
PyTorch. Skipped without a GPU. scripts/gpu-python-check.sh runs it."""
import math
import os
import sys
from pathlib import Path

try:
    import pytest
except ImportError:  # the GPU machine may lack pytest: a small stand-in (run_all below)
    import contextlib
    import re

    class pytest:  # noqa: N801
        class mark:
            @staticmethod
            def skipif(cond, reason=""):
                def deco(f):
                    f._skip = reason if cond else None
                    return f
                return deco

            @staticmethod
            def parametrize(names, values):
                def deco(f):
                    f._params = list(values)
                    return f
                return deco

        @staticmethod
        @contextlib.contextmanager
        def raises(exc, match=None):
            try:
                yield
            except exc as e:
                if match and not re.search(match, str(e)):
                    raise AssertionError(f"{exc.__name__} raised, but {match!r} not in: {e}")
                return
            raise AssertionError(f"did not raise {exc.__name__}")

        @staticmethod
        def fail(msg):
            raise AssertionError(msg)

        class SkipTest(Exception):
            pass

        @staticmethod
        def skip(msg):
            raise pytest.SkipTest(msg)

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import kb  # noqa: E402

BUNDLES = Path(os.environ.get("KB_PYBUNDLES_TESTS", ROOT / "build" / "pybundles" / "tests"))


def programs():
    """name -> (fn or module, example input shapes, precision)."""
    torch.manual_seed(0)

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(256, 512)
            self.fc2 = nn.Linear(512, 128)

        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))

    return {
        "softmax": (lambda x: torch.softmax(x, -1), [(512, 1000)], "ieee"),
        "new_ops": (lambda x: F.leaky_relu(F.silu(x ** 3 + 0.5), 0.1) - 1.0, [(300, 257)], "ieee"),
        "pow_fractional": (lambda x: torch.pow(torch.sigmoid(x), 0.75), [(64, 1024)], "ieee"),
        "mlp_tf32": (Mlp(), [(4, 64, 256)], "tf32"),
        "attention_tf32": (lambda q, k, v: torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.125, -1), v),
                           [(4, 128, 64), (4, 128, 64), (4, 128, 64)], "tf32"),
        "two_outputs": (lambda x: (torch.relu(x), torch.exp(x)), [(128, 128)], "ieee"),
    }


def builder_program():
    p = kb.Program("bias_gelu")
    x = p.input("x", (1024, 512))
    b = p.input("bias", (512,))
    p.output(p.gelu(p.bias_add(x, b), "tanh"), "y")
    return p


def wide_softmax_programs():
    """Rows too long for one block: split over the grid (workspace, blocks
    that wait for each other) and over a thread-block cluster (a cluster
    launch through cuLaunchKernelEx)."""
    out = {}
    for name, cfg in (("softmax_split_global", None),
                      ("softmax_cluster", kb.Config(strategy="split", cluster=4))):
        p = kb.Program(name)
        x = p.input("x", (128, 100000))
        p.output(p.softmax(x, config=cfg), "y")
        out[name] = p
    return out


def split_k_program():
    """A long-K matmul kb splits (partials, then a sum kernel marked
    dependent_launch: launched while the partials' kernel ends)."""
    p = kb.Program("split_k")
    a = p.input("a", (256, 65536))
    b = p.input("b", (65536, 256))
    p.output(p.matmul(a, b, "tf32"), "c")
    return p


def linear_gelu(x, w, b):
    """The 16-bit acceptance program of issue #44: linear + bias + GELU."""
    return F.gelu(F.linear(x, w, b), approximate="tanh")


# name -> (function, example input shapes, dtype)
PROGRAMS_16 = {"linear_gelu_bf16": (linear_gelu, [(2, 128, 512), (1024, 512), (1024,)], torch.bfloat16)}


def prepare_16(out: Path, chip):
    """The 16-bit bundles; a program kb-opt refuses is recorded in
    NAME.refused (its message) and the test that runs it skips, saying so."""
    for name, (fn, shapes, dt) in PROGRAMS_16.items():
        (out / f"{name}.refused").unlink(missing_ok=True)
        try:
            kb.compile(fn, [torch.randn(*s).to(dt) for s in shapes], chip=chip, output=out / name, name=name)
            print(f"prepared {out / name}")
        except kb.KbError as e:
            (out / f"{name}.refused").write_text(str(e))
            print(f"NOT prepared {out / name}: kb-opt refused it: {str(e).splitlines()[1] if chr(10) in str(e) else e}")


def prepare(out: Path, chip="sm_90a"):
    out.mkdir(parents=True, exist_ok=True)
    for name, (fn, shapes, prec) in programs().items():
        kb.compile(fn, [torch.randn(*s) for s in shapes], chip=chip, precision=prec,
                   output=out / name, name=name)
        print(f"prepared {out / name}")
    kb.compile(builder_program(), output=out / "builder_bias_gelu", chip=chip)
    for name, p in wide_softmax_programs().items():
        kb.compile(p, output=out / name, chip=chip)
        print(f"prepared {out / name}")
    kb.compile(split_k_program(), output=out / "split_k", chip=chip)
    print(f"prepared {out / 'split_k'}")
    # The module's weights travel with its bundle (the GPU run builds the
    # same module from seed 0, so this is only a cross-check).
    print(f"prepared {out / 'builder_bias_gelu'}")
    prepare_16(out, chip)


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")


def bundle(name):
    path = BUNDLES / name
    if not (path / "manifest.json").is_file():
        pytest.fail(f"{path} is missing: run python3 python/tests/gpu/test_gpu_load.py --prepare {BUNDLES} "
                    f"on a machine with kb-opt, and carry build/pybundles")
    return kb.Bundle.open(path)


def rel_err(got, ref):
    ref = ref.double()
    return ((got.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30)).item()


TOL = {"ieee": 1e-5, "tf32": 5e-3}


@needs_gpu
@pytest.mark.parametrize("name", list(programs()))
def test_loaded_kernels_match_pytorch(name):
    import copy
    fn, shapes, prec = programs()[name]
    b = bundle(name)
    module = fn.cuda() if isinstance(fn, nn.Module) else None
    fast = kb.load(b, module=module)
    ref_fn = copy.deepcopy(module).double() if module is not None else fn
    torch.manual_seed(7)
    for _ in range(3):
        xs = [torch.randn(*s, device="cuda") for s in shapes]
        got = fast(*xs)
        with torch.no_grad():
            want = ref_fn(*[x.double() for x in xs])
        gots = got if isinstance(got, tuple) else (got,)
        wants = want if isinstance(want, (tuple, list)) else (want,)
        assert len(gots) == len(wants)
        for g, w in zip(gots, wants):
            assert g.shape == w.shape and g.device.type == "cuda" and g.dtype == torch.float32
            assert rel_err(g, w) <= TOL[prec], f"{name}: {rel_err(g, w):.2e}"


@needs_gpu
@pytest.mark.parametrize("name", list(PROGRAMS_16))
def test_bf16_function_matches_eager(name):
    """kb.compile of a bf16 function (linear + bias + GELU), called on bf16
    CUDA tensors: the result is bf16 and within bf16's rounding of PyTorch
    eager in bf16 and of float64: max |kb - ref| / max |ref| <= 2^-7, four
    of bf16's half-ulps (2^-9) for kb's one rounding of the output and
    eager's two (after the linear, after the GELU); K = 512 adds little in
    f32. A CPU model of both (f32 from the bf16 inputs, rounded once) gives
    6e-4 to eager and 2.5e-3 to float64 on these inputs."""
    fn, shapes, dt = PROGRAMS_16[name]
    refused = BUNDLES / f"{name}.refused"
    if refused.is_file() and not (BUNDLES / name / "manifest.json").is_file():
        pytest.skip(f"kb-opt refused {name} when the bundles were prepared: " + refused.read_text()[:300])
    b = bundle(name)
    assert {x["dtype"] for x in b.manifest["buffers"] if x["role"] in ("input", "output")} == {"bf16"}
    fast = kb.load(b)
    torch.manual_seed(11)
    for _ in range(3):
        xs = [torch.randn(*s, device="cuda").to(dt) for s in shapes]
        got = fast(*xs)
        assert got.dtype == dt and got.device.type == "cuda" and got.shape == (2, 128, 1024)
        with torch.no_grad():
            eager = fn(*xs)
            exact = fn(*[x.double() for x in xs])
        assert rel_err(got, eager) <= 2 ** -7, f"{name} vs eager bf16: {rel_err(got, eager):.2e}"
        assert rel_err(got, exact) <= 2 ** -7, f"{name} vs float64: {rel_err(got, exact):.2e}"
    with pytest.raises(kb.KbError, match="torch.float32; the bundle's buffer"):
        fast(*[torch.randn(*s, device="cuda") for s in shapes])


@needs_gpu
def test_builder_bundle():
    fast = kb.load(bundle("builder_bias_gelu"))
    x = torch.randn(1024, 512, device="cuda")
    bias = torch.randn(512, device="cuda")
    y = fast(x, bias)
    assert rel_err(y, F.gelu(x.double() + bias.double(), approximate="tanh")) < 1e-5


@needs_gpu
@pytest.mark.parametrize("name", ["softmax_split_global", "softmax_cluster"])
def test_wide_softmax(name):
    b = bundle(name)
    roles = {x["role"] for x in b.manifest["buffers"]}
    if name == "softmax_split_global":
        assert "workspace" in roles
    else:
        assert any(k.get("cluster", [1, 1, 1]) != [1, 1, 1] for k in b.kernels)
    fast = kb.load(b)
    for _ in range(3):  # the workspace must be left zero for the next call
        x = torch.randn(128, 100000, device="cuda") * 4
        assert rel_err(fast(x), torch.softmax(x.double(), -1)) < 1e-5


@needs_gpu
def test_runs_on_the_current_stream():
    """Work queued before and after on a side stream is ordered with kb's
    kernels (no synchronisation in between)."""
    fast = kb.load(bundle("softmax"))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.randn(512, 1000, device="cuda") * 3
        for _ in range(3):
            x = x + 1.0  # queued on s
        y = fast(x)
        z = y * 2.0
    s.synchronize()
    assert rel_err(z, torch.softmax(x.double(), -1) * 2) < 1e-5


@needs_gpu
def test_out_writes_in_place():
    fast = kb.load(bundle("softmax"))
    x = torch.randn(512, 1000, device="cuda")
    y = torch.full((512, 1000), float("nan"), device="cuda")
    r = fast(x, out=y)
    assert r is y and rel_err(y, torch.softmax(x.double(), -1)) < 1e-5
    with pytest.raises(kb.KbError, match="out"):
        fast(x, out=torch.empty(512, 999, device="cuda"))


@needs_gpu
def test_dependent_launch():
    """The split sum is launched with programmatic stream serialization (as
    kb-run does) and reads the partials only after they are written: the
    same bits as launched after the partials' kernel has ended, and the
    matmul's value."""
    b = bundle("split_k")
    marked = [k["name"] for k in b.manifest["kernels"] if k.get("dependent_launch")]
    assert marked, "the split-K bundle has no kernel marked dependent_launch"
    fast = kb.load(b)
    slow = kb.load(b, dependent_launch=False)
    assert [k["name"] for k in fast.kernels if k["dependent"]] == marked
    assert not any(k["dependent"] for k in slow.kernels)
    a = torch.randn(256, 65536, device="cuda")
    w = torch.randn(65536, 256, device="cuda")
    for _ in range(3):  # back to back: each sum may start while its partials end
        got = fast(a, w)
    ref = slow(a, w)
    assert torch.equal(got, ref)
    assert rel_err(got, a.double() @ w.double()) < 5e-3
    # A kernel marked dependent whose PTX has no griddepcontrol.wait (the
    # first, which waits for nothing) is refused at load.
    import json
    import shutil
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "split_k"
        shutil.copytree(b.path, bad)
        m = json.loads((bad / "manifest.json").read_text())
        m["kernels"][0]["dependent_launch"] = True
        (bad / "manifest.json").write_text(json.dumps(m))
        with pytest.raises(kb.KbError, match="griddepcontrol.wait"):
            kb.load(bad)


@needs_gpu
def test_refusals():
    fast = kb.load(bundle("softmax"))
    with pytest.raises(kb.KbError, match="compiled for"):
        fast(torch.randn(512, 999, device="cuda"))
    with pytest.raises(kb.KbError, match="is on cpu"):
        fast(torch.randn(512, 1000))
    with pytest.raises(kb.KbError, match="float32"):
        fast(torch.randn(512, 1000, device="cuda", dtype=torch.float64))
    with pytest.raises(kb.KbError, match="contiguous"):
        fast(torch.randn(1000, 512, device="cuda").t())
    with pytest.raises(kb.KbError, match="multiple of 16"):
        fast(torch.randn(512 * 1000 + 1, device="cuda")[1:].view(512, 1000))


def run_all() -> int:
    """Runs every test here without pytest (for a machine that lacks it)."""
    import traceback
    failed = passed = 0
    for name, f in list(globals().items()):
        if not name.startswith("test_") or not callable(f):
            continue
        if getattr(f, "_skip", None):
            print(f"SKIP {name}: {f._skip}")
            continue
        for arg in getattr(f, "_params", [None]):
            label = name if arg is None else f"{name}[{arg}]"
            try:
                f() if arg is None else f(arg)
                passed += 1
                print(f"PASS {label}")
            except getattr(pytest, "SkipTest", ()) as e:
                print(f"SKIP {label}: {e}")
            except Exception:
                failed += 1
                print(f"FAIL {label}\n{traceback.format_exc()}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--prepare":
        prepare(Path(sys.argv[2]), *(sys.argv[3:4]))
    elif hasattr(pytest, "main") and "--no-pytest" not in sys.argv:
        sys.exit(pytest.main([__file__, "-v", "-p", "no:cacheprovider"]))
    else:
        sys.exit(run_all())
