"""kb.fx's compositions: PyTorch ops kb has no op for, written as existing
kb ops that compute the same (max / min with dim, logsumexp, norms,
InstanceNorm, BatchNorm1d, losses, matmul einsums; docs/kernelbench.md
says how each is built). Each function returns the KVal, or None when the
node is none of these; what it does not cover fails through imp.fail().
"""

from __future__ import annotations

import math
import operator

from .fx_trace import _torch
from . import fx_rows

FLT_MIN = 1.1754943508222875e-38  # xlogy(t, t) = t * log(max(t, FLT_MIN)): 0 at t = 0


class ValuesIndices:
    """torch.max / min (x, dim): the values (a kb.reduce), not the indices."""

    def __init__(self, values, what):
        self.values, self.what = values, what


def _a(args, kwargs, i, name, default=None):
    return args[i] if len(args) > i else kwargs.get(name, default)


def values_indices(imp, name, x, dim, keepdim):
    return ValuesIndices(fx_rows._reduce(imp, x, "amax" if name == "max" else "amin", dim, keepdim), name)


def is_values_indices(node) -> bool:
    torch = _torch()
    t = node.target
    named = (node.op == "call_function" and t in (torch.max, torch.min)) or \
        (node.op == "call_method" and t in ("max", "min"))
    if not named:
        return False
    return "dim" in node.kwargs or (len(node.args) > 1 and isinstance(node.args[1], int))


def _max_min(imp, name, args, kwargs):  # (x) and (x, other)
    from .fx_emit import KVal
    other = _a(args, kwargs, 1, "other")
    if isinstance(other, KVal):
        return imp.binary("maximum" if name == "max" else "minimum", args[0], other)
    if other is None and "dim" not in kwargs:
        return fx_rows._reduce(imp, args[0], "amax" if name == "max" else "amin", None, False)
    return None


def _reduction(imp, loss, reduction, what, batch=None):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return fx_rows._reduce(imp, loss, "mean", None, False)
    if reduction == "sum":
        return fx_rows._reduce(imp, loss, "sum", None, False)
    if reduction == "batchmean" and batch:
        s = fx_rows._reduce(imp, loss, "sum", None, False)
        return imp.binary("mul", s, 1.0 / batch)
    imp.fail(f"{what} with reduction={reduction!r}")


def logsumexp(imp, x, dim, keepdim=False):
    r = len(x.shape)
    if isinstance(dim, (list, tuple)) and len(dim) == 1:
        dim = dim[0]
    if not isinstance(dim, int) or dim % max(r, 1) != r - 1:
        imp.fail(f"logsumexp over dim={dim} of a rank-{r} tensor (kb's is over the last dim)")
    if keepdim and x.shape[-1] == 1 and not x.reshaped:
        return x  # of one element: itself
    lsm = imp.unary(x, imp.prog.log_softmax, rows=True)
    return fx_rows._reduce(imp, imp.binary("sub", x, lsm), "mean", -1, keepdim)


def norm(imp, x, p, dim, keepdim):
    if p in (None, "fro", 2, 2.0):
        s = fx_rows._reduce(imp, imp.binary("mul", x, x), "sum", dim, keepdim)
        return imp.unary(s, imp.prog.sqrt)
    if p in (1, 1.0):
        return fx_rows._reduce(imp, imp.unary(x, imp.prog.abs), "sum", dim, keepdim)
    imp.fail(f"norm with p={p!r} (kb composes p = 1, 2 and 'fro')")


def smooth_l1(imp, a, b, reduction, beta, huber):
    """d = |a - b|, m = min(d, beta): 0.5 m^2 / beta + (d - m) (huber, beta =
    delta: 0.5 m^2 + delta (d - m))."""
    d = imp.unary(imp.binary("sub", a, b), imp.prog.abs)
    if beta == 0:
        return _reduction(imp, d, reduction, "smooth_l1_loss")
    m = imp.unary(d, lambda v: imp.prog.clamp(v, None, float(beta)))
    quad = imp.binary("mul", imp.binary("pow", m, 2.0), 0.5 if huber else 0.5 / beta)
    lin = imp.binary("sub", d, m)
    if huber:
        lin = imp.binary("mul", lin, float(beta))
    return _reduction(imp, imp.binary("add", quad, lin), reduction, "huber_loss" if huber else "smooth_l1_loss")


def kl_div(imp, inp, target, reduction, log_target):
    """target * (log(target) - input), 0 where target is 0 (PyTorch's xlogy)."""
    p = imp.prog
    if log_target:
        loss = imp.binary("mul", imp.unary(target, p.exp), imp.binary("sub", target, inp))
    else:
        logt = imp.unary(target, lambda v: p.log(p.clamp(v, FLT_MIN, None)))
        loss = imp.binary("mul", target, imp.binary("sub", logt, inp))
    return _reduction(imp, loss, reduction, "kl_div", batch=inp.shape[0] if inp.shape else None)


def triplet(imp, a, pos, neg, margin, p, eps, swap, reduction):
    if swap or p not in (2, 2.0) or len(a.shape) != 2:
        imp.fail("triplet_margin_loss other than p=2, swap=False on (N, D) inputs")

    def dist(x, y):  # pairwise_distance: || x - y + eps ||_2 over the last dim
        d = imp.binary("add", imp.binary("sub", x, y), float(eps))
        return imp.unary(fx_rows._reduce(imp, imp.binary("mul", d, d), "sum", -1, False), imp.prog.sqrt)
    loss = imp.binary("add", imp.binary("sub", dist(a, pos), dist(a, neg)), float(margin))
    return _reduction(imp, imp.unary(loss, imp.prog.relu), reduction, "triplet_margin_loss")


def einsum(imp, eq, ops):  # "...k,kn->...n" and "bik,bkj->bij"
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = ops[0]
    if not isinstance(eq, str) or len(ops) != 2 or "->" not in eq or "." in eq:
        imp.fail(f"einsum {eq!r} of {len(ops)} operands (kb takes two whose contraction is a matmul)")
    lhs, out = eq.replace(" ", "").split("->")
    sa, sb = lhs.split(",")
    a, b = ops
    if len(sb) == 2 and sa[-1] == sb[0] and out == sa[:-1] + sb[1] and len(set(sa + sb)) == len(sa) + 1:
        return imp.matmul(a, b)
    if len(sa) == len(sb) == 3 and sa[0] == sb[0] and sa[2] == sb[1] and out == sa[:2] + sb[2]:
        return imp.matmul(a, b)
    imp.fail(f"einsum {eq!r} (kb takes a matmul: '...k,kn->...n' or 'bik,bkj->bij')")


def instance_norm(imp, mod, x):
    if mod.affine or (mod.track_running_stats and not mod.training):
        imp.fail(f"{type(mod).__name__} with affine=True or running statistics "
                 "(kb composes affine=False on instance statistics)")
    if len(x.shape) < 3:
        imp.fail(f"{type(mod).__name__} of a rank-{len(x.shape)} tensor (kb takes (N, C, ...))")
    rows, n = x.shape[0] * x.shape[1], math.prod(x.shape[2:])
    if x.source is None and tuple(imp.kb_shape(x)) != (rows, n) and x.shape[-1] != n:
        imp.fail(f"{type(mod).__name__} of a value kb holds as {tuple(imp.kb_shape(x))}, not as "
                 f"({rows}, {n}) rows (kb has no reshape between kernels)")
    from .fx_emit import KVal
    v = imp.read(x, (rows, n)) if x.source is not None else imp.rows_view(x)
    return KVal(x.shape, value=imp.prog.layer_norm(v, eps=float(mod.eps)), reshaped=x.shape[-1] != n)


def batch_norm(imp, node, mod, x, param_kval):
    p = imp.prog
    if len(x.shape) != 2:
        imp.fail(f"{type(mod).__name__} of a rank-{len(x.shape)} tensor (kb composes (N, C))")
    c = x.shape[1]
    xv = imp.read(x, (x.shape[0], c) if x.source is not None else None)
    if tuple(xv.shape) != tuple(x.shape):
        imp.fail(f"{type(mod).__name__} of a value kb holds as {tuple(xv.shape)}")
    eps = float(mod.eps)
    w = imp.read(param_kval(f"{node.target}.weight", mod.weight), (c,)) if mod.affine else None
    b = imp.read(param_kval(f"{node.target}.bias", mod.bias), (c,)) if mod.affine else None
    if mod.training or not mod.track_running_stats or mod.running_mean is None:
        mean = p.reduce(xv, "mean", axis=0)
        xc = p.bias_add(xv, p.scale(mean, -1.0))
        s = p.rsqrt(p.add_scalar(p.reduce(p.pow(xc, 2.0), "mean", axis=0), eps))  # biased var
        if w is not None:
            s = p.mul(s, w)
        y = imp.vector_value("mul", xc, s, True)
        return imp.result(p.bias_add(y, b) if b is not None else y, x.shape)
    rm = imp.read(param_kval(f"{node.target}.running_mean", mod.running_mean), (c,))
    rv = imp.read(param_kval(f"{node.target}.running_var", mod.running_var), (c,))
    s = p.rsqrt(p.add_scalar(rv, eps))
    if w is not None:
        s = p.mul(s, w)
    shift = p.scale(p.mul(rm, s), -1.0)
    if b is not None:
        shift = p.add(shift, b)
    return imp.result(p.bias_add(imp.vector_value("mul", xv, s, True), shift), x.shape)


def call_function(imp, t, args, kwargs):
    torch = _torch()
    F = torch.nn.functional
    if t is operator.getitem and isinstance(args[0], ValuesIndices):
        if args[1] != 0:
            imp.fail(f"the indices of torch.{args[0].what}(x, dim) (an arg{args[0].what}: kb computes the values)")
        return args[0].values
    if t is getattr and isinstance(args[0], ValuesIndices):
        if args[1] != "values":
            imp.fail(f"the {args[1]} of torch.{args[0].what}(x, dim) (kb computes the values)")
        return args[0].values
    if t in (torch.max, torch.min):
        return _max_min(imp, t.__name__, args, kwargs)
    if t is torch.logsumexp:
        return logsumexp(imp, args[0], _a(args, kwargs, 1, "dim"), _a(args, kwargs, 2, "keepdim", False))
    if t in (torch.norm, getattr(torch.linalg, "norm", None), getattr(torch.linalg, "vector_norm", None)):
        return norm(imp, args[0], _a(args, kwargs, 1, "p", _a(args, kwargs, 1, "ord", None)),
                    _a(args, kwargs, 2, "dim"), _a(args, kwargs, 3, "keepdim", False))
    if t is F.smooth_l1_loss:  # (input, target, size_average, reduce, reduction, beta)
        return smooth_l1(imp, args[0], args[1], _a(args, kwargs, 4, "reduction", "mean"),
                         float(_a(args, kwargs, 5, "beta", 1.0)), False)
    if t is F.huber_loss:  # (input, target, reduction, delta)
        return smooth_l1(imp, args[0], args[1], _a(args, kwargs, 2, "reduction", "mean"),
                         float(_a(args, kwargs, 3, "delta", 1.0)), True)
    if t is F.mse_loss:
        d = imp.binary("sub", args[0], args[1])
        return _reduction(imp, imp.binary("mul", d, d), _a(args, kwargs, 4, "reduction", "mean"), "mse_loss")
    if t is F.kl_div:
        return kl_div(imp, args[0], args[1], _a(args, kwargs, 4, "reduction", "mean"),
                      _a(args, kwargs, 5, "log_target", False))
    if t is F.triplet_margin_loss:
        return triplet(imp, args[0], args[1], args[2], _a(args, kwargs, 3, "margin", 1.0),
                       _a(args, kwargs, 4, "p", 2), _a(args, kwargs, 5, "eps", 1e-6),
                       _a(args, kwargs, 6, "swap", False), kwargs.get("reduction", "mean"))
    if t is torch.einsum:
        return einsum(imp, args[0], list(args[1:]))
    return None


def call_method(imp, m, self_, rest, kwargs):
    if m in ("max", "min"):
        return _max_min(imp, m, (self_,) + tuple(rest), kwargs)
    if m == "logsumexp":
        return logsumexp(imp, self_, _a(rest, kwargs, 0, "dim"), _a(rest, kwargs, 1, "keepdim", False))
    if m == "norm":
        return norm(imp, self_, _a(rest, kwargs, 0, "p", "fro"), _a(rest, kwargs, 1, "dim"),
                    _a(rest, kwargs, 2, "keepdim", False))
    return None


def call_module(imp, node, mod, args, param_kval):
    nn = _torch().nn
    x = args[0] if args else None
    if isinstance(mod, nn.modules.instancenorm._InstanceNorm):
        return instance_norm(imp, mod, x)
    if isinstance(mod, nn.BatchNorm1d):
        return batch_norm(imp, node, mod, x, param_kval)
    if isinstance(mod, (nn.SmoothL1Loss, nn.HuberLoss)):
        huber = isinstance(mod, nn.HuberLoss)
        return smooth_l1(imp, args[0], args[1], mod.reduction, float(mod.delta if huber else mod.beta), huber)
    if isinstance(mod, nn.MSELoss):
        d = imp.binary("sub", args[0], args[1])
        return _reduction(imp, imp.binary("mul", d, d), mod.reduction, "MSELoss")
    if isinstance(mod, nn.KLDivLoss):
        return kl_div(imp, args[0], args[1], mod.reduction, mod.log_target)
    if isinstance(mod, nn.TripletMarginLoss):
        return triplet(imp, args[0], args[1], args[2], mod.margin, mod.p, mod.eps, mod.swap, mod.reduction)
    return None
