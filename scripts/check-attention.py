#!/usr/bin/env python3
"""Runs each fused attention bundle (scripts/build-attention.sh) on the GPU
through kb.load and checks it against a float64 reference computed here
with torch: softmax(scale q k^T + mask (+ -inf above the diagonal when
causal)) v, a row with every key masked giving 0 (kb's convention; PyTorch
gives NaN), and the natural log-sum-exp. Until kb-run's own float64
reference of kb.attention lands (issue #46, attn-op), this is the check.

  python3 scripts/check-attention.py build/gpu/attention/bundles/*

Prints one line a bundle (max abs error of O and lse, the bound) and exits
1 if any fails. The bound is for inputs drawn N(0, 1): the products run on
tensor cores in tf32 (10-bit mantissa) or the 16-bit type, with P rounded
to that type, f32 accumulation.
"""
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import torch  # noqa: E402

import kb  # noqa: E402

BOUND = {"f32": 4e-3, "f16": 4e-3, "bf16": 3e-2}
DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def reference(q, k, v, mask, scale, causal):
    q, k, v = (x.double() for x in (q, k, v))
    s = scale * (q @ k.transpose(-1, -2))
    if mask is not None:
        s = s + mask.double()
    if causal:
        sq, sk = s.shape[-2], s.shape[-1]
        above = torch.ones(sq, sk, dtype=torch.bool, device=s.device).triu(1)
        s = s.masked_fill(above, -math.inf)
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    p = torch.exp(s - m)
    l = p.sum(-1, keepdim=True)
    o = torch.where(l > 0, (p / l) @ v, torch.zeros((), dtype=torch.float64, device=s.device))
    lse = torch.where(l > 0, m + torch.log(l), torch.full_like(l, -math.inf)).squeeze(-1)
    return o, lse


def check(path: Path, gen: torch.Generator) -> bool:
    manifest = json.loads((path / "manifest.json").read_text())
    (op,) = [p for p in manifest["program"] if p["op"] == "kb.attention"]
    bufs = {b["name"]: b for b in manifest["buffers"]}
    ins = [b for b in manifest["buffers"] if b["role"] == "input"]
    tensors = {}
    for b in ins:
        x = torch.randn(b["shape"], generator=gen, dtype=torch.float32)
        tensors[b["name"]] = x.to(DTYPE[b.get("dtype", "f32")]).cuda()
    attrs = op["attrs"]
    mask = None
    if attrs.get("has_mask"):
        mname = op["inputs"][3]
        m = tensors[mname].float()
        # Some -inf entries, and one query row with every key masked.
        m = torch.where(torch.rand(m.shape, generator=gen).cuda() < 0.1,
                        torch.tensor(-math.inf, device="cuda"), m)
        m[..., 1, :] = -math.inf
        tensors[mname] = m.to(tensors[mname].dtype)
        mask = tensors[mname]
    loaded = kb.load(path)
    outs = loaded(*[tensors[b["name"]] for b in ins])
    if not isinstance(outs, tuple):
        outs = (outs,)
    torch.cuda.synchronize()
    q, k, v = (tensors[n] for n in op["inputs"][:3])
    ro, rlse = reference(q, k, v, mask, attrs["scale"], attrs.get("causal", False))
    names = [b["name"] for b in manifest["buffers"] if b["role"] == "output"]
    got = dict(zip(names, outs))
    dtype = bufs[op["output"]].get("dtype", "f32")
    err = (got[op["output"]].double() - ro).abs().max().item()
    ok = math.isfinite(err) and err <= BOUND[dtype]
    line = f"{path.name}: O max abs err {err:.3e} (bound {BOUND[dtype]:.0e})"
    if attrs.get("lse"):
        lse_name = attrs.get("lse_output", op.get("lse_output"))
        gl = got[lse_name].double()
        finite = torch.isfinite(rlse)
        lerr = (gl[finite] - rlse[finite]).abs().max().item()
        same_inf = bool(torch.equal(torch.isfinite(gl), finite))
        ok = ok and math.isfinite(lerr) and lerr <= BOUND[dtype] and same_inf
        line += f", lse max abs err {lerr:.3e}"
    print(("OK   " if ok else "FAIL ") + line, flush=True)
    return ok


def main():
    gen = torch.Generator().manual_seed(46)
    results = [check(Path(p), gen) for p in sys.argv[1:]]
    print(f"{sum(results)} of {len(results)} bundles OK")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
