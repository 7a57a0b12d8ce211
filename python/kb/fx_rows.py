"""kb.fx's translation of PyTorch's norms and reductions over the last dim.

    nn.LayerNorm / F.layer_norm        -> kb.layer_norm (weight, bias optional)
    nn.RMSNorm / F.rms_norm / torch.rms_norm (torch >= 2.4)  -> kb.rms_norm
    torch.sum / mean / amax / amin, and the tensor methods, over one dim
    (any; keepdim or not) or the whole tensor (no dim)  -> kb.reduce
    F.log_softmax / torch.log_softmax / .log_softmax() / nn.LogSoftmax
    over the last dim                  -> kb.log_softmax

Each function returns the translated KVal, or None when the node is none of
these (fx_dispatch.py then reports it as unsupported). A norm over more than the
last dim, or a reduction over several (but not all) dims, raises
KbImportError through the importer's fail().
"""

from __future__ import annotations

from .fx_trace import _torch

_REDUCE_FNS = ("sum", "mean", "amax", "amin")
_KIND = {"sum": "sum", "mean": "mean", "amax": "max", "amin": "min"}


def _one_dim(imp, x, dim, what):
    """`dim` (an int, or a list / tuple of one) as an axis in [0, rank)."""
    if isinstance(dim, (list, tuple)) and len(dim) == 1:
        dim = dim[0]
    r = len(x.shape)
    if not isinstance(dim, int) or not -r <= dim < r:
        imp.fail(f"{what} over dim={dim} of a rank-{r} tensor (kb reduces over one dim or all of them)")
    return dim % r


def _reduce(imp, x, name, dim, keepdim, dtype=None):
    from .fx_emit import KVal
    if not isinstance(x, KVal):
        imp.fail(f"{name} of a non-tensor")
    if dtype is not None:
        imp.fail(f"{name} with dtype= (convert the input first)")
    keepdim = bool(keepdim)
    rank = len(x.shape)
    if dim is None or (isinstance(dim, (list, tuple)) and (len(dim) == 0 or len(dim) == rank and rank > 1
                                                           and sorted(d % rank for d in dim) == list(range(rank)))):
        # The whole tensor: kb.reduce all, a (1,) result (PyTorch's 0-d).
        v = imp.read(x, imp.kb_shape(x) if x.source is None else None)
        r = imp.prog.reduce(v, _KIND[name], keepdim, all=True)
        logical = (1,) * rank if keepdim else ()
        out = KVal(logical, value=r)
        if tuple(r.shape) != logical:
            out.reshaped = True  # 0-d: only returned as is
        return out
    axis = _one_dim(imp, x, dim, name)
    if rank == 1 and not keepdim:
        imp.fail(f"{name} of a 1-D tensor to a 0-d one (kb has no 0-d tensors; use keepdim=True)")
    if axis != rank - 1:
        # A column reduction reads the tensor in its own shape.
        v = imp.read(x, tuple(x.shape) if x.source is not None else None)
        if tuple(v.shape) != tuple(x.shape):
            imp.fail(f"{name} over dim={dim} of a value kb holds as {tuple(v.shape)}, "
                     f"not {tuple(x.shape)} (kb has no reshape between kernels)")
        r = imp.prog.reduce(v, _KIND[name], keepdim, axis=axis)
        logical = tuple(x.shape[:axis]) + ((1,) if keepdim else ()) + tuple(x.shape[axis + 1:])
        return KVal(logical, value=r)
    if keepdim and x.shape[-1] == 1 and not x.reshaped:
        return x  # over one element: itself
    v = imp.read(x, imp.kb_shape(x) if x.source is None else None)
    r = imp.prog.reduce(v, _KIND[name], keepdim)
    logical = tuple(x.shape[:-1]) + ((1,) if keepdim else ())
    out = KVal(logical, value=r)
    if r.shape[-1:] != logical[-1:]:
        out.reshaped = True  # the rows were flattened: only returned as is
    elif keepdim and len(v.shape) == 2:
        from .fx_emit import once
        out.as_vector = once(lambda: imp.prog.reduce(v, _KIND[name], False))
    return out


def _log_softmax(imp, x, dim, dtype=None):
    from .fx_emit import KVal
    if not isinstance(x, KVal):
        imp.fail("log_softmax of a non-tensor")
    if dim is None:
        imp.fail("log_softmax without dim= (PyTorch's implicit choice is deprecated; pass dim=-1)")
    if not isinstance(dim, int) or dim not in (-1, len(x.shape) - 1):
        imp.fail(f"log_softmax over dim={dim} of a rank-{len(x.shape)} tensor "
                 "(kb.log_softmax is over the last dim)")
    if dtype is not None:  # log_softmax(x.to(dtype))
        x = imp.convert(x, dtype)
    return imp.unary(x, imp.prog.log_softmax, rows=True)


def _norm(imp, x, normalized_shape, weight, bias, eps, rms):
    from .fx_emit import KVal
    what = "rms_norm" if rms else "layer_norm"
    if not isinstance(x, KVal):
        imp.fail(f"{what} of a non-tensor")
    ns = tuple(normalized_shape) if isinstance(normalized_shape, (list, tuple)) else (normalized_shape,)
    n = x.shape[-1]
    if len(ns) > 1 and tuple(x.shape[-len(ns):]) == ns and x.source is not None:
        return _norm_flat(imp, x, ns, weight, bias, eps, rms)
    if ns != (n,):
        imp.fail(f"{what} over the last {len(ns)} dims {ns} (kb normalizes over the last dim only)")
    params = []
    for p, pname in ((weight, "weight"), (bias, "bias")):
        if p is None:
            continue
        if not isinstance(p, KVal) or p.shape != (n,):
            imp.fail(f"{what} with a {pname} of shape {getattr(p, 'shape', p)} (kb takes 1-D of {n})")
        params.append(p)
    if bias is not None and weight is None:
        imp.fail(f"{what} with a bias but no weight")
    if eps is None:  # rms_norm's default: the input type's machine epsilon
        eps = float(_torch().finfo(imp.real_result(imp.node).dtype).eps)

    def build(v):
        ps = [imp.read(p, (n,)) for p in params]
        if rms:
            return imp.prog.rms_norm(v, ps[0] if ps else None, float(eps))
        return imp.prog.layer_norm(v, *ps, eps=float(eps))
    # Rows of an N-D input (a buffer, or a value already as rows) are
    # normalized as 2-D rows, so that a Linear after the norm reads them.
    if len(x.shape) > 2 and (x.source is not None or len(imp.kb_shape(x)) == 2):
        return KVal(x.shape, value=build(imp.rows_view(x)))
    return imp.unary(x, build, rows=True)


def _norm_flat(imp, x, ns, weight, bias, eps, rms):
    """A norm over the last len(ns) dims of an input: its rows as
    (leading, prod(ns)), the weight and bias as vectors; a reshaped result."""
    from .fx_emit import KVal
    import math
    n = math.prod(ns)
    v = imp.read(x, (x.numel // n, n))
    ps = []
    for p, pname in ((weight, "weight"), (bias, "bias")):
        if p is not None:
            if not isinstance(p, KVal) or p.source is None or tuple(p.shape) != ns:
                imp.fail(f"a norm over {ns} with a {pname} that is not a parameter or input of that shape")
            ps.append(imp.read(p, (n,)))
    if eps is None:
        eps = float(_torch().finfo(imp.real_result(imp.node).dtype).eps)
    r = imp.prog.rms_norm(v, ps[0] if ps else None, float(eps)) if rms else \
        imp.prog.layer_norm(v, *ps, eps=float(eps))
    return KVal(x.shape, value=r, reshaped=True)


def call_function(imp, t, args, kwargs):
    torch = _torch()
    F = torch.nn.functional

    def a(i, name, default=None):
        return args[i] if len(args) > i else kwargs.get(name, default)
    if t in (F.layer_norm, getattr(torch, "layer_norm", None)):
        return _norm(imp, a(0, "input"), a(1, "normalized_shape"), a(2, "weight"),
                     a(3, "bias"), a(4, "eps", 1e-5), rms=False)
    # torch.rms_norm: what Dynamo records for nn.RMSNorm (torch >= 2.4).
    if t is not None and t in (getattr(F, "rms_norm", None), getattr(torch, "rms_norm", None)):
        return _norm(imp, a(0, "input"), a(1, "normalized_shape"), a(2, "weight"),
                     None, a(3, "eps", None), rms=True)
    if t in (F.log_softmax, torch.log_softmax):
        return _log_softmax(imp, a(0, "input"), a(1, "dim"), a(3, "dtype"))
    for name in _REDUCE_FNS:
        if t is getattr(torch, name):
            return _reduce(imp, a(0, "input"), name, a(1, "dim"), a(2, "keepdim", False),
                           kwargs.get("dtype"))
    return None


def call_method(imp, m, self_, rest, kwargs):
    if m == "log_softmax":
        return _log_softmax(imp, self_, rest[0] if rest else kwargs.get("dim"),
                            kwargs.get("dtype"))
    if m not in _REDUCE_FNS:
        return None
    dim = rest[0] if rest else kwargs.get("dim")
    keepdim = rest[1] if len(rest) > 1 else kwargs.get("keepdim", False)
    return _reduce(imp, self_, m, dim, keepdim, kwargs.get("dtype"))


def call_module(imp, node, mod, x, param_kval):
    nn = _torch().nn
    if isinstance(mod, nn.LayerNorm):
        w = param_kval(f"{node.target}.weight", mod.weight) if mod.weight is not None else None
        b = param_kval(f"{node.target}.bias", mod.bias) if getattr(mod, "bias", None) is not None else None
        return _norm(imp, x, mod.normalized_shape, w, b, mod.eps, rms=False)
    if isinstance(mod, nn.LogSoftmax):
        return _log_softmax(imp, x, mod.dim)
    rms = getattr(nn, "RMSNorm", None)
    if rms is not None and isinstance(mod, rms):
        w = param_kval(f"{node.target}.weight", mod.weight) if mod.weight is not None else None
        return _norm(imp, x, mod.normalized_shape, w, None, mod.eps, rms=True)
    return None
