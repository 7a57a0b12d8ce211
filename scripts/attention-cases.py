#!/usr/bin/env python3
"""Writes the fused attention kernel's GPU check cases (issue #46) as kb
programs, one kb.attention each, into the folder given: the shapes that are
not tile multiples (S = 1000, Sq != Sk), causal, the additive mask ([Sq, Sk]
and full), rank 3 and 4, head dims 64 and 128 (and Dv != D), f32 (tf32),
bf16 and f16, with and without lse. scripts/build-attention.sh compiles
them; kb-run checks each against its float64 reference."""
import math
import sys
from pathlib import Path

DT = {"f32": "f32", "bf16": "bf16", "f16": "f16"}


def t(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def case(lead, sq, sk, d, dv, dtype, causal=False, mask=None, lse=False):
    """mask: None, "row" ([Sq, Sk]) or "full" ([..., Sq, Sk])."""
    q, k, v = (t(lead + [sq, d], dtype), t(lead + [sk, d], dtype),
               t(lead + [sk, dv], dtype))
    out = t(lead + [sq, dv], dtype)
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    in_types = [q, k, v]
    mask_part = ""
    if mask:
        mt = t(([] if mask == "row" else lead) + [sq, sk], dtype)
        args.append(f"%m: {mt}")
        in_types.append(mt)
        mask_part = " mask(%m)"
    scale = 1.0 / math.sqrt(d)
    attrs = f" scale({scale:.9e})" + (" causal" if causal else "")
    if dtype == "f32":
        attrs += " precision(tf32)"
    results = [out]
    lhs = "%o"
    if lse:
        results.append(t(lead + [sq], "f32"))
        lhs = "%o, %lse"
        attrs += " lse"
    ret_vals = "%o, %lse" if lse else "%o"
    res = ", ".join(results)
    return (f"func.func @attention({', '.join(args)}) -> ({res}) {{\n"
            f"  {lhs} = kb.attention %q, %k, %v{mask_part}{attrs} : "
            f"{', '.join(in_types)} -> {res}\n"
            f"  return {ret_vals} : {res}\n}}\n")


def written_out(bh, s, d):
    """matmul q k^T -> scale -> causal_mask -> softmax -> matmul by v, which
    kb-fuse-attention turns into one kb.attention."""
    x, sc = t([bh, s, d], "f32"), t([bh, s, s], "f32")
    return (f"func.func @attention(%q: {x}, %k: {x}, %v: {x}) -> {x} {{\n"
            f"  %0 = kb.matmul %q, %k precision(tf32) transpose_b : {x}, {x} -> {sc}\n"
            f"  %1 = kb.scale %0 by {1.0 / math.sqrt(d)} : {sc}\n"
            f"  %2 = kb.causal_mask %1 : {sc}\n"
            f"  %3 = kb.softmax %2 : {sc}\n"
            f"  %4 = kb.matmul %3, %v precision(tf32) : {sc}, {x} -> {x}\n"
            f"  return %4 : {x}\n}}\n")


CASES = {
    # tile multiples, rank 3
    "attn-f32-bh8-s128-d64": case([8], 128, 128, 64, 64, "f32"),
    # S = 1000, causal, lse, head dim 128
    "attn-f32-bh4-s1000-d128-causal-lse": case([4], 1000, 1000, 128, 128, "f32", causal=True, lse=True),
    # Sq != Sk with an [Sq, Sk] additive mask
    "attn-f32-bh4-sq100-sk300-d64-mask": case([4], 100, 300, 64, 64, "f32", mask="row"),
    # rank 4, bf16, causal, lse, head dim 128
    "attn-bf16-b2h4-s1000-d128-causal-lse": case([2, 4], 1000, 1000, 128, 128, "bf16", causal=True, lse=True),
    # rank 4, f16, full mask
    "attn-f16-b2h2-s1000-d64-fullmask": case([2, 2], 1000, 1000, 64, 64, "f16", mask="full"),
    # causal with Sq > Sk (rows past Sk see every key), bf16 head dim 64
    "attn-bf16-bh4-sq1000-sk520-d64-causal": case([4], 1000, 520, 64, 64, "bf16", causal=True),
    # Dv != D, f16, lse
    "attn-f16-bh4-s384-d128-dv64-lse": case([4], 384, 384, 128, 64, "f16", lse=True),
    # f32 causal Sq < Sk, head dim 64, odd sizes
    "attn-f32-b1h3-sq77-sk1000-d64-causal": case([1, 3], 77, 1000, 64, 64, "f32", causal=True),
    # the written-out chain, fused by kb-fuse-attention
    "attn-f32-bh4-s500-d64-written-causal": written_out(4, 500, 64),
}


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/gpu/attention/programs")
    out.mkdir(parents=True, exist_ok=True)
    for name, text in CASES.items():
        (out / f"{name}.mlir").write_text(text)
    print(f"{len(CASES)} attention programs in {out}")


if __name__ == "__main__":
    main()
