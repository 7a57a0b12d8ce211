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
  F.scaled_dot_product_attention and N-D @ N-D matmuls (fx_attention.py);
  max / min with dim, logsumexp, norms, InstanceNorm, BatchNorm1d, losses
  and matmul einsums, composed of kb ops (fx_compose.py); *, /, minimum and
  maximum by a vector along the last axis (fx_emit.vector_value).
Tensors and parameters may be float32, float16 or bfloat16: a 16-bit
matmul becomes kb.matmul on the tensor cores (precision "native", f32
accumulation), elementwise ops and softmax keep their operand's type, and
.to(dtype) / .float() / .half() / .bfloat16() become kb.convert (as does
PyTorch's promotion of a 16-bit operand of an op with a float32 one).
Anything else raises KbImportError naming the op and the line of the user's
code that called it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .fx_dispatch import Dispatch
from .fx_emit import Importer, KVal, prune
from .fx_trace import KbImportError, _torch, trace, where_in_user_code  # noqa: F401
from .ir import KbError, Program, dtype_name
from . import fx_attention  # scaled_dot_product_attention's masks
from . import fx_compose  # torch.max(x, dim)'s (values, indices)


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
    imp = Importer(gm, example_inputs, precision, name, seed)
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

    def param_kval(qualname, t):
        if t.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            imp.fail(f"the parameter {qualname} of dtype {t.dtype} (kb tensors are float32, "
                     f"float16 or bfloat16)")
        if qualname not in params_used:
            params_used.append(qualname)
        return KVal(tuple(t.shape), source=("param", qualname), source_dtype=dtype_name(t.dtype))


    dispatch = Dispatch(imp, real, param_kval)

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
        if fx_compose.is_values_indices(node):  # torch.max(x, dim): values and indices
            a_, k_ = arg(node.args), arg(node.kwargs)
            what = node.target if isinstance(node.target, str) else node.target.__name__
            env[node] = fx_compose.values_indices(
                imp, what, a_[0], a_[1] if len(a_) > 1 else k_.get("dim"),
                a_[2] if len(a_) > 2 else k_.get("keepdim", False))
            continue
        if not is_tensor_real(node):
            if isinstance(real[node], (tuple, list)) and any(isinstance(v, torch.Tensor) for v in real[node]):
                imp.fail("an op with several tensor results")
            env[node] = real[node]
            continue
        args = arg(node.args)
        kwargs = arg(node.kwargs)
        if not any(isinstance(a, (KVal, fx_compose.ValuesIndices)) for a in list(args) + list(kwargs.values())):
            if node.op == "call_module" or node.op == "call_function":
                imp.fail("a tensor made inside the program (kb tensors are the inputs, parameters and results of kb ops)")
        if node.op == "call_module":
            mod = gm.get_submodule(node.target)
            r = dispatch.call_module(node, mod, args, kwargs)
        else:
            r = dispatch.call(node, node.target, args, kwargs, node.op)
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
        if kv.heads is not None:
            if kv.heads.source is not None:
                raise KbImportError(f"output {i} of {name} is an input or a parameter (or a view of one); "
                                    f"kb returns only results its kernels compute")
            # A computed [B, T, H, D] returned as [B, H, T, D]: kb returns row-major
            # results only; the partitioner cuts the piece before this node.
            imp.fail(f"output {i}: transpose(1, 2) of a computed rank-4 tensor as a result "
                     "(kb returns row-major results only)", node=o)
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
    prune(imp.prog)
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
