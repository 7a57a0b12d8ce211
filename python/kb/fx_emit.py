"""kb.fx's values and what it emits: KVal (a tensor during import) and the
Importer, which holds one import's kb Program and writes kb ops into it:
input views of arguments and parameters (read), element types (mm,
convert, to), elementwise arithmetic with PyTorch's broadcasting of a
vector along the last axis (unary, binary), and the ops (softmax, gelu,
dropout, linear, matmul, transpose_last2, reshape). Its errors (fail)
name the op and the user's line. fx_dispatch.py decides which method a
node becomes; import_torch (fx.py) drives the graph through both.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .fx_trace import KbImportError, _torch, where_in_user_code
from .ir import KbError, Program, Value, dtype_name
from . import fx_attention  # N-D @ N-D


def once(fn):
    """fn, called at most once (its result kept)."""
    memo = []
    return lambda: memo[0] if memo else (memo.append(fn()) or memo[0])


def prune(prog) -> None:
    """Drops the ops whose results nothing uses (the columns an as_vector
    replaced): kb-opt would compile each into a kernel."""
    lines = prog._lines
    if any(not re.match(r"\s*%\w+ = kb\.", l) for l in lines):
        return  # a region (kb.fusion): left as it is
    live = {v.name for v, _ in prog.outputs}
    keep = []
    for l in reversed(lines):
        if re.match(r"\s*%(\w+) = ", l).group(1) in live:
            keep.append(l)
            live.update(re.findall(r"%(\w+)", l.split("=", 1)[1]))
    prog._lines[:] = keep[::-1]


HEADS_ONLY = ("transpose(1, 2) of a rank-4 tensor read by anything but scaled_dot_product_attention "
              "(kb folds it into kb.attention's bthd layout only, with q, k and v all so transposed)")


@dataclass(eq=False)
class KVal:
    """A tensor during import: its logical (PyTorch) shape and either a kb
    value (whose shape may be the logical one with its leading axes
    flattened) or a source buffer not yet read (an argument or a parameter,
    read as a view of any shape of the same size)."""
    shape: Tuple[int, ...]
    value: Optional[Value] = None
    source: Optional[Tuple[str, Any]] = None  # ("arg", i) | ("param", name)
    transposed: Optional["KVal"] = None  # this is transposed's last two axes swapped
    # This is heads's axes 1 and 2 swapped (a rank-4 x.transpose(1, 2), not
    # computed): only scaled_dot_product_attention reads it, as kb.attention's
    # bthd layout (fx_attention), and transpose(1, 2) undoes it.
    heads: Optional["KVal"] = None
    heads_node: Any = None  # the transpose node that made `heads`
    reshaped: bool = False  # a result reshaped: only returning it is allowed
    source_dtype: str = "f32"  # a source's element type (kb's name)
    # A column (..., R, 1) from a keepdim row reduction: its data as a 1-D
    # kb value, made on demand (a broadcast takes it; import_torch prunes
    # what is left unused).
    as_vector: Optional[Any] = None

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def dtype(self) -> str:
        if self.value is not None:
            return self.value.dtype
        if self.transposed is not None:
            return self.transposed.dtype
        if self.heads is not None:
            return self.heads.dtype
        return self.source_dtype


# The forms of the names kb generates for unnamed buffers (argN, outN, tN,
# wsN, tmN): kb-opt refuses a kb.name of one of these forms.
_GENERATED = re.compile(r"(arg|out|tm|ws|t)[0-9]+")


def _sanitize(name: str) -> str:
    s = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not s or s[0].isdigit():
        s = "a" + s
    if _GENERATED.fullmatch(s):
        s = "in_" + s
    return s


class Importer:
    def __init__(self, gm, example_inputs, precision, name, seed):
        torch = _torch()
        self.torch = torch
        self.F = torch.nn.functional
        self.gm = gm
        self.precision = precision
        self.prog = Program(_sanitize(name))
        self.seed = seed
        self.dropouts: Dict[str, Tuple[float, int]] = {}
        self.views: Dict[Tuple, Value] = {}  # (source, shape) -> kb input
        self.input_specs: List[dict] = []
        self.arg_names: List[str] = []
        self.arg_shapes: List[Tuple[int, ...]] = []
        self.arg_dtypes: List[str] = []
        self.used_names = set()
        self.example_inputs = example_inputs
        self.node = None
        self.converts: Dict[str, str] = {}
        self.real_result = lambda node: None  # import_torch sets it
        self.trace_names = {"forward", name}
        self.fallback_loc = ""

    # -- errors --------------------------------------------------------------
    def fail(self, what: str, node=None):
        node = node or self.node
        loc = where_in_user_code(node, self.trace_names) if node is not None else ""
        desc = ""
        if node is not None:
            desc = f" ({node.op} {self._target_name(node)})"
        msg = f"kb cannot import {what}{desc}"
        if loc:
            msg += f"\n  at {loc}"
        elif self.fallback_loc:
            msg += f"\n  in {self.fallback_loc} (torch.fx recorded no line for it)"
        raise KbImportError(msg, node)

    @staticmethod
    def _target_name(node):
        t = node.target
        if isinstance(t, str):
            return t
        mod = getattr(t, "__module__", "") or ""
        n = getattr(t, "__qualname__", None) or getattr(t, "__name__", str(t))
        if mod in ("_operator", "operator"):
            return f"operator.{n}"
        if n.startswith("_VariableFunctionsClass.") or n.startswith("_TensorBase."):
            return "torch." + n.split(".", 1)[1]
        if mod.startswith("torch"):
            mod = mod.replace("torch._C._nn", "torch.nn.functional").replace("torch._C._VariableFunctions", "torch")
            return f"{mod}.{n}"
        return f"{mod}.{n}" if mod else n

    # -- buffers -------------------------------------------------------------
    def _unique(self, base):
        base = _sanitize(base)
        n, k = base, 1
        while n in self.used_names:
            k += 1
            n = f"{base}_{k}"
        self.used_names.add(n)
        return n

    def read(self, kv: KVal, shape=None) -> Value:
        """The kb value of kv, with kb shape `shape` (default: kv's own)."""
        if kv.reshaped:
            self.fail(f"a reshaped result {kv.shape} as an operand (kb has no reshape "
                      f"between kernels; only inputs and returned results may be reshaped)")
        if kv.heads is not None:
            self.fail(HEADS_ONLY)
        if kv.transposed is not None:
            src = self.read(kv.transposed)
            v = self.prog.transpose(src)
            kv.value, kv.transposed = v, None
        if kv.source is not None:
            shape = tuple(shape or kv.shape)
            key = (kv.source, shape)
            if key not in self.views:
                kind, ident = kv.source
                base = self.arg_names[ident] if kind == "arg" else ident
                if any(s["source"] == [kind, ident] for s in self.input_specs):
                    base = f"{base}_{'x'.join(map(str, shape))}"
                name = self._unique(base)
                v = self.prog.input(name, shape, kv.source_dtype)
                self.views[key] = v
                self.input_specs.append({"buffer": name, "source": [kind, ident],
                                         "shape": list(shape)})
            return self.views[key]
        v = kv.value
        if shape is not None and tuple(shape) != v.shape:
            self.fail(f"a value of kb shape {v.shape} where {tuple(shape)} is needed "
                      f"(kb has no reshape between kernels)")
        return v

    def kb_shape(self, kv: KVal):
        if kv.value is not None and kv.transposed is None and kv.source is None:
            return kv.value.shape
        return kv.shape

    def rows_view(self, kv: KVal):
        """kv read as 2-D (rows, last) for a Linear."""
        if len(kv.shape) == 2:
            return self.read(kv)
        shape = (math.prod(kv.shape[:-1]), kv.shape[-1])
        if kv.source is not None:
            return self.read(kv, shape)
        if kv.value is not None and kv.value.shape == shape and not kv.reshaped:
            return kv.value
        return self.read(kv, shape)  # fails with the reason

    def result(self, v: Value, logical) -> KVal:
        return KVal(tuple(logical), value=v)

    # -- element types -------------------------------------------------------
    def mm(self, a: Value, b: Value, **kw) -> Value:
        """kb.matmul: f32 operands at the import's precision, 16-bit ones on
        the tensor cores (precision "native")."""
        if a.dtype != b.dtype:
            self.fail(f"a matmul of {a.dtype} by {b.dtype} (kb multiplies operands of one type)")
        return self.prog.matmul(a, b, None if a.dtype != "f32" else self.precision, **kw)

    def convert(self, kv, dtype, explicit=False) -> KVal:
        """kv in element type `dtype` (a torch dtype): kb.convert, or kv
        itself when it already has that type. `explicit`: the node is the
        user's conversion (reference() rounds its result the same way)."""
        if not isinstance(kv, KVal):
            self.fail(f"a conversion of the non-tensor {kv!r}")
        try:
            d = dtype_name(dtype)
        except KbError:
            self.fail(f"a conversion to {dtype} (kb tensors are float32, float16 or bfloat16)")
        if d == kv.dtype:
            return kv
        if explicit and self.node is not None:
            self.converts[self.node.name] = d
        return self.unary(kv, lambda v: self.prog.convert(v, d))

    def to(self, x, rest, kwargs) -> KVal:
        """Tensor.to(...): a dtype among the arguments (or another tensor's)
        converts; a device alone is nothing (kb's buffers are on the GPU)."""
        torch = self.torch
        dt = kwargs.get("dtype")
        for a in rest:
            if isinstance(a, torch.dtype):
                dt = a
            elif isinstance(a, KVal):
                return self.convert(x, a.dtype, explicit=True)
        if dt is None:
            return x
        return self.convert(x, dt, explicit=True)

    # -- elementwise helpers -------------------------------------------------
    def unary(self, kv: KVal, fn, rows: bool = False) -> KVal:
        """fn on kv's kb value; `rows`: fn works on rows (softmax, a norm),
        so a reshaped result is refused; an elementwise fn keeps the reshape."""
        if not isinstance(kv, KVal):
            self.fail(f"a non-tensor operand {kv!r}")
        if kv.reshaped and kv.value is not None and not rows:  # elementwise: the reshape stays
            return KVal(kv.shape, value=fn(kv.value), reshaped=True)
        v = self.read(kv, self.kb_shape(kv) if kv.source is None else None)
        r = self.result(fn(v), kv.shape)
        if kv.as_vector is not None and not rows:
            r.as_vector = once(lambda: fn(kv.as_vector()))
        return r

    def binary(self, op: str, a, b) -> KVal:
        p = self.prog
        a_t, b_t = isinstance(a, KVal), isinstance(b, KVal)
        if not a_t and not b_t:
            self.fail("arithmetic on two non-tensors")
        for s in (a, b):
            if not isinstance(s, (KVal, int, float, bool)):
                self.fail(f"an operand of type {type(s).__name__}")
        if a_t and b_t:
            if a.dtype != b.dtype:  # PyTorch promotes to the wider type
                want = self.result_dtype()
                a, b = self.convert(a, want), self.convert(b, want)
            return self.binary_tensors(op, a, b)
        x, c = (a, float(b)) if a_t else (b, float(a))
        xr = a_t  # tensor on the left
        if op == "add":
            return self.unary(x, lambda v: p.add_scalar(v, c))
        if op == "sub":
            if xr:
                return self.unary(x, lambda v: p.add_scalar(v, -c))
            return self.unary(x, lambda v: p.add_scalar(p.scale(v, -1.0), c))
        if op == "mul":
            return self.unary(x, lambda v: p.scale(v, c))
        if op == "div":
            if xr:
                if c == 0:
                    self.fail("division by the constant 0")
                return self.unary(x, lambda v: p.scale(v, 1.0 / c))
            return self.unary(x, lambda v: p.scale(p.pow(v, -1.0), c))
        if op == "pow":
            if not xr:
                self.fail("a constant raised to a tensor power (c ** x)")
            return self.unary(x, lambda v: p.pow(v, c))
        self.fail(f"{op} with a scalar")

    def binary_tensors(self, op, a: KVal, b: KVal) -> KVal:
        p = self.prog
        if op == "pow":
            self.fail("a tensor raised to a tensor power (kb.pow takes a constant exponent)")
        if a.shape == b.shape and (a.reshaped or b.reshaped):
            # Elementwise on a reshaped result keeps its kb shape (and the reshape).
            ks = (a if a.reshaped else b).value.shape
            va, vb = [x.value if x.reshaped and x.value.shape == ks else self.read(x, ks) if not x.reshaped
                      else self.fail(f"{op} of two results kb holds as {a.value.shape} and {b.value.shape}")
                      for x in (a, b)]
            return KVal(a.shape, value=getattr(p, op)(va, vb), reshaped=True)
        if a.shape == b.shape:
            ks = self.kb_shape(a) if a.source is None else self.kb_shape(b)
            va, vb = self.read(a, ks), self.read(b, ks)
            r = self.result(getattr(p, op)(va, vb), a.shape)
            if a.as_vector is not None and b.as_vector is not None:
                r.as_vector = once(lambda: getattr(p, op)(a.as_vector(), b.as_vector()))
            return r
        # A vector along the last axis: bias_add (for + and -).
        for x, vec, x_left in ((a, b, True), (b, a, False)):
            vs = tuple(d for d in vec.shape)
            if len(vs) >= 1 and x.shape and vs[-1] == x.shape[-1] and math.prod(vs) == vs[-1] \
                    and len(vs) <= len(x.shape) and vec.numel < x.numel:
                if op == "add" or (op == "sub" and x_left):
                    vv = self.read(vec, (vs[-1],))
                    if op == "sub":
                        vv = p.scale(vv, -1.0)
                    xv = self.read(x, self.kb_shape(x) if x.source is None else None)
                    return self.result(p.bias_add(xv, vv), x.shape)
                if op == "sub":  # vec - x = bias_add(-x, vec)
                    vv = self.read(vec, (vs[-1],))
                    xv = self.read(x, self.kb_shape(x) if x.source is None else None)
                    return self.result(p.bias_add(p.scale(xv, -1.0), vv), x.shape)
                if op in ("mul", "div", "minimum", "maximum"):
                    return self.vector_op(op, x, vec, x_left)
        # One element (a 0-d parameter, a whole-tensor reduction) against an
        # input: the input read as (numel, 1), the element as its vector.
        for x, one, x_left in ((a, b, True), (b, a, False)):
            if one.numel == 1 and x.numel > 1 and x.source is not None and len(one.shape) <= len(x.shape):
                xv = self.read(x, (x.numel, 1))
                ov = one.value if one.value is not None and one.source is None and one.transposed is None \
                    else self.read(one, (1,))
                if tuple(ov.shape) != (1,):
                    break
                r = self.vector_value(op, xv, ov, x_left)
                return KVal(x.shape, value=r, reshaped=x.shape[-1] != 1)
        # A column (R, 1) of an input against (R, M): along the last axis of
        # the transpose (kb.transpose), transposed back where it is read.
        for x, col, x_left in ((a, b, True), (b, a, False)):
            if len(x.shape) == 2 and tuple(col.shape) == (x.shape[0], 1) and x.shape[1] > 1 \
                    and (col.source is not None or col.as_vector is not None) and op != "pow":
                t = self.read(self.transpose_last2(x))
                cv = self.read(col, (x.shape[0],)) if col.source is not None else col.as_vector()
                y = self.vector_value(op, t, cv, x_left)
                return KVal(x.shape, transposed=KVal((x.shape[1], x.shape[0]), value=y))
        self.fail(f"{op} of shapes {a.shape} and {b.shape}: kb broadcasts only a vector "
                  f"along the last axis (or one element onto an input)")

    def vector_value(self, op, xv: Value, vv: Value, x_left: bool) -> Value:
        """x op v (or v op x) for v a vector along x's last axis: v is spread
        to x's shape by bias_add onto clamp(x, 0, 0) (0 for any x but NaN,
        where the result is NaN either way); kb-fuse-elementwise makes the
        three one kernel with the op (docs/kernelbench.md)."""
        p = self.prog
        if op in ("add", "sub") and x_left:
            return p.bias_add(xv, vv if op == "add" else p.scale(vv, -1.0))
        spread = p.bias_add(p.clamp(xv, 0.0, 0.0), vv)
        return getattr(p, op)(xv, spread) if x_left else getattr(p, op)(spread, xv)

    def vector_op(self, op, x: KVal, vec: KVal, x_left: bool) -> KVal:
        vv = self.read(vec, (vec.shape[-1],))
        xv = self.read(x, self.kb_shape(x) if x.source is None else None)
        return self.result(self.vector_value(op, xv, vv, x_left), x.shape)

    # -- the ops ---------------------------------------------------------------
    def result_dtype(self) -> str:
        """kb's name of the element type PyTorch gives the current node."""
        t = self.real_result(self.node)
        try:
            return dtype_name(t.dtype)
        except KbError:
            self.fail(f"a result of dtype {t.dtype} (kb tensors are float32, float16 or bfloat16)")

    def softmax(self, x, dim):
        if not isinstance(dim, int) or dim not in (-1, len(x.shape) - 1):
            self.fail(f"softmax over dim={dim} of a rank-{len(x.shape)} tensor (kb.softmax is over the last dim)")
        return self.unary(x, self.prog.softmax, rows=True)

    def gelu(self, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            self.fail(f"gelu approximate={approximate!r}")
        return self.unary(x, lambda v: self.prog.gelu(v, "erf" if approximate == "none" else "tanh"))

    def dropout(self, x, p, training):
        if not training or p == 0:
            return x
        if not 0 <= p < 1:
            self.fail(f"dropout p = {p} (kb needs p in [0, 1))")
        seed = self.seed + len(self.dropouts)
        self.dropouts[self.node.name] = (float(p), seed)
        return self.unary(x, lambda v: self.prog.dropout(v, p, seed))

    def linear(self, x, w, b=None):
        if not isinstance(w, KVal) or len(w.shape) != 2:
            self.fail("linear with a weight that is not a 2-D tensor")
        n, k = w.shape
        if x.shape[-1] != k:
            self.fail(f"linear of {x.shape} by a weight {w.shape}")
        xv = self.rows_view(x)
        wv = self.read(w) if w.transposed is None else None
        if wv is None:  # linear(x, W.t()) == x @ W
            wv = self.read(w.transposed)
            y = self.mm(xv, wv)
        else:
            y = self.mm(xv, wv, transpose_b=True)
        if b is not None:
            if not isinstance(b, KVal) or b.shape != (n,):
                self.fail(f"linear with a bias of shape {getattr(b, 'shape', b)}")
            y = self.prog.bias_add(y, self.read(b))
        return self.result(y, x.shape[:-1] + (n,))

    def matmul(self, a, b):
        if not isinstance(a, KVal) or not isinstance(b, KVal):
            self.fail("matmul of a non-tensor")
        ra, rb = len(a.shape), len(b.shape)
        if rb == 2 and ra >= 2:
            k, n = b.shape
            if a.shape[-1] != k:
                self.fail(f"matmul of {a.shape} by {b.shape}")
            av = self.rows_view(a)
            if b.transposed is not None:
                y = self.mm(av, self.read(b.transposed), transpose_b=True)
            else:
                y = self.mm(av, self.read(b))
            return self.result(y, a.shape[:-1] + (n,))
        if ra == 3 and rb == 3:
            if a.shape[0] != b.shape[0]:
                self.fail(f"batched matmul of {a.shape} by {b.shape} (batch sizes differ; kb does not broadcast)")
            av = self.read(a, a.shape)
            if b.transposed is not None:
                y = self.mm(av, self.read(b.transposed, b.transposed.shape), transpose_b=True)
            else:
                y = self.mm(av, self.read(b, b.shape))
            return self.result(y, (a.shape[0], a.shape[1], b.shape[2]))
        return fx_attention.batched_matmul(self, a, b)

    def transpose_last2(self, x):
        if len(x.shape) < 2 or (len(x.shape) > 3 and x.source is None):  # rank 4+: a matmul's lazy B^T
            self.fail(f"transpose of a rank-{len(x.shape)} tensor (kb.transpose swaps the last two axes of rank 2 or 3)")
        if x.transposed is not None:
            return x.transposed
        return KVal(x.shape[:-2] + (x.shape[-1], x.shape[-2]), transposed=x)

    def swap_heads(self, x):
        """x.transpose(1, 2) of a rank-4 x, lazily: [B, T, H, D] seen as
        [B, H, T, D] (or back), which scaled_dot_product_attention reads as
        kb.attention's bthd layout; anything else that reads it fails
        (HEADS_ONLY)."""
        if x.heads is not None:
            return x.heads
        if x.transposed is not None:
            self.fail("transpose(1, 2) of a tensor whose last two axes are transposed")
        return KVal((x.shape[0], x.shape[2], x.shape[1], x.shape[3]), heads=x, heads_node=self.node)

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != x.numel:
            self.fail(f"reshape of {x.shape} to {shape}")
        if shape == x.shape:
            return x
        if x.transposed is not None or x.heads is not None:
            self.fail("reshape of a transposed tensor (not a view in row-major order)")
        if x.source is not None:
            return KVal(shape, source=x.source, source_dtype=x.source_dtype)
        v = x.value
        if len(shape) >= 1 and shape[-1] == v.shape[-1] and not x.reshaped:
            return KVal(shape, value=v)  # leading axes regrouped: same rows
        return KVal(shape, value=v, reshaped=True)
