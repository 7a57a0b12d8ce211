"""The backend's CUDA-graph mode on the host (no GPU): when a piece's calls
may run as a graph replay (the cuda_graphs option, KB_CUDA_GRAPHS, the
shapes: a bucket or a static graph) and when a call may (CPU tensors, one
device), the per-call memo of a bucket's bundle key, the graph keys, and
which inputs a bucket's graph pads. The replays themselves run on the GPU:
python/tests/gpu/test_backend_gpu.py. Needs torch >= 2 (Dynamo)."""
import warnings

import pytest

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("the kb backend needs torch >= 2 (Dynamo)", allow_module_level=True)

import kb  # noqa: E402
import kb.backend as B  # noqa: E402
import kb.models as M  # noqa: E402
import kb.piece_graphs as G  # noqa: E402
from kb.partition import partition  # noqa: E402


def capture(model, *shapes, dynamic=False):
    (gm, ex), = B._capture(model.eval(), [torch.zeros(s) for s in shapes], dynamic_dim0=dynamic)
    return gm, ex


@pytest.fixture(scope="module")
def mlp():
    return capture(M.MLP(64, 128, 32), (8, 64), dynamic=True)


def piece_args(gm, ex, p, x):
    by_name = dict(zip([n.name for n in gm.graph.nodes if n.op == "placeholder"], ex))
    return [x if n == "l_x_" else by_name[n] for n in p.inputs]


def test_graphs_are_on_by_default_for_a_bucket_and_a_static_graph(mlp, monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)
    assert B.Options().cuda_graphs is True
    p = partition(*mlp).pieces[0]
    assert p.bucket is not None and G.why_not_piece(p, B.Options.make({})) == ""
    static = partition(*capture(M.MLP(64, 128, 32), (8, 64))).pieces[0]
    assert static.bucket is None and G.why_not_piece(static, B.Options.make({})) == ""
    kp = B.KbPiece(p, B.Options.make({}))
    # Only x (the varying rows) is padded; the weights and biases are read
    # where they are; the one output is sliced back to its rows.
    assert kp.graphs.padded == [n == "l_x_" for n, t in zip(p.inputs, kp.is_tensor) if t]
    assert sum(kp.graphs.padded) == 1 and kp.graphs.sliced == {0: 1}


def test_graphs_off_by_option_or_environment(mlp, monkeypatch):
    p = partition(*mlp).pieces[0]
    monkeypatch.delenv(G.ENV, raising=False)
    why = G.why_not_piece(p, B.Options.make({"cuda_graphs": False}))
    assert why == "cuda_graphs=False in the backend options"
    for off in ("0", "false", "OFF", "no"):
        monkeypatch.setenv(G.ENV, off)
        assert G.why_not_piece(p, B.Options.make({})) == f"KB_CUDA_GRAPHS={off} in the environment"
        assert B.KbPiece(p, B.Options.make({})).graphs.why_not  # read when the piece is made
    monkeypatch.setenv(G.ENV, "1")
    assert G.why_not_piece(p, B.Options.make({})) == ""


def test_no_graphs_for_dynamic_shapes_without_a_bucket(monkeypatch):
    monkeypatch.delenv(G.ENV, raising=False)

    class Gram(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x.t() @ x)
    p = partition(*capture(Gram(), (8, 32), dynamic=True)).pieces[0]
    assert p.bucket is None
    assert G.why_not_piece(p, B.Options.make({})) == "dynamic shapes without a bucket (each size its own bundle)"
    # Buckets switched off: the MLP's dynamic graph compiles each size.
    (gm, ex) = capture(M.MLP(64, 128, 32), (8, 64), dynamic=True)
    q = partition(gm, ex).pieces[0]
    q.bucket = None
    assert G.why_not_piece(q, B.Options.make({})).startswith("dynamic shapes without a bucket")


def test_no_graphs_for_a_call_on_cpu_tensors(mlp):
    assert G.why_not_call([torch.zeros(4)]) == "CPU tensors"
    assert G.why_not_call([]) == "no tensor inputs"
    # A CPU call runs the piece's graph in PyTorch and captures nothing.
    gm, ex = mlp
    p = partition(gm, ex).pieces[0]
    kp = B.KbPiece(p, B.Options.make({}))
    before, fb = dict(G.STATS), B.STATS["fallback_calls"]
    x = torch.randn(5, 64)
    out = kp(*piece_args(gm, ex, p, x))
    assert out[0].shape == (5, 32) and B.STATS["fallback_calls"] == fb + 1
    assert G.STATS == before and not kp.graphs.graphs


def test_graph_keys_per_bucket_device_and_stream(mlp, tmp_path, monkeypatch):
    """A bucket's bundle key is found once a shape (bindings are not read
    again at that shape); a graph key is (bundle key, device, stream)."""
    gm, ex = mlp
    p = partition(gm, ex).pieces[0]
    monkeypatch.setenv("KB_OPT", str(tmp_path / "no-kb-opt"))
    kp = B.KbPiece(p, B.Options.make({"cache_dir": str(tmp_path), "buckets": (16, 64)}))
    calls = []
    real = kb.partition.bindings
    monkeypatch.setattr(kb.partition, "bindings", lambda *a, **k: calls.append(1) or real(*a, **k))

    def look(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return kp.lookup(piece_args(gm, ex, p, torch.randn(m, 64)))
    b5, m5, k5, entry = look(5)
    assert b5[p.bucket.symbol] == 16 and m5 == 5 and entry is None  # no bundle, no kb-opt
    assert look(7)[2] == k5 and len(calls) == 2  # bucket 16 again: a new shape, the same key
    assert look(5)[2] == k5 and look(7)[2] == k5 and len(calls) == 2  # both memoized
    k40 = look(40)[2]
    assert k40 != k5 and look(64)[2] == k40
    keys = {G.graph_key(k, d, s) for k in (k5, k40) for d in (0, 1) for s in (0, 7)}
    assert len(keys) == 8 and G.graph_key(k5, 0, 7) == G.graph_key(k5, 0, 7)


class RowsTimesW:
    """Stands in for a kb.load callable on the CPU: bind() allocates the
    output as kb.load does; its "graph" reruns the kernels' arithmetic on
    the buffers bound at capture (what a CUDA graph's replay does)."""

    def bind(self, ins):
        x, w = ins
        out = torch.empty(x.shape[0], w.shape[1])
        return {"x": x, "w": w, "y": out}, [out]

    class Graph:
        def __init__(self, bufs):
            self.bufs = bufs

        def replay(self):
            b = self.bufs
            b["y"].copy_(b["x"] @ b["w"] + 1)


def test_replay_pads_copies_and_pins_inputs_and_returns_fresh_outputs():
    """A bucket's graph (16 rows) on the host: x padded (its rows past m
    zero after a longer call), w read where it is (in-place changes seen;
    another address found by moved()), each output its own tensor of m
    rows, unchanged by the next replay."""
    x10, w = torch.randn(10, 8), torch.randn(8, 4)
    pg = G.PieceGraph.bind(RowsTimesW(), [x10, w], [True, False], 16, set(), {0: 1}, torch.device("cpu"))
    pg.graph = RowsTimesW.Graph(pg.bufs)
    assert [s.kind for s in pg.slots] == ["pad", "pin"] and pg.bufs["w"] is w
    assert pg.bufs["x"].shape == (16, 8) and not pg.bufs["x"][10:].any()
    y10, = pg.replay([x10, w], 10)
    torch.testing.assert_close(y10, x10 @ w + 1)
    x5 = torch.randn(5, 8)
    y5, = pg.replay([x5, w], 5)
    assert y5.shape == (5, 4) and not pg.bufs["x"][5:].any()  # rows 5..9 of x10 zeroed
    torch.testing.assert_close(y5, x5 @ w + 1)
    torch.testing.assert_close(y10, x10 @ w + 1)  # the earlier output is the caller's
    assert y5.untyped_storage().data_ptr() != pg.outs[0].untyped_storage().data_ptr()
    w.mul_(2)  # in place: the graph reads it where it is
    torch.testing.assert_close(pg.replay([x5, w], 5)[0], x5 @ w + 1)
    assert pg.moved([x5, w]) == -1 and pg.moved([x5, w.clone()]) == 1
    # A moved input is copied from then on (PieceGraphs.copied).
    pc = G.PieceGraph.bind(RowsTimesW(), [x5, w], [True, False], 16, {1}, {0: 1}, torch.device("cpu"))
    assert [s.kind for s in pc.slots] == ["pad", "copy"] and pc.bufs["w"] is not w and pc.moved([x5, w.clone()]) == -1
    # Not contiguous: copied, never pinned.
    pt = G.PieceGraph.bind(RowsTimesW(), [x5, torch.randn(4, 8).t()], [True, False], 16, set(), {0: 1},
                           torch.device("cpu"))
    assert pt.slots[1].kind == "copy" and pt.bufs["w"].is_contiguous()
