#===- bench/investigate/backend_layers.py - A compiled call's layers -----===#
#
# Throwaway investigation (issue #47), removed from the tree in the next
# commit: where a compiled call of the backend-overhead MLP (256-512-128,
# M = 64, bucket 64) spends its CPU time, layer by layer, on the host CPU.
# The CUDA parts are replaced here only: KbPiece.forward runs as on the GPU
# (on_gpu forced), the kb.load callable's bind makes the outputs and its
# graph's replay() is a no-op; copies and clones run on CPU tensors.
#   . scripts/python-env.sh; $KB_PYTHON bench/investigate/backend_layers.py [--triv|--inter|--profile]
#
#===----------------------------------------------------------------------===#
import os, sys, tempfile, time, timeit, warnings, cProfile, pstats
warnings.simplefilter("ignore")
import torch
import kb, kb.backend as B, kb.models as M, kb.piece_graphs as G
os.environ["KB_OPT"] = "/nonexistent-kb-opt"
torch.manual_seed(0)
mod = M.MLP(256, 512, 128).eval()
X = torch.randn(64, 256)
d = tempfile.mkdtemp()
OPTS = {"cache_dir": d, "buckets": (64,), "precision": "tf32"}

class FakeGraph:  # the CUDA part: replay() is a no-op here
    def replay(self): pass

G._raw_stream = lambda i: 0
class FakeFn:  # kb.load's callable: bind makes the outputs, no launches
    kernels = ["k0", "k1", "k2"]
    def bind(self, ins):
        return None, [torch.empty(ins[0].shape[0], 128)]
def _capture(self, device):
    self.graph = FakeGraph(); G.STATS["captures"] += 1
G.PieceGraph.capture = _capture
torch.cuda.current_device = lambda: 0
_fake_pieces = []

def forward_on_gpu(self, *args):  # KbPiece.forward with on_gpu forced (CPU tensors here)
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    binds, m, key, entry = self.lookup(args)
    if entry is None:
        entry = self.loaded[key] = FakeFn()
    return self._run(entry, args, binds, m, key, tensors)
B.KbPiece.forward = forward_on_gpu
G.why_not_call = lambda t: ""
B.why_not_call = lambda t: ""

def install(kp, args):
    """A PieceGraph with the slots PieceGraph.bind would make, its graph a no-op."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    binds, m, key, _ = kp.lookup(args)
    slots = []
    for t, pad in zip(tensors, kp.graphs.padded):
        if pad:
            slots.append(G.Slot("pad", torch.zeros((binds[kp.piece.bucket.symbol],) + tuple(t.shape[1:])), filled=t.shape[0]))
        else:
            slots.append(G.Slot("pin", ptr=t.data_ptr()))
    out = torch.empty(binds[kp.piece.bucket.symbol], 128)
    pg = G.PieceGraph(None, slots, None, [out], kp.graphs.sliced)
    pg.graph = FakeGraph()
    kp.graphs.graphs[G.graph_key(key, 0, 0)] = pg

orig_backend = B.kb_backend
stitched = {}
def be(gm, ex, options=None):
    f = orig_backend(gm, ex, OPTS)
    stitched["f"] = f
    return f

def us(fn, n=3000, r=7):
    return min(timeit.repeat(fn, number=n, repeat=r)) / n * 1e6

with torch.no_grad():
    fast = torch.compile(mod, backend=be)
    fast(X[:1]); fast(X)  # static graph at M 1, then the dynamic one
    if "--triv" in sys.argv:
        out0 = torch.empty(64, 128)
        torch._dynamo.reset()
        fast_triv = torch.compile(mod, backend=lambda gm, ex: (lambda *a: (out0,)))
        fast_triv(X[:1]); fast_triv(X)
        print(f"{'Dynamo over a backend returning (out,), alone':52s} {us(lambda: fast_triv(X)):7.2f} us"); sys.exit(0)
    print(f"{'compiled model, fake replay, alone':52s} {us(lambda: fast(X)):7.2f} us")
    f = stitched["f"]; gm = f.__self__
    kp = gm.kb_piece_0
    # The arguments Dynamo passes: params, s77, x, ...
    rec = {}
    def be_rec(gm, ex, options=None):
        f = orig_backend(gm, ex, OPTS); stitched["f"] = f
        def w(*a):
            rec["a"] = a
            return f(*a)
        return w
    fast_rec = torch.compile(mod, backend=be_rec)
    fast_rec(X[:1]); fast_rec(X)
    gargs = rec["a"]
    pargs = [X, mod.fc1.weight, mod.fc1.bias, mod.fc2.weight, mod.fc2.bias, mod.fc3.weight, mod.fc3.bias]
    pg = next(iter(kp.graphs.graphs.values()))
    tensors = pargs
    for fn in (lambda: fast(X), lambda: f(*gargs), lambda: kp(*pargs)):
        fn()
    assert G.STATS["replays"] > 0
    out0 = torch.empty(64, 128)
    triv = {}
    def be_triv(gm, ex):
        return lambda *a: (out0,)
    fast_triv = torch.compile(mod, backend=be_triv)
    fast_triv(X[:1]); fast_triv(X)
    s1, s2 = torch.empty(1), torch.empty(1)
    rows = [
        ("compiled model, fake replay (all layers)", lambda: fast(X)),
        ("Dynamo over a backend returning (out,) ", lambda: fast_triv(X)),
        ("stitched GraphModule.forward (gm code + KbPiece)", lambda: f(*gargs)),
        ("KbPiece.__call__ (nn.Module hooks + forward)", lambda: kp(*pargs)),
        ("KbPiece.forward (no __call__)", lambda: forward_on_gpu(kp, *pargs)),
        ("  lookup", lambda: kp.lookup(pargs)),
        ("  PieceGraphs.run (key, moved, replay)", lambda: kp.graphs.run(None, kp.lookup(pargs)[2], tensors, None, 64)),
        ("  PieceGraph.replay (grad check, copy_, clone)", lambda: pg.replay(tensors, 64)),
        ("    x copy_ into static (64x256 f32, CPU)", lambda: pg.fills[0][1].static.copy_(X)),
        ("    out clone (64x128 f32, CPU)", lambda: out0.clone()),
        ("    op dispatch: 1-element copy_", lambda: s1.copy_(s2)),
        ("    op dispatch: 1-element clone", lambda: s1.clone()),
    ]
    if "--inter" in sys.argv:
        acc = {}
        for _ in range(15):
            for name, fn in rows[:3]:
                acc.setdefault(name, []).append(us(fn, n=2000, r=1))
        for name, v in acc.items():
            v.sort(); print(f"{name:52s} min {v[0]:7.2f} median {v[len(v)//2]:7.2f} us")
        sys.exit(0)
    for name, fn in rows:
        print(f"{name:52s} {us(fn):7.2f} us")
    if "--profile" in sys.argv:
        pr = cProfile.Profile(); pr.enable()
        for _ in range(20000): fast(X)
        pr.disable(); st = pstats.Stats(pr); st.print_callers("_fn"); st.print_callers("inner"); st.print_callers("_call_impl")
