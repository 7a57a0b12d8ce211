"""Builder API: write kb programs from Python and print them as MLIR.

    import kb
    p = kb.Program("bias_gelu")
    x = p.input("x", (4096, 1024))
    b = p.input("bias", (1024,))
    y = p.gelu(p.bias_add(x, b), approx="tanh")
    p.output(y, "y")
    print(p.mlir())

Tensors are f32 unless given another element type: p.input("x", shape,
dtype="bf16") (or "f16"); ops keep their operands' type, kb.matmul of
16-bit operands computes on the tensor cores with f32 accumulation
(precision "native") and returns their type or `out_dtype="f32"`, and
p.convert(x, "bf16") is the explicit conversion (round to nearest even).
Mixing types in one op is refused (KbTypeError, a ValueError).

Every kb op has a method of the same name (kb.matmul -> Program.matmul, ...),
including kb.fusion (Program.fusion, a context manager whose body is built
with the same methods) and #kb.config (kb.Config, the `config=` argument of
every op). The builder checks shapes as the op verifiers do, so a mistake is
reported at the Python line that made it; kb-opt checks everything again.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple, Union


class KbError(Exception):
    """A program kb cannot build, compile or run; the message says why."""


class KbTypeError(KbError, ValueError):
    """An op given operands of two element types (kb converts only where
    the program says so, with kb.convert)."""


Shape = Tuple[int, ...]


def _f32(v: float) -> float:
    """v rounded to float32 (the attributes are f32)."""
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def format_f32(v: float, what: str = "value") -> str:
    v = float(v)
    if not math.isfinite(v):
        raise KbError(f"{what} must be finite, got {v}")
    r = repr(_f32(v))
    if "e" not in r and "." not in r and "inf" not in r and "nan" not in r:
        r += ".0"
    return r


# Element types of kb tensors (the manifest's "dtype" has the same names).
DTYPES = ("f32", "f16", "bf16")
HALF_DTYPES = ("f16", "bf16")
_DTYPE_ALIASES = {"f32": "f32", "float32": "f32", "float": "f32",
                  "f16": "f16", "float16": "f16", "half": "f16",
                  "bf16": "bf16", "bfloat16": "bf16"}


def dtype_name(dtype, what: str = "dtype") -> str:
    """kb's name ("f32", "f16", "bf16") of `dtype`: one of those, a numpy or
    PyTorch name ("bfloat16", "float16", "half", ...) or a torch.dtype."""
    s = str(dtype)
    if s.startswith("torch."):
        s = s[len("torch."):]
    d = _DTYPE_ALIASES.get(s)
    if d is None:
        raise KbError(f"{what}: kb tensors are f32, f16 or bf16, got {dtype!r}")
    return d


def tensor_type(shape: Sequence[int], dtype: str = "f32") -> str:
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


INT64_MAX = 2**63 - 1


def _check_shape(shape, what: str) -> Shape:
    try:
        dims = tuple(shape)
    except TypeError:
        raise KbError(f"{what}: a shape is a sequence of ints, got {shape!r}")
    # int(4.5) would be 4 and int(True) 1: only ints (numpy's too) are dims.
    if any(isinstance(d, bool) or type(d).__name__ == "bool_"
           or not hasattr(d, "__index__") for d in dims):
        raise KbError(f"{what}: a shape is a sequence of ints, got {shape!r}")
    shape = tuple(d.__index__() for d in dims)
    if len(shape) == 0:
        raise KbError(f"{what}: kb tensors have rank >= 1, got a scalar")
    if any(d <= 0 for d in shape):
        raise KbError(f"{what}: every dimension must be positive, got {shape}")
    if any(d > INT64_MAX for d in shape):
        raise KbError(f"{what}: a dimension is past int64 (2^63 - 1), got {shape}")
    return shape


# The fields of #kb.config (docs/generated/KBAttrs.md): list-valued, counts,
# and enum keywords (printed quoted).
CONFIG_SIZES = ("block", "warp", "thread", "pad")
CONFIG_COUNTS = ("threads", "vector", "stages", "cluster", "grid", "raster")
CONFIG_ENUMS = ("mma", "strategy", "copy")
CONFIG_ORDER = ("block", "warp", "thread", "threads", "vector", "stages", "pad",
                "mma", "strategy", "cluster", "grid", "copy", "raster")


class Config:
    """#kb.config<...>: the decisions of kb's passes, or your overrides.

    Config(block=[128, 128, 32], warp=[64, 32], mma="mma_sync_tf32"). Fields
    not known to this version of the builder are printed as given (a list,
    an int or a quoted string) and left for kb-opt to accept or refuse.
    """

    def __init__(self, **fields):
        self.fields = {}
        for k, v in fields.items():
            if v is None:
                continue
            if k in CONFIG_SIZES:
                if isinstance(v, int):
                    v = [v]
                v = [int(x) for x in v]
            elif k in CONFIG_COUNTS:
                v = int(v)
            elif k in CONFIG_ENUMS:
                v = str(v)
            self.fields[k] = v

    def mlir(self) -> str:
        keys = [k for k in CONFIG_ORDER if k in self.fields]
        keys += [k for k in self.fields if k not in CONFIG_ORDER]
        parts = []
        for k in keys:
            v = self.fields[k]
            if isinstance(v, (list, tuple)):
                parts.append(f"{k} = [{', '.join(str(int(x)) for x in v)}]")
            elif isinstance(v, str):
                parts.append(f'{k} = "{v}"')
            else:
                parts.append(f"{k} = {int(v)}")
        return "#kb.config<" + ", ".join(parts) + ">"

    def __repr__(self):
        return f"Config({self.mlir()})"


@dataclass(eq=False)
class Value:
    """An SSA value of a kb program: a tensor of a static shape whose
    elements are f32, f16 or bf16 (`dtype`)."""
    program: "Program"
    name: str
    shape: Shape
    scope: object = None  # the Program or the _Fusion region it belongs to
    dtype: str = "f32"

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)

    def __repr__(self):
        return f"<kb value %{self.name}: {self.type}>"


@dataclass
class _Op:
    text: str  # the op's line (or lines), without indentation


class _Scope:
    def __init__(self, program, indent):
        self.program = program
        self.lines: List[str] = []
        self.indent = indent


class Fusion:
    """The body of a kb.fusion: `with p.fusion([x, b]) as (xa, ba):` ...
    `p.yield_(v)`. Inside the block, ops take the block arguments (and values
    made inside); the fusion's result is `fusion.result` after the block."""

    def __init__(self, program, inputs, config):
        self.program = program
        self.inputs = list(inputs)
        self.config = config
        self.args = []
        self.result: Optional[Value] = None
        self._yielded: Optional[Value] = None

    def __enter__(self):
        p = self.program
        if p._fusion is not None:
            raise KbError("kb.fusion cannot nest")
        for v in self.inputs:
            p._check_value(v, "fusion input")
        self.scope = _Scope(p, 2)
        self.args = [Value(p, p._fresh("arg"), v.shape, self, v.dtype) for v in self.inputs]
        p._fusion = self
        return tuple(self.args)

    def __exit__(self, exc_type, exc, tb):
        p = self.program
        p._fusion = None
        if exc_type is not None:
            return False
        if self._yielded is None:
            raise KbError("kb.fusion: call p.yield_(value) at the end of its body")
        y = self._yielded
        self.result = Value(p, p._fresh(), y.shape, p, y.dtype)
        ins = ""
        if self.inputs:
            ins = ("ins(" + ", ".join("%" + v.name for v in self.inputs) + " : "
                   + ", ".join(v.type for v in self.inputs) + ") ")
        attrs = f"attributes {{config = {self.config.mlir()}}} " if self.config else ""
        lines = [f"%{self.result.name} = kb.fusion {ins}{attrs}{{"]
        lines.append("^bb0(" + ", ".join(f"%{a.name}: {a.type}" for a in self.args) + "):")
        lines += ["  " + l for l in self.scope.lines]
        lines.append(f"  kb.yield %{y.name} : {y.type}")
        lines.append(f"}} -> {self.result.type}")
        p._emit("\n".join(lines))
        return False


class Program:
    """One kb function: inputs, ops, outputs. `mlir()` prints it."""

    def __init__(self, name: str = "main"):
        if not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise KbError(f"program name {name!r} must be an identifier")
        self.name = name
        self.inputs: List[Tuple[Value, str]] = []
        self.outputs: List[Tuple[Value, str]] = []
        self._lines: List[str] = []
        self._counter = 0
        self._fusion: Optional[Fusion] = None
        self._names = set()

    # -- plumbing ----------------------------------------------------------
    def _fresh(self, prefix="v") -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def _scope(self):
        return self._fusion if self._fusion is not None else self

    def _check_value(self, v, what):
        if not isinstance(v, Value) or v.program is not self:
            raise KbError(f"{what}: expected a value of this program, got {v!r}")
        if v.scope is not self._scope() and not (
                self._fusion is not None and v.scope is self):
            raise KbError(f"{what}: %{v.name} belongs to another region")
        if self._fusion is not None and v.scope is self:
            raise KbError(f"{what}: inside kb.fusion use its block arguments, "
                          f"not %{v.name} from outside (kb.fusion is isolated)")

    def _emit(self, text):
        if self._fusion is not None:
            self._fusion.scope.lines.extend(text.split("\n"))
        else:
            self._lines.extend(text.split("\n"))

    def _new(self, shape, dtype="f32") -> Value:
        return Value(self, self._fresh(), tuple(shape), self._scope(), dtype)

    @staticmethod
    def _same_type(op, what_a, a, what_b, b):
        """Refuses operands of two element types, naming the op and both."""
        if a.dtype != b.dtype:
            raise KbTypeError(f"{op}: the {what_a} %{a.name} is {a.dtype} and the {what_b} %{b.name} "
                              f"is {b.dtype}; kb mixes no element types in one op "
                              f"(convert one with p.convert(x, {a.dtype!r}))")

    @staticmethod
    def _attrs(config: Optional[Config]) -> str:
        return f" {{config = {config.mlir()}}}" if config is not None else ""

    # -- signature ---------------------------------------------------------
    def input(self, name: Optional[str], shape: Sequence[int], dtype="f32") -> Value:
        """A function argument (an input buffer named `name`) of element
        type `dtype` ("f32", "f16" or "bf16", or a torch dtype)."""
        if self._fusion is not None:
            raise KbError("inputs are declared outside kb.fusion")
        shape = _check_shape(shape, f"input {name!r}")
        dtype = dtype_name(dtype, f"input {name!r}")
        if name is not None:
            self._claim(name)
        ssa = name if name and all(c.isalnum() or c == "_" for c in name) else f"in{len(self.inputs)}"
        if ssa[0].isdigit() or ssa.startswith("v") and ssa[1:].isdigit() or ssa.startswith("arg") and ssa[3:].isdigit():
            ssa = f"in{len(self.inputs)}_{ssa}"
        v = Value(self, ssa, shape, self, dtype)
        self.inputs.append((v, name))
        return v

    def _claim(self, name):
        if not isinstance(name, str) or not name or not all(
                c.isalnum() or c in "_.-" for c in name):
            raise KbError(f"buffer name {name!r}: use letters, digits, _ . -")
        if name in self._names:
            raise KbError(f"buffer name {name!r} is used twice")
        if name[0] == "t" and name[1:].isdigit():
            raise KbError(f"buffer name {name!r} is reserved for intermediates")
        self._names.add(name)

    def output(self, value: Value, name: Optional[str] = None) -> None:
        """Returns `value` as an output buffer named `name`."""
        self._check_value(value, "output")
        if any(v is value for v, _ in self.outputs):
            raise KbError("a value can be returned only once")
        if any(v is value for v, _ in self.inputs):
            raise KbError("kb cannot return an input: every result is computed by a kernel")
        if name is not None:
            self._claim(name)
        self.outputs.append((value, name))

    # -- matmul, softmax, transpose ----------------------------------------
    def matmul(self, a: Value, b: Value, precision: Optional[str] = None,
               transpose_b: bool = False, padded_b: bool = False,
               config: Optional[Config] = None, out_dtype=None) -> Value:
        """kb.matmul. f32 operands: `precision` ieee, tf32 (the default) or
        tf32x3. f16/bf16 operands (both of one type): the tensor cores with
        f32 accumulation, precision "native" (printed without a keyword);
        the result is the operands' type, or `out_dtype="f32"`."""
        self._check_value(a, "matmul lhs")
        self._check_value(b, "matmul rhs")
        self._same_type("kb.matmul", "lhs", a, "rhs", b)
        half = a.dtype in HALF_DTYPES
        if half:
            if precision not in (None, "native"):
                raise KbError(f"kb.matmul of {a.dtype} operands computes on the tensor cores with f32 "
                              f"accumulation (precision 'native'); precision {precision!r} is for f32 operands")
        elif precision is None:
            precision = "tf32"
        elif precision not in ("ieee", "tf32", "tf32x3"):
            raise KbError(f"matmul precision must be ieee, tf32 or tf32x3 for f32 operands, got {precision!r}")
        out_dtype = a.dtype if out_dtype is None else dtype_name(out_dtype, "matmul out_dtype")
        if out_dtype not in ("f32", a.dtype):
            raise KbTypeError(f"kb.matmul of {a.dtype} operands returns f32 or {a.dtype}, not {out_dtype}")
        if len(a.shape) not in (2, 3) or len(b.shape) != len(a.shape):
            raise KbError(f"matmul needs rank-2 or rank-3 operands of one rank, got {a.shape} and {b.shape}")
        if padded_b and not transpose_b:
            raise KbError("padded_b needs transpose_b")
        m, k = a.shape[-2:]
        k2, n = (b.shape[-1], b.shape[-2]) if transpose_b else b.shape[-2:]
        if (k2 < k) if padded_b else (k2 != k):
            raise KbError(f"matmul inner dimensions must match: lhs {a.shape} (K = {k}), rhs {b.shape} (K = {k2})")
        if len(a.shape) == 3 and a.shape[0] != b.shape[0]:
            raise KbError(f"matmul batch dimensions must match: {a.shape[0]} vs {b.shape[0]}")
        shape = a.shape[:-2] + (m, n)
        r = self._new(shape, out_dtype)
        flags = (" transpose_b" if transpose_b else "") + (" padded_b" if padded_b else "")
        prec = "" if half else f" precision({precision})"
        self._emit(f"%{r.name} = kb.matmul %{a.name}, %{b.name}{prec}{flags}"
                   f"{self._attrs(config)} : {a.type}, {b.type} -> {r.type}")
        return r

    def softmax(self, x: Value, config: Optional[Config] = None) -> Value:
        return self._unary("softmax", x, config)

    def log_softmax(self, x: Value, config: Optional[Config] = None) -> Value:
        """kb.log_softmax over the last axis."""
        return self._unary("log_softmax", x, config)

    def attention(self, q: Value, k: Value, v: Value, scale: float, mask: Optional[Value] = None,
                  causal: bool = False, precision: Optional[str] = None,
                  config: Optional[Config] = None, bthd: bool = False) -> Value:
        """kb.attention: softmax(scale q k^T + mask (-inf above the diagonal
        when `causal`)) v over the last two axes. q [..., Sq, D], k [..., Sk,
        D], v [..., Sk, Dv] of rank 3 or 4 and one type; the mask [Sq, Sk] or
        [..., Sq, Sk] of that type. f32: precision tf32 (default) or ieee.
        `bthd`: q [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv] and the
        result [B, Sq, H, Dv]; the mask stays [Sq, Sk] or [B, H, Sq, Sk]."""
        for what, x in (("q", q), ("k", k), ("v", v)):
            self._check_value(x, f"kb.attention {what}")
        self._same_type("kb.attention", "q", q, "k", k)
        self._same_type("kb.attention", "q", q, "v", v)
        r = len(q.shape)
        if r not in (3, 4) or len(k.shape) != r or len(v.shape) != r:
            raise KbError(f"kb.attention needs q, k, v of one rank, 3 or 4, got {q.shape}, {k.shape}, {v.shape}")
        if bthd and r != 4:
            raise KbError(f"kb.attention bthd needs q, k, v of rank 4 ([B, S, H, D]), got {q.shape}")

        def bhtd(s):  # the shape in [B, H, S, D] order
            return (s[0], s[2], s[1], s[3]) if bthd else s
        lead, (sq, d) = bhtd(q.shape)[:-2], bhtd(q.shape)[-2:]
        (sk, dk), (sk2, dv) = bhtd(k.shape)[-2:], bhtd(v.shape)[-2:]
        if bhtd(k.shape)[:-2] != lead or bhtd(v.shape)[:-2] != lead:
            raise KbError(f"kb.attention needs q, k, v of one leading shape, got {q.shape}, {k.shape}, {v.shape}")
        if dk != d or sk2 != sk:
            raise KbError(f"kb.attention: q {q.shape}, k {k.shape} and v {v.shape} do not chain "
                          "(q and k share D, k and v share Sk)")
        half = q.dtype in HALF_DTYPES
        if half:
            if precision not in (None, "native"):
                raise KbError(f"kb.attention of {q.dtype} operands has no precision choice, got {precision!r}")
        elif precision is None:
            precision = "tf32"
        elif precision not in ("ieee", "tf32"):
            raise KbError(f"kb.attention precision must be tf32 or ieee for f32 operands, got {precision!r}")
        names, types = f"%{q.name}, %{k.name}, %{v.name}", f"{q.type}, {k.type}, {v.type}"
        masked = ""
        if mask is not None:
            self._check_value(mask, "kb.attention mask")
            self._same_type("kb.attention", "q", q, "mask", mask)
            if mask.shape not in ((sq, sk), lead + (sq, sk)):
                raise KbError(f"kb.attention mask must be {(sq, sk)} or {lead + (sq, sk)}, got {mask.shape}")
            masked, types = f" mask(%{mask.name})", types + f", {mask.type}"
        out = self._new(bhtd(lead + (sq, dv)), q.dtype)
        flags = (" causal" if causal else "") + (" bthd" if bthd else "") + \
            ("" if half else f" precision({precision})")
        self._emit(f"%{out.name} = kb.attention {names}{masked} scale({format_f32(scale, 'attention scale')})"
                   f"{flags}{self._attrs(config)} : {types} -> {out.type}")
        return out

    def causal_mask(self, x: Value) -> Value:
        """kb.causal_mask: -inf above the diagonal of the last two axes."""
        self._check_value(x, "kb.causal_mask")
        if len(x.shape) < 2:
            raise KbError(f"kb.causal_mask needs rank 2 or more, got {x.shape}")
        r = self._new(x.shape, x.dtype)
        self._emit(f"%{r.name} = kb.causal_mask %{x.name} : {r.type}")
        return r

    def transpose(self, x: Value, pad: Optional[int] = None,
                  config: Optional[Config] = None) -> Value:
        self._check_value(x, "transpose")
        if len(x.shape) not in (2, 3):
            raise KbError(f"transpose needs rank 2 or 3, got {x.shape}")
        rows = x.shape[-2]
        if pad is not None:
            if not 1 <= int(pad) <= 1024:
                raise KbError(f"transpose pad must be in [1, 1024], got {pad}")
            rows = -(-rows // int(pad)) * int(pad)
        r = self._new(x.shape[:-2] + (x.shape[-1], rows), x.dtype)
        padtxt = f" pad({int(pad)})" if pad is not None else ""
        self._emit(f"%{r.name} = kb.transpose %{x.name}{padtxt}{self._attrs(config)} : {x.type} -> {r.type}")
        return r

    # -- elementwise -------------------------------------------------------
    def _binary(self, op, a, b, config):
        self._check_value(a, f"kb.{op} lhs")
        self._check_value(b, f"kb.{op} rhs")
        if a.shape != b.shape:
            raise KbError(f"kb.{op} takes two tensors of one shape (no broadcasting), got {a.shape} and {b.shape}")
        self._same_type(f"kb.{op}", "lhs", a, "rhs", b)
        r = self._new(a.shape, a.dtype)
        self._emit(f"%{r.name} = kb.{op} %{a.name}, %{b.name}{self._attrs(config)} : {r.type}")
        return r

    def add(self, a, b, config=None): return self._binary("add", a, b, config)
    def sub(self, a, b, config=None): return self._binary("sub", a, b, config)
    def mul(self, a, b, config=None): return self._binary("mul", a, b, config)
    def div(self, a, b, config=None): return self._binary("div", a, b, config)

    def _unary(self, op, x, config, attr=""):
        self._check_value(x, f"kb.{op}")
        r = self._new(x.shape, x.dtype)
        self._emit(f"%{r.name} = kb.{op} %{x.name}{attr}{self._attrs(config)} : {r.type}")
        return r

    def relu(self, x, config=None): return self._unary("relu", x, config)
    def tanh(self, x, config=None): return self._unary("tanh", x, config)
    def sigmoid(self, x, config=None): return self._unary("sigmoid", x, config)
    def exp(self, x, config=None): return self._unary("exp", x, config)
    def silu(self, x, config=None): return self._unary("silu", x, config)

    def scale(self, x, factor: float, config=None):
        return self._unary("scale", x, config, f" by {format_f32(factor, 'scale factor')}")

    def add_scalar(self, x, value: float, config=None):
        return self._unary("add_scalar", x, config, f" value({format_f32(value, 'add_scalar value')})")

    def pow(self, x, exponent: float, config=None):
        return self._unary("pow", x, config, f" exponent({format_f32(exponent, 'pow exponent')})")

    def leaky_relu(self, x, slope: float = 0.01, config=None):
        return self._unary("leaky_relu", x, config, f" slope({format_f32(slope, 'leaky_relu slope')})")

    def gelu(self, x, approx: str = "tanh", config=None):
        if approx not in ("tanh", "erf"):
            raise KbError(f"gelu approx must be 'tanh' or 'erf', got {approx!r}")
        return self._unary("gelu", x, config, f" approx({approx})")

    def dropout(self, x, p: float, seed: int = 0, config=None):
        if not 0.0 <= float(p) < 1.0:
            raise KbError(f"dropout p must be in [0, 1), got {p}")
        return self._unary("dropout", x, config, f" p({format_f32(p, 'dropout p')}) seed({int(seed)})")

    def bias_add(self, x, bias, config=None):
        self._check_value(x, "kb.bias_add input")
        self._check_value(bias, "kb.bias_add bias")
        if len(bias.shape) != 1 or bias.shape[0] != x.shape[-1]:
            raise KbError(f"kb.bias_add needs a 1-D bias as long as the input's last axis ({x.shape[-1]}), got {bias.shape}")
        self._same_type("kb.bias_add", "input", x, "bias", bias)
        r = self._new(x.shape, x.dtype)
        self._emit(f"%{r.name} = kb.bias_add %{x.name}, %{bias.name}{self._attrs(config)}"
                   f" : {x.type}, {bias.type} -> {r.type}")
        return r

    def rotary(self, x: Value, cos: Value, sin: Value, config=None) -> Value:
        """kb.rotary: the interleaved pairs of each head of x's rows rotated
        by the P x head_dim / 2 tables at the row's position (row mod P)."""
        self._check_value(x, "kb.rotary input")
        self._check_value(cos, "kb.rotary cos")
        self._check_value(sin, "kb.rotary sin")
        if len(x.shape) < 2 or len(cos.shape) != 2 or sin.shape != cos.shape or sin.dtype != cos.dtype:
            raise KbError(f"kb.rotary needs rows of heads x head_dim and two P x head_dim / 2 tables, "
                          f"got {x.shape}, {cos.shape} and {sin.shape}")
        if x.shape[-1] % (2 * cos.shape[1]):
            raise KbError(f"kb.rotary: head_dim {2 * cos.shape[1]} does not divide the last axis {x.shape[-1]}")
        if cos.dtype not in ("f32", x.dtype):
            raise KbError(f"kb.rotary tables are f32 or the input's {x.dtype}, got {cos.dtype}")
        r = self._new(x.shape, x.dtype)
        self._emit(f"%{r.name} = kb.rotary %{x.name}, %{cos.name}, %{sin.name}{self._attrs(config)}"
                   f" : {x.type}, {cos.type}, {sin.type} -> {r.type}")
        return r

    def convert(self, x: Value, dtype, config: Optional[Config] = None) -> Value:
        """kb.convert: x's elements in another type (f32, f16, bf16; to a
        16-bit type rounded to nearest even)."""
        self._check_value(x, "kb.convert")
        dtype = dtype_name(dtype, "kb.convert")
        if dtype == x.dtype:
            raise KbError(f"kb.convert: %{x.name} is already {dtype}")
        r = self._new(x.shape, dtype)
        self._emit(f"%{r.name} = kb.convert %{x.name}{self._attrs(config)} : {x.type} -> {r.type}")
        return r

    # -- activations and simple math (issue #45) ---------------------------
    def selu(self, x, config=None): return self._unary("selu", x, config)
    def hardsigmoid(self, x, config=None): return self._unary("hardsigmoid", x, config)
    def hardswish(self, x, config=None): return self._unary("hardswish", x, config)
    def mish(self, x, config=None): return self._unary("mish", x, config)
    def softsign(self, x, config=None): return self._unary("softsign", x, config)
    def abs(self, x, config=None): return self._unary("abs", x, config)
    def neg(self, x, config=None): return self._unary("neg", x, config)
    def sqrt(self, x, config=None): return self._unary("sqrt", x, config)
    def rsqrt(self, x, config=None): return self._unary("rsqrt", x, config)
    def log(self, x, config=None): return self._unary("log", x, config)
    def minimum(self, a, b, config=None): return self._binary("minimum", a, b, config)
    def maximum(self, a, b, config=None): return self._binary("maximum", a, b, config)

    def softplus(self, x, beta: float = 1.0, threshold: float = 20.0, config=None):
        """PyTorch's F.softplus: log(1 + exp(beta x)) / beta, x where beta x > threshold."""
        b = format_f32(beta, "softplus beta")
        if not float(b) > 0:
            raise KbError(f"softplus beta must be positive, got {beta}")
        return self._unary("softplus", x, config,
                           f" beta({b}) threshold({format_f32(threshold, 'softplus threshold')})")

    def elu(self, x, alpha: float = 1.0, config=None):
        return self._unary("elu", x, config, f" alpha({format_f32(alpha, 'elu alpha')})")

    def _bounds(self, what, lo, hi, lo_name, hi_name):
        los = None if lo is None else format_f32(lo, f"{what} {lo_name}")
        his = None if hi is None else format_f32(hi, f"{what} {hi_name}")
        if los is not None and his is not None and float(los) > float(his):
            raise KbError(f"{what} needs {lo_name} <= {hi_name}, got {lo} and {hi}")
        return los, his

    def hardtanh(self, x, min_val: float = -1.0, max_val: float = 1.0, config=None):
        lo, hi = self._bounds("hardtanh", min_val, max_val, "min_val", "max_val")
        return self._unary("hardtanh", x, config, f" min_val({lo}) max_val({hi})")

    def clamp(self, x, min: Optional[float] = None, max: Optional[float] = None, config=None):
        """torch.clamp with number bounds, either optional (not both)."""
        if min is None and max is None:
            raise KbError("clamp needs a min or a max (or both)")
        lo, hi = self._bounds("clamp", min, max, "min", "max")
        attr = (f" min({lo})" if lo is not None else "") + (f" max({hi})" if hi is not None else "")
        return self._unary("clamp", x, config, attr)

    # -- row reductions and norms (over the last axis) ---------------------
    def _row_norm(self, op, x, params, eps, config):
        self._check_value(x, f"kb.{op} input")
        for what, v in zip(("weight", "bias"), params):
            self._check_value(v, f"kb.{op} {what}")
            if v.shape != (x.shape[-1],):
                raise KbError(f"kb.{op} needs a 1-D {what} as long as the input's last axis "
                              f"({x.shape[-1]}), got {v.shape}")
            self._same_type(f"kb.{op}", "input", x, what, v)
        r = self._new(x.shape, x.dtype)
        names = "".join(f", %{v.name}" for v in params)
        types = "".join(f", {v.type}" for v in params)
        self._emit(f"%{r.name} = kb.{op} %{x.name}{names} eps({format_f32(eps, f'kb.{op} eps')})"
                   f"{self._attrs(config)} : {x.type}{types} -> {r.type}")
        return r

    def layer_norm(self, x, weight=None, bias=None, eps: float = 1e-5, config=None):
        """kb.layer_norm over the last axis; `bias` needs `weight`."""
        if bias is not None and weight is None:
            raise KbError("kb.layer_norm takes a bias only after a weight")
        params = [v for v in (weight, bias) if v is not None]
        return self._row_norm("layer_norm", x, params, eps, config)

    def rms_norm(self, x, weight=None, eps: float = 1e-6, config=None):
        """kb.rms_norm over the last axis."""
        return self._row_norm("rms_norm", x, [weight] if weight is not None else [], eps, config)

    def reduce(self, x, kind: str, keepdim: bool = False, config=None,
               axis: Optional[int] = None, all: bool = False):
        """kb.reduce (sum, max, min, mean) over the last axis, over `axis`,
        or (`all`) over every element (result (1,), or all ones with
        keepdim)."""
        self._check_value(x, "kb.reduce")
        if kind not in ("sum", "max", "min", "mean"):
            raise KbError(f"kb.reduce kind must be sum, max, min or mean, got {kind!r}")
        rank = len(x.shape)
        if all:
            if axis is not None:
                raise KbError("kb.reduce takes all or axis, not both")
            shape = (1,) * rank if keepdim else (1,)
        else:
            a = rank - 1 if axis is None else int(axis)
            if not 0 <= a < rank:
                raise KbError(f"kb.reduce axis must be in [0, {rank}), got {axis}")
            shape = tuple(x.shape[:a]) + ((1,) if keepdim else ()) + tuple(x.shape[a + 1:])
            if not shape:
                raise KbError("kb.reduce of a 1-D value needs keepdim (kb has no 0-d tensors)")
        r = self._new(shape, x.dtype)
        axis_txt = f" axis({int(axis)})" if axis is not None and not all and int(axis) != rank - 1 else ""
        self._emit(f"%{r.name} = kb.reduce %{x.name} {kind}{axis_txt}{' all' if all else ''}"
                   f"{' keepdim' if keepdim else ''}"
                   f"{self._attrs(config)} : {x.type} -> {r.type}")
        return r

    # -- fusion ------------------------------------------------------------
    def fusion(self, inputs: Sequence[Value], config: Optional[Config] = None) -> Fusion:
        """kb.fusion: `with p.fusion([x, b]) as (xa, ba): ...; p.yield_(v)`,
        then `fusion.result`."""
        return Fusion(self, inputs, config)

    def yield_(self, value: Value) -> None:
        f = self._fusion
        if f is None:
            raise KbError("kb.yield belongs inside kb.fusion")
        self._check_value(value, "kb.yield")
        if f._yielded is not None:
            raise KbError("kb.fusion yields one value")
        f._yielded = value

    # -- printing ----------------------------------------------------------
    def mlir(self) -> str:
        if self._fusion is not None:
            raise KbError("a kb.fusion is still open")
        if not self.outputs:
            raise KbError(f"program {self.name} has no outputs (call output())")
        args = []
        for v, name in self.inputs:
            attr = f' {{kb.name = "{name}"}}' if name else ""
            args.append(f"%{v.name}: {v.type}{attr}")
        res = []
        for v, name in self.outputs:
            res.append(f'{v.type} {{kb.name = "{name}"}}' if name else v.type)
        lines = [f"func.func @{self.name}(" + ", ".join(args) + ") -> (" + ", ".join(res) + ") {"]
        lines += ["  " + l for l in self._lines]
        lines.append("  return " + ", ".join("%" + v.name for v, _ in self.outputs)
                     + " : " + ", ".join(v.type for v, _ in self.outputs))
        lines.append("}")
        return "\n".join(lines) + "\n"

    __str__ = mlir
