"""The torch.compile backend's partitioner: a pure function of an
fx.GraphModule (a Dynamo graph, or any torch.fx graph with example inputs)
that finds the largest pieces kb's importer (fx.py) translates and leaves
the rest to PyTorch, each left-out op with the importer's reason.

    part = kb.partition.partition(gm, example_inputs)
    print(part.text())          # what kb.explain prints

How: every tensor-valued node is imported alone (kb.fx.import_torch on a
one-node graph): a node the importer refuses is left out with its message;
a node that only views its input (view, transpose, contiguous: the importer
returns a view of an input, which kb does not compute) is glue, allowed
inside a piece beside an op kb computes. torch.fx's capability partitioner
groups the rest into the largest pieces that make no cycle through a left-out
node; each piece is imported whole, and a node that the whole import refuses
is left out and the grouping redone. Dims that vary between calls are
symbols in a Dynamo graph; `bucket_plan` says whether a piece can be padded
along its leading dim (docs/design.md, "torch.compile backend").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .fx_trace import KbImportError, _torch, where_in_user_code
from .ir import KbError

_KB_DTYPES = ("torch.float32", "torch.float16", "torch.bfloat16")
_GLUE = "is an input or a parameter (or a view of one)"


@dataclass
class LeftOut:
    """An op of the graph that PyTorch runs, and why kb does not."""
    node: str
    target: str
    reason: str
    where: str = ""


@dataclass
class BucketPlan:
    """How a piece serves every value of the graph's varying leading dim
    `symbol` from one bundle a bucket: the inputs `padded` (by position) are
    padded with zeros along dim 0 up to the bucket, and each output in
    `sliced` is cut back to its rows (dim 0 is coef * symbol)."""
    symbol: Any
    padded: List[int]
    sliced: Dict[int, int]  # output position -> coef


@dataclass
class Piece:
    """A connected set of nodes kb compiles to one bundle. `gm` takes the
    piece's inputs (tensors, and the ints the graph computes from sizes) in
    `inputs` order and returns the `outputs` nodes' values as a tuple."""
    name: str
    nodes: List[str]
    inputs: List[str]
    outputs: List[str]
    ops: List[str]  # the kb ops of its program (at the example shapes)
    gm: Any = None
    bucket: Optional[BucketPlan] = None
    bucket_note: str = ""
    kernels: List[str] = field(default_factory=list)  # filled once compiled


@dataclass
class Partition:
    pieces: List[Piece]
    left_out: List[LeftOut]
    graph_module: Any = None
    symbol: Any = None  # the varying leading dim, when the graph has one
    whole: str = ""  # on the GPU: captured whole, or why not (kb.whole_graph)

    def as_dict(self) -> dict:
        return {
            "pieces": [{"name": p.name, "nodes": p.nodes, "inputs": p.inputs, "outputs": p.outputs,
                        "kb_ops": p.ops, "kernels": p.kernels,
                        "bucketed": p.bucket is not None, "bucket_note": p.bucket_note}
                       for p in self.pieces],
            "whole_graph": self.whole,
            "left_out": [vars(l) for l in self.left_out],
        }

    def text(self) -> str:
        n_kb = sum(len(p.nodes) for p in self.pieces)
        lines = [f"kb partition: {len(self.pieces)} piece(s) of {n_kb} op(s) compiled by kb, "
                 f"{len(self.left_out)} op(s) left to PyTorch"]
        for p in self.pieces:
            shape = "bucketed along dim 0" if p.bucket else (p.bucket_note or "exact shapes")
            lines.append(f"  {p.name}: {len(p.nodes)} op(s) [{', '.join(p.nodes)}]")
            lines.append(f"    kb ops: {', '.join(p.ops)}")
            if p.kernels:
                lines.append(f"    kernels: {', '.join(p.kernels)}")
            lines.append(f"    shapes: {shape}")
        if self.whole:
            w = self.whole
            lines.append(f"  whole graph: {w if w.startswith('captured') else 'not captured (' + w + ')'}")
        if self.left_out:
            lines.append("  left to PyTorch:")
            for l in self.left_out:
                lines.append(f"    {l.node} ({l.target}): {l.reason}" + (f"  [{l.where}]" if l.where else ""))
        return "\n".join(lines)

    __str__ = text


# -- values and symbols -------------------------------------------------------

def node_values(gm, example_inputs) -> Dict[Any, Any]:
    """Each node's value: Dynamo's meta["example_value"] where every node
    has one, else a run of `gm` on `example_inputs`."""
    torch = _torch()
    import torch.fx as fx
    nodes = [n for n in gm.graph.nodes if n.op != "output"]
    if all("example_value" in n.meta for n in nodes):
        return {n: n.meta["example_value"] for n in nodes}
    vals: Dict[Any, Any] = {}

    class Run(fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            vals[n] = r
            return r
    with torch.no_grad():
        Run(gm).run(*example_inputs)
    return vals


def _expr(size):
    """A size as a sympy expression (or an int)."""
    node = getattr(size, "node", None)
    return node.expr if node is not None and hasattr(node, "expr") else int(size)


def _free(size):
    e = _expr(size)
    return getattr(e, "free_symbols", set())


def bindings(gm, example_inputs) -> dict:
    """The value of each symbol of a Dynamo graph in `example_inputs` (the
    real arguments), read from its SymInt placeholders and tensor sizes."""
    torch = _torch()
    out = {}
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for n, a in zip(phs, example_inputs):
        v = n.meta.get("example_value")
        if isinstance(v, torch.SymInt) and isinstance(a, int):
            e = _expr(v)
            if getattr(e, "is_Symbol", False):
                out[e] = a
        elif isinstance(v, torch.Tensor) and isinstance(a, torch.Tensor):
            for s, r in zip(v.shape, a.shape):
                e = _expr(s)
                if getattr(e, "is_Symbol", False):
                    out[e] = int(r)
    return out


def evaluate(size, binds) -> int:
    e = _expr(size)
    if isinstance(e, int):
        return e
    return int(e.xreplace(binds))


def leading_symbol(gm):
    """The symbol that is dim 0 of the first tensor input whose dim 0 is
    one (the batch, or the rows of an MLP), or None (a static graph)."""
    torch = _torch()
    for n in gm.graph.nodes:
        v = n.meta.get("example_value") if n.op == "placeholder" else None
        if isinstance(v, torch.Tensor) and v.dim() >= 1:
            e = _expr(v.shape[0])
            if getattr(e, "is_Symbol", False):
                return e
    return None


# -- pieces as graphs ---------------------------------------------------------

def piece_graph(gm, nodes: List[Any], outputs: List[Any]):
    """A GraphModule of `nodes` (in graph order): a placeholder for each
    value they read from outside, the `outputs` returned as a tuple."""
    import torch.fx as fx
    inside = set(nodes)
    g = fx.Graph()
    env: Dict[Any, Any] = {}
    inputs: List[Any] = []

    def get(x):
        if x not in env:
            if x in inside:
                raise KbError(f"(internal) piece node {x.name} used before it is made")
            ph = g.placeholder(x.name)
            ph.meta.update(x.meta)
            env[x] = ph
            inputs.append(x)
        return env[x]
    for n in nodes:
        env[n] = g.node_copy(n, get)
    g.output(tuple(env[o] for o in outputs))
    pg = fx.GraphModule(gm, g, "kb_piece")
    pg._kb_pretraced = True
    return pg, inputs


def specialize(pg, binds, pad=None, symbol=None):
    """`pg` (a piece graph) for one call: its int inputs replaced by their
    values under `binds` (symbol -> int; the bucket symbol's value already
    the bucket's), and meta tensors of the tensor inputs' shapes. Returns
    (GraphModule taking the tensor inputs, meta inputs, int values)."""
    torch = _torch()
    import torch.fx as fx
    g = fx.Graph()
    env: Dict[Any, Any] = {}
    metas, ints = [], []
    for n in pg.graph.nodes:
        if n.op == "placeholder":
            v = n.meta.get("example_value")
            if isinstance(v, torch.Tensor):
                shape = [evaluate(s, binds) for s in v.shape]
                metas.append(torch.empty(shape, dtype=v.dtype, device="meta"))
                env[n] = g.placeholder(n.name)
            elif isinstance(v, (torch.SymInt, int)):
                env[n] = evaluate(v, binds)
                ints.append(env[n])
            else:
                raise KbError(f"it reads {n.name}, a {type(v).__name__} (kb pieces take tensors)")
        else:
            env[n] = g.node_copy(n, lambda x: env[x])
    sg = fx.GraphModule(pg, g, "kb_piece")
    sg._kb_pretraced = True
    return sg, metas, ints


def import_piece(pg, binds):
    """kb.fx.import_torch of a piece at the shapes `binds` gives."""
    from .fx import import_torch
    sg, metas, _ = specialize(pg, binds)
    return import_torch(sg, metas, name="kb_piece"), sg


def kb_ops(program) -> List[str]:
    seen = []
    for op in re.findall(r"\bkb\.([a-z_]+)\b", program.mlir()):
        if op not in ("yield", "name", "config") and op not in seen:
            seen.append(op)
    return seen


def bucket_plan(pg, symbol):
    """A BucketPlan for piece graph `pg`, or (None, why not)."""
    torch = _torch()
    if symbol is None:
        return None, "exact shapes (a static graph)"
    padded, sliced = [], {}
    phs = [n for n in pg.graph.nodes if n.op == "placeholder"]
    out = next(n for n in pg.graph.nodes if n.op == "output")
    for n in pg.graph.nodes:
        vs = [n.meta.get("example_value")] if n.op != "output" else []
        for v in vs:
            if not isinstance(v, torch.Tensor):
                continue
            for d, s in enumerate(v.shape):
                if symbol in _free(s):
                    e = _expr(s)
                    coef = e / symbol
                    if d != 0 or not getattr(coef, "is_Integer", False):
                        return None, f"exact shapes ({n.name} has {e} in dim {d}: padding would mix rows)"
    for i, n in enumerate(phs):
        v = n.meta.get("example_value")
        if isinstance(v, torch.Tensor) and v.dim() and symbol in _free(v.shape[0]):
            if _expr(v.shape[0]) != symbol:
                return None, f"exact shapes (input {n.name} has rows {_expr(v.shape[0])})"
            padded.append(i)
    if not padded:
        return None, "exact shapes (no input varies)"
    for j, o in enumerate(out.args[0]):
        v = o.meta.get("example_value")
        if isinstance(v, torch.Tensor) and v.dim() and symbol in _free(v.shape[0]):
            sliced[j] = int(_expr(v.shape[0]) / symbol)
    return BucketPlan(symbol, padded, sliced), ""


# -- the partitioner ----------------------------------------------------------

def _target(n) -> str:
    t = n.target
    if isinstance(t, str):
        return f".{t}()" if n.op == "call_method" else t
    mod = getattr(t, "__module__", "") or ""
    name = getattr(t, "__name__", str(t))
    mod = {"torch._C._nn": "torch.nn.functional", "_operator": "operator"}.get(mod, mod)
    return f"{mod}.{name}" if mod else name


def _left(n, reason) -> LeftOut:
    where = ""
    try:
        where = where_in_user_code(n, ("forward",))
    except Exception:  # a stack trace in a form we do not read
        pass
    return LeftOut(n.name, _target(n), reason, where)


def _reason(err) -> str:
    return str(err).splitlines()[0].replace("kb cannot import ", "kb does not import ")


def partition(gm, example_inputs) -> Partition:
    """The partition of `gm` (see the module's docstring)."""
    torch = _torch()
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase
    vals = node_values(gm, example_inputs)
    for n, v in vals.items():
        n.meta.setdefault("example_value", v)
    # A causal masked_fill by a mask the graph builds (GPT-2's hand-written
    # attention) becomes causal_fill, which kb imports as kb.causal_mask.
    from .fx_attention import fold_causal_masks
    from .fx_rotary import fold_rotary
    # An interleaved rotary (kb.models.rotary) becomes rotary_rows, in front
    # of the heads' view of a linear's output: kb.rotary in its epilogue.
    folded = fold_rotary(gm)
    folded += fold_causal_masks(gm)
    # The written-out attention of heads' transposes becomes SDPA (then
    # kb.attention bthd); the heads' transposes of q, k and v go just before
    # their attention (a cut in front of them keeps them together).
    from .fx_attention import fold_explicit_attention, gather_heads_transposes
    folded += fold_explicit_attention(gm)
    gather_heads_transposes(gm)
    if folded:
        vals = {n: n.meta["example_value"] for n in gm.graph.nodes if "example_value" in n.meta}
    binds = bindings(gm, example_inputs)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    calls = [n for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")
             and isinstance(vals.get(n), torch.Tensor)]
    refused: Dict[Any, str] = {}
    glue = set()
    for n in calls:  # each op alone
        try:
            pg, _ = piece_graph(gm, [n], [n])
            import_piece(pg, binds)
        except KbImportError as e:
            if _GLUE in str(e):
                glue.add(n)
            else:
                refused[n] = _reason(e)
        except KbError as e:
            refused[n] = _reason(e)
        except Exception as e:  # an op the meta run cannot take, and the like
            refused[n] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"

    class Support(OperatorSupportBase):
        def is_node_supported(self, submodules, node):
            return node in ok

    def users_outside(nodes):
        s = set(nodes)
        return [n for n in nodes if any(u not in s for u in n.users)]

    symbol = leading_symbol(gm)
    for _ in range(2 * len(calls) + 2):
        ok = {n for n in calls if n not in refused}
        parts = CapabilityBasedPartitioner(gm, Support(), allows_single_node_partition=True) \
            .propose_partitions()
        work = [sorted(p.nodes, key=order.get) for p in parts]
        work.sort(key=lambda g: order[g[0]])
        pieces, retry = [], False
        while work and not retry:
            nodes = work.pop(0)
            if all(n in glue for n in nodes):
                continue
            outs = users_outside(nodes)
            try:
                pg, ins = piece_graph(gm, nodes, outs)
                imp, _ = import_piece(pg, binds)
            except KbError as e:
                bad = getattr(e, "node", None)
                bad = next((n for n in nodes if bad is not None and n.name == bad.name), None)
                if bad is not None and nodes.index(bad) > 0:
                    # It imports alone: the piece's import refused what feeds
                    # it (a layout kb does not reshape between kernels). Cut
                    # the piece before it (a prefix in graph order makes no cycle).
                    i = nodes.index(bad)
                    work[:0] = [nodes[:i], nodes[i:]]
                    continue
                if bad is None and "output" in str(e):
                    bad = next((o for o in outs if o in glue), None)
                    if bad is not None:
                        e = KbError("a view returned from a kb piece (kb returns only what it computes)")
                for n in ([bad] if bad is not None else nodes):
                    refused[n] = _reason(e)
                retry = True
                break
            plan, note = bucket_plan(pg, symbol)
            pieces.append(Piece(f"kb_piece_{len(pieces)}", [n.name for n in nodes],
                                [i.name for i in ins], [o.name for o in outs],
                                kb_ops(imp.program), pg, plan, note))
        if not retry:
            break
    in_piece = {name for p in pieces for name in p.nodes}
    left = [_left(n, refused.get(n) or ("only a view: nothing for kb to compute" if n in glue
                                        else "not in a piece"))
            for n in calls if n.name not in in_piece]
    return Partition(pieces, left, gm, symbol)
