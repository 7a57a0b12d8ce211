"""Import PyTorch code into a kb program, through torch.fx.

    prog = kb.fx.import_torch(model, (x,))   # an nn.Module or a function
    print(prog.program.mlir())

What is supported (docs/tutorial.md lists it with examples):
  nn.Linear / F.linear (the weight is an input buffer, read transposed:
  kb.matmul transpose_b, then kb.bias_add), torch.matmul / mm / bmm / @
  (2-D x 2-D, 3-D x 3-D of one batch, 3-D x 2-D through the 2-D rows;
  a transposed right operand becomes transpose_b), softmax over the last dim,
  GELU (exact and tanh), dropout (identity in eval mode; kb.dropout in
  training mode, with kb's own counter-based mask), ReLU, LeakyReLU, SiLU,
  sigmoid, tanh, exp, pow / ** / square by a constant; the activations of
  fx_activations.py (softplus, elu, selu, hardtanh, relu6, hardsigmoid,
  hardswish, mish, softsign, abs, neg, sqrt, rsqrt, log, clamp / clip with
  constants, minimum / maximum of two tensors; functions, methods, modules);
  add / sub / mul / div by tensors of the same shape, by a vector along the
  last axis (add, sub) and by Python scalars; and the glue around them:
  shapes and sizes read from tensors, arithmetic on those numbers,
  contiguous / clone / detach, view / reshape / flatten of inputs and
  of results that are returned, transpose / t / mT / permute of the last two
  axes; nn.LayerNorm / F.layer_norm, nn.RMSNorm / F.rms_norm and
  sum / mean / amax / amin over dim=-1 (fx_rows.py);
  F.scaled_dot_product_attention and N-D @ N-D matmuls (fx_attention.py).
Tensors and parameters may be float32, float16 or bfloat16: a 16-bit
matmul becomes kb.matmul on the tensor cores (precision "native", f32
accumulation), elementwise ops and softmax keep their operand's type, and
.to(dtype) / .float() / .half() / .bfloat16() become kb.convert (as does
PyTorch's promotion of a 16-bit operand of an op with a float32 one).
Anything else raises KbImportError naming the op and the line of the user's
code that called it.
"""

from __future__ import annotations

import re
import functools
import math
import operator
import traceback
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .fx_activations import activation_function, activation_method, activation_module
from .fx_trace import KbImportError, _torch, trace, where_in_user_code  # noqa: F401
from .ir import KbError, Program, Value, dtype_name
from . import fx_rows  # norms and reductions over the last dim
from . import fx_attention  # scaled_dot_product_attention, N-D @ N-D


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
    reshaped: bool = False  # a result reshaped: only returning it is allowed
    source_dtype: str = "f32"  # a source's element type (kb's name)

    @property
    def numel(self):
        return math.prod(self.shape)

    @property
    def dtype(self) -> str:
        if self.value is not None:
            return self.value.dtype
        if self.transposed is not None:
            return self.transposed.dtype
        return self.source_dtype


@dataclass
class Imported:
    program: Program
    signature: dict
    dropouts: Dict[str, Tuple[float, int]]  # fx node name -> (p, seed)
    graph_module: Any
    precision: str
    params: List[str]
    converts: Dict[str, str] = field(default_factory=dict)  # fx node name -> kb dtype


def default_precision() -> str:
    """PyTorch's own fp32 matmul setting: 'highest' is fp32 (kb: ieee),
    'high' and 'medium' allow TF32 (kb: tf32)."""
    torch = _torch()
    try:
        p = torch.get_float32_matmul_precision()
    except AttributeError:  # pragma: no cover
        p = "highest"
    if p == "highest" and not torch.backends.cuda.matmul.allow_tf32:
        return "ieee"
    return "tf32"


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


class _Importer:
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
    def unary(self, kv: KVal, fn) -> KVal:
        if not isinstance(kv, KVal):
            self.fail(f"a non-tensor operand {kv!r}")
        v = self.read(kv, self.kb_shape(kv) if kv.source is None else None)
        return self.result(fn(v), kv.shape)

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
        if a.shape == b.shape:
            ks = self.kb_shape(a) if a.source is None else self.kb_shape(b)
            va, vb = self.read(a, ks), self.read(b, ks)
            return self.result(getattr(p, op)(va, vb), a.shape)
        # A vector along the last axis: bias_add (for + and -).
        for x, vec, x_left in ((a, b, True), (b, a, False)):
            vs = tuple(d for d in vec.shape)
            if len(vs) >= 1 and vs[-1] == x.shape[-1] and math.prod(vs) == vs[-1] \
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
        self.fail(f"{op} of shapes {a.shape} and {b.shape}: kb broadcasts only a vector "
                  f"along the last axis, and only for + and -")

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
        return self.unary(x, self.prog.softmax)

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

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != x.numel:
            self.fail(f"reshape of {x.shape} to {shape}")
        if shape == x.shape:
            return x
        if x.transposed is not None:
            self.fail("reshape of a transposed tensor (not a view in row-major order)")
        if x.source is not None:
            return KVal(shape, source=x.source, source_dtype=x.source_dtype)
        v = x.value
        if len(shape) >= 1 and shape[-1] == v.shape[-1] and not x.reshaped:
            return KVal(shape, value=v)  # leading axes regrouped: same rows
        return KVal(shape, value=v, reshaped=True)


def _norm_dim(d, rank):
    return d + rank if d < 0 else d


def import_torch(fn_or_module, example_inputs, precision: Optional[str] = None,
                 name: Optional[str] = None, seed: int = 0) -> Imported:
    """Traces `fn_or_module` with torch.fx and translates it into a kb Program.

    `example_inputs` fixes every shape (kb compiles shapes in). Parameters
    of a module become input buffers named after them. `precision` is the
    matmuls' (default: PyTorch's fp32 matmul setting, see default_precision).
    `seed` is the first dropout's seed (the next gets seed + 1, ...).
    """
    torch = _torch()
    import torch.fx as fx

    if precision is None:
        precision = default_precision()
    if precision not in ("ieee", "tf32", "tf32x3"):
        raise KbError(f"precision must be ieee, tf32 or tf32x3, got {precision!r}")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    gm = trace(fn_or_module)
    module = fn_or_module if isinstance(fn_or_module, torch.nn.Module) else None
    name = name or (type(module).__name__ if module is not None else getattr(fn_or_module, "__name__", "fn"))
    imp = _Importer(gm, example_inputs, precision, name, seed)
    try:
        import inspect
        f = fn_or_module.forward if module is not None else fn_or_module
        imp.trace_names.add(getattr(f, "__name__", ""))
        imp.fallback_loc = f"{getattr(f, '__qualname__', name)} at {inspect.getsourcefile(f)}:{inspect.getsourcelines(f)[1]}"
    except (TypeError, OSError):
        pass
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise KbError(f"{name} takes {len(placeholders)} inputs, {len(example_inputs)} example inputs given")
    fx_attention.check_masks(gm, placeholders, example_inputs)
    for i, (n, t) in enumerate(zip(placeholders, example_inputs)):
        if not isinstance(t, torch.Tensor):
            raise KbError(f"example input {i} ({n.name}) is a {type(t).__name__}; kb takes tensors")
        if t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            raise KbError(f"example input {i} ({n.name}) is {t.dtype}; kb tensors are float32, "
                          f"float16 or bfloat16")
        if t.dim() == 0:
            raise KbError(f"example input {i} ({n.name}) is a 0-d tensor; kb tensors have rank >= 1")
        imp.arg_names.append(imp._unique(n.target if isinstance(n.target, str) else n.name))
        imp.arg_shapes.append(tuple(t.shape))
        imp.arg_dtypes.append(dtype_name(t.dtype))
    # The names were reserved for the first view; release them for read().
    for a in imp.arg_names:
        imp.used_names.discard(a)

    F = torch.nn.functional
    env: Dict[Any, Any] = {}
    real: Dict[Any, Any] = {}
    params_used: List[str] = []

    class Runner(fx.Interpreter):
        def run_node(self, node):
            r = super().run_node(node)
            real[node] = r
            return r

    # Values first (shapes, and the numbers the code computes from shapes),
    # on the meta device (no arithmetic); on the real inputs if some op has
    # no meta implementation.
    import copy
    try:
        with torch.no_grad():
            Runner(copy.deepcopy(gm).to("meta")).run(*[t.to("meta") for t in example_inputs])
    except Exception:
        real.clear()
        with torch.no_grad():
            try:
                Runner(gm).run(*example_inputs)
            except Exception as e:
                raise KbError(f"running {name} on the example inputs failed: {type(e).__name__}: {e}")
    # The meta run's nodes are the deep copy's: map them back by name.
    by_name = {n.name: v for n, v in real.items()}
    real.clear()
    for n in gm.graph.nodes:
        if n.name in by_name:
            real[n] = by_name[n.name]

    imp.real_result = lambda n: real[n]

    def arg(a):
        return fx.node.map_arg(a, lambda n: env[n])

    def is_tensor_real(node):
        return isinstance(real.get(node), torch.Tensor)

    def concrete(node):
        v = real[node]
        if isinstance(v, torch.Tensor):
            return None
        return v

    def param_kval(qualname, t):
        if t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            imp.fail(f"the parameter {qualname} of dtype {t.dtype} (kb tensors are float32, "
                     f"float16 or bfloat16)")
        if qualname not in params_used:
            params_used.append(qualname)
        return KVal(tuple(t.shape), source=("param", qualname), source_dtype=dtype_name(t.dtype))

    unary_fns = {
        torch.relu: "relu", F.relu: "relu", torch.sigmoid: "sigmoid", torch.tanh: "tanh",
        torch.exp: "exp", F.silu: "silu", torch.nn.functional.sigmoid if hasattr(F, "sigmoid") else None: "sigmoid",
        torch.nn.functional.tanh if hasattr(F, "tanh") else None: "tanh",
    }
    unary_fns.pop(None, None)
    unary_methods = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp"}
    identity_methods = {"contiguous", "clone", "detach"}
    convert_methods = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16,
                       "double": torch.float64}
    arith_fns = {operator.add: "add", torch.add: "add", operator.sub: "sub", torch.sub: "sub",
                 operator.mul: "mul", torch.mul: "mul", operator.truediv: "div", torch.div: "div",
                 operator.pow: "pow", torch.pow: "pow", operator.iadd: "add", operator.imul: "mul",
                 operator.isub: "sub", operator.itruediv: "div"}
    arith_methods = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow",
                     "__add__": "add", "__mul__": "mul", "__sub__": "sub", "__truediv__": "div"}

    def call(node, target, args, kwargs, kind):
        p = imp.prog
        if kind == "call_method":
            self_ = args[0]
            rest = args[1:]
            m = target
            r = activation_method(imp, m, self_, rest, kwargs)
            if r is not None:
                return r
            if m in unary_methods:
                return imp.unary(self_, getattr(p, unary_methods[m]))
            if m in identity_methods:
                return self_
            if m in convert_methods:
                return imp.convert(self_, convert_methods[m], explicit=True)
            if m == "to":
                return imp.to(self_, rest, kwargs)
            if m in arith_methods:
                if "alpha" in kwargs:
                    imp.fail("add/sub with alpha=")
                return imp.binary(arith_methods[m], self_, rest[0])
            if m == "softmax":
                dim = rest[0] if rest else kwargs.get("dim")
                if kwargs.get("dtype") is not None:
                    self_ = imp.convert(self_, kwargs["dtype"])
                return imp.softmax(self_, dim)
            if m in ("matmul", "mm", "bmm"):
                return imp.matmul(self_, rest[0])
            if m in ("view", "reshape"):
                shape = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list, torch.Size)) else rest
                return imp.reshape(self_, real[node].shape)
            if m == "flatten" or m in ("unsqueeze", "squeeze", "view_as", "reshape_as", "expand_as") and m != "expand_as":
                return imp.reshape(self_, real[node].shape)
            if m in ("transpose", "permute", "t"):
                return transpose_like(self_, m, rest, kwargs)
            if m in ("square",):
                return imp.binary("pow", self_, 2.0)
            r = fx_rows.call_method(imp, m, self_, rest, kwargs)
            if r is not None:
                return r
            imp.fail(f"the tensor method .{m}()")
        # call_function
        t = target
        r = activation_function(imp, t, args, kwargs)
        if r is not None:
            return r
        if t in unary_fns:
            if kwargs.get("inplace"):
                pass
            return imp.unary(args[0], getattr(p, unary_fns[t]))
        if t in arith_fns:
            if kwargs.get("alpha", 1) != 1:
                imp.fail("add/sub with alpha=")
            a, b = args[0], args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("exponent"))
            if t is torch.div and kwargs.get("rounding_mode"):
                imp.fail("div with rounding_mode")
            return imp.binary(arith_fns[t], a, b)
        if t in (torch.square,):
            return imp.binary("pow", args[0], 2.0)
        if t in (F.softmax, torch.softmax):
            dim = args[1] if len(args) > 1 else kwargs.get("dim")
            x = args[0]
            if kwargs.get("dtype") is not None:  # softmax(x.to(dtype))
                x = imp.convert(x, kwargs["dtype"])
            return imp.softmax(x, dim)
        if t is F.gelu:
            return imp.gelu(args[0], kwargs.get("approximate", args[1] if len(args) > 1 else "none"))
        if t is F.leaky_relu:
            slope = args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01)
            return imp.unary(args[0], lambda v: p.leaky_relu(v, slope))
        if t in (F.dropout, torch.dropout):
            pp = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
            training = args[2] if len(args) > 2 else kwargs.get("training", kwargs.get("train", t is F.dropout))
            return imp.dropout(args[0], pp, training)
        if t is F.linear:
            return imp.linear(args[0], args[1], args[2] if len(args) > 2 else kwargs.get("bias"))
        if t in (torch.matmul, operator.matmul, torch.mm, torch.bmm):
            return imp.matmul(args[0], args[1])
        if t in (torch.reshape, torch.flatten, torch.squeeze, torch.unsqueeze):
            return imp.reshape(args[0], real[node].shape)
        if t in (torch.transpose, torch.permute, torch.t):
            return transpose_like(args[0], t.__name__, list(args[1:]), kwargs)
        if t is getattr and args[1] == "mT":
            return imp.transpose_last2(args[0])
        if t is getattr and args[1] == "T" and len(args[0].shape) == 2:
            return imp.transpose_last2(args[0])
        r = fx_rows.call_function(imp, t, args, kwargs) or fx_attention.call_function(imp, t, args, kwargs)
        if r is not None:
            return r
        imp.fail(imp._target_name(node))

    def transpose_like(x, name, rest, kwargs):
        r = len(x.shape)
        if name == "t":
            if r != 2:
                imp.fail(".t() of a non-2-D tensor")
            return imp.transpose_last2(x)
        if name == "transpose":
            d0 = rest[0] if rest else kwargs.get("dim0")
            d1 = rest[1] if len(rest) > 1 else kwargs.get("dim1")
            dims = sorted((_norm_dim(d0, r), _norm_dim(d1, r)))
            if dims == [r - 2, r - 1]:
                return imp.transpose_last2(x)
            if dims[0] == dims[1]:
                return x
            imp.fail(f"transpose({d0}, {d1}) of a rank-{r} tensor (kb swaps only the last two axes)")
        if name == "permute":
            dims = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
            dims = [_norm_dim(d, r) for d in dims]
            if dims == list(range(r)):
                return x
            if dims == list(range(r - 2)) + [r - 1, r - 2]:
                return imp.transpose_last2(x)
            imp.fail(f"permute{tuple(dims)} (kb swaps only the last two axes)")

    def call_module(node, mod, args, kwargs):
        p = imp.prog
        nn = torch.nn
        x = args[0] if args else None
        r = activation_module(imp, mod, x)
        if r is not None:
            return r
        if isinstance(mod, nn.Linear):
            w = param_kval(f"{node.target}.weight", mod.weight)
            b = param_kval(f"{node.target}.bias", mod.bias) if mod.bias is not None else None
            return imp.linear(x, w, b)
        if isinstance(mod, nn.ReLU):
            return imp.unary(x, p.relu)
        if isinstance(mod, nn.Sigmoid):
            return imp.unary(x, p.sigmoid)
        if isinstance(mod, nn.Tanh):
            return imp.unary(x, p.tanh)
        if isinstance(mod, nn.SiLU):
            return imp.unary(x, p.silu)
        if isinstance(mod, nn.LeakyReLU):
            return imp.unary(x, lambda v: p.leaky_relu(v, mod.negative_slope))
        if isinstance(mod, nn.GELU):
            return imp.gelu(x, getattr(mod, "approximate", "none"))
        if isinstance(mod, nn.Softmax):
            return imp.softmax(x, mod.dim)
        if isinstance(mod, nn.Dropout):
            return imp.dropout(x, mod.p, mod.training)
        if isinstance(mod, nn.Identity):
            return x
        if isinstance(mod, nn.Flatten):
            return imp.reshape(x, real[node].shape)
        r = fx_rows.call_module(imp, node, mod, x, param_kval)
        if r is not None:
            return r
        imp.fail(f"the module {type(mod).__module__}.{type(mod).__name__} ({node.target})")

    outputs = None
    for node in gm.graph.nodes:
        imp.node = node
        if node.op == "placeholder":
            i = placeholders.index(node)
            env[node] = KVal(imp.arg_shapes[i], source=("arg", i), source_dtype=imp.arg_dtypes[i])
            continue
        if node.op == "get_attr":
            v = real[node]
            if isinstance(v, torch.Tensor):
                owned = False
                if module is not None:
                    for getter in (module.get_parameter, module.get_buffer):
                        try:
                            getter(node.target)
                            owned = True
                        except AttributeError:
                            pass
                if not owned:
                    imp.fail("a tensor made inside the program (kb tensors are the inputs, "
                             "parameters and results of kb ops)")
                env[node] = param_kval(node.target, v)
            else:
                env[node] = v
            continue
        if node.op == "output":
            outputs = node.args[0]
            break
        # A node whose inputs are all plain numbers (or whose result is not a
        # tensor: x.shape, x.size(0), arithmetic on sizes) is a constant.
        if not is_tensor_real(node):
            if isinstance(real[node], (tuple, list)) and any(isinstance(v, torch.Tensor) for v in real[node]):
                imp.fail("an op with several tensor results")
            env[node] = real[node]
            continue
        args = arg(node.args)
        kwargs = arg(node.kwargs)
        if not any(isinstance(a, KVal) for a in list(args) + list(kwargs.values())):
            if node.op == "call_module" or node.op == "call_function":
                imp.fail("a tensor made inside the program (kb tensors are the inputs, parameters and results of kb ops)")
        if node.op == "call_module":
            mod = gm.get_submodule(node.target)
            r = call_module(node, mod, args, kwargs)
        else:
            r = call(node, node.target, args, kwargs, node.op)
        if not isinstance(r, KVal):
            imp.fail("an op whose result is not a tensor")
        expect = tuple(real[node].shape)
        if r.shape != expect:
            imp.fail(f"(internal) the translation's shape {r.shape} is not PyTorch's {expect}")
        if r.dtype != imp.result_dtype():
            imp.fail(f"(internal) the translation's element type {r.dtype} is not PyTorch's {real[node].dtype}")
        env[node] = r

    imp.node = None
    out_list = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    single = not isinstance(outputs, (tuple, list))
    out_specs = []
    seen = []
    for i, o in enumerate(out_list):
        kv = env.get(o) if isinstance(o, fx.Node) else None
        if not isinstance(kv, KVal):
            raise KbImportError(f"output {i} of {name} is not a tensor computed by the program")
        if kv.source is not None or (kv.transposed is not None and kv.transposed.source is not None
                                     and len(kv.shape) > 3):  # a rank-4 k^T: a view for a matmul
            raise KbImportError(f"output {i} of {name} is an input or a parameter (or a view of one); "
                                f"kb returns only results its kernels compute")
        if kv.transposed is not None:
            imp.read(kv)
        v = kv.value
        if any(v is s for s in seen):
            raise KbImportError(f"output {i} of {name} is returned twice; kb computes each result once")
        seen.append(v)
        # (Not "out0": kb generates names of that form for its own buffers.)
        oname = "out" if single else f"out_{i}"
        imp.prog.output(v, oname)
        out_specs.append({"buffer": oname, "shape": list(kv.shape), "kb_shape": list(v.shape)})

    # Inputs in the function's order: arguments first (by position), then
    # parameters (in the order the code reads them).
    specs = {s["buffer"]: s for s in imp.input_specs}

    def order(item):
        kind, ident = specs[item[1]]["source"]
        return (0, ident, 0) if kind == "arg" else (1, params_used.index(ident) if ident in params_used else 0, 0)
    imp.prog.inputs.sort(key=order)
    imp.input_specs.sort(key=lambda s: order((None, s["buffer"])))
    sig = {
        "args": [{"name": n, "shape": list(s)} for n, s in zip(imp.arg_names, imp.arg_shapes)],
        "inputs": imp.input_specs,
        "outputs": out_specs,
        "single_output": single,
        "params": params_used,
        "dropouts": [{"node": k, "p": v[0], "seed": v[1]} for k, v in imp.dropouts.items()],
        "precision": precision,
    }
    return Imported(imp.prog, sig, imp.dropouts, gm, precision, params_used, imp.converts)


# The float64 reference and kb's dropout mask live in reference.py; they are
# kb.fx's names too.
from .reference import philox4x32_10, philox_keep_mask, reference  # noqa: E402,F401
