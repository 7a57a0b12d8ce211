"""The importer's activations and simple math (issue #45): the PyTorch calls
that become kb.softplus, kb.elu, kb.selu, kb.hardtanh, kb.hardsigmoid,
kb.hardswish, kb.mish, kb.softsign, kb.abs, kb.neg, kb.sqrt, kb.rsqrt,
kb.log, kb.clamp, kb.minimum and kb.maximum, in their three forms: the
function (F.softplus, torch.clamp / torch.clip, torch.minimum, ...), the
Tensor method (x.clamp(...), x.abs(), x.minimum(y), ...) and the nn.Module
(nn.Softplus, nn.ELU, nn.Hardtanh, nn.ReLU6, ...). fx_dispatch.py asks these first;
each returns None for a call that is not one of them.
"""

from __future__ import annotations

import operator
from typing import Any, Optional

# Tensor methods and torch functions of one operand and no constants: the
# kb.Program method of the same job.
_PLAIN = {"abs": "abs", "neg": "neg", "negative": "neg", "sqrt": "sqrt",
          "rsqrt": "rsqrt", "log": "log"}


def _arg(args, kwargs, i, name, default):
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


def _number(imp, v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        imp.fail(f"{what} given a {type(v).__name__} (kb takes a constant number here)")
    return float(v)


def _clamp(imp, x, lo, hi):
    from .fx_emit import KVal
    for b, name in ((lo, "min"), (hi, "max")):
        if isinstance(b, KVal):
            imp.fail(f"clamp with a tensor {name} (kb.clamp takes constants; "
                     f"torch.minimum / torch.maximum take tensors)")
    lo = None if lo is None else _number(imp, lo, "clamp min")
    hi = None if hi is None else _number(imp, hi, "clamp max")
    if lo is None and hi is None:
        imp.fail("clamp with neither min nor max")
    p = imp.prog
    return imp.unary(x, lambda v: p.clamp(v, lo, hi))


def _with_params(imp, x, name, args, kwargs, first):
    """F.softplus / F.elu / F.hardtanh with their constants from args[first:]
    or keywords, PyTorch's defaults otherwise."""
    p = imp.prog
    if name == "softplus":
        beta = _number(imp, _arg(args, kwargs, first, "beta", 1.0), "softplus beta")
        thr = _number(imp, _arg(args, kwargs, first + 1, "threshold", 20.0), "softplus threshold")
        return imp.unary(x, lambda v: p.softplus(v, beta, thr))
    if name == "elu":
        alpha = _number(imp, _arg(args, kwargs, first, "alpha", 1.0), "elu alpha")
        return imp.unary(x, lambda v: p.elu(v, alpha))
    if name == "hardtanh":
        lo = _number(imp, _arg(args, kwargs, first, "min_val", -1.0), "hardtanh min_val")
        hi = _number(imp, _arg(args, kwargs, first + 1, "max_val", 1.0), "hardtanh max_val")
        return imp.unary(x, lambda v: p.hardtanh(v, lo, hi))
    raise AssertionError(name)


def activation_function(imp, t, args, kwargs) -> Optional[Any]:
    """A call_function node's target `t`, or None when it is not ours."""
    torch = imp.torch
    F = torch.nn.functional
    p = imp.prog
    plain = {torch.abs: "abs", operator.abs: "abs", torch.neg: "neg", operator.neg: "neg",
             torch.sqrt: "sqrt", torch.rsqrt: "rsqrt", torch.log: "log",
             F.selu: "selu", torch.selu: "selu", F.hardsigmoid: "hardsigmoid",
             F.hardswish: "hardswish", F.mish: "mish", F.softsign: "softsign"}
    if t in plain:
        return imp.unary(args[0], getattr(p, plain[t]))
    if t is F.softplus:
        return _with_params(imp, args[0], "softplus", args, kwargs, 1)
    if t is F.elu:
        return _with_params(imp, args[0], "elu", args, kwargs, 1)
    if t is F.hardtanh:
        return _with_params(imp, args[0], "hardtanh", args, kwargs, 1)
    if t is F.relu6:
        return imp.unary(args[0], lambda v: p.hardtanh(v, 0.0, 6.0))
    if t in (torch.clamp, torch.clip):
        return _clamp(imp, args[0], _arg(args, kwargs, 1, "min", None),
                      _arg(args, kwargs, 2, "max", None))
    if t in (torch.minimum, torch.maximum):
        return imp.binary(t.__name__, args[0], _arg(args, kwargs, 1, "other", None))
    return None


def activation_method(imp, m, self_, rest, kwargs) -> Optional[Any]:
    """x.m(*rest, **kwargs), or None when it is not ours."""
    p = imp.prog
    if m in _PLAIN:
        return imp.unary(self_, getattr(p, _PLAIN[m]))
    if m in ("clamp", "clip"):
        return _clamp(imp, self_, _arg(rest, kwargs, 0, "min", None),
                      _arg(rest, kwargs, 1, "max", None))
    if m == "clamp_min":
        return _clamp(imp, self_, _arg(rest, kwargs, 0, "min", None), None)
    if m == "clamp_max":
        return _clamp(imp, self_, None, _arg(rest, kwargs, 0, "max", None))
    if m in ("minimum", "maximum"):
        return imp.binary(m, self_, _arg(rest, kwargs, 0, "other", None))
    return None


def activation_module(imp, mod, x) -> Optional[Any]:
    """A call_module of `mod` on x, or None when it is not ours."""
    nn = imp.torch.nn
    p = imp.prog
    if isinstance(mod, nn.Softplus):
        return imp.unary(x, lambda v: p.softplus(v, float(mod.beta), float(mod.threshold)))
    if isinstance(mod, nn.ELU):
        return imp.unary(x, lambda v: p.elu(v, float(mod.alpha)))
    if isinstance(mod, nn.Hardtanh):  # nn.ReLU6 is a Hardtanh(0, 6)
        return imp.unary(x, lambda v: p.hardtanh(v, float(mod.min_val), float(mod.max_val)))
    simple = ((nn.SELU, "selu"), (nn.Hardsigmoid, "hardsigmoid"), (nn.Hardswish, "hardswish"),
              (nn.Mish, "mish"), (nn.Softsign, "softsign"))
    for cls, name in simple:
        if isinstance(mod, cls):
            return imp.unary(x, getattr(p, name))
    return None
