"""torch.compile(model, backend="kb") on the GPU: kb.models' MLP, GPT-2 block
and Llama block against eager in f32 and bf16, and a serving loop over
M = 1..512 that counts the bundles it uses. The GPU machine has no kb-opt:
the bundles come from the cache that

    python3 python/tests/gpu/test_backend_gpu.py --prepare DIR

fills on a machine with kb-opt (scripts/build-pybundles.sh: DIR is
build/pybundles/backend-cache); KB_BACKEND_CACHE names it here. Skipped
without a GPU. scripts/gpu-python-check.sh runs it (and, by name,
test_graph_mode_matches_direct_launches: the pieces' CUDA graphs, and
test_whole_graph_matches_eager_and_direct_launches: the whole graph's)."""
import os
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
torch = pytest.importorskip("torch")

CACHE = os.environ.get("KB_BACKEND_CACHE", "build/pybundles/backend-cache")
BUCKETS = (16, 32, 64, 128, 256, 512)
DIM, T = 256, 16


def models(dtype):
    """(name, model, first input, later inputs) for each model: the first
    call is Dynamo's static graph, the later ones its dynamic one."""
    import kb.models as m
    torch.manual_seed(0)
    out = []
    for name, mod, shape in (("mlp", m.MLP(DIM, 512, 128), (1, DIM)),
                             ("gpt2", m.GPT2Block(DIM, 4), (1, T, DIM)),
                             ("gpt2-sdpa", m.GPT2Block(DIM, 4, sdpa=True), (1, T, DIM)),
                             ("llama", m.LlamaBlock(DIM, 4), (1, T, DIM))):
        mod = mod.eval().to(dtype)
        later = [(3,) + shape[1:], (12,) + shape[1:]]
        out.append((name, mod, shape, later))
    return out


def prepare(cache):
    """Fills `cache` for the tests below (needs kb-opt, no GPU)."""
    import kb.backend as B
    for dtype in (torch.float32, torch.bfloat16):
        for name, mod, shape, _ in models(dtype):
            buckets = BUCKETS if name == "mlp" else (16,)
            keys = B.precompile(mod, (torch.zeros(shape, dtype=dtype),), buckets=buckets,
                                cache_dir=cache)
            print(f"{name} {dtype}: {len(set(keys))} bundles")


needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")


def compiled(mod, **options):
    import torch._dynamo as dynamo
    dynamo.reset()
    return torch.compile(mod, backend="kb", options={"cache_dir": CACHE, **options})


@needs_gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("which", ["mlp", "gpt2", "gpt2-sdpa", "llama", "gpt2+inductor"])
def test_model_matches_eager(dtype, which):
    """Each model against eager; "+inductor": Inductor runs what kb leaves out."""
    import kb.backend as B
    if which.endswith("+inductor") and dtype != torch.float32:
        pytest.skip("one Inductor case (f32) keeps the run short")
    base, _, rest = which.partition("+")
    name, mod, shape, later = next(x for x in models(dtype) if x[0] == base)
    mod = mod.cuda()
    fast = compiled(mod, **({"fallback": rest} if rest else {}))
    before = dict(B.STATS)
    tol = 2e-3 if dtype == torch.float32 else 6e-2
    with torch.no_grad(), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for s in [shape] + later:
            x = torch.randn(s, dtype=dtype, device="cuda")
            want, got = mod(x), fast(x)
            err = ((got.float() - want.float()).abs().max() / want.float().abs().max()).item()
            assert err < tol, f"{name} {s}: max error {err:.2e} (relative to max |y|)"
    ran = B.STATS["kb_calls"] - before["kb_calls"]
    # Only a piece kb-opt refused when the cache was filled may run in PyTorch.
    missing = [str(x.message) for x in w if "kb:" in str(x.message) and "refused" not in str(x.message)]
    assert ran > 0 and not missing, f"kb ran {ran} pieces; fell back: {missing[:3]}"


@needs_gpu
def test_serving_loop_compiles_per_bucket():
    import kb.backend as B
    name, mod, shape, _ = models(torch.float32)[0]
    mod = mod.cuda()
    fast = compiled(mod)
    used_before = B.STATS["cache_hits"] + B.STATS["compiles"]
    with torch.no_grad():
        for m in range(1, 513):
            x = torch.randn(m, DIM, device="cuda")
            got = fast(x)
            assert torch.allclose(got, mod(x), atol=2e-3, rtol=2e-3), f"M={m}"
    used = B.STATS["cache_hits"] + B.STATS["compiles"] - used_before
    assert used <= 8, f"M = 1..512 used {used} bundles (at most 8: one a bucket)"


@needs_gpu
def test_graph_mode_matches_direct_launches():
    """The MLP's pieces as CUDA-graph replays (the default) against direct
    launches (cuda_graphs=False) on the same inputs: M = 1 twice (the
    static graph), then at buckets 64, 32, 16 and 256, new values at the same
    M one after another (a stale static input would show), 50 after 64 in
    one bucket (the padding rows zeroed again), calls on a side stream (a
    graph of its own), and each output still what it was after the next
    call (the caller's tensors are never the graph's)."""
    import kb.backend as B
    import kb.piece_graphs as G
    name, mod, shape, _ = models(torch.float32)[0]
    mod = mod.cuda()
    torch.manual_seed(1)
    ms = [1, 1, 50, 50, 64, 20, 50, 3, 200, 200]
    side = [50, 50, 64]
    xs = [torch.randn(m, DIM, device="cuda") for m in ms + side]
    s = torch.cuda.Stream()

    def run(graphs):
        fast = compiled(mod, cuda_graphs=graphs, whole_graph=False)  # the pieces' own graphs
        outs = []
        with torch.no_grad():
            for x in xs[: len(ms)]:
                outs.append(fast(x))
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for x in xs[len(ms):]:
                    outs.append(fast(x))
            torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        return outs
    before = dict(G.STATS)
    direct = [o.clone() for o in run(False)]
    assert G.STATS["replays"] == before["replays"], "cuda_graphs=False replayed a graph"
    graphed = run(True)
    replays = G.STATS["replays"] - before["replays"]
    assert replays == len(xs), f"{replays} of {len(xs)} calls were graph replays"
    # Graphs: M = 1, buckets 64, 32, 16, 256, bucket 64 on the side stream,
    # and a recapture where M = 1's input moved (it is copied from then on).
    assert G.STATS["captures"] - before["captures"] <= 7
    for m, x, d, g in zip(ms + side, xs, direct, graphed):
        assert g.shape == d.shape == (m, 128)
        err = ((g - d).abs().max() / d.abs().max()).item()
        assert err <= 1e-5, f"M={m}: graph replay differs from direct launches by {err:.2e}"
        with torch.no_grad():
            ref = mod(x)
        assert torch.allclose(g, ref, atol=2e-3, rtol=2e-3), f"M={m} against eager"


@needs_gpu
@pytest.mark.parametrize("which", ["mlp", "gpt2", "llama"])
def test_whole_graph_matches_eager_and_direct_launches(which):
    """The whole stitched graph as one CUDA graph (the default) against
    direct launches (cuda_graphs=False), the pieces' own graphs
    (whole_graph=False) and eager, f32, on new inputs every call: M = 1
    three times (Dynamo's static graph: a direct call, the capture, a
    replay), then M = 3 three times (the dynamic one). Each call's output
    is its own input's (no stale static buffer), the earlier outputs are
    unchanged by later replays, an output the caller mutates changes
    nothing the next call returns, and a parameter updated in place is read
    where it is."""
    import kb.whole_graph as W
    name, mod, shape, _ = next(x for x in models(torch.float32) if x[0] == which)
    mod = mod.cuda()
    torch.manual_seed(3)
    ms = [1, 1, 1, 3, 3, 3]
    xs = [torch.randn((m,) + shape[1:], device="cuda") for m in ms]

    def run(**options):
        fast = compiled(mod, **options)
        with torch.no_grad():
            outs = [fast(x) for x in xs]
        torch.cuda.synchronize()
        return fast, outs
    before = dict(W.STATS)
    _, direct = run(cuda_graphs=False)
    _, pieces = run(whole_graph=False)
    assert W.STATS["captures"] == before["captures"], "whole_graph=False captured a whole graph"
    before = dict(W.STATS)
    fast, whole = run()
    assert W.STATS["capture_failures"] == before["capture_failures"], "a whole-graph capture failed (see the warning)"
    assert W.STATS["captures"] - before["captures"] == 2, "one capture a key (M = 1, M = 3)"
    assert W.STATS["replays"] - before["replays"] == 4, "the second and third call at each key replay"
    with torch.no_grad():
        want = [mod(x) for x in xs]
    for m, d, p, g, e in zip(ms, direct, pieces, whole, want):
        assert g.shape == d.shape == e.shape
        for other, tol, what in ((d, 1e-5, "direct launches"), (p, 1e-5, "the pieces' graphs"),
                                 (e, 2e-3, "eager")):
            err = ((g - other).abs().max() / other.abs().max()).item()
            assert err <= tol, f"{which} M={m}: the whole graph differs from {what} by {err:.2e}"
    assert not torch.equal(whole[1], whole[2]) and not torch.equal(whole[4], whole[5])
    # The caller's outputs are its own: mutated, the next replay is unaffected.
    with torch.no_grad():
        x = torch.randn((3,) + shape[1:], device="cuda")
        y1 = fast(x)
        keep = y1.clone()
        y1.add_(100.0)
        y2 = fast(x)
        torch.cuda.synchronize()
        assert torch.equal(y2, keep), "a replay returned what the caller had mutated"
        assert torch.equal(y1, keep + 100.0), "a replay overwrote an earlier output"
        # A parameter updated in place: read where it is.
        p0 = next(mod.parameters())
        p0.mul_(0.5)
        y3, e3 = fast(x), mod(x)
        torch.cuda.synchronize()
        err = ((y3 - e3).abs().max() / e3.abs().max()).item()
        assert err <= 2e-3 and not torch.equal(y3, keep), f"after an in-place parameter update: {err:.2e}"
    assert W.STATS["replays"] - before["replays"] == 7


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--prepare":
        prepare(sys.argv[2])
    else:
        sys.exit(pytest.main([__file__, "-v"]))
