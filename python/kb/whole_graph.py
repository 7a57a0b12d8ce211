#===- kb/whole_graph.py - One CUDA graph for a whole compiled graph -------===#
#
# Where every node of a Dynamo graph can be captured (why_not_whole: kb
# pieces with graphs, PyTorch ops on one device without host syncs, random
# numbers, data-dependent shapes or in-place updates of inputs), the
# stitched graph, kb's kernels and PyTorch's ops between them, is captured
# into one torch.cuda.CUDAGraph a shape key; a call copies the inputs that
# moved, replays once and returns a copy of each output. Inside the capture
# each piece launches its bound kernels (PieceGraph.record). Anything else
# runs the stitched graph as before. docs/design.md, "Whole-graph capture".
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any, Dict, List, Optional

from .fx_trace import _torch
from .ir import KbError
from . import partition as part_mod
from . import piece_graphs as G

torch = _torch()

MAX_GRAPHS = 8  # whole graphs a compiled graph captures (shape keys x streams)

# The overhead suite's view (kb.bench backend-overhead): every WholeGraph
# made, and with KEEP_ARGS each one's last call's arguments, so that its
# call can be timed without Dynamo in front.
INSTANCES: "weakref.WeakSet" = weakref.WeakSet()
KEEP_ARGS = False

# Counters over the process (tests and the overhead suite read them).
STATS = {"captures": 0, "replays": 0, "capture_failures": 0, "direct_calls": 0, "moved_to_static": 0}

# Ops that read the host's view of a tensor (a sync) or whose shapes depend
# on the data, and ops that draw random numbers (a replay would draw the
# captured numbers' successors, not what eager draws): by their last name.
_SYNCS = {"item", "tolist", "cpu", "numpy", "nonzero", "argwhere", "masked_select", "unique",
          "unique_consecutive", "bincount", "equal", "allclose", "is_nonzero", "_local_scalar_dense"}
_RANDOM = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli",
           "bernoulli_", "normal", "normal_", "uniform_", "exponential_", "multinomial", "rrelu",
           "poisson", "random_", "cauchy_", "geometric_", "log_normal_"}
_DROPOUTS = {"dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"}
# Ops whose result shares its argument's storage: followed back from an
# in-place op's target or an output to find an input.
_VIEWS = {"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "expand", "expand_as",
          "unsqueeze", "squeeze", "flatten", "unflatten", "narrow", "select", "getitem", "contiguous",
          "detach", "as_strided", "split", "chunk", "unbind", "movedim", "swapaxes", "T", "mT", "alias",
          "diagonal", "unfold", "real", "imag", "view_as_real", "view_as_complex", "to", "type_as"}
_INPLACE_OPS = {"setitem", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "iand", "ior",
                "ixor", "ilshift", "irshift", "imatmul"}


def _name(n) -> str:
    return part_mod._target(n).rstrip("()").split(".")[-1]


def _from_input(n) -> bool:
    """Whether node `n` is an input of the graph or a view of one."""
    seen = set()
    while n is not None and n not in seen:
        seen.add(n)
        if n.op == "placeholder":
            return True
        if n.op not in ("call_function", "call_method") or _name(n) not in _VIEWS or not n.args:
            return False
        a = n.args[0]
        n = a if hasattr(a, "op") else None
    return False


def _inplace(n) -> bool:
    name = _name(n)
    return (name.endswith("_") and not name.endswith("__")) or name in _INPLACE_OPS \
        or n.kwargs.get("inplace") is True


def _why_not_node(n, symbols, devices) -> str:
    """Why node `n` (outside the kb pieces) cannot be captured, or ''."""
    name = _name(n)
    where = f"{n.name} ({part_mod._target(n)})"
    if n.op == "call_module":
        return f"{where}: a submodule call (kb does not look inside it)"
    if name in _SYNCS:
        return f"{where}: reads values on the host (a sync) or makes a data-dependent shape"
    training = n.kwargs.get("training", n.kwargs.get("train", n.args[2] if len(n.args) > 2 else True))
    if name in _RANDOM or (name in _DROPOUTS and training is not False):
        return f"{where}: draws random numbers (a replay would not draw what eager draws)"
    if _inplace(n) and n.args and hasattr(n.args[0], "op") and _from_input(n.args[0]):
        return f"{where}: updates an input in place (the graph reads copies of moved inputs)"
    v = n.meta.get("example_value")
    for t in (v if isinstance(v, (tuple, list)) else (v,)):
        if isinstance(t, torch.Tensor):
            devices.add(str(t.device))
            extra = set().union(*[part_mod._free(s) for s in t.shape]) - symbols if t.dim() else set()
            if extra:
                return f"{where}: a shape of {', '.join(sorted(map(str, extra)))} (data-dependent)"
    return ""


def why_not_whole(gm, part, opts) -> str:
    """Why the stitched graph of `gm` (a Dynamo graph) and its partition
    `part` is not captured whole under `opts` (backend Options), or ''."""
    if not getattr(opts, "whole_graph", True):
        return "whole_graph=False in the backend options"
    if opts.fallback != "eager":
        return f"fallback={opts.fallback}: that backend runs the ops between the pieces"
    if opts.compile_only:
        return "compile_only: PyTorch runs every piece"
    if not part.pieces:
        return "no kb piece (PyTorch runs the whole graph)"
    for p in part.pieces:
        why = G.why_not_piece(p, opts)
        if why:
            return f"{p.name}: {why}"
    in_piece = {name for p in part.pieces for name in p.nodes}
    symbols, devices = set(), set()
    for n in gm.graph.nodes:
        v = n.meta.get("example_value")
        if n.op == "placeholder":
            if isinstance(v, torch.Tensor):
                devices.add(str(v.device))
                for s in v.shape:
                    symbols |= part_mod._free(s)
            elif isinstance(v, torch.SymInt):
                symbols |= part_mod._free(v)
            elif not isinstance(v, int):
                return f"input {n.name} is a {type(v).__name__} (whole graphs take tensors and sizes)"
    for n in gm.graph.nodes:
        if n.op in ("call_function", "call_method", "call_module") and n.name not in in_piece:
            why = _why_not_node(n, symbols, devices)
            if why:
                return why
        elif n.op == "output":
            outs = n.args[0] if isinstance(n.args[0], (tuple, list)) else (n.args[0],)
            for o in outs:
                if hasattr(o, "op") and _from_input(o):
                    return f"output {o.name} is an input or a view of one (a copy would not alias it)"
    if len(devices) > 1:
        return f"tensors on several devices ({', '.join(sorted(devices))})"
    return ""


def sym_sites(gm) -> List[tuple]:
    """Where a graph's symbols are read from its arguments: (argument, dim),
    or (argument, None) for a size argument, as KbPiece.sym_at."""
    at = []
    for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
        v = n.meta.get("example_value")
        if isinstance(v, torch.SymInt):
            at.append((i, None))
        elif isinstance(v, torch.Tensor):
            at += [(i, d) for d, s in enumerate(v.shape) if part_mod._free(s)]
    return at


def shape_key(sites, args) -> tuple:
    """A call's shape key: the values of the graph's symbols in `args`
    (Dynamo's guards fix every other shape, the dtypes and devices)."""
    return tuple([args[i] if d is None else args[i].shape[d] for i, d in sites])


# -- recording: what a KbPiece does inside a whole graph's capture ------------

_REC = threading.local()


def recording():
    """The Recording of the whole graph being captured on this thread, or
    None (KbPiece.forward reads it)."""
    return getattr(_REC, "ctx", None)


class Refused(RuntimeError):
    """A node of the graph cannot be recorded (a piece PyTorch runs)."""


class Recording:
    """One whole graph's pieces, bound once (warm-up) and launched twice:
    in the warm-up and in the capture. `pinned`: the addresses of the whole
    graph's inputs as the graph reads them (a piece may read them in place;
    anything else it copies into its own static buffers)."""

    def __init__(self, pinned):
        self.pinned = set(pinned)
        self.capturing = False
        self.pieces: Dict[int, Any] = {}  # id(KbPiece) -> its bound PieceGraph

    def piece(self, kp, fn, tensors, binds, m):
        """The outputs of piece `kp` (its kb.load callable `fn`) launched
        on `tensors`: bound at the warm-up, the same buffers at the capture."""
        pg = self.pieces.get(id(kp))
        if pg is None:
            if self.capturing:
                raise Refused(f"{kp.piece.name} was not run in the warm-up")
            plan = kp.piece.bucket
            rows = binds[plan.symbol] if plan is not None else None
            copied = {i for i, t in enumerate(tensors) if t.data_ptr() not in self.pinned}
            # A key's rows are fixed: an input already of the bucket's rows
            # needs no padding (read in place where the whole graph's).
            padded = [p and t.shape[0] != rows for p, t in zip(kp.graphs.padded, tensors)]
            pg = self.pieces[id(kp)] = G.PieceGraph.bind(fn, tensors, padded, rows, copied,
                                                         kp.graphs.sliced, tensors[0].device)
        elif pg.moved(tensors) >= 0:
            raise Refused(f"{kp.piece.name}: an input read in place moved between warm-up and capture")
        return pg.record(tensors, m)


class Captured:
    """One whole graph at one shape key: its inputs (pinned or copied), the
    CUDA graph, its static outputs, the pieces' bound buffers it reads."""

    def __init__(self, slots, graph, outs, rec):
        self.slots, self.graph, self.outs, self.rec = slots, graph, outs, rec
        self.pins = [(i, s.ptr) for i, s in enumerate(slots) if s is not None and s.kind == "pin"]
        self.fills = [(i, s.static) for i, s in enumerate(slots) if s is not None and s.kind == "copy"]
        self.kinds = [isinstance(o, torch.Tensor) for o in outs]

    def moved(self, args) -> int:
        for i, ptr in self.pins:
            a = args[i]
            if a.data_ptr() != ptr or not a.is_contiguous():
                return i
        return -1

    def replay(self, args):
        for i, s in self.fills:
            s.copy_(args[i])
        self.graph.replay()
        STATS["replays"] += 1
        return tuple([o.clone() if t else o for o, t in zip(self.outs, self.kinds)])


# The per-call queries, bound once (torch.cuda's wrappers cost a Python
# call each): whether the current stream is being captured, its handle.
_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None) or torch.cuda.is_current_stream_capturing
_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or G._raw_stream


class WholeGraph:
    """What kb_backend returns for a graph why_not_whole allows: calls the
    stitched graph (`direct`) until a shape key's second call, then
    captures it whole and replays it at that key."""

    def __init__(self, stitched, opts):
        self.direct = stitched.forward
        self.sites = sym_sites(stitched)
        self.is_tensor = [isinstance(n.meta.get("example_value"), torch.Tensor)
                          for n in stitched.graph.nodes if n.op == "placeholder"]
        self.graphs: Dict[tuple, Captured] = {}
        # Keys called once (the next call captures) -> the addresses of
        # that call's tensors: one found at the same address again is read
        # in place (parameters), one found elsewhere copied (activations).
        self.seen: Dict[tuple, tuple] = {}
        self.failed: set = set()    # keys whose capture failed: the stitched graph
        self.copied: set = set()    # argument positions never read in place
        self.why_not_now = None     # None: not decided; '' or why calls do not replay
        self.dev = None
        self.warned = False
        self.last_args = None
        INSTANCES.add(self)

    def decide(self, args) -> str:
        """Why calls of this graph do not replay, from the first call's
        arguments ('' where they may). Dynamo's guards keep every later
        call of this compiled graph to the same devices, requires_grad and
        grad mode, so it is decided once."""
        tensors = [a for a, t in zip(args, self.is_tensor) if t]
        why = ""
        if not tensors:
            why = "no tensor inputs"
        elif not all(t.is_cuda for t in tensors):
            why = "CPU tensors"
        elif any(t.device != tensors[0].device for t in tensors):
            why = "tensors on several devices"
        if not why and torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            why = "autograd: an input requires grad (kb pieces record no gradient)"
        if not why:
            d = tensors[0].device
            self.dev = d.index if d.index is not None else torch.cuda.current_device()
        self.why_not_now = why
        return why

    def __call__(self, *args):
        if KEEP_ARGS:
            self.last_args = args
        why = self.why_not_now
        if why is None:
            why = self.decide(args)
        # Under an outer capture the stitched graph's launches go into it.
        if why or _capturing():
            STATS["direct_calls"] += 1
            return self.direct(*args)
        key = (tuple([args[i] if d is None else args[i].shape[d] for i, d in self.sites]),
               _stream(self.dev))
        c = self.graphs.get(key)
        if c is not None and c.moved(args) < 0:
            return c.replay(args)
        return self._miss(key, args, c)

    def _miss(self, key, args, c):
        if c is not None:  # an input read in place moved: copied from now on
            self.copied.add(c.moved(args))
            STATS["moved_to_static"] += 1
            del self.graphs[key]
        elif key in self.failed or key not in self.seen or len(self.graphs) >= MAX_GRAPHS:
            # The first call at a key runs as before (it loads the bundles
            # and binds nothing a capture would need to redo); so does every
            # call at a key past the first MAX_GRAPHS captured (no eviction:
            # keys taking turns would recapture at every call; the pieces'
            # own graphs are one a bucket).
            self.seen[key] = tuple([a.data_ptr() if t else 0 for a, t in zip(args, self.is_tensor)])
            STATS["direct_calls"] += 1
            return self.direct(*args)
        try:
            c = self.capture(args, self.seen.get(key))
        except (RuntimeError, KbError) as e:  # Refused is a RuntimeError; kb.load's refusals
            self.failed.add(key)
            STATS["capture_failures"] += 1
            if not self.warned:
                self.warned = True
                warnings.warn(f"kb: whole-graph capture failed ({type(e).__name__}: "
                              f"{str(e).splitlines()[0][:160]}): per-piece graphs", stacklevel=3)
            STATS["direct_calls"] += 1
            return self.direct(*args)
        self.graphs[key] = c
        return c.replay(args)

    def bind_inputs(self, args, before=None, device=None):
        """(slots, the arguments the capture runs on): an input read in
        place where it is contiguous, 16-byte aligned, at the address of the
        key's first call (`before`) and not moved before, else copied into
        a static buffer on `device`."""
        slots, ins = [], []
        with torch.no_grad(), torch.inference_mode(False):
            for i, a in enumerate(args):
                if not self.is_tensor[i]:
                    slots.append(None)
                    ins.append(a)
                elif i in self.copied or not a.is_contiguous() or a.data_ptr() % 16 \
                        or (before is not None and before[i] != a.data_ptr()):
                    s = torch.empty(a.shape, dtype=a.dtype, device=device or a.device)
                    s.copy_(a)
                    slots.append(G.Slot("copy", s))
                    ins.append(s)
                else:
                    slots.append(G.Slot("pin", ptr=a.data_ptr()))
                    ins.append(a)
        return slots, ins

    def capture(self, args, before=None) -> Captured:
        """The inputs bound (bind_inputs), a warm-up run of the stitched
        graph that binds each piece, and the capture, on a side stream after
        the current one's work; RuntimeError (Refused) or KbError."""
        dev = next(a for a, t in zip(args, self.is_tensor) if t).device  # one device (decide)
        slots, ins = self.bind_inputs(args, before, dev)
        rec = Recording(t.data_ptr() for t, k in zip(ins, self.is_tensor) if k)
        with torch.no_grad(), torch.inference_mode(False):
            side = G._side_stream(dev)
            cur = torch.cuda.current_stream(dev)
            side.wait_stream(cur)
            g = torch.cuda.CUDAGraph()
            _REC.ctx = rec
            try:
                with torch.cuda.stream(side):
                    self.direct(*ins)  # warm-up: each piece bound, PyTorch's kernels loaded
                    rec.capturing = True
                    g.capture_begin(capture_error_mode="thread_local")
                    try:
                        outs = self.direct(*ins)
                    finally:
                        g.capture_end()
            finally:
                _REC.ctx = None
                cur.wait_stream(side)
        return self.captured(slots, ins, g, outs, rec)

    def captured(self, slots, ins, graph, outs, rec) -> Captured:
        """The Captured of a capture's outputs `outs`; Refused where two
        outputs share storage or one shares an input's."""
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        tens = [o for o in outs if isinstance(o, torch.Tensor)]
        bases = {o.untyped_storage().data_ptr() for o in tens}
        if len(bases) < len(tens):
            raise Refused("two outputs share storage (a copy each would not)")
        if bases & {a.untyped_storage().data_ptr() for a, k in zip(ins, self.is_tensor) if k}:
            raise Refused("an output shares an input's storage")
        STATS["captures"] += 1
        return Captured(slots, graph, list(outs), rec)
