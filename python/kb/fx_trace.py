"""torch.fx for the importer (fx.py): tracing a module or function, and
finding the line of the user's code that made a node (for the importer's
errors). Only the torch.fx API common to torch 1.13 and 2.x is used.
"""

from __future__ import annotations

from .ir import KbError


class KbImportError(KbError):
    """An op (or a use of one) the importer does not translate; `node` is
    the fx node it was (None when the error is not one node's)."""

    def __init__(self, msg, node=None):
        super().__init__(msg)
        self.node = node


def _torch():
    try:
        import torch
        import torch.fx
    except ImportError:  # pragma: no cover - CI has python3-torch
        raise KbError("the PyTorch importer needs torch (python3-torch)")
    return torch


def torch_dtype_of(name: str):
    """The torch dtype of a kb element type name (f32, f16, bf16)."""
    torch = _torch()
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[name]


def _frames(stack_trace: str):
    """(file, line, function, code) of each frame of an fx stack trace."""
    out = []
    lines = stack_trace.splitlines()
    for i, l in enumerate(lines):
        s = l.strip()
        if not s.startswith("File "):
            continue
        try:
            fname = s.split('"')[1]
            rest = s.split('"', 2)[2]
            lineno = int(rest.split("line", 1)[1].split(",")[0].strip())
            func = rest.split(" in ", 1)[1].strip() if " in " in rest else ""
        except (IndexError, ValueError):
            continue
        code = ""
        if i + 1 < len(lines) and not lines[i + 1].strip().startswith("File "):
            code = lines[i + 1].strip()
        out.append((fname, lineno, func, code))
    return out


def where_in_user_code(node, names=()) -> str:
    """The user's file:line (and code) of an fx node, from its stack trace:
    the innermost frame outside torch, kb and the interpreter, preferring
    one in the traced forward (or function)."""
    st = getattr(node, "stack_trace", None) or node.meta.get("stack_trace")
    if not st:
        return ""
    import os
    torch_dir = os.path.dirname(_torch().__file__)
    kb_dir = os.path.dirname(os.path.abspath(__file__))
    frames = [f for f in _frames(st)
              if not f[0].startswith(torch_dir) and not f[0].startswith(kb_dir)
              and not f[0].startswith("<frozen") and "/_pytest/" not in f[0]
              and "/pluggy/" not in f[0]]
    if not frames:
        return ""
    # torch 1.x lists the innermost frame first, torch 2.x last.
    major = int(_torch().__version__.split(".")[0])
    if major >= 2:
        frames = frames[::-1]
    pick = next((f for f in frames if f[2] in names), frames[0])
    fname, lineno, func, code = pick
    if not code:
        try:
            import linecache
            code = linecache.getline(fname, lineno).strip()
        except Exception:
            code = ""
    return f"{fname}:{lineno} (in {func}): {code}"


def trace(fn_or_module):
    torch = _torch()
    import torch.fx as fx

    class _Tracer(fx.Tracer):
        pass

    # A graph already traced (kb.partition's pieces of a Dynamo graph) is
    # imported as it is: its nodes are the caller's.
    if isinstance(fn_or_module, fx.GraphModule) and getattr(fn_or_module, "_kb_pretraced", False):
        return fn_or_module
    tracer = _Tracer()
    tracer.record_stack_traces = True
    if isinstance(fn_or_module, torch.nn.Module):
        root = fn_or_module
        name = type(fn_or_module).__name__
    else:
        root = torch.nn.Module()
        name = getattr(fn_or_module, "__name__", "fn")
    try:
        graph = tracer.trace(fn_or_module)
    except Exception as e:  # tracing control flow on tensor values, etc.
        raise KbImportError(f"torch.fx cannot trace {name}: {type(e).__name__}: {e}")
    if not isinstance(fn_or_module, torch.nn.Module):
        root = tracer.root  # holds the tensor constants the code made
    return fx.GraphModule(root, graph, name)
