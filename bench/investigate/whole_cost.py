#===- bench/investigate/whole_cost.py - A compiled call, three ways ------===#
#
# Throwaway investigation (issue #47), removed from the tree in the next
# commit: the host CPU cost of a compiled call of the backend-overhead MLP
# (M = 64, bucket 64) with Dynamo over a constant backend, with per-piece
# graphs (whole_graph=False) and captured whole, the CUDA parts replaced in
# this script only (a piece's and the whole graph's replay a no-op; copies
# and clones on CPU tensors). Each variant its own code object (its own
# Dynamo cache), interleaved, min and median of five.
#   . scripts/python-env.sh; $KB_PYTHON bench/investigate/whole_cost.py [--profile]
#
#===----------------------------------------------------------------------===#
import os, sys, tempfile, timeit, types, warnings
warnings.simplefilter("ignore")
import torch
import kb, kb.backend as B, kb.models as M, kb.piece_graphs as G, kb.whole_graph as W
os.environ["KB_OPT"] = "/nonexistent-kb-opt"
torch.manual_seed(0)
X = torch.randn(64, 256)
OPTS = {"cache_dir": tempfile.mkdtemp(), "buckets": (64,), "precision": "tf32"}

def fresh_mlp():
    f = M.MLP.forward
    cls = type("MLPx", (M.MLP,), {"forward": types.FunctionType(f.__code__.replace(), f.__globals__, "forward")})
    torch.manual_seed(0)
    return cls(256, 512, 128).eval()

class FakeGraph:
    def replay(self): pass
class FakeFn:
    kernels = ["k0", "k1", "k2"]
    def bind(self, ins): return None, [torch.empty(ins[0].shape[0], 128)]
def _capture(self, device):
    self.graph = FakeGraph()
G.PieceGraph.capture = _capture
G._raw_stream = lambda i: 0
torch.cuda.current_device = lambda: 0
torch.cuda.is_current_stream_capturing = lambda: False
W._capturing = lambda: False
W._stream = lambda i: 0
def forward_on_gpu(self, *args):
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    binds, m, key, entry = self.lookup(args)
    if entry is None:
        entry = self.loaded[key] = FakeFn()
    return self._run(entry, args, binds, m, key, tensors)
B.KbPiece.forward = forward_on_gpu
G.why_not_call = lambda t: ""
B.why_not_call = lambda t: ""

def us(fn, n=3000, r=7):
    return min(timeit.repeat(fn, number=n, repeat=r)) / n * 1e6

made = {}
def be_kb(gm, ex):
    made["kb"] = B.kb_backend(gm, ex, dict(OPTS, whole_graph=False)); return made["kb"]
def be_whole(gm, ex):
    w = B.kb_backend(gm, ex, OPTS); made["whole"] = w
    w.why_not_now, w.dev = "", 0
    def capture(args, before=None):  # the stand-in: bound inputs, outputs, a no-op graph
        slots, ins = w.bind_inputs(args, before)
        outs = w.direct(*ins)
        return w.captured(slots, ins, FakeGraph(), [o.clone() for o in outs], None)
    w.capture = capture
    return w
out0 = torch.empty(64, 128)
with torch.no_grad():
    fs = {}
    for name, be in (("triv", lambda gm, ex: (lambda *a: (out0,))), ("kb", be_kb), ("whole", be_whole)):
        fs[name] = torch.compile(fresh_mlp(), backend=be)
        fs[name](X[:1]); fs[name](X); fs[name](X); fs[name](X)
    assert made["whole"].graphs, "no stand-in capture"
    acc = {}
    for _ in range(5):
        for name, f in fs.items():
            acc.setdefault(name, []).append(us(lambda: f(X), n=2000, r=1))
    for name, v in acc.items():
        v.sort(); print(f"{name:6s} compiled call: min {v[0]:6.2f} median {v[len(v)//2]:6.2f} us")
if "--profile" in sys.argv:
    import cProfile, pstats
    f = fs["whole"]
    with torch.no_grad():
        pr = cProfile.Profile(); pr.enable()
        for _ in range(20000): f(X)
        pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(14)
