#===- kb/piece_graphs.py - CUDA graphs for a torch.compile piece ---------===#
#
# KbPiece's graph mode (docs/design.md, "torch.compile backend"): a piece
# whose shapes are fixed (a static graph, or one bucket of a padded one) and
# whose tensors are all on one GPU has its kb.load callable's launches
# captured once per (bundle, device, stream) into a torch.cuda.CUDAGraph
# over buffers that stay put: static inputs (the varying inputs, padded to
# the bucket with zero rows; the ones kept in place moved here after their
# address changed), the inputs read where they are (parameters: the same
# address every call, checked each call), the outputs, and the bundle's own
# scratch, workspace and tensor-map buffers. A call copies its inputs into
# the static ones, replays the graph on the current stream and returns a
# copy of each output (its rows), so what the caller holds is never
# overwritten by the next replay. Direct launches (kb.load) where capture is
# not allowed: the reasons are why_not_piece and why_not_call.
#
#===----------------------------------------------------------------------===#

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Optional

from .fx_trace import _torch
from .ir import KbError
from . import partition as part_mod

torch = _torch()

ENV = "KB_CUDA_GRAPHS"  # 0 / false / off / no: direct launches everywhere
MAX_GRAPHS = 16         # graphs a piece keeps (buckets x streams); the oldest goes first

# Counters over the process (tests and the overhead suite read them).
STATS = {"captures": 0, "replays": 0, "capture_failures": 0, "moved_to_static": 0}


def env_off() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("0", "false", "off", "no")


def shapes_note(gm) -> str:
    """'' where every call of piece graph `gm` at one set of bindings has
    the same shapes the bundle has (no symbol in any input), else why not."""
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("example_value")
        if isinstance(v, torch.SymInt) or (isinstance(v, torch.Tensor)
                                           and any(part_mod._free(s) for s in v.shape)):
            return "dynamic shapes without a bucket (each size its own bundle)"
    return ""


def why_not_piece(piece, opts) -> str:
    """Why no call of `piece` (a partition.Piece) runs as a graph replay
    under `opts` (backend Options), or '' where calls may: the option, the
    environment, the shapes (a bucket, or a static graph)."""
    if not opts.cuda_graphs:
        return "cuda_graphs=False in the backend options"
    if env_off():
        return f"{ENV}={os.environ[ENV]} in the environment"
    if piece.bucket is not None:
        return ""
    return shapes_note(piece.gm)


def why_not_call(tensors) -> str:
    """Why this call's `tensors` do not run as a graph replay, or ''."""
    if not tensors:
        return "no tensor inputs"
    if not all(t.is_cuda for t in tensors):
        return "CPU tensors"
    dev = tensors[0].device
    if any(t.device != dev for t in tensors):
        return "tensors on several devices"
    if torch.cuda.is_current_stream_capturing():
        # The launches go into the caller's graph as they are.
        return "the stream is being captured already (an outer CUDA graph)"
    return ""


def graph_key(bundle_key: str, device_index: int, stream: int) -> tuple:
    """A piece's graph cache key: the bundle (one bucket's shapes, dtypes,
    chip, precision), the device and the stream it replays on."""
    return (bundle_key, int(device_index), int(stream))


def _raw_stream(index: int) -> int:
    get = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return get(index) if get is not None else torch.cuda.current_stream(index).cuda_stream


_SIDE: Dict[int, Any] = {}  # device index -> the capture stream


def _side_stream(device):
    """The capture stream of `device` (one a device, made once)."""
    idx = device.index if device.index is not None else torch.cuda.current_device()
    side = _SIDE.get(idx)
    if side is None:
        side = _SIDE[idx] = torch.cuda.Stream(device)
    return side


class Slot:
    """How one tensor input reaches the graph: "pad" (copied into the top
    rows of a static buffer of the bucket's rows, the rest kept zero),
    "copy" (copied into a static buffer of its shape) or "pin" (read where
    it is: the address the graph holds, checked each call)."""
    __slots__ = ("kind", "static", "ptr", "filled")

    def __init__(self, kind, static=None, ptr=0, filled=0):
        self.kind, self.static, self.ptr, self.filled = kind, static, ptr, filled


class PieceGraph:
    """One capture of a kb.load callable `fn` at one bucket, device and
    stream: replay(tensors, m) runs it on a call's tensors."""

    def __init__(self, fn, slots: List[Slot], bufs, outs, sliced: Dict[int, int]):
        self.fn, self.slots, self.bufs, self.outs, self.sliced = fn, slots, bufs, outs, sliced
        self.graph = None
        # What a replay reads and writes, listed once: (input, address) of
        # the pinned inputs, (input, slot) of the copied ones, (output, coef
        # of m or 0 for all of it).
        self.pins = [(i, s.ptr) for i, s in enumerate(slots) if s.kind == "pin"]
        self.fills = [(i, s) for i, s in enumerate(slots) if s.kind != "pin"]
        self.cuts = [(o, sliced.get(j, 0)) for j, o in enumerate(outs)]
        self.rows = [o.shape[0] if o.dim() else 0 for o in outs]

    @classmethod
    def bind(cls, fn, tensors, padded: List[bool], rows: Optional[int], copied, sliced, device):
        """Static buffers for `tensors` (padded[i]: pad tensor i to `rows`;
        positions in `copied`: copy, never pin) filled with this call's
        values, and the callable bound to them (outputs allocated, tensor
        maps encoded): kb.load's KbError where it refuses the tensors."""
        slots, ins = [], []
        with torch.no_grad(), torch.inference_mode(False):
            for i, (a, pad) in enumerate(zip(tensors, padded)):
                if pad:
                    s = torch.zeros((rows,) + tuple(a.shape[1:]), dtype=a.dtype, device=device)
                    s[: a.shape[0]].copy_(a)
                    slots.append(Slot("pad", s, filled=a.shape[0]))
                elif i in copied or not a.is_contiguous() or a.data_ptr() % 16:
                    s = torch.empty(a.shape, dtype=a.dtype, device=device)
                    s.copy_(a)
                    slots.append(Slot("copy", s))
                else:
                    s = a
                    slots.append(Slot("pin", ptr=a.data_ptr()))
                ins.append(s)
            bufs, outs = fn.bind(ins)
        return cls(fn, slots, bufs, outs, sliced)

    def capture(self, device):
        """A warm-up run and the capture, on a side stream after the current
        one's work (the static inputs' copies); the current stream then
        waits for it. RuntimeError or KbError where capture fails."""
        fn, bufs = self.fn, self.bufs
        side = _side_stream(device)
        cur = torch.cuda.current_stream(device)
        side.wait_stream(cur)
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.stream(side):
                fn.launch_bound(bufs)  # warm-up: modules loaded, workspaces as the kernels leave them
                g.capture_begin(capture_error_mode="thread_local")
                try:
                    fn.launch_bound(bufs)
                finally:
                    g.capture_end()
        finally:  # also before a direct launch after a failure: they share scratch buffers
            cur.wait_stream(side)
        self.graph = g
        STATS["captures"] += 1

    def moved(self, tensors) -> int:
        """The first pinned input whose tensor is not where the graph reads
        it (another address, or not contiguous), else -1."""
        for i, ptr in self.pins:
            a = tensors[i]
            if a.data_ptr() != ptr or not a.is_contiguous():
                return i
        return -1

    def replay(self, tensors, m: Optional[int]):
        """This call's outputs: the inputs copied in, the graph replayed on
        the current stream, each output's rows (`sliced`: coef x m) copied
        out into a new tensor (as direct launches' outputs: no autograd
        history; inference tensors under inference_mode)."""
        if torch.is_grad_enabled():
            with torch.no_grad():
                return self.replay(tensors, m)
        for i, s in self.fills:
            a = tensors[i]
            if s.kind == "pad":
                n = a.shape[0]
                (s.static if n == s.static.shape[0] else s.static[:n]).copy_(a)
                if n < s.filled:  # the rows a longer call wrote: zero again
                    s.static[n: s.filled].zero_()
                s.filled = n
            else:
                s.static.copy_(a)
        self.graph.replay()
        STATS["replays"] += 1
        # A slice only where the rows are fewer than the bucket's (a view
        # op a call, 1-2 us on the host, saved at a full bucket).
        return tuple([(o[: c * m] if c and c * m != r else o).clone()
                      for (o, c), r in zip(self.cuts, self.rows)])

    def record(self, tensors, m: Optional[int]):
        """Inside a whole graph's warm-up or capture (kb.whole_graph): the
        inputs copied in (a padded one's rows past m zeroed every time: the
        capture holds the zeroing), the bound kernels launched on the
        current stream, the static outputs' rows returned as they are (the
        whole graph copies what it returns)."""
        for i, s in self.fills:
            a = tensors[i]
            if s.kind == "pad":
                n = a.shape[0]
                (s.static if n == s.static.shape[0] else s.static[:n]).copy_(a)
                if n < s.static.shape[0]:
                    s.static[n:].zero_()
            else:
                s.static.copy_(a)
        self.fn.launch_bound(self.bufs)
        return tuple([o[: c * m] if c and c * m != r else o for (o, c), r in zip(self.cuts, self.rows)])


class PieceGraphs:
    """A KbPiece's graphs: one per (bundle key, device, stream), the inputs
    moved from pinned to copied, the keys whose capture failed."""

    def __init__(self, piece, opts):
        self.piece = piece
        self.why_not = why_not_piece(piece, opts)
        self.graphs: Dict[tuple, PieceGraph] = {}
        self.copied: set = set()  # tensor-input positions never pinned
        self.failed: set = set()  # graph keys run by direct launches
        self.warned = False
        plan = piece.bucket
        is_tensor = [isinstance(n.meta.get("example_value"), torch.Tensor)
                     for n in piece.gm.graph.nodes if n.op == "placeholder"]
        # Per tensor input: padded to the bucket (the varying rows) or not.
        self.padded = [plan is not None and i in plan.padded for i, t in enumerate(is_tensor) if t]
        self.sliced = dict(plan.sliced) if plan is not None else {}

    def run(self, fn, key: str, tensors, binds, m) -> Optional[tuple]:
        """The outputs of a replay of `fn` (a kb.load callable, the bundle
        `key`) on `tensors`, or None: run it directly."""
        dev = tensors[0].device
        idx = dev.index if dev.index is not None else torch.cuda.current_device()
        gk = graph_key(key, idx, _raw_stream(idx))
        pg = self.graphs.get(gk)
        if pg is not None:
            i = pg.moved(tensors)
            if i >= 0:  # e.g. a parameter given new storage: copy it from now on
                self.copied.add(i)
                STATS["moved_to_static"] += 1
                del self.graphs[gk]
                pg = None
        if pg is None:
            if gk in self.failed:
                return None
            plan = self.piece.bucket
            rows = binds[plan.symbol] if plan is not None else None
            pg = PieceGraph.bind(fn, tensors, self.padded, rows, self.copied, self.sliced, dev)
            try:
                pg.capture(dev)
            except (RuntimeError, KbError) as e:
                self.failed.add(gk)
                STATS["capture_failures"] += 1
                if not self.warned:
                    self.warned = True
                    warnings.warn(f"kb: {self.piece.name}: CUDA graph capture failed "
                                  f"({type(e).__name__}: {str(e).splitlines()[0][:160]}): direct launches",
                                  stacklevel=4)
                return None
            if len(self.graphs) >= MAX_GRAPHS:
                self.graphs.pop(next(iter(self.graphs)))
            self.graphs[gk] = pg
        return pg.replay(tensors, m)
