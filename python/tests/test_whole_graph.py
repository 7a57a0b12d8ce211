"""The backend's whole-graph mode on the host (no GPU): which graphs are
captured whole and why not (kb.whole_graph.why_not_whole, as kb.explain
prints it), the shape key, the fallback to the stitched graph (CPU
tensors), and a piece's recording and a whole graph's replay with CPU
stand-ins for kb.load and the CUDA graph. The captures themselves run on
the GPU: python/tests/gpu/test_backend_gpu.py. Needs torch >= 2 (Dynamo)."""
import types
import warnings

import pytest

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("the kb backend needs torch >= 2 (Dynamo)", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import kb  # noqa: E402
import kb.backend as B  # noqa: E402
import kb.models as M  # noqa: E402
import kb.piece_graphs as G  # noqa: E402
import kb.whole_graph as W  # noqa: E402
from kb.partition import partition  # noqa: E402


def why(model, *shapes, dynamic=False, **options):
    (gm, ex), = B._capture(model.eval(), [torch.zeros(s) for s in shapes], dynamic_dim0=dynamic)
    return W.why_not_whole(gm, partition(gm, ex), B.Options.make(options))


def traced(model, *shapes, **options):
    """A plain torch.fx graph (no Dynamo): ops Dynamo would break the graph at."""
    import torch.fx as fx
    gm = fx.symbolic_trace(model)
    ex = [torch.randn(s) for s in shapes]
    return W.why_not_whole(gm, partition(gm, ex), B.Options.make(options))


class Head(torch.nn.Module):
    def __init__(self, body=None):
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)
        self.body = body

    def forward(self, x):
        return self.body(self, x)


def test_the_models_are_captured_whole(monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)
    assert why(M.MLP(64, 128, 32), (8, 64)) == ""
    assert why(M.MLP(64, 128, 32), (8, 64), dynamic=True) == ""  # a bucketed piece in it
    for mod in (M.GPT2Block(64, 4), M.GPT2Block(64, 4, sdpa=True), M.LlamaBlock(64, 4)):
        assert why(mod, (2, 16, 64)) == "", type(mod).__name__


def test_options_and_environment_refuse(monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)
    mlp = M.MLP(64, 128, 32)
    assert why(mlp, (8, 64), whole_graph=False) == "whole_graph=False in the backend options"
    assert why(mlp, (8, 64), cuda_graphs=False) == "kb_piece_0: cuda_graphs=False in the backend options"
    assert why(mlp, (8, 64), fallback="inductor").startswith("fallback=inductor")
    assert why(mlp, (8, 64), compile_only=True).startswith("compile_only")
    monkeypatch.setenv(G.ENV, "0")
    assert why(mlp, (8, 64)) == "kb_piece_0: KB_CUDA_GRAPHS=0 in the environment"


def test_graphs_that_cannot_be_captured_say_why(monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)
    # Random numbers PyTorch draws: alpha_dropout in training, rand_like;
    # at eval there are none. (kb's own kb.dropout, inside a piece, is a
    # kernel of a fixed seed: the same in a replay.)
    w = why(Head(lambda m, x: F.alpha_dropout(m.fc(x), 0.1, training=True)), (8, 64))
    assert "draws random numbers" in w and "alpha_dropout" in w, w
    assert why(Head(lambda m, x: F.alpha_dropout(m.fc(x), 0.1, training=False)), (8, 64)) == ""
    assert why(Head(lambda m, x: F.dropout(m.fc(x), 0.1, training=True)), (8, 64)) == ""  # kb.dropout
    assert "draws random numbers" in why(Head(lambda m, x: m.fc(x) + torch.rand_like(m.fc(x))), (8, 64))
    # An input updated in place (the graph reads copies of moved inputs);
    # a piece's output updated in place is the graph's own.
    w = why(Head(lambda m, x: m.fc(x.mul_(2))), (8, 64))
    assert "updates an input in place" in w, w
    assert why(Head(lambda m, x: m.fc(x).relu_()), (8, 64)) == ""
    # An output that is an input or a view of one.
    w = why(Head(lambda m, x: (m.fc(x), x.t())), (8, 64))
    assert "is an input or a view of one" in w, w
    # No kb piece at all.
    assert why(Head(lambda m, x: torch.sort(x, dim=1)[0]), (8, 64)) == "no kb piece (PyTorch runs the whole graph)"
    # Host syncs and several devices (plain fx graphs: Dynamo breaks the graph there).
    w = traced(Head(lambda m, x: (m.fc(x), x.sum().item())), (8, 64))
    assert "reads values on the host" in w and "item" in w, w
    w = traced(Head(lambda m, x: torch.sort(m.fc(x).to("meta"), dim=1)[0]), (8, 64))
    assert w == "tensors on several devices (cpu, meta)", w


def test_dynamic_pieces_without_a_bucket_are_not_captured_whole(monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)

    class Gram(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x.t() @ x)
    assert why(Gram(), (8, 32), dynamic=True) == \
        "kb_piece_0: dynamic shapes without a bucket (each size its own bundle)"


def test_explain_prints_the_whole_graph_decision(capsys, monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)
    p, = kb.explain(M.MLP(64, 128, 32).eval(), torch.zeros(8, 64))
    assert "whole graph: captured whole, one CUDA graph a shape key" in capsys.readouterr().out
    assert p.as_dict()["whole_graph"] == p.whole
    p, = kb.explain(Head(lambda m, x: m.fc(x) + torch.rand_like(m.fc(x))).eval(), torch.zeros(8, 64))
    assert "whole graph: not captured (" in capsys.readouterr().out and "random" in p.whole


def compiled_graphs(model, shapes, **options):
    """What kb_backend returns for each of Dynamo's graphs of the calls."""
    got = []

    def be(gm, ex):
        got.append(B.kb_backend(gm, ex, options))
        return got[-1]
    torch._dynamo.reset()
    fast = torch.compile(model, backend=be)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = [(fast(x), model(x)) for x in (torch.randn(s) for s in shapes)]
    torch._dynamo.reset()
    return got, outs


def test_the_shape_key_is_the_symbols_values(monkeypatch, tmp_path):
    monkeypatch.delenv(G.ENV, raising=False)
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    (static, dyn), _ = compiled_graphs(M.MLP(64, 128, 32).eval(), [(1, 64), (5, 64)], cache_dir=str(tmp_path))
    assert isinstance(static, W.WholeGraph) and isinstance(dyn, W.WholeGraph)
    assert static.sites == [] and W.shape_key(static.sites, [torch.zeros(1, 64)] * 8) == ()
    # The dynamic graph: its size argument and the rows of x carry the symbol.
    assert len(dyn.sites) >= 1
    args5 = [5 if not t else torch.zeros(5, 64) for t in dyn.is_tensor]
    args7 = [7 if not t else torch.zeros(7, 64) for t in dyn.is_tensor]
    k5 = W.shape_key(dyn.sites, args5)
    assert k5 == W.shape_key(dyn.sites, list(args5)) and k5 != W.shape_key(dyn.sites, args7)
    assert set(k5) == {5}


def test_cpu_calls_run_the_stitched_graph(monkeypatch, tmp_path):
    monkeypatch.delenv(G.ENV, raising=False)
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    before = dict(W.STATS)
    (static, dyn), outs = compiled_graphs(M.MLP(64, 128, 32).eval(), [(1, 64), (5, 64), (5, 64), (7, 64)],
                                          cache_dir=str(tmp_path))
    for got, want in outs:
        torch.testing.assert_close(got, want)
    assert static.why_not_now == dyn.why_not_now == "CPU tensors"
    assert W.STATS["direct_calls"] - before["direct_calls"] == 4
    assert W.STATS["captures"] == before["captures"] and not dyn.graphs
    # whole_graph=False: the stitched graph's forward, as before.
    (f, _), _ = compiled_graphs(M.MLP(64, 128, 32).eval(), [(1, 64), (5, 64)], cache_dir=str(tmp_path),
                                whole_graph=False)
    assert not isinstance(f, W.WholeGraph) and f.__self__.kb_pieces


class RowsTimesW:
    """A kb.load callable's stand-in on the CPU: bind allocates the output,
    launch_bound runs the "kernel" on the bound buffers."""
    launches = 0

    def bind(self, ins):
        x, w = ins
        out = torch.empty(x.shape[0], w.shape[1])
        return {"x": x, "w": w, "y": out}, [out]

    def launch_bound(self, bufs):
        RowsTimesW.launches += 1
        bufs["y"].copy_(bufs["x"] @ bufs["w"] + 1)


def piece_stub(padded, sliced, symbol="s0"):
    plan = types.SimpleNamespace(symbol=symbol)
    return types.SimpleNamespace(piece=types.SimpleNamespace(name="kb_piece_0", bucket=plan),
                                 graphs=types.SimpleNamespace(padded=padded, sliced=sliced))


def test_a_piece_inside_a_recording():
    """Warm-up binds the piece (the whole graph's inputs read in place, the
    rest copied, the varying rows padded to the bucket and the padding
    zeroed each launch), the capture finds the same buffers, and a piece
    the warm-up did not bind, or a pinned input that moved, is refused."""
    x, w = torch.randn(10, 8), torch.randn(8, 4)
    kp = piece_stub([True, False], {0: 1})
    rec = W.Recording([w.data_ptr()])
    y, = rec.piece(kp, RowsTimesW(), [x, w], {"s0": 16}, 10)
    pg = rec.pieces[id(kp)]
    assert [s.kind for s in pg.slots] == ["pad", "pin"] and pg.bufs["w"] is w
    assert y.shape == (10, 4) and y.data_ptr() == pg.outs[0].data_ptr()  # a view: the whole graph copies
    torch.testing.assert_close(y, x @ w + 1)
    rec.capturing = True
    pg.bufs["x"][12:].fill_(7)  # what a longer earlier call would leave
    x6 = torch.randn(6, 8)
    y6, = rec.piece(kp, RowsTimesW(), [x6, w], {"s0": 16}, 6)
    assert not pg.bufs["x"][6:].any() and rec.pieces[id(kp)] is pg
    torch.testing.assert_close(y6, x6 @ w + 1)
    with pytest.raises(W.Refused, match="not run in the warm-up"):
        rec.piece(piece_stub([True, False], {0: 1}), RowsTimesW(), [x6, w], {"s0": 16}, 6)
    with pytest.raises(W.Refused, match="moved"):
        rec.piece(kp, RowsTimesW(), [x6, w.clone()], {"s0": 16}, 6)
    # An input that is not one of the whole graph's (an intermediate) is
    # copied; one of the bucket's rows is not padded.
    rec2 = W.Recording([])
    rec2.piece(kp, RowsTimesW(), [x, w], {"s0": 16}, 10)
    assert [s.kind for s in rec2.pieces[id(kp)].slots] == ["pad", "copy"]
    x16 = torch.randn(16, 8)
    rec3 = W.Recording([x16.data_ptr(), w.data_ptr()])
    y16, = rec3.piece(kp, RowsTimesW(), [x16, w], {"s0": 16}, 16)
    assert [s.kind for s in rec3.pieces[id(kp)].slots] == ["pin", "pin"]
    torch.testing.assert_close(y16, x16 @ w + 1)


def test_a_whole_graph_replay_copies_moved_inputs_and_returns_fresh_outputs():
    """Captured.replay with a CPU stand-in for the CUDA graph: the copied
    input is refilled, the pinned one read where it is (moved() finds
    another address), each output a new tensor the next replay leaves alone,
    a size output passed through."""
    x, w = torch.randn(4, 8), torch.randn(8, 4)
    sx = torch.empty_like(x)
    out = torch.empty(4, 4)

    class Graph:
        def replay(self):
            out.copy_(sx @ w)
    c = W.Captured([G.Slot("copy", sx), G.Slot("pin", ptr=w.data_ptr()), None], Graph(), [out, 4], None)
    y1, n = c.replay([x, w, 4])
    torch.testing.assert_close(y1, x @ w)
    assert n == 4 and y1.data_ptr() != out.data_ptr()
    x2 = torch.randn(4, 8)
    y2, _ = c.replay([x2, w, 4])
    torch.testing.assert_close(y2, x2 @ w)
    torch.testing.assert_close(y1, x @ w)  # not overwritten by the second replay
    y1.add_(1)  # the caller's tensor: the static output is untouched
    torch.testing.assert_close(c.replay([x2, w, 4])[0], x2 @ w)
    assert c.moved([x2, w, 4]) == -1 and c.moved([x2, w.clone(), 4]) == 1


def test_calls_at_a_key_run_capture_replay_and_recapture_when_an_input_moves(monkeypatch, tmp_path):
    """WholeGraph's calls on the CPU with the CUDA parts stood in for (the
    "capture" runs the stitched graph on the bound inputs at each replay):
    a key's first call runs the stitched graph, the second captures (the
    parameters, at the first call's addresses, read in place; x, a new
    tensor, copied) and replays, later calls replay; a parameter given new
    storage is copied from then on (one recapture); a failed capture warns
    once and runs the stitched graph at that key from then on; past
    MAX_GRAPHS captured keys, a new key is not captured."""
    monkeypatch.delenv(G.ENV, raising=False)
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    mod = M.MLP(64, 128, 32).eval()
    (_, dyn), _ = compiled_graphs(mod, [(1, 64), (5, 64)], cache_dir=str(tmp_path))
    monkeypatch.setattr(W, "_stream", lambda i: 0)
    monkeypatch.setattr(W, "_capturing", lambda: False)
    dyn.why_not_now, dyn.dev = "", 0
    runs = []

    def capture(args, before=None):
        slots, ins = dyn.bind_inputs(args, before)
        outs = dyn.direct(*ins)
        static = [o.clone() for o in outs]

        class Graph:
            def replay(self):
                runs.append(1)
                for s, o in zip(static, dyn.direct(*ins)):
                    s.copy_(o)
        return dyn.captured(slots, ins, Graph(), static, None)
    monkeypatch.setattr(dyn, "capture", capture)
    params = dict(mod.named_parameters())
    names = [n for n in dyn.direct.__self__.graph.nodes if n.op == "placeholder"]

    def args_for(x):
        """Dynamo's arguments: l_self_modules_fc1_parameters_weight_ is fc1.weight."""
        out = []
        for n, t in zip(names, dyn.is_tensor):
            name = n.name.lower()
            if not t:
                out.append(x.shape[0])
            else:
                out.append(x if "_x_" in name else params[
                    name.replace("l_self_modules_", "").replace("_parameters_", ".").rstrip("_")])
        return out
    before = dict(W.STATS)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(4):
            x = torch.randn(5, 64)
            torch.testing.assert_close(dyn(*args_for(x))[0], mod(x))
        c = next(iter(dyn.graphs.values()))
        x_at = [i for i, n in enumerate(names) if "_x_" in n.name.lower()][0]
        assert [s.kind for s in c.slots if s is not None].count("copy") == 1 and c.slots[x_at].kind == "copy"
        assert W.STATS["captures"] - before["captures"] == 1 and len(runs) == 3
        mod.fc2.weight.data = mod.fc2.weight.data.clone() * 2  # new storage: the graph's address is stale
        x = torch.randn(5, 64)
        torch.testing.assert_close(dyn(*args_for(x))[0], mod(x))
        assert W.STATS["captures"] - before["captures"] == 2 and W.STATS["moved_to_static"] > before["moved_to_static"]
        assert len(dyn.copied) == 1
        # A capture that fails: the stitched graph at that key from then on.
        monkeypatch.setattr(dyn, "capture", lambda *a: (_ for _ in ()).throw(W.Refused("stand-in failure")))
        for k in range(3):
            x = torch.randn(7, 64)
            torch.testing.assert_close(dyn(*args_for(x))[0], mod(x))
        # Past MAX_GRAPHS captured keys a new key runs the stitched graph.
        monkeypatch.setattr(W, "MAX_GRAPHS", len(dyn.graphs))
        captures = W.STATS["captures"]
        for k in range(3):
            x = torch.randn(9, 64)
            torch.testing.assert_close(dyn(*args_for(x))[0], mod(x))
        assert W.STATS["captures"] == captures
    assert W.STATS["capture_failures"] - before["capture_failures"] == 1
    assert (W.STATS["direct_calls"] - before["direct_calls"]) == 1 + 3 + 3


def test_a_piece_pytorch_runs_is_recorded_as_its_pytorch_ops(monkeypatch, tmp_path):
    """Inside a whole graph's recording a piece without a bundle (no kb-opt
    here) runs its PyTorch ops (the capture holds them as the graph's own),
    as it does outside one; it refused the recording before, so every
    capture of a graph with such a piece failed (GPT-2 with ieee attention
    on the GPU, 2026-12-07)."""
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    (gm, ex), = B._capture(M.MLP(64, 128, 32).eval(), [torch.zeros(8, 64)])
    p = partition(gm, ex).pieces[0]
    kp = B.KbPiece(p, B.Options.make({"cache_dir": str(tmp_path)}))
    by_name = dict(zip([n.name for n in gm.graph.nodes if n.op == "placeholder"], ex))
    args = [by_name[n] for n in p.inputs]
    W._REC.ctx = rec = W.Recording([])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inside = kp(*args)
    finally:
        W._REC.ctx = None
    assert not rec.pieces  # nothing bound: PyTorch ran it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outside = kp(*args)
    assert inside[0].shape == (8, 32)
    torch.testing.assert_close(inside[0], outside[0])
