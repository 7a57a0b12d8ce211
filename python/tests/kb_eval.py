"""A float64 evaluator of kb program text (kb's op semantics, KBOps.td)
for test_fx_compose.py: inputs from the import's signature; an op it does
not know raises, so no test passes by skipping one."""

import re

import torch

F = torch.nn.functional
_NUM = r"([-+0-9.eE]+|inf|-inf)"
_UNARY = {"relu": torch.relu, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "abs": torch.abs,
          "log": torch.log, "exp": torch.exp, "neg": torch.neg, "sigmoid": torch.sigmoid,
          "tanh": torch.tanh, "log_softmax": lambda x: F.log_softmax(x, -1),
          "softmax": lambda x: F.softmax(x, -1), "transpose": lambda x: x.transpose(-1, -2)}
_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
           "minimum": torch.minimum, "maximum": torch.maximum, "bias_add": torch.add}


def _shape(ty):
    dims = ty.split("<", 1)[1].rsplit("x", 1)[0]
    return tuple(int(d) for d in dims.split("x")) if dims else ()


def _attr(text, name):
    m = re.search(name + r"\(" + _NUM + r"\)", text)
    return float(m.group(1)) if m else None


def run(imported, inputs, module=None):
    """The program's results (float64), from `inputs` (the function's
    arguments) and `module`'s parameters and buffers."""
    env = {}
    text = imported.program.mlir()
    for spec in imported.signature["inputs"]:
        kind, ident = spec["source"]
        if kind == "arg":
            t = inputs[ident]
        else:
            t = dict(module.named_parameters()).get(ident)
            t = dict(module.named_buffers())[ident] if t is None else t
        env[spec["buffer"]] = t.detach().double().reshape(spec["shape"])
    for line in text.splitlines()[1:]:
        line = line.strip()
        if line.startswith("return"):
            names = re.findall(r"%(\w+)", line.split(":")[0])
            return [env[n] for n in names]
        m = re.match(r"%(\w+) = kb\.(\w+) (.*) : (.*)$", line)
        if not m:
            continue
        res, op, body, types = m.groups()
        args = [env[n] for n in re.findall(r"%(\w+)", body)]
        if op in _UNARY:
            r = _UNARY[op](args[0])
        elif op in _BINARY:
            r = _BINARY[op](args[0], args[1])
        elif op == "scale":
            r = args[0] * float(re.search(r"by " + _NUM, body).group(1))
        elif op == "add_scalar":
            r = args[0] + _attr(body, "value")
        elif op == "pow":
            r = args[0] ** _attr(body, "exponent")
        elif op == "clamp":
            r = torch.clamp(args[0], _attr(body, "min"), _attr(body, "max"))
        elif op == "gelu":
            r = F.gelu(args[0], approximate="tanh" if "approx(tanh)" in body else "none")
        elif op == "matmul":
            b = args[1].transpose(-1, -2) if "transpose_b" in body else args[1]
            r = args[0] @ b
        elif op == "layer_norm":
            n = args[0].shape[-1]
            r = F.layer_norm(args[0], (n,), *(args[1:] + [None] * (3 - len(args))), eps=_attr(body, "eps"))
        elif op == "reduce":
            kind = re.search(r" (sum|mean|max|min)", " " + body).group(1)
            fn = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax, "min": torch.amin}[kind]
            ax = re.search(r"axis\((\d+)\)", body)
            if " all" in body:
                r = fn(args[0])
            else:
                r = fn(args[0], dim=int(ax.group(1)) if ax else -1, keepdim="keepdim" in body)
        else:
            raise NotImplementedError(f"kb_eval: kb.{op}")
        env[res] = r.reshape(_shape(types.split("->")[-1].split(",")[-1].strip()))
    raise AssertionError("no return")
