"""The torch.compile backend on the host (no GPU): kb.partition's pieces and
reasons for kb.models' MLP, GPT-2 and Llama blocks, buckets and cache keys,
precompile's bundles, the fallback where a bundle and kb-opt are both
missing, kb.explain's output. Needs torch >= 2 (Dynamo)."""
import os
import warnings

import pytest

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("the kb backend needs torch >= 2 (Dynamo)", allow_module_level=True)

import kb  # noqa: E402
import kb.backend as B  # noqa: E402
import kb.models as M  # noqa: E402
from kb.partition import partition  # noqa: E402


def capture(model, *shapes, dynamic=False):
    """Dynamo's graph of model on zeros of `shapes` (dim 0 dynamic)."""
    ins = [torch.zeros(s) for s in shapes]
    (gm, ex), = B._capture(model.eval(), ins, dynamic_dim0=dynamic)
    return gm, ex


@pytest.fixture(scope="module")
def mlp():
    return capture(M.MLP(64, 128, 32), (8, 64), dynamic=True)


@pytest.fixture(scope="module")
def gpt2():
    return capture(M.GPT2Block(64, 2), (2, 8, 64), dynamic=True)


def left(part):
    return {l.node: l.reason for l in part.left_out}


def test_bucket_for():
    bs = {B.bucket_for(m, B.DEFAULT_BUCKETS) for m in range(1, 513)}
    assert bs == {16, 32, 64, 128, 256, 512}
    assert all(B.bucket_for(m, B.DEFAULT_BUCKETS) >= m for m in range(1, 513))
    assert B.bucket_for(600, B.DEFAULT_BUCKETS) == 1024
    assert B.bucket_for(7, ()) == 7


def test_mlp_is_one_bucketed_piece(mlp):
    part = partition(*mlp)
    assert len(part.pieces) == 1 and not part.left_out
    p = part.pieces[0]
    assert p.nodes == ["linear", "gelu", "linear_1", "relu", "linear_2"]
    assert {"matmul", "bias_add", "gelu", "relu"} <= set(p.ops)
    assert p.bucket is not None and p.bucket.sliced == {0: 1}


def test_gpt2_partition_and_reasons(gpt2):
    part = partition(*gpt2)
    ops = [set(p.ops) for p in part.pieces]
    assert any("layer_norm" in o for o in ops) and any("attention" in o for o in ops)
    assert any({"matmul", "gelu", "layer_norm"} <= o for o in ops)  # MLP with ln_2 and residual
    assert part.pieces[0].nodes == ["layer_norm", "linear"]  # ln_1 as rows, then c_attn
    why = left(part)
    # The hand-written causal attention: the masked_fill by ~tril(ones(T, T))
    # folds to causal_fill, then q @ k^T, the scale, causal_fill, softmax and
    # @ v of the heads' transposes to SDPA (fold_explicit_attention), one
    # kb.attention bthd with the views and transposes in its piece (issue
    # #47); the mask's own nodes are gone, only the split's getitems left.
    att = [p for p in part.pieces if "attention" in p.ops]
    assert len(att) == 1 and set(att[0].ops) == {"attention"}
    assert att[0].nodes == ["view", "view_1", "view_2", "q_1", "k_1", "v_1",
                            "scaled_dot_product_attention", "transpose_4", "contiguous", "y_1"]
    assert not any(n in why for n in ("ones", "mask", "invert", "att_1", "k_1", "softmax"))
    assert sorted(why) == ["k", "q", "v"]
    assert all(p.bucket is not None for p in part.pieces)


def test_llama_partition():
    part = partition(*capture(M.LlamaBlock(64, 2, max_seq=64), (2, 8, 64)))
    ops = [set(p.ops) for p in part.pieces]
    assert any({"rms_norm", "matmul", "silu", "mul"} <= o for o in ops)  # norm + SwiGLU MLP
    why = left(part)
    # F.scaled_dot_product_attention imports as one kb.attention.
    assert any(set(p.ops) == {"attention"} and "y" in p.nodes for p in part.pieces)
    assert "y" not in why
    # The interleaved rotary (kb.models.rotary) is kb.rotary in the q and k
    # projections' piece (fold_rotary); only the heads' transposes, v's and
    # the tables' slices stay PyTorch's.
    assert any({"matmul", "rotary"} <= o for o in ops)
    assert not any(n in why for n in ("mul", "mul_4", "stack", "stack_1", "x1", "x2"))
    assert all(p.bucket is None and "static" in p.bucket_note for p in part.pieces)


def test_partition_of_a_plain_fx_graph():
    """No Dynamo: a symbolic_trace graph and real example inputs."""
    def f(x, w):
        return torch.cumsum(torch.relu(x @ w), dim=0).sum(dim=-1)
    gm = torch.fx.symbolic_trace(f)
    part = partition(gm, (torch.randn(4, 8), torch.randn(8, 16)))
    assert [p.nodes for p in part.pieces] == [["matmul", "relu"], ["sum_1"]]
    assert "torch.cumsum" in left(part)["cumsum"]


def test_padding_refused_where_rows_mix():
    class Gram(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x.t() @ x)
    part = partition(*capture(Gram(), (8, 32), dynamic=True))
    assert part.pieces and all(p.bucket is None for p in part.pieces)
    assert "padding would mix rows" in part.pieces[0].bucket_note


def test_cache_keys(mlp, tmp_path, monkeypatch):
    p = partition(*mlp).pieces[0]
    binds = kb.partition.bindings(*mlp)
    sym = p.bucket.symbol

    def key(b, **o):
        sg, metas, _ = kb.partition.specialize(p.gm, {**binds, sym: b})
        return B.cache_key(sg, metas, B.Options.make(o), "ieee")
    assert key(16) == key(16) and key(16) != key(32)
    assert key(16) != key(16, chip="sm_80")
    # A cache of bundles without the bundle record (format 1) is not hit.
    now = key(16)
    monkeypatch.setattr(B, "BUNDLE_FORMAT", 1)
    assert key(16) != now
    db = tmp_path / "db.json"
    db.write_text('{"entries": []}')
    k1 = key(16, tuning_db=str(db))
    db.write_text('{"entries": [1]}')
    assert k1 != key(16, tuning_db=str(db)) and k1 != key(16)
    with pytest.raises(kb.KbError, match="unknown kb backend option"):
        B.Options.make({"chips": "sm_90a"})


def test_explain_prints_and_returns(capsys):
    parts = kb.explain(M.MLP(64, 128, 32), torch.zeros(4, 64))
    out = capsys.readouterr().out
    assert "kb_piece_0: 5 op(s)" in out and "kb ops: matmul" in out
    d = parts[0].as_dict()
    assert d["pieces"][0]["kb_ops"][0] == "matmul" and d["left_out"] == []


def test_compiled_model_runs_on_cpu_through_pytorch():
    mod = M.GPT2Block(64, 2).eval()
    fast = torch.compile(mod, backend="kb")
    x = torch.randn(2, 8, 64)
    before = B.STATS["fallback_calls"]
    with torch.no_grad():
        assert torch.allclose(fast(x), mod(x), atol=1e-5)
    assert B.STATS["fallback_calls"] > before  # the kb pieces ran in PyTorch (no GPU)


def test_missing_bundle_without_kb_opt_falls_back(mlp, tmp_path, monkeypatch):
    p = partition(*mlp).pieces[0]
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    piece = B.KbPiece(p, B.Options.make({"cache_dir": str(tmp_path), "compile_only": True}))
    x = torch.randn(5, 64)
    gm, ex = mlp
    by_name = {n.name: a for n, a in zip([n for n in gm.graph.nodes if n.op == "placeholder"], ex)}
    args = [x if n == "l_x_" else by_name[n] for n in p.inputs]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = piece(*args)
        piece(*args)
    msgs = [str(m.message) for m in w if "kb:" in str(m.message)]
    assert len(msgs) == 1 and "no bundle for kb_piece_0 (16x64" in msgs[0] and "no kb-opt" in msgs[0]
    assert out[0].shape == (5, 32)


@pytest.mark.skipif(not os.environ.get("KB_OPT") and kb.bundle.find_tool("kb-opt", "KB_OPT") is None,
                    reason="needs kb-opt")
def test_precompile_fills_the_cache_and_is_read_without_kb_opt(tmp_path, monkeypatch):
    mod = M.MLP(64, 128, 32).eval()
    keys = B.precompile(mod, (torch.zeros(1, 64),), buckets=(16, 32), cache_dir=str(tmp_path))
    assert len(set(keys)) == 3  # the static M=1 graph, then buckets 16 and 32
    for k in keys:
        assert (tmp_path / k / "manifest.json").is_file()
    again = B.STATS["compiles"]
    assert B.precompile(mod, (torch.zeros(1, 64),), buckets=(16, 32), cache_dir=str(tmp_path)) == keys
    assert B.STATS["compiles"] == again  # all from the cache
    # The GPU machine's run: torch.compile's own graphs (static at M=1, then
    # Dynamo's automatic dynamic one) find every bundle without kb-opt.
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    torch._dynamo.reset()
    fast = torch.compile(mod, backend="kb", options={"cache_dir": str(tmp_path), "compile_only": True,
                                                     "buckets": (16, 32)})
    hits = B.STATS["cache_hits"]
    with torch.no_grad(), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for m in (1, 2, 5, 16, 17, 32):
            x = torch.randn(m, 64)
            assert torch.allclose(fast(x), mod(x), atol=1e-5)
    assert not [str(x.message) for x in w if "kb:" in str(x.message)]
    assert B.STATS["cache_hits"] - hits == 3
    piece = next(iter(B.PARTITIONS[-1].pieces))
    assert piece.kernels  # read from the bundles' manifests


def test_pieces_are_opaque_ops_under_aot_tracing():
    """fallback="aot_eager" (Inductor's tracing, no code generation): each
    piece is one torch.ops.kb.piece call, static and dynamic graphs."""
    mod = M.GPT2Block(64, 2).eval()
    torch._dynamo.reset()
    fast = torch.compile(mod, backend="kb", options={"fallback": "aot_eager"})
    before = B.STATS["fallback_calls"]
    with torch.no_grad():
        for b in (2, 3, 5):
            x = torch.randn(b, 8, 64)
            assert torch.allclose(fast(x), mod(x), atol=1e-5)
    # ln_1 + c_attn, the attention, the rest (test above)
    assert len(B.PARTITIONS[-1].pieces) == 3
    assert B.STATS["fallback_calls"] - before == 3 * 3  # each piece through its op, on the CPU
    assert any(k.startswith("kb_piece_2@") for k in B._OP_PIECES)


def test_piece_op_outputs_are_contiguous_real_and_fake():
    """torch.ops.kb.piece returns row-major outputs, the real call and the
    fake alike, where the piece's PyTorch graph returns another layout (a
    transposed view: Inductor asserted the fake's strides on kb's dense
    output, session 31's Llama run), and never an input itself."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    class Stub:
        is_tensor = [True]

        @staticmethod
        def merge(tensors, ints):
            return tensors

        @staticmethod
        def fallback(x):
            return [x.view(1, 4, 2, 3).transpose(1, 2), x]

        __call__ = fallback

    B._OP_PIECES["stub@0"] = Stub()
    op = B._piece_op()
    x = torch.randn(1, 4, 6)
    ys = op("stub@0", [x], [])
    assert all(y.is_contiguous() for y in ys)
    assert torch.equal(ys[0], x.view(1, 4, 2, 3).transpose(1, 2))
    assert ys[1] is not x and torch.equal(ys[1], x)
    with FakeTensorMode() as mode:
        fs = op("stub@0", [mode.from_tensor(x)], [])
    assert [f.stride() for f in fs] == [y.stride() for y in ys]
    del B._OP_PIECES["stub@0"]


def test_a_broken_cache_entry_falls_back(mlp, tmp_path):
    """A bundle folder whose manifest is not JSON: one warning, PyTorch's
    result, no crash (compile_only reads the cache as a GPU run would)."""
    p = partition(*mlp).pieces[0]
    opts = B.Options.make({"cache_dir": str(tmp_path), "compile_only": True})
    piece = B.KbPiece(p, opts)
    gm, ex = mlp
    by_name = {n.name: a for n, a in zip([n for n in gm.graph.nodes if n.op == "placeholder"], ex)}
    x = torch.randn(5, 64)
    args = [x if n == "l_x_" else by_name[n] for n in p.inputs]
    sg, metas, _ = kb.partition.specialize(p.gm, {**kb.partition.bindings(p.gm, args), p.bucket.symbol: 16})
    key = B.cache_key(sg, metas, opts, kb.fx.default_precision())
    (tmp_path / key).mkdir()
    (tmp_path / key / "manifest.json").write_text("{not json")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = piece(*args)
    msgs = [str(m.message) for m in w if "kb:" in str(m.message)]
    assert len(msgs) == 1 and "kb_piece_0 failed (KbError" in msgs[0] and "invalid JSON" in msgs[0]
    assert torch.allclose(out[0], p.gm(*args)[0])


def test_causal_masked_fill_folds_only_for_a_causal_mask():
    """fold_causal_masks: ~tril(ones(T, T)), tril(...) == 0 and triu(1) at
    the scores' last two axes become causal_fill (the same values in
    PyTorch); a mask of another diagonal, or one given as an input, stays."""
    from kb.fx_attention import causal_fill, fold_causal_masks

    class Scores(torch.nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.kind = kind

        def forward(self, s, m):
            T = s.shape[-1]
            ones = torch.ones(T, T, dtype=torch.bool)
            mask = {"invert": lambda: ~ones.tril(), "eq": lambda: ones.tril() == 0,
                    "triu": lambda: ones.triu(1), "diag": lambda: ~ones.tril(-1),
                    "input": lambda: m > 0}[self.kind]()
            return s.masked_fill(mask, float("-inf")).softmax(-1)

    for kind, folds in [("invert", True), ("eq", True), ("triu", True), ("diag", False), ("input", False)]:
        gm, ex = capture(Scores(kind), (2, 3, 5, 5), (5, 5))
        ex = [torch.randn_like(e) if isinstance(e, torch.Tensor) else e for e in ex]
        want = gm(*ex)[0]
        assert fold_causal_masks(gm) == int(folds), kind
        assert any(n.target is causal_fill for n in gm.graph.nodes) == folds
        got = gm(*ex)[0]
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True, msg=kind)


def test_prepare_specializes_once_a_shape(mlp, tmp_path, monkeypatch):
    """The cache key of a call's shapes is computed once (specializing the
    graph and hashing it cost about 600 us a call): the same bucket again
    reuses it, another bucket or another precision computes its own."""
    p = partition(*mlp).pieces[0]
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    piece = B.KbPiece(p, B.Options.make({"cache_dir": str(tmp_path), "buckets": (16, 64)}))
    calls = []
    real = kb.partition.specialize
    monkeypatch.setattr(kb.partition, "specialize", lambda *a, **k: calls.append(1) or real(*a, **k))
    gm, ex = mlp
    by_name = {n.name: a for n, a in zip([n for n in gm.graph.nodes if n.op == "placeholder"], ex)}

    def keys(m):
        args = [torch.randn(m, 64) if n == "l_x_" else by_name[n] for n in p.inputs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return piece.prepare(piece._binds(args)[0])[0]
    k5 = keys(5)
    assert len(calls) == 1
    assert keys(7) == k5 and keys(5) == k5 and len(calls) == 1  # bucket 16 each time
    k40 = keys(40)
    assert k40 != k5 and len(calls) == 2
    now = piece.opts.precision or kb.fx.default_precision()
    piece.opts.precision = "ieee" if now != "ieee" else "tf32"
    assert keys(5) != k5 and len(calls) == 3
