"""kb.fx's translation of rotary position embeddings (issue #47).

    x1, x2 = x[..., ::2], x[..., 1::2]
    torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).flatten(-2)
                                      -> kb.rotary (fold_rotary, run by
                                         kb.partition, puts rotary_rows in
                                         its place)

kb.models.rotary's interleaved form, with cos and sin tables of (T, d/2)
for x of (..., T, d). Where x is a linear's output seen as heads,
`y.view(B, T, h, d).transpose(1, 2)`, the rotation moves in front of the
view: rotary_rows of the (B, T, h*d) output (rows b*T + t, position t),
then the same view and transpose. kb imports rotary_rows as kb.rotary on the
linear's (B*T, h*d) rows, which kb-fuse-elementwise makes the matmul's
epilogue: q and k leave their projections rotated, and the eight muls, two
adds, two subs, four strided slices and two stacks are gone. PyTorch runs
rotary_rows (in f32, rounded once, as kb does) where the piece is not kb's.
The rotate_half form (cat of halves) is not matched.
"""

from __future__ import annotations

import operator

from .fx_attention import _arg, _is, recompiled
from .fx_trace import _torch, torch_dtype_of


def rotary_rows(x, cos, sin):
    """x (..., C) with each head's interleaved pairs (2i, 2i + 1) rotated by
    the (P, head_dim / 2) tables at the row's position r mod P (rows: x's
    leading axes flattened, row-major); head_dim = 2 * cos.shape[1]. The
    arithmetic is f32 and the result is rounded once to x's type (kb.rotary's
    definition, docs/design.md)."""
    torch = _torch()
    p, half = cos.shape
    c = x.shape[-1]
    rows = x.reshape(-1, c // (2 * half), half, 2).float()
    pos = torch.arange(rows.shape[0], device=x.device) % p
    cs = cos.float()[pos][:, None, :]
    sn = sin.float()[pos][:, None, :]
    x1, x2 = rows[..., 0], rows[..., 1]
    y = torch.stack((x1 * cs - x2 * sn, x1 * sn + x2 * cs), dim=-1)
    return y.reshape(x.shape).to(x.dtype)


def _strided_half(n):
    """(x, start) for x[..., start::2] with start 0 or 1, else (None, None)."""
    if not _is(n, operator.getitem):
        return None, None
    x, idx = n.args
    if not (isinstance(idx, tuple) and len(idx) == 2 and idx[0] is Ellipsis and isinstance(idx[1], slice)):
        return None, None
    s = idx[1]
    start = s.start or 0
    if s.stop is not None or s.step != 2 or start not in (0, 1):
        return None, None
    return x, start


def _mul_pair(n):
    """The two operands of a mul node (either order), or None."""
    torch = _torch()
    if _is(n, operator.mul, "mul") or _is(n, torch.mul) or _is(n, None, "__mul__"):
        return n.args[0], n.args[1]
    return None


def _factors(m):
    """For m = h * t (either order) with h a strided half x[..., k::2]:
    (h, t); else None."""
    ops = _mul_pair(m)
    if ops is None:
        return None
    a, b = ops
    if _strided_half(a)[0] is not None and hasattr(b, "op") and _strided_half(b)[0] is None:
        return a, b
    if _strided_half(b)[0] is not None and hasattr(a, "op") and _strided_half(a)[0] is None:
        return b, a
    return None


def _rotation(stack):
    """For torch.stack((x1 c - x2 s, x1 s + x2 c), -1) (each product and the
    sum in either order): (x, cos, sin), where x1 = x[..., ::2] and x2 =
    x[..., 1::2]; else None."""
    torch = _torch()
    if not _is(stack, torch.stack):
        return None
    parts, dim = stack.args[0], _arg(stack, 1, "dim", 0)
    if not (isinstance(parts, (list, tuple)) and len(parts) == 2 and dim == -1):
        return None
    first, second = parts
    if not (_is(first, operator.sub, "sub") or _is(first, torch.sub)) or len(first.args) != 2:
        return None
    if not (_is(second, operator.add, "add") or _is(second, torch.add)) or len(second.args) != 2:
        return None
    fa, fb = (_factors(m) for m in first.args)
    if fa is None or fb is None:
        return None
    (x1, cos), (x2, sin) = fa, fb
    (xa, sa), (xb, sb) = _strided_half(x1), _strided_half(x2)
    if xa is not xb or (sa, sb) != (0, 1):
        return None
    sf = [_factors(m) for m in second.args]
    if None in sf:
        return None
    if {(id(h), id(t)) for h, t in sf} != {(id(x1), id(sin)), (id(x2), id(cos))}:
        return None
    return xa, cos, sin


def _heads_view(x):
    """For x = y.view(B, T, h, d).transpose(1, 2) (or reshape) of a rank-3
    y: (y, view node); else (None, None)."""
    if not (_is(x, None, "transpose") and tuple(x.args[1:]) in ((1, 2), (2, 1))):
        return None, None
    v = x.args[0]
    if not (_is(v, None, "view") or _is(v, None, "reshape")):
        return None, None
    y = v.args[0]
    yv, vv = y.meta.get("example_value"), v.meta.get("example_value")
    torch = _torch()
    if not isinstance(yv, torch.Tensor) or not isinstance(vv, torch.Tensor):
        return None, None
    if yv.dim() != 3 or vv.dim() != 4 or [str(s) for s in vv.shape[:2]] != [str(s) for s in yv.shape[:2]]:
        return None, None
    return y, v


def fold_rotary(gm) -> int:
    """Puts rotary_rows in place of each interleaved rotary (the module's
    docstring) whose tables are (T, d/2) for x of (..., T, d), by the nodes'
    example values; in front of the view where x is a linear's output seen
    as heads. Returns how many; the replaced nodes go as dead code."""
    torch = _torch()
    done = 0
    for n in list(gm.graph.nodes):
        if not (_is(n, torch.flatten, "flatten") and _arg(n, 1, "start_dim", 0) == -2
                and _arg(n, 2, "end_dim", -1) == -1):
            continue
        stack = n.args[0]
        rot = _rotation(stack) if hasattr(stack, "op") else None
        if rot is None:
            continue
        x, cos, sin = rot
        xv, cv, sv = (m.meta.get("example_value") for m in (x, cos, sin))
        if not all(isinstance(v, torch.Tensor) for v in (xv, cv, sv)):
            continue
        if (xv.dim() < 2 or cv.dim() != 2 or list(sv.shape) != list(cv.shape)
                or str(cv.shape[0]) != str(xv.shape[-2]) or str(2 * cv.shape[1]) != str(xv.shape[-1])):
            continue
        y, view = _heads_view(x)
        g = gm.graph
        with g.inserting_before(n):
            if y is not None:
                r = g.call_function(rotary_rows, (y, cos, sin))
                r.meta = dict(y.meta)
                v2 = g.call_method(view.target, (r,) + tuple(view.args[1:]), dict(view.kwargs))
                v2.meta = dict(view.meta)
                out = g.call_method("transpose", (v2,) + tuple(x.args[1:]))
                out.meta = dict(x.meta)
            else:
                out = g.call_function(rotary_rows, (x, cos, sin))
                out.meta = dict(n.meta)
        n.replace_all_uses_with(out)
        g.erase_node(n)
        done += 1
    return recompiled(gm, done)


def call_function(imp, t, args, kwargs):
    """kb.rotary for rotary_rows, or None for another function."""
    if t is not rotary_rows:
        return None
    from .fx_emit import KVal
    x, cos, sin = args
    if not all(isinstance(a, KVal) for a in (x, cos, sin)):
        imp.fail("rotary_rows of a non-tensor")
    xv = imp.rows_view(x)
    if cos.dtype != sin.dtype:
        sin = imp.convert(sin, torch_dtype_of(cos.dtype))
    if cos.dtype not in ("f32", xv.dtype):
        to = _torch().float32
        cos, sin = imp.convert(cos, to), imp.convert(sin, to)
    out = imp.prog.rotary(xv, imp.read(cos), imp.read(sin))
    return imp.result(out, x.shape)
