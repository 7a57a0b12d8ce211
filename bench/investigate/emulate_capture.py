#===- bench/investigate/emulate_capture.py - WholeGraph.capture on a CPU -===#
#
# Throwaway (issue #47), removed from the tree in the next commit: runs
# WholeGraph's capture path (bind_inputs, the warm-up and capture runs of
# the stitched graph with each KbPiece recording, captured(), replays) on
# the host, torch.cuda's streams and CUDAGraph and kb.load stood in for in
# this script only (a replay re-runs the capture-mode stitched graph; a
# piece's kernels are its PyTorch graph at the bucket's shapes); MLP, GPT-2
# and Llama against eager, an output mutated, a parameter updated in place.
#   . scripts/python-env.sh; $KB_PYTHON bench/investigate/emulate_capture.py mlp|gpt2|llama
#
#===----------------------------------------------------------------------===#
import contextlib, os, sys, tempfile, warnings
warnings.simplefilter("ignore")
import traceback
_orig_warn = warnings.warn
def _w(msg, *a, **k):
    if "whole-graph" in str(msg): print("WARN", msg); traceback.print_stack(limit=3)
warnings.warn = _w
import torch
import kb, kb.backend as B, kb.models as M, kb.piece_graphs as G, kb.whole_graph as W
os.environ["KB_OPT"] = "/nonexistent"
which = sys.argv[1] if len(sys.argv) > 1 else "mlp"

class Dummy:
    def wait_stream(self, s): pass
G._side_stream = lambda d: Dummy()
torch.cuda.current_stream = lambda d=None: Dummy()
torch.cuda.stream = lambda s: contextlib.nullcontext()
W._capturing = lambda: False
W._stream = lambda i: 0
LAST = {}
class FakeGraph:
    def capture_begin(self, capture_error_mode=None):
        self.rec = W.recording(); assert self.rec is not None and self.rec.capturing
    def capture_end(self): pass
    def replay(self):
        W._REC.ctx = self.rec
        try: LAST["wg"].direct(*LAST["ins"])
        finally: W._REC.ctx = None
torch.cuda.CUDAGraph = FakeGraph

class StandIn:  # a kb.load callable on the CPU: the piece's PyTorch graph into bound outputs
    def __init__(self, kp): self.kp = kp; self.binds = None
    def bind(self, ins):  # the piece's graph at the bucket's shapes, as the bundle is compiled
        from kb.partition import specialize
        sg = specialize(self.kp.piece.gm, self.binds)[0]
        outs = [o.clone() for o in sg(*ins)]
        return {"ins": list(ins), "outs": outs, "sg": sg}, outs
    def launch_bound(self, bufs):
        for o, r in zip(bufs["outs"], bufs["sg"](*bufs["ins"])):
            o.copy_(r)
real_record = B.KbPiece._record
def _record(self, rec, args):
    self._standin.binds = self.lookup(args)[0]
    return real_record(self, rec, args)
B.KbPiece._record = _record

mod, shape = {"mlp": (M.MLP(64, 128, 32), (64,)), "gpt2": (M.GPT2Block(64, 4), (16, 64)),
              "llama": (M.LlamaBlock(64, 4), (16, 64))}[which]
mod = mod.eval()
made = []
def be(gm, ex):
    f = B.kb_backend(gm, ex, {"cache_dir": tempfile.mkdtemp(), "buckets": (16,)})
    assert isinstance(f, W.WholeGraph), gm.kb_pieces if hasattr(gm, "kb_pieces") else f
    made.append(f)
    orig = f.direct
    def direct(*a):
        if W.recording() is not None and W.recording().capturing:
            LAST["ins"] = a; LAST["wg"] = f
        return orig(*a)
    f.direct = direct
    f.why_not_now, f.dev = "", 0
    for kp in f_pieces(orig):
        kp._standin = StandIn(kp)
    return f
def f_pieces(fwd): return list(fwd.__self__.kb_pieces.values())
# Pieces' lookup finds no bundle (no kb-opt): give each key the stand-in.
real_lookup = B.KbPiece.lookup
def lookup(self, args):
    binds, m, key, entry = real_lookup(self, args)
    if entry is None and hasattr(self, "_standin"):
        entry = self.loaded[key] = self._standin
    return binds, m, key, entry
B.KbPiece.lookup = lookup
# Direct calls on the CPU run PyTorch (forward's on_gpu test), as on the host.
fast = torch.compile(mod, backend=be)
torch.manual_seed(0)
with torch.no_grad():
    for b in (1, 1, 1, 1, 3, 3, 3, 3):
        x = torch.randn((b,) + shape)
        y = fast(x)
        err = (y - mod(x)).abs().max().item()
        print(f"B={b} err={err:.2e}", W.STATS)
        assert err < 1e-4
    x = torch.randn((3,) + shape); y1 = fast(x); keep = y1.clone(); y1.add_(100); y2 = fast(x)
    assert torch.equal(y2, keep) and torch.equal(y1, keep + 100)
    next(mod.parameters()).mul_(0.5); y3 = fast(x)
    assert (y3 - mod(x)).abs().max().item() < 1e-4 and not torch.equal(y3, keep)
print("ok", W.STATS, [len(w.graphs) for w in made])
