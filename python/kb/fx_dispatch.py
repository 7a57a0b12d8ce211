"""kb.fx's dispatch: which importer method (fx_emit.py) each PyTorch node
becomes. `Dispatch.call` takes a torch function or Tensor method (asking
fx_activations.py and fx_compose.py first, then fx_rows.py and
fx_attention.py for what this file does not name), `Dispatch.call_module` an nn.Module; each returns the
translated KVal or raises KbImportError naming the op. import_torch (fx.py)
makes one Dispatch per import, after the example run that gives every
node's real result (`real`: node -> tensor or number).
"""

from __future__ import annotations

import operator

from .fx_activations import activation_function, activation_method, activation_module
from . import fx_rows  # norms and reductions over the last dim
from . import fx_attention  # scaled_dot_product_attention, N-D @ N-D
from . import fx_rotary  # rotary_rows (fold_rotary's)
from . import fx_compose  # compositions: max/min with dim, logsumexp, norms, losses, einsum


def _norm_dim(d, rank):
    return d + rank if d < 0 else d


class Dispatch:
    """The translation tables of one import. `imp` is the fx_emit.Importer,
    `real` the example run's result of each node, `param_kval(qualname, t)`
    the KVal of a module parameter (recording its use)."""

    def __init__(self, imp, real, param_kval):
        self.imp = imp
        self.real = real
        self.param_kval = param_kval
        self.torch = torch = imp.torch
        self.F = F = imp.F
        self.unary_fns = {
            torch.relu: "relu", F.relu: "relu", torch.sigmoid: "sigmoid", torch.tanh: "tanh",
            torch.exp: "exp", F.silu: "silu", torch.nn.functional.sigmoid if hasattr(F, "sigmoid") else None: "sigmoid",
            torch.nn.functional.tanh if hasattr(F, "tanh") else None: "tanh",
        }
        self.unary_fns.pop(None, None)
        self.unary_methods = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp"}
        self.identity_methods = {"contiguous", "clone", "detach"}
        self.convert_methods = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16,
                                "double": torch.float64}
        self.arith_fns = {operator.add: "add", torch.add: "add", operator.sub: "sub", torch.sub: "sub",
                          operator.mul: "mul", torch.mul: "mul", operator.truediv: "div", torch.div: "div",
                          operator.pow: "pow", torch.pow: "pow", operator.iadd: "add", operator.imul: "mul",
                          operator.isub: "sub", operator.itruediv: "div"}
        self.arith_methods = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow",
                              "__add__": "add", "__mul__": "mul", "__sub__": "sub", "__truediv__": "div"}

    def call(self, node, target, args, kwargs, kind):
        imp, real, torch, F = self.imp, self.real, self.torch, self.F
        p = imp.prog
        if kind == "call_method":
            self_ = args[0]
            rest = args[1:]
            m = target
            r = activation_method(imp, m, self_, rest, kwargs)
            if r is not None:
                return r
            r = fx_compose.call_method(imp, m, self_, rest, kwargs)
            if r is not None:
                return r
            if m in self.unary_methods:
                return imp.unary(self_, getattr(p, self.unary_methods[m]))
            if m in self.identity_methods:
                return self_
            if m in self.convert_methods:
                return imp.convert(self_, self.convert_methods[m], explicit=True)
            if m == "to":
                return imp.to(self_, rest, kwargs)
            if m in self.arith_methods:
                if "alpha" in kwargs:
                    imp.fail("add/sub with alpha=")
                return imp.binary(self.arith_methods[m], self_, rest[0])
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
                return self.transpose_like(self_, m, rest, kwargs)
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
        r = fx_compose.call_function(imp, t, args, kwargs)
        if r is not None:
            return r
        if t in self.unary_fns:
            if kwargs.get("inplace"):
                pass
            return imp.unary(args[0], getattr(p, self.unary_fns[t]))
        if t in self.arith_fns:
            if kwargs.get("alpha", 1) != 1:
                imp.fail("add/sub with alpha=")
            a, b = args[0], args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("exponent"))
            if t is torch.div and kwargs.get("rounding_mode"):
                imp.fail("div with rounding_mode")
            return imp.binary(self.arith_fns[t], a, b)
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
            return self.transpose_like(args[0], t.__name__, list(args[1:]), kwargs)
        if t is getattr and args[1] == "mT":
            return imp.transpose_last2(args[0])
        if t is getattr and args[1] == "T" and len(args[0].shape) == 2:
            return imp.transpose_last2(args[0])
        r = (fx_rows.call_function(imp, t, args, kwargs) or fx_attention.call_function(imp, t, args, kwargs)
             or fx_rotary.call_function(imp, t, args, kwargs))
        if r is not None:
            return r
        imp.fail(imp._target_name(node))

    def transpose_like(self, x, name, rest, kwargs):
        imp = self.imp
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
            if r == 4 and dims == [1, 2]:
                return imp.swap_heads(x)
            imp.fail(f"transpose({d0}, {d1}) of a rank-{r} tensor (kb swaps only the last two axes)")
        if name == "permute":
            dims = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
            dims = [_norm_dim(d, r) for d in dims]
            if dims == list(range(r)):
                return x
            if dims == list(range(r - 2)) + [r - 1, r - 2]:
                return imp.transpose_last2(x)
            if dims == [0, 2, 1, 3]:
                return imp.swap_heads(x)
            imp.fail(f"permute{tuple(dims)} (kb swaps only the last two axes)")

    def call_module(self, node, mod, args, kwargs):
        imp, real, torch = self.imp, self.real, self.torch
        p = imp.prog
        nn = torch.nn
        x = args[0] if args else None
        r = activation_module(imp, mod, x)
        if r is not None:
            return r
        if isinstance(mod, nn.Linear):
            w = self.param_kval(f"{node.target}.weight", mod.weight)
            b = self.param_kval(f"{node.target}.bias", mod.bias) if mod.bias is not None else None
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
        r = fx_rows.call_module(imp, node, mod, x, self.param_kval)
        if r is not None:
            return r
        r = fx_compose.call_module(imp, node, mod, args, self.param_kval)
        if r is not None:
            return r
        imp.fail(f"the module {type(mod).__module__}.{type(mod).__name__} ({node.target})")
