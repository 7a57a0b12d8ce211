"""kb as a torch.compile backend: torch.compile(model, backend="kb").

Dynamo hands the backend an fx graph; kb.partition splits it into pieces
kb compiles and ops PyTorch runs; each piece becomes a KbPiece module that,
on CUDA tensors, runs a bundle from the bundle cache (compiling it with
kb-opt on a miss where kb-opt is present) and otherwise runs the piece's
own graph in PyTorch, with a one-line warning. The varying leading dim of a
dynamic graph is served from buckets (inputs padded with zero rows, outputs
sliced): docs/design.md, "torch.compile backend".

    fast = torch.compile(model, backend="kb")                  # eager fallback
    fast = torch.compile(model, backend="kb", options={"chip": "sm_90a",
                         "buckets": [16, 64, 256], "tuning_db": "db.json",
                         "cuda_graphs": False})                # direct launches
    kb.explain(model, x)                                       # the partition
    kb.backend.precompile(model, (x,), buckets=...)            # fill the cache
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from .bundle import Bundle, compile_program, find_kb_opt
from .fx_trace import _torch
from .ir import KbError
from . import partition as part_mod
from .piece_graphs import PieceGraphs, why_not_call
from . import whole_graph as whole_mod

torch = _torch()

KB_VERSION = "0.1.0"
BUNDLE_FORMAT = 2  # 2: PTX with the bundle record; older caches miss
DEFAULT_BUCKETS = (16, 32, 64, 128, 256, 512)

# Counters over the process (tests read them): bundles compiled, found in
# the cache, pieces run by kb (of them, as a CUDA-graph replay), and runs of
# a piece by PyTorch.
STATS = {"compiles": 0, "cache_hits": 0, "kb_calls": 0, "graph_calls": 0, "fallback_calls": 0}
PARTITIONS: List[Any] = []  # the partitions of the graphs compiled, newest last


@dataclass
class Options:
    """torch.compile(..., options={...}) of the kb backend."""
    chip: str = "sm_90a"
    buckets: Sequence[int] = DEFAULT_BUCKETS  # () or None: exact shapes only
    # What runs the ops kb leaves out: "eager", or "inductor" (or
    # "aot_eager", its tracing without code generation), which then sees
    # each piece as one torch.ops.kb.piece call.
    fallback: str = "eager"
    compile_only: bool = False  # fill the cache, run everything in PyTorch
    tuning_db: Optional[str] = None
    cache_dir: Optional[str] = None
    precision: Optional[str] = None  # f32 matmuls; default PyTorch's setting
    # A bundle missing from the cache is an error (CacheMiss, raised from the
    # call), never compiled nor run by PyTorch: a benchmark's guarantee that
    # kb ran what the cache was filled with. A piece kb-opt refused when the
    # cache was filled (its .refused.mlir) still runs in PyTorch.
    cache_only: bool = False
    # A piece of fixed shapes (a static graph, or a bucket) on one GPU runs
    # as a CUDA-graph replay of its kernels (kb.piece_graphs); False, or
    # KB_CUDA_GRAPHS=0 in the environment when the model is compiled: direct
    # launches through kb.load on every call.
    cuda_graphs: bool = True
    # A graph whose every node a CUDA graph can hold (kb.whole_graph) is
    # captured whole, one graph a shape key; False: per-piece graphs only.
    whole_graph: bool = True

    @classmethod
    def make(cls, options) -> "Options":
        if isinstance(options, Options):
            return options
        names = {f.name for f in fields(cls)}
        bad = sorted(set(options or {}) - names)
        if bad:
            raise KbError(f"unknown kb backend option(s) {', '.join(bad)} (known: {', '.join(sorted(names))})")
        o = cls(**(options or {}))
        if o.fallback not in ("eager", "inductor", "aot_eager"):
            raise KbError(f"kb backend fallback must be 'eager', 'inductor' or 'aot_eager', "
                          f"got {o.fallback!r}")
        return o


class CacheMiss(KbError):
    """A piece's bundle is not in the cache and Options.cache_only is set."""


def bucket_for(m: int, buckets) -> int:
    """The bucket of a leading dim m: the smallest bucket >= m; past the
    largest, the next power of two; m itself when there are no buckets."""
    if not buckets:
        return m
    for b in sorted(buckets):
        if m <= b:
            return b
    return 1 << (m - 1).bit_length()


def cache_dir(opts: Optional[Options] = None) -> Path:
    """KB_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/kb/bundles."""
    d = (opts and opts.cache_dir) or os.environ.get("KB_CACHE_DIR")
    if not d:
        d = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kb" / "bundles"
    return Path(d)


def _tuning_entry(db) -> str:
    """What the key takes from the tuning database: a hash of its text (an
    edited entry compiles afresh)."""
    if not db:
        return ""
    p = Path(db)
    if not p.is_file():
        raise KbError(f"tuning_db {db}: not a file (write one with kb-tune --db)")
    return hashlib.sha256(p.read_bytes()).hexdigest()[:16]


def piece_signature(sg) -> str:
    """A piece graph's text with node names replaced by positions, so the
    same ops on the same shapes share a key across Dynamo's namings."""
    import torch.fx as fx
    idx = {n: i for i, n in enumerate(sg.graph.nodes)}
    lines = []
    for n in sg.graph.nodes:
        a = fx.node.map_arg((n.args, n.kwargs), lambda x: f"%{idx[x]}")
        lines.append(f"{n.op} {part_mod._target(n)} {a!r}")
    return "\n".join(lines)


def cache_key(sg, metas, opts: Options, precision: str) -> str:
    """The bundle's key: (piece signature, input dtypes and shapes (the
    bucket's), chip, kb version and bundle format, precision, tuning-db
    entry)."""
    text = json.dumps({"piece": piece_signature(sg),
                       "inputs": [[list(m.shape), str(m.dtype)] for m in metas],
                       "chip": opts.chip, "kb": KB_VERSION, "bundle": BUNDLE_FORMAT, "precision": precision,
                       "tuning_db": _tuning_entry(opts.tuning_db)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class KbPiece(torch.nn.Module):
    """One piece at run time (a submodule of the stitched graph): bundles
    per key, the piece's graph as PyTorch's fallback."""

    def __init__(self, piece, opts: Options):
        super().__init__()
        self.piece, self.opts = piece, opts
        self.loaded: Dict[str, Any] = {}  # key -> kb.load callable, or None (PyTorch)
        # (bindings, precision) -> key: specializing the graph and hashing it
        # for the cache key took about 600 us a call on the host; once a shape.
        self.keys: Dict[tuple, str] = {}
        # (the arguments' symbolic sizes, precision) -> (binds, m, key):
        # bindings and the memo above took 19-23 us a call on the host CPU,
        # this one 2.7 (python3 -m kb.bench.hostcost).
        self.calls: Dict[tuple, tuple] = {}
        # Where the graph's symbols are read: (argument, dim), or (argument,
        # None) for an int; as part_mod.bindings reads them.
        self.sym_at = []
        for i, n in enumerate(n for n in piece.gm.graph.nodes if n.op == "placeholder"):
            v = n.meta.get("example_value")
            if isinstance(v, torch.SymInt):
                self.sym_at.append((i, None))
            elif isinstance(v, torch.Tensor):
                self.sym_at += [(i, d) for d, s in enumerate(v.shape) if part_mod._free(s)]
        self.graphs = PieceGraphs(piece, opts)
        self.fallback = piece.gm
        self.warned = False
        self.is_tensor = [isinstance(n.meta.get("example_value"), torch.Tensor)
                          for n in piece.gm.graph.nodes if n.op == "placeholder"]

    def merge(self, tensors, ints):
        """The piece's arguments in order from its tensors and its ints."""
        t, i = iter(tensors), iter(ints)
        return [next(t) if is_t else next(i) for is_t in self.is_tensor]

    def _binds(self, args, bucket=True):
        b = part_mod.bindings(self.piece.gm, args)
        plan = self.piece.bucket
        m = None
        if plan is not None:
            m = int(args[plan.padded[0]].shape[0])
            if bucket:
                b[plan.symbol] = bucket_for(m, self.opts.buckets)
        return b, m

    def lookup(self, args):
        """(binds, m, key, entry) for a call on `args` (see prepare), from
        the memo of the arguments' symbolic sizes and ints once it has them."""
        precision = self.opts.precision or _default_precision()
        sig = (tuple([args[i] if d is None else args[i].shape[d] for i, d in self.sym_at]), precision)
        hit = self.calls.get(sig)
        if hit is None:
            binds, m = self._binds(args)
            key, _ = self.prepare(binds)
            hit = self.calls[sig] = (binds, m, key)
        binds, m, key = hit
        return binds, m, key, self.loaded.get(key)

    def prepare(self, binds):
        """The kb callable (or None) for the shapes `binds` gives: from this
        process, from the cache on disk, or compiled into it."""
        from .fx import default_precision, import_torch
        precision = self.opts.precision or default_precision()
        memo = (tuple(sorted(binds.items(), key=lambda kv: str(kv[0]))), precision)
        key = self.keys.get(memo)
        if key is not None and key in self.loaded:
            return key, self.loaded[key]
        sg, metas, _ = part_mod.specialize(self.piece.gm, binds)
        key = cache_key(sg, metas, self.opts, precision)
        self.keys[memo] = key
        if key in self.loaded:
            return key, self.loaded[key]
        path = cache_dir(self.opts) / key
        bundle = None
        if (path / "manifest.json").is_file():
            bundle = Bundle.open(path)
            STATS["cache_hits"] += 1
        elif (path.parent / (key + ".refused.mlir")).is_file():
            self._warn(f"kb: kb-opt refused {self.piece.name} when the cache was filled "
                       f"({key}.refused.mlir): PyTorch runs it")
            self.loaded[key] = None
            return key, None
        else:
            shapes = ", ".join("x".join(map(str, m.shape)) for m in metas)
            if self.opts.cache_only:
                raise CacheMiss(f"kb: no bundle for {self.piece.name} ({shapes}) in {cache_dir(self.opts)} "
                                f"(key {key}) and cache_only is set: fill the cache with "
                                f"kb.backend.precompile at these shapes")
            try:
                find_kb_opt()
            except KbError:
                self._warn(f"kb: no bundle for {self.piece.name} ({shapes}) in {cache_dir(self.opts)} "
                           f"and no kb-opt to compile one: PyTorch runs it")
                self.loaded[key] = None
                return key, None
            imp = import_torch(sg, metas, precision=precision, name=self.piece.name)
            tmp = path.with_name(path.name + f".tmp{os.getpid()}")
            try:
                bundle = compile_program(imp.program, tmp, self.opts.chip, signature=imp.signature,
                                         tuning_db=self.opts.tuning_db)
            except KbError as e:  # kb-opt refused (or crashed on) the piece
                (path.parent / (key + ".refused.mlir")).write_text(imp.program.mlir())
                lines = [l for l in str(e).splitlines()[1:] if l.strip()]
                first = next((l for l in lines if "error:" in l), lines[0] if lines else "")
                if "PLEASE submit a bug report" in str(e) or "Stack dump" in str(e):
                    first = "kb-opt crashed: a kb-opt bug"
                self._warn(f"kb: kb-opt refused {self.piece.name} ({first.strip()[:120]}): "
                           f"PyTorch runs it; the program is {key}.refused.mlir in the cache")
                self.loaded[key] = None
                return key, None
            if path.exists():  # another process compiled it meanwhile
                import shutil
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                os.replace(tmp, path)
            bundle = Bundle.open(path)
            STATS["compiles"] += 1
        self.piece.kernels = [k["name"] for k in bundle.kernels]
        self.loaded[key] = bundle
        return key, bundle

    def _warn(self, msg):
        if not self.warned:
            warnings.warn(msg, stacklevel=3)
            self.warned = True

    def __call__(self, *args):
        # No hooks on a KbPiece: nn.Module's __call__ (_call_impl's hook
        # checks, 1-4 us a call on the host) is skipped.
        return self.forward(*args)

    def forward(self, *args):
        rec = whole_mod.recording()
        if rec is not None:  # inside a whole graph's warm-up or capture
            return self._record(rec, args)
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        on_gpu = tensors and all([t.is_cuda for t in tensors])
        key = None
        try:
            if self.opts.compile_only or not on_gpu:
                if self.opts.compile_only:
                    self.prepare(self._binds(args)[0])
                entry = None
            else:
                binds, m, key, entry = self.lookup(args)
                if isinstance(entry, Bundle):
                    from .loader import load
                    entry = self.loaded[key] = load(entry, device=tensors[0].device)
                if entry is not None:
                    return self._run(entry, args, binds, m, key, tensors)
        except CacheMiss:
            raise
        except (KbError, OSError) as e:  # a bad cache entry, a full disk, ...: PyTorch is right too
            self._warn(f"kb: {self.piece.name} failed ({type(e).__name__}: "
                       f"{str(e).splitlines()[0][:160]}): PyTorch runs it")
            if key is not None:
                self.loaded[key] = None  # not tried again
        STATS["fallback_calls"] += 1
        return self.fallback(*args)

    def _record(self, rec, args):
        """The piece inside a whole graph: its bound kernels (Recording.piece);
        a piece without a bundle (kb-opt refused it) runs its PyTorch ops,
        which the capture holds as it holds the graph's own (2026-12-07: the
        GPT-2 and Llama tests' ieee attention pieces, which kb-opt refuses,
        had failed every capture)."""
        binds, m, key, entry = self.lookup(args)
        if isinstance(entry, Bundle):
            from .loader import load
            entry = self.loaded[key] = load(entry, device=args[self.is_tensor.index(True)].device)
        if entry is None:
            STATS["fallback_calls"] += 1
            return self.fallback(*args)
        return rec.piece(self, entry, [a for a in args if isinstance(a, torch.Tensor)], binds, m)

    def inputs(self, args, binds):
        """The bundle's arguments for the piece's `args`: the tensors, the
        varying ones padded with zero rows to the bucket."""
        plan = self.piece.bucket
        ins = []
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                continue
            if plan is not None and i in plan.padded:
                b = binds[plan.symbol]
                if b > a.shape[0]:
                    a = torch.cat([a, a.new_zeros((b - a.shape[0],) + tuple(a.shape[1:]))])
            a = a.contiguous()
            ins.append(a if a.data_ptr() % 16 == 0 else a.clone())  # kb loads 16-byte vectors
        return ins

    def _run(self, fn, args, binds, m, key=None, tensors=None):
        """The piece's outputs from `fn` (the bundle `key` loaded): a CUDA
        graph's replay where the piece and the call allow one, else direct
        launches on the padded inputs, the outputs sliced to their rows."""
        if key is not None and not self.graphs.why_not and not why_not_call(tensors):
            outs = self.graphs.run(fn, key, tensors, binds, m)
            if outs is not None:
                STATS["kb_calls"] += 1
                STATS["graph_calls"] += 1
                return outs
        plan = self.piece.bucket
        outs = fn(*self.inputs(args, binds))
        outs = outs if isinstance(outs, tuple) else (outs,)
        if plan is not None:
            outs = tuple(o[: plan.sliced[j] * m] if j in plan.sliced else o for j, o in enumerate(outs))
        STATS["kb_calls"] += 1
        return outs


def _default_precision():
    from .fx import default_precision
    return default_precision()


_OP_PIECES: Dict[str, "KbPiece"] = {}
_OP = []


def _piece_op():
    """torch.ops.kb.piece(key, tensors, ints) -> tensors: a KbPiece as a
    custom op, so that Inductor compiles the ops around it and calls it
    as it is (its fake implementation runs the piece's graph)."""
    if not _OP:
        @torch.library.custom_op("kb::piece", mutates_args=(),
                                 schema="(str key, Tensor[] tensors, SymInt[] ints) -> Tensor[]")
        def piece(key, tensors, ints):
            p = _OP_PIECES[key]
            return [_dense(o, o is not None and any(o is t for t in tensors))
                    for o in p(*p.merge(tensors, ints))]

        # Both contiguous: kb's bundles write dense row-major outputs, while
        # the piece's PyTorch graph (which the fake runs) may return another
        # layout (a (B, T, h, d) view transposed to (B, h, T, d)), and the
        # Inductor code around the op asserts the fake's strides (session
        # 31: the Llama block's kb + Inductor run failed there).
        @piece.register_fake
        def _(key, tensors, ints):
            p = _OP_PIECES[key]
            return [_dense(o, True) for o in p.fallback(*p.merge(tensors, ints))]
        _OP.append(torch.ops.kb.piece.default)
    return _OP[0]


def _dense(o, copy):
    """`o` row-major contiguous: a copy where `copy` (an op's output may not
    alias its inputs) or where its layout is another."""
    if copy or not o.is_contiguous():
        return o.clone(memory_format=torch.contiguous_format)
    return o


def stitch(gm, part, opts: Options, as_op: bool = False):
    """`gm` with each piece of `part` replaced by one call of its KbPiece
    (a GraphModule: the pieces in graph order, PyTorch's ops around them);
    `as_op`: a call of torch.ops.kb.piece instead of a submodule."""
    import operator
    import torch.fx as fx
    by_name = {n.name: n for n in gm.graph.nodes}
    owner = {}
    for p in part.pieces:
        for name in p.nodes:
            owner[by_name[name]] = p
    units, seen = [], set()
    for n in gm.graph.nodes:
        u = owner.get(n, n)
        if id(u) not in seen:
            seen.add(id(u))
            units.append(u)

    def deps(u):
        nodes = [by_name[x] for x in u.nodes] if u in part.pieces else [u]
        inside = set(nodes)
        out = set()
        for n in nodes:
            for a in n.all_input_nodes:
                if a not in inside:
                    out.add(id(owner.get(a, a)))
        return out
    g = fx.Graph()
    env: Dict[Any, Any] = {}
    root = {}
    done = set()
    pending = list(units)
    while pending:
        u = next(u for u in pending if deps(u) <= done)
        pending.remove(u)
        done.add(id(u))
        if u in part.pieces:
            root[u.name] = KbPiece(u, opts)
            args = [env[by_name[i]] for i in u.inputs]
            if as_op:  # opaque to Inductor: torch.ops.kb.piece (see _piece_op)
                key = f"{u.name}@{id(root[u.name]):x}"
                _OP_PIECES[key] = root[u.name]
                tens = [a for a, t in zip(args, root[u.name].is_tensor) if t]
                ints = [a for a, t in zip(args, root[u.name].is_tensor) if not t]
                call = g.call_function(_piece_op(), (key, tens, ints))
            else:
                gm.add_submodule(u.name, root[u.name])
                call = g.call_module(u.name, tuple(args))
            for j, o in enumerate(u.outputs):
                env[by_name[o]] = g.call_function(operator.getitem, (call, j))
        else:
            env[u] = g.node_copy(u, lambda x: env[x])
    out = fx.GraphModule(gm, g, "kb_compiled")
    out.kb_pieces = root
    return out


def kb_backend(gm, example_inputs, options=None, mode=None):
    """The Dynamo backend "kb" (see the module's docstring)."""
    opts = Options.make(options)
    part = part_mod.partition(gm, example_inputs)
    PARTITIONS.append(part)
    if opts.fallback != "eager":  # the pieces opaque ops, the rest compiled by that backend
        from torch._dynamo import lookup_backend
        return lookup_backend(opts.fallback)(stitch(gm, part, opts, as_op=True), example_inputs)
    stitched = stitch(gm, part, opts)
    why = whole_mod.why_not_whole(gm, part, opts)
    part.whole = why or "captured whole, one CUDA graph a shape key"
    return stitched.forward if why else whole_mod.WholeGraph(stitched, opts)


def register():
    """Registers "kb" with Dynamo (import kb does, where torch >= 2 is
    imported)."""
    torch = _torch()
    from torch._dynamo.backends.registry import _BACKENDS, register_backend
    if "kb" not in _BACKENDS:
        register_backend(name="kb")(kb_backend)


register()


def _capture(model, inputs, dynamic_dim0=False):
    """Dynamo's graphs of model(*inputs) with their example inputs."""
    torch = _torch()
    import torch._dynamo as dynamo
    graphs = []

    def cap(gm, ex):
        graphs.append((gm, list(ex)))
        return gm.forward
    dynamo.reset()
    if dynamic_dim0:
        for t in inputs:
            if isinstance(t, torch.Tensor) and t.dim() and t.shape[0] > 1:
                dynamo.mark_dynamic(t, 0)
    with torch.no_grad():
        torch.compile(model, backend=cap)(*inputs)
    dynamo.reset()
    return graphs


def explain(model, *inputs, print_=True):
    """The partition of model(*inputs) as torch.compile(model,
    backend="kb") makes it: printed (each piece, its kb ops, each op left to
    PyTorch and why) and returned, one Partition a Dynamo graph. Resets
    Dynamo's caches (compiled models recompile on their next call)."""
    parts = []
    for gm, ex in _capture(model, inputs):
        parts.append(part_mod.partition(gm, ex))
        why = whole_mod.why_not_whole(gm, parts[-1], Options())
        parts[-1].whole = why or "captured whole, one CUDA graph a shape key"
    if print_:
        for i, p in enumerate(parts):
            print((f"graph {i}: " if len(parts) > 1 else "") + p.text())
    return parts


def precompile(model, example_inputs, buckets=DEFAULT_BUCKETS, dynamic=True, **options):
    """Fills the bundle cache on a machine with kb-opt (no GPU needed) for
    the calls torch.compile(model, backend="kb") will make: the static graph
    of `example_inputs` (Dynamo's first call) at its shapes, and, unless
    `dynamic` is False (a caller that only ever calls at these shapes), the
    graph with a varying leading dim at each bucket. Returns the cache keys."""
    torch = _torch()
    opts = Options.make(dict(options, buckets=tuple(buckets or ())))
    find_kb_opt()
    keys = []
    for gm, ex in _capture(model, example_inputs):
        for p in part_mod.partition(gm, ex).pieces:
            keys.append(KbPiece(p, opts).prepare(part_mod.bindings(gm, ex))[0])
    if not dynamic:
        return keys
    grown = [torch.cat([t] * 2) if isinstance(t, torch.Tensor) and t.dim() and t.shape[0] == 1 else t
             for t in example_inputs]
    for gm, ex in _capture(model, grown, dynamic_dim0=True):
        part = part_mod.partition(gm, ex)
        binds = part_mod.bindings(gm, ex)
        for p in part.pieces:
            kp = KbPiece(p, opts)
            if p.bucket is None:
                keys.append(kp.prepare(binds)[0])
                continue
            for b in sorted(set(buckets or ())):
                keys.append(kp.prepare({**binds, p.bucket.symbol: b})[0])
    return keys
