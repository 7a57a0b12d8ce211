#!/usr/bin/env python3
"""Writes the benchmark programs (kb dialect) into a folder, one .mlir each.

Usage: bench/programs.py OUT_DIR [--only matmul|softmax|fusion|activations|norms|reductions|...]
Each program is compiled by scripts/build-bench.sh into a bundle; fusion
programs also get an unfused bundle (<name>-unfused) to time against."""
import os
import sys

def t(shape, dtype="f32"):
    return "tensor<" + "x".join(map(str, shape)) + "x" + dtype + ">"

def half_matmul(m, n, k, dtype, trans_b=True, out=None, config=None):
    """A 16-bit matmul (no precision keyword: tensor cores in its type, f32
    accumulation), its result in `out` (default the operands' type)."""
    cfg = f" {{config = #kb.config<{config}>}}" if config else ""
    at = t((m, k), dtype)
    bt = t((n, k) if trans_b else (k, n), dtype)
    ct = t((m, n), out or dtype)
    tb = " transpose_b" if trans_b else ""
    return f"""func.func @matmul(%a: {at} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}}) -> ({ct} {{kb.name = "c"}}) {{
  %0 = kb.matmul %a, %b{tb}{cfg} : {at}, {bt} -> {ct}
  return %0 : {ct}
}}
"""

def half_softmax(rows, cols, dtype):
    ty = t((rows, cols), dtype)
    return f"""func.func @softmax(%x: {ty} {{kb.name = "x"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.softmax %x : {ty}
  return %0 : {ty}
}}
"""

def half_bias_gelu_dropout(rows, cols, dtype, p=0.3, seed=42):
    ty, bt = t((rows, cols), dtype), t((cols,), dtype)
    return f"""func.func @bias_gelu_dropout(%x: {ty} {{kb.name = "x"}}, %b: {bt} {{kb.name = "bias"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.bias_add %x, %b : {ty}, {bt} -> {ty}
  %1 = kb.gelu %0 approx(tanh) : {ty}
  %2 = kb.dropout %1 p({p}) seed({seed}) : {ty}
  return %2 : {ty}
}}
"""

def half_linear_bias_gelu(m, n, k, dtype):
    at, wt, ct, vt = t((m, k), dtype), t((n, k), dtype), t((m, n), dtype), t((n,), dtype)
    return f"""func.func @linear_bias_gelu(%x: {at} {{kb.name = "x"}}, %w: {wt} {{kb.name = "w"}}, %bias: {vt} {{kb.name = "bias"}}) -> ({ct} {{kb.name = "y"}}) {{
  %0 = kb.matmul %x, %w transpose_b : {at}, {wt} -> {ct}
  %1 = kb.bias_add %0, %bias : {ct}, {vt} -> {ct}
  %2 = kb.gelu %1 approx(tanh) : {ct}
  return %2 : {ct}
}}
"""

def half_linear_gated(m, n, k, dtype, epilogue, config=None):
    """The Llama MLP's fused linears as the kb backend cuts them (session 31's
    profile): "silu_mul" y = silu(g) * (x W^T) (w3 with the gate w1's
    output g), "add" y = x W^T + r (w2 with the residual r)."""
    cfg = f" {{config = #kb.config<{config}>}}" if config else ""
    at, wt, ct = t((m, k), dtype), t((n, k), dtype), t((m, n), dtype)
    other = {"silu_mul": "g", "add": "r"}[epilogue]
    body = (f"  %1 = kb.silu %g : {ct}\n  %2 = kb.mul %1, %0 : {ct}" if epilogue == "silu_mul"
            else f"  %2 = kb.add %0, %r : {ct}")
    return f"""func.func @linear_{epilogue}(%x: {at} {{kb.name = "x"}}, %w: {wt} {{kb.name = "w"}}, %{other}: {ct} {{kb.name = "{other}"}}) -> ({ct} {{kb.name = "y"}}) {{
  %0 = kb.matmul %x, %w transpose_b{cfg} : {at}, {wt} -> {ct}
{body}
  return %2 : {ct}
}}
"""

def activations(rows, cols, dtype="f32"):
    """A long fused chain of every activation of issue #45 (17 ops, two
    inputs), its values kept in the domains where each op's error bound is
    finite (sqrt, log and rsqrt see positive values)."""
    ty = t((rows, cols), dtype)
    ops = ["kb.softplus %x beta(1.0) threshold(20.0)", "kb.mish %0", "kb.maximum %1, %w",
           "kb.hardswish %2", "kb.selu %3", "kb.elu %4 alpha(0.5)",
           "kb.hardtanh %5 min_val(-1.0) max_val(2.0)", "kb.softsign %6", "kb.abs %7",
           "kb.clamp %8 min(0.001)", "kb.sqrt %9", "kb.log %10", "kb.neg %11",
           "kb.rsqrt %12", "kb.hardsigmoid %13", "kb.minimum %14, %x", "kb.clamp %15 max(0.9)"]
    body = "".join(f"  %{i} = {o} : {ty}\n" for i, o in enumerate(ops))
    return (f'func.func @activations(%x: {ty} {{kb.name = "x"}}, %w: {ty} {{kb.name = "w"}}) -> ({ty} {{kb.name = "y"}}) {{\n'
            + body + f"  return %{len(ops) - 1} : {ty}\n}}\n")

CLUSTER = 'strategy = "cluster"'
ONLINE = 'strategy = "online"'

def norm_config(config):
    """A row kernel's hand-set #kb.config (e.g. 'strategy = "online"')."""
    return f" {{config = #kb.config<{config}>}}" if config else ""

def layernorm(rows, cols, dtype="f32", residual=True, dropout=False, config=None):
    """x (+ residual) -> kb.layer_norm with weight and bias: one kernel.
    dropout: the transformer's residual + dropout(x) in front (issue #45's
    fused prologue)."""
    ty, vt = t((rows, cols), dtype), t((cols,), dtype)
    res_arg = f', %r: {ty} {{kb.name = "residual"}}' if residual else ""
    body = f"  %0 = kb.add %x, %r : {ty}\n" if residual else ""
    if dropout:
        body = (f"  %d = kb.dropout %x p(0.1) seed(7) : {ty}\n"
                f"  %0 = kb.add %d, %r : {ty}\n")
    x = "%0" if residual else "%x"
    return f"""func.func @layernorm(%x: {ty} {{kb.name = "x"}}{res_arg}, %w: {vt} {{kb.name = "weight"}}, %b: {vt} {{kb.name = "bias"}}) -> ({ty} {{kb.name = "y"}}) {{
{body}  %1 = kb.layer_norm {x}, %w, %b eps(1.0e-05){norm_config(config)} : {ty}, {vt}, {vt} -> {ty}
  return %1 : {ty}
}}
"""

def rmsnorm(rows, cols, dtype="f32", config=None):
    ty, vt = t((rows, cols), dtype), t((cols,), dtype)
    return f"""func.func @rmsnorm(%x: {ty} {{kb.name = "x"}}, %w: {vt} {{kb.name = "weight"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.rms_norm %x, %w eps(1.0e-06){norm_config(config)} : {ty}, {vt} -> {ty}
  return %0 : {ty}
}}
"""

def row_reduce(rows, cols, kind, keepdim=True, dtype="f32", config=None):
    ty = t((rows, cols), dtype)
    rt = t((rows, 1) if keepdim else (rows,), dtype)
    kd = " keepdim" if keepdim else ""
    return f"""func.func @reduce(%x: {ty} {{kb.name = "x"}}) -> ({rt} {{kb.name = "y"}}) {{
  %0 = kb.reduce %x {kind}{kd}{norm_config(config)} : {ty} -> {rt}
  return %0 : {rt}
}}
"""

def reduce_nd(shape, kind, axis=None, whole=False, keepdim=False, dtype="f32"):
    """kb.reduce over `axis` (None: the last), or over every element."""
    rank = len(shape)
    if whole:
        rshape = (1,) * rank if keepdim else (1,)
        form = " all"
    else:
        a = rank - 1 if axis is None else axis
        rshape = tuple(shape[:a]) + ((1,) if keepdim else ()) + tuple(shape[a + 1:])
        form = f" axis({a})" if a != rank - 1 else ""
    ty, rt = t(tuple(shape), dtype), t(rshape, dtype)
    kd = " keepdim" if keepdim else ""
    return f"""func.func @reduce(%x: {ty} {{kb.name = "x"}}) -> ({rt} {{kb.name = "y"}}) {{
  %0 = kb.reduce %x {kind}{form}{kd} : {ty} -> {rt}
  return %0 : {rt}
}}
"""

def log_softmax(rows, cols, dtype="f32", residual=False):
    """x (+ residual) -> kb.log_softmax: one kernel."""
    ty = t((rows, cols), dtype)
    res_arg = f', %r: {ty} {{kb.name = "residual"}}' if residual else ""
    body = f"  %0 = kb.add %x, %r : {ty}\n" if residual else ""
    x = "%0" if residual else "%x"
    return f"""func.func @log_softmax(%x: {ty} {{kb.name = "x"}}{res_arg}) -> ({ty} {{kb.name = "y"}}) {{
{body}  %1 = kb.log_softmax {x} : {ty}
  return %1 : {ty}
}}
"""

def softmax(rows, cols, strategy=None, config=None):
    cfg = f' {{config = #kb.config<strategy = "{strategy}">}}' if strategy else ""
    if config:
        cfg = f" {{config = #kb.config<{config}>}}"
    ty = t((rows, cols))
    return f"""func.func @softmax(%x: {ty} {{kb.name = "x"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.softmax %x{cfg} : {ty}
  return %0 : {ty}
}}
"""

def bias_gelu_dropout(rows, cols, p=0.3, seed=42):
    ty, bt = t((rows, cols)), t((cols,))
    return f"""func.func @bias_gelu_dropout(%x: {ty} {{kb.name = "x"}}, %b: {bt} {{kb.name = "bias"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.bias_add %x, %b : {ty}, {bt} -> {ty}
  %1 = kb.gelu %0 approx(tanh) : {ty}
  %2 = kb.dropout %1 p({p}) seed({seed}) : {ty}
  return %2 : {ty}
}}
"""

def matmul(m, n, k, precision, trans_b=False, batch=None, config=None):
    pre = (batch,) if batch else ()
    cfg = f" {{config = #kb.config<{config}>}}" if config else ""
    at, bt, ct = t(pre + (m, k)), t(pre + ((n, k) if trans_b else (k, n))), t(pre + (m, n))
    tb = " transpose_b" if trans_b else ""
    return f"""func.func @matmul(%a: {at} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}}) -> ({ct} {{kb.name = "c"}}) {{
  %0 = kb.matmul %a, %b precision({precision}){tb}{cfg} : {at}, {bt} -> {ct}
  return %0 : {ct}
}}
"""

def matmul_bias_gelu(m, n, k, precision):
    at, bt, ct, vt = t((m, k)), t((k, n)), t((m, n)), t((n,))
    return f"""func.func @matmul_bias_gelu(%a: {at} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}}, %bias: {vt} {{kb.name = "bias"}}) -> ({ct} {{kb.name = "y"}}) {{
  %0 = kb.matmul %a, %b precision({precision}) : {at}, {bt} -> {ct}
  %1 = kb.bias_add %0, %bias : {ct}, {vt} -> {ct}
  %2 = kb.gelu %1 approx(tanh) : {ct}
  return %2 : {ct}
}}
"""

def relu(rows, cols):
    ty = t((rows, cols))
    return f"""func.func @relu(%x: {ty} {{kb.name = "x"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.relu %x : {ty}
  return %0 : {ty}
}}
"""

def transpose(rows, cols, config=None):
    cfg = f" {{config = #kb.config<{config}>}}" if config else ""
    it, ot = t((rows, cols)), t((cols, rows))
    return f"""func.func @transpose(%x: {it} {{kb.name = "x"}}) -> ({ot} {{kb.name = "y"}}) {{
  %0 = kb.transpose %x{cfg} : {it} -> {ot}
  return %0 : {ot}
}}
"""

def scaled_masked_softmax_dropout(rows, cols, config=None):
    ty, vt = t((rows, cols)), t((cols,))
    cfg = f" {{config = #kb.config<{config}>}}" if config else ""
    return f"""func.func @attention_probs(%x: {ty} {{kb.name = "x"}}, %mask: {vt} {{kb.name = "mask"}}) -> ({ty} {{kb.name = "y"}}) {{
  %0 = kb.scale %x by 0.125 : {ty}
  %1 = kb.bias_add %0, %mask : {ty}, {vt} -> {ty}
  %2 = kb.softmax %1{cfg} : {ty}
  %3 = kb.dropout %2 p(0.1) seed(7) : {ty}
  return %3 : {ty}
}}
"""

def attention(b, h, s, d, dtype="f32", causal=False, mask=False, mma=None, schedule=None, block=None,
              bthd=False):
    """kb.attention over [B, H, S, D] (scale 1/sqrt(D)); `mask`: an additive
    [S, S] mask shared by every head; `mma`: an explicit #kb.config mma
    (e.g. "wgmma_bf16", the sm_90a kernel); `schedule`: the wgmma kernel's
    (e.g. "pingpong"); `block`: an explicit [BQ, BKV] (e.g. (192, 128),
    the wgmma kernel's three consumer warpgroups); `bthd`: q, k, v and O
    [B, S, H, D] instead (issue #47)."""
    ty, mt = t((b, s, h, d) if bthd else (b, h, s, d), dtype), t((s, s), dtype)
    args = [f'%q: {ty} {{kb.name = "q"}}', f'%k: {ty} {{kb.name = "k"}}', f'%v: {ty} {{kb.name = "v"}}']
    if mask:
        args.append(f'%m: {mt} {{kb.name = "mask"}}')
    flags = (" causal" if causal else "") + (" bthd" if bthd else "") + \
        (" precision(tf32)" if dtype == "f32" else "")
    m = " mask(%m)" if mask else ""
    types = f"{ty}, {ty}, {ty}" + (f", {mt}" if mask else "")
    fields = (([f"block = [{block[0]}, {block[1]}]"] if block else []) +
              ([f'mma = "{mma}"'] if mma else []) + ([f'schedule = "{schedule}"'] if schedule else []))
    cfg = f' {{config = #kb.config<{", ".join(fields)}>}}' if fields else ""
    return f"""func.func @attention({", ".join(args)}) -> ({ty} {{kb.name = "o"}}) {{
  %0 = kb.attention %q, %k, %v{m} scale({1 / d ** 0.5!r}){flags}{cfg} : {types} -> {ty}
  return %0 : {ty}
}}
"""

def attention_explicit(bh, s, d, causal=False):
    """The same written out (rank 3, f32): q k^T, scale, [causal_mask],
    softmax, @ v, which kb-fuse-attention folds into one kb.attention."""
    qt, st = t((bh, s, d)), t((bh, s, s))
    cm = f"\n  %c = kb.causal_mask %1 : {st}" if causal else ""
    src = "%c" if causal else "%1"
    return f"""func.func @attention_explicit(%q: {qt} {{kb.name = "q"}}, %k: {qt} {{kb.name = "k"}}, %v: {qt} {{kb.name = "v"}}) -> ({qt} {{kb.name = "o"}}) {{
  %0 = kb.matmul %q, %k precision(tf32) transpose_b : {qt}, {qt} -> {st}
  %1 = kb.scale %0 by {1 / d ** 0.5!r} : {st}{cm}
  %2 = kb.softmax {src} : {st}
  %3 = kb.matmul %2, %v precision(tf32) : {st}, {qt} -> {qt}
  return %3 : {qt}
}}
"""

def linear(m, n, k, precision, epilogue=()):
    """nn.Linear: y = x W^T with W [n, k] (transpose_b), then an epilogue of
    elementwise ops: "bias", "relu", "gelu_erf", "scale", "swish" (x * sigmoid(x))."""
    at, wt, ct, vt = t((m, k)), t((n, k)), t((m, n)), t((n,))
    args = [f'%x: {at} {{kb.name = "x"}}', f'%w: {wt} {{kb.name = "w"}}']
    if "bias" in epilogue:
        args.append(f'%bias: {vt} {{kb.name = "bias"}}')
    body = [f"  %0 = kb.matmul %x, %w precision({precision}) transpose_b : {at}, {wt} -> {ct}"]
    v = 0
    def emit(line):
        nonlocal v
        body.append(f"  %{v + 1} = " + line.format(x=f"%{v}", ty=ct, vt=vt))
        v += 1
    for e in epilogue:
        if e == "bias":
            emit("kb.bias_add {x}, %bias : {ty}, {vt} -> {ty}")
        elif e == "relu":
            emit("kb.relu {x} : {ty}")
        elif e == "gelu_erf":
            emit("kb.gelu {x} approx(erf) : {ty}")
        elif e == "scale":
            emit("kb.scale {x} by 0.5 : {ty}")
        elif e == "swish":
            x = f"%{v}"
            emit("kb.sigmoid {x} : {ty}")
            body.append(f"  %{v + 1} = kb.mul {x}, %{v} : {ct}")
            v += 1
    return (f'func.func @linear({", ".join(args)}) -> ({ct} {{kb.name = "y"}}) {{\n' +
            "\n".join(body) + f"\n  return %{v} : {ct}\n}}\n")


# The Llama linears' tile variants (block, stages, persistent grid, TMA store).
LLAMA_CFG = {
    "v128x256s1p4g132t": 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 16, store = "tma"',
    "v128x192s1p4g132t": 'block = [128, 192, 64], threads = 288, stages = 4, grid = 132, raster = 16, store = "tma"',
    "v256x128s1p3g132t": 'block = [256, 128, 64], threads = 544, stages = 3, grid = 132, raster = 16, store = "tma"',
    "v128x256s1p4g132": 'block = [128, 256, 64], threads = 288, stages = 4, grid = 132, raster = 16',
}
_WG = ', mma = "wgmma_bf16", copy = "tma"'


def _realign(m, bn, bk, rows=8):
    """The gemv config tail of realigned 16-byte loads (thread TN = 8): a
    block of m rows, BN columns, BK k rows; `rows` a thread of a k tile
    (None: no k groups, thread = [m, 8])."""
    thread = f"[{m}, 8, {rows}]" if rows else f"[{m}, 8]"
    return f", block = [{m}, {bn}, {bk}], thread = {thread}"


PROGRAMS = {
    "softmax": {
        "softmax-8192x32768": softmax(8192, 32768),
        "softmax-4096x4096": softmax(4096, 4096),
        "softmax-32768x1024": softmax(32768, 1024),
        "softmax-1024x400000": softmax(1024, 400000),
        "softmax-8192x32768-online": softmax(8192, 32768, "online"),
        "softmax-4096x4096-online": softmax(4096, 4096, "online"),
        "softmax-4096x4096-t512": softmax(4096, 4096, config="threads = 512"),
        "softmax-4096x4096-t1024": softmax(4096, 4096, config="threads = 1024"),
        "softmax-4096x4096-t128": softmax(4096, 4096, config="threads = 128"),
        "softmax-1000x4099": softmax(1000, 4099),
        "softmax-1000x4096": softmax(1000, 4096),
        # Rows not a multiple of 4 whose last chunk runs past the buffer's end.
        "softmax-3x4099": softmax(3, 4099),
        "softmax-7x400001": softmax(7, 400001),
        "softmax-1024x400001": softmax(1024, 400001),
        # Every strategy at every shape, so that kb-select-config's choice
        # can be checked (split forced onto rows that fit one block, online
        # forced onto rows that fit a cluster).
        "softmax-8192x32768-split": softmax(8192, 32768, config='strategy = "split", cluster = 2'),
        "softmax-4096x4096-split": softmax(4096, 4096, config='strategy = "split", cluster = 2, threads = 256'),
        "softmax-32768x1024-split": softmax(32768, 1024, config='strategy = "split", cluster = 2, threads = 128'),
        "softmax-32768x1024-online": softmax(32768, 1024, "online"),
        "softmax-2048x65536": softmax(2048, 65536),
        "softmax-2048x65536-registers": softmax(2048, 65536, "registers"),
        "softmax-2048x65536-online": softmax(2048, 65536, "online"),
        "softmax-1024x400000-online": softmax(1024, 400000, "online"),
        "softmax-1024x400000-c8": softmax(1024, 400000, config='strategy = "split", cluster = 8'),
        "softmax-1024x400000-c16": softmax(1024, 400000, config='strategy = "split", cluster = 16'),
        "softmax-1024x400000-r1": softmax(1024, 400000, config='strategy = "split_shared", block = [1]'),
        "softmax-1024x400000-r2": softmax(1024, 400000, config='strategy = "split_shared", block = [2]'),
        "softmax-1024x400001-r1": softmax(1024, 400001, config='strategy = "split_shared", block = [1]'),
        "softmax-6x400001": softmax(6, 400001),
        "softmax-1024x400000-shared-c16": softmax(1024, 400000, config='strategy = "split_shared", cluster = 16, threads = 512'),
        "softmax-2048x65536-shared": softmax(2048, 65536, config='strategy = "split_shared", cluster = 4, threads = 512'),
        "softmax-2048x65536-shared-c2": softmax(2048, 65536, config='strategy = "split_shared", cluster = 2'),
        "softmax-8192x32768-shared": softmax(8192, 32768, config='strategy = "split_shared", cluster = 2'),
        "softmax-1024x400001-online": softmax(1024, 400001, "online"),
        # split over ordinary blocks that exchange partials through global
        # memory: every SM usable (clusters of 8 fit 120 of the 132).
        "softmax-1024x400000-g16-r4": softmax(1024, 400000, config='strategy = "split_global", block = [4]'),
        # The previous default for rows this wide: a cluster of 8, 4 rows each.
        "softmax-1024x400000-shared-c8-r4": softmax(1024, 400000, config='strategy = "split_shared", cluster = 8, block = [4]'),
        "softmax-1024x400001-shared-c8-r4": softmax(1024, 400001, config='strategy = "split_shared", cluster = 8, block = [4]'),
        "softmax-1024x400001-g16-r4": softmax(1024, 400001, config='strategy = "split_global", block = [4]'),
        "softmax-1024x400000-g16-t1024": softmax(1024, 400000, config='strategy = "split_global", threads = 1024'),
        "softmax-1024x400000-g8": softmax(1024, 400000, config='strategy = "split_global", cluster = 8, threads = 1024'),
        "softmax-1024x400000-g32": softmax(1024, 400000, config='strategy = "split_global", cluster = 32, threads = 256'),
        "softmax-7x400001-g16": softmax(7, 400001, config='strategy = "split_global"'),
        "softmax-2048x65536-g4": softmax(2048, 65536, config='strategy = "split_global", cluster = 4'),
        # The persistent grid against one block per part (a grid larger than
        # the parts), both ways: kb picks it up to 8 blocks per row (runs
        # 29-30: faster there, slower at 16).
        "softmax-1024x131072-np": softmax(1024, 131072, config='strategy = "split_global", grid = 1073741824'),
        "softmax-16384x40000-np": softmax(16384, 40000, config='strategy = "split_global", grid = 1073741824'),
        "softmax-1024x400000-persistent": softmax(1024, 400000, config='strategy = "split_global", grid = 264'),
        # A small persistent grid with unaligned rows, for compute-sanitizer.
        "softmax-600x65537": softmax(600, 65537),
        # Rows a register cluster of 2-4 blocks holds: is split_global's
        # 90% at 2048x65536 (against 87% for the register split) general?
        "softmax-4096x49152": softmax(4096, 49152),
        "softmax-4096x49152-global": softmax(4096, 49152, "split_global"),
        "softmax-1024x131072": softmax(1024, 131072),
        "softmax-1024x131072-global": softmax(1024, 131072, "split_global"),
        "softmax-16384x40000": softmax(16384, 40000),
        "softmax-16384x40000-global": softmax(16384, 40000, "split_global"),
    },
    # The Llama block's bf16 linears (B 1 x T 2048, hidden 4096, MLP 10880) as
    # the kb backend cuts them (issue #47): session 31's profile had kb's
    # w1 (128 x 224 persistent) about 335 us, w3 + SiLU-mul 381, w2 +
    # residual 295, against cuBLAS's 238 for w1 and w3. Each with tile
    # variants (-v...: gpu-check times them in one process with the default).
    "llama": {
        "llama-bf16-wq-2048x4096x4096-sm90a": half_matmul(2048, 4096, 4096, "bf16"),
        "llama-bf16-w1-2048x10880x4096-sm90a": half_matmul(2048, 10880, 4096, "bf16"),
        "llama-bf16-w3silu-2048x10880x4096-sm90a": half_linear_gated(2048, 10880, 4096, "bf16", "silu_mul"),
        "llama-bf16-w2add-2048x4096x10880-sm90a": half_linear_gated(2048, 4096, 10880, "bf16", "add"),
        **{f"llama-bf16-w1-2048x10880x4096-{tag}-sm90a":
           half_matmul(2048, 10880, 4096, "bf16", config=LLAMA_CFG[tag] + _WG)
           for tag in ("v128x256s1p4g132", "v128x256s1p4g132t", "v128x192s1p4g132t",
                       "v256x128s1p3g132t")},
        **{f"llama-bf16-w3silu-2048x10880x4096-{tag}-sm90a":
           half_linear_gated(2048, 10880, 4096, "bf16", "silu_mul", config=LLAMA_CFG[tag] + _WG)
           for tag in ("v128x256s1p4g132", "v128x256s1p4g132t", "v128x192s1p4g132t",
                       "v256x128s1p3g132t")},
        **{f"llama-bf16-w2add-2048x4096x10880-{tag}-sm90a":
           half_linear_gated(2048, 4096, 10880, "bf16", "add", config=LLAMA_CFG[tag] + _WG)
           for tag in ("v128x256s1p4g132", "v128x256s1p4g132t", "v256x128s1p3g132t")},
    },
    # 16-bit tensors (issue #44): wgmma bf16/f16 matmuls (-sm90a) and
    # mma.sync ones (sm_90), softmax and bias + GELU + dropout in bf16.
    "half": {
        "matmul-bf16-4096-bt-sm90a": half_matmul(4096, 4096, 4096, "bf16"),
        "matmul-bf16-8192-bt-sm90a": half_matmul(8192, 8192, 8192, "bf16"),
        "matmul-bf16-4096-sm90a": half_matmul(4096, 4096, 4096, "bf16", trans_b=False),
        "matmul-bf16-8192-sm90a": half_matmul(8192, 8192, 8192, "bf16", trans_b=False),
        "matmul-f16-4096-bt-sm90a": half_matmul(4096, 4096, 4096, "f16"),
        "matmul-f16-8192-bt-sm90a": half_matmul(8192, 8192, 8192, "f16"),
        "matmul-f16-4096-sm90a": half_matmul(4096, 4096, 4096, "f16", trans_b=False),
        "matmul-f16-8192-sm90a": half_matmul(8192, 8192, 8192, "f16", trans_b=False),
        "matmul-bf16-f32out-4096-bt-sm90a": half_matmul(4096, 4096, 4096, "bf16", out="f32"),
        "matmul-bf16-1000x700x1500-bt-sm90a": half_matmul(1000, 700, 1500, "bf16"),
        "matmul-bf16-1000x700x1500-sm90a": half_matmul(1000, 700, 1500, "bf16", trans_b=False),
        # Row-major B read as it is (MN-major), edges in M, N and K.
        "matmul-bf16-1000x704x1504-sm90a": half_matmul(1000, 704, 1504, "bf16", trans_b=False),
        "matmul-f16-1000x704x1504-f32out-sm90a": half_matmul(1000, 704, 1504, "f16", trans_b=False, out="f32"),
        "linear-bf16-2048x4096x4096-bias-gelu-sm90a": half_linear_bias_gelu(2048, 4096, 4096, "bf16"),
        # The same matmuls on sm_90 (no -sm90a): mma.sync m16n8k16 (mma =
        # "mma_sync_bf16", "mma_sync_f16"), both forms of B, edges, a fused
        # epilogue; to time against the wgmma bundles above.
        "matmul-bf16-4096-bt": half_matmul(4096, 4096, 4096, "bf16"),
        "matmul-bf16-4096": half_matmul(4096, 4096, 4096, "bf16", trans_b=False),
        "matmul-f16-4096-bt": half_matmul(4096, 4096, 4096, "f16"),
        "matmul-f16-4096": half_matmul(4096, 4096, 4096, "f16", trans_b=False),
        "matmul-bf16-8192": half_matmul(8192, 8192, 8192, "bf16", trans_b=False),
        "matmul-bf16-f32out-4096-bt": half_matmul(4096, 4096, 4096, "bf16", out="f32"),
        "matmul-bf16-1000x700x1500-bt": half_matmul(1000, 700, 1500, "bf16"),
        "matmul-bf16-1000x704x1504": half_matmul(1000, 704, 1504, "bf16", trans_b=False),
        "linear-bf16-2048x4096x4096-bias-gelu": half_linear_bias_gelu(2048, 4096, 4096, "bf16"),
        "softmax-bf16-8192x32768": half_softmax(8192, 32768, "bf16"),
        "softmax-bf16-4096x4096": half_softmax(4096, 4096, "bf16"),
        "softmax-bf16-32768x1024": half_softmax(32768, 1024, "bf16"),
        "softmax-f16-8192x32768": half_softmax(8192, 32768, "f16"),
        "bgd-bf16-16384x8192": half_bias_gelu_dropout(16384, 8192, "bf16"),
        "bgd-bf16-4096x1024": half_bias_gelu_dropout(4096, 1024, "bf16"),
        "bgd-bf16-1000x1001": half_bias_gelu_dropout(1000, 1001, "bf16"),
    },
    # Norms and row reductions (issue #45): one block a row, the row in
    # registers; layernorm with the residual add fused in front.
    "norms": {
        "layernorm-16384x1024": layernorm(16384, 1024),
        "layernorm-4096x8192": layernorm(4096, 8192),
        "layernorm-bf16-16384x1024": layernorm(16384, 1024, "bf16"),
        "layernorm-bf16-4096x8192": layernorm(4096, 8192, "bf16"),
        "layernorm-plain-16384x1024": layernorm(16384, 1024, residual=False),
        "layernorm-drop-16384x1024": layernorm(16384, 1024, dropout=True),
        "layernorm-drop-4096x8192": layernorm(4096, 8192, dropout=True),
        "layernorm-drop-bf16-16384x1024": layernorm(16384, 1024, "bf16", dropout=True),
        "layernorm-drop-1000x1001": layernorm(1000, 1001, dropout=True),
        "rmsnorm-16384x1024": rmsnorm(16384, 1024),
        "rmsnorm-4096x8192": rmsnorm(4096, 8192),
        "rmsnorm-bf16-16384x1024": rmsnorm(16384, 1024, "bf16"),
        "rmsnorm-bf16-4096x8192": rmsnorm(4096, 8192, "bf16"),
        "sum-8192x8192": row_reduce(8192, 8192, "sum"),
        "max-8192x8192": row_reduce(8192, 8192, "max", keepdim=False),
        # Edges, for the check and memcheck: odd rows (vector 1, a partial
        # last chunk), bf16 rows of 1000 (vector 8, partial chunk), a 16-bit
        # reduce, a mean of rows of 4097.
        "layernorm-1000x1001": layernorm(1000, 1001),
        "rmsnorm-bf16-1000x1000": rmsnorm(1000, 1000, "bf16"),
        "min-bf16-4096x1000": row_reduce(4096, 1000, "min", keepdim=False, dtype="bf16"),
        "mean-1000x4097": row_reduce(1000, 4097, "mean"),
        # Rows wider than one block's registers: issue #45's 1024 x 65536
        # targets. A norm's default is the cluster strategy (the row over
        # the registers of 8 blocks, 4 for bf16; kRowClusterByDefault), a
        # reduction's the online strategy (the row read in loops); -online
        # and -cluster: the other one, to compare on the same GPU; odd
        # widths: online.
        "layernorm-1024x65536": layernorm(1024, 65536),
        "layernorm-plain-1024x65536": layernorm(1024, 65536, residual=False),
        "rmsnorm-1024x65536": rmsnorm(1024, 65536),
        "rmsnorm-bf16-1024x65536": rmsnorm(1024, 65536, "bf16"),
        # The bf16 LayerNorms at issue #45's other widths (the f32 ones above).
        "layernorm-bf16-1024x65536": layernorm(1024, 65536, "bf16"),
        "layernorm-plain-bf16-1024x65536": layernorm(1024, 65536, "bf16", residual=False),
        "layernorm-plain-bf16-4096x8192": layernorm(4096, 8192, "bf16", residual=False),
        "layernorm-drop-bf16-4096x8192": layernorm(4096, 8192, "bf16", dropout=True),
        "sum-1024x65536": row_reduce(1024, 65536, "sum"),
        "layernorm-1024x65536-online": layernorm(1024, 65536, config=ONLINE),
        "layernorm-plain-1024x65536-online": layernorm(1024, 65536, residual=False, config=ONLINE),
        "rmsnorm-1024x65536-online": rmsnorm(1024, 65536, config=ONLINE),
        "rmsnorm-bf16-1024x65536-online": rmsnorm(1024, 65536, "bf16", config=ONLINE),
        "sum-1024x65536-cluster": row_reduce(1024, 65536, "sum", config=CLUSTER),
        # Cluster sizes by hand: 4 blocks, 2 blocks.
        "rmsnorm-1024x65536-c4": rmsnorm(1024, 65536, config='strategy = "cluster", cluster = 4'),
        "layernorm-plain-1024x65536-c4": layernorm(1024, 65536, residual=False, config='strategy = "cluster", cluster = 4'),
        "rmsnorm-1024x65536-c2": rmsnorm(1024, 65536, config='strategy = "cluster", cluster = 2'),
        # 8 blocks of 512 threads (four vectors a thread; the default is
        # eight, 256 threads).
        "rmsnorm-1024x65536-t512": rmsnorm(1024, 65536, config='strategy = "cluster", cluster = 8, threads = 512'),
        "layernorm-1024x65536-t512": layernorm(1024, 65536, config='strategy = "cluster", cluster = 8, threads = 512'),
        "rmsnorm-bf16-1024x65536-t512": rmsnorm(1024, 65536, "bf16", config='strategy = "cluster", cluster = 4, threads = 512'),
        # bf16 LayerNorm + residual over 8 blocks of 256 (the default, 4
        # blocks, holds the f32 sum of 64 values a thread: 128 registers, two
        # blocks an SM; this: 32 values, 64 registers).
        "layernorm-bf16-1024x65536-c8": layernorm(1024, 65536, "bf16", config='strategy = "cluster", cluster = 8, threads = 256'),
        # The cluster strategy's other paths, checked against float64 by
        # kb-run: parts whose last chunk is partial (40000 / 8 = 5000
        # columns a block of 256 x 4; bf16: 10000 a block of 256 x 8), max.
        "layernorm-128x40000": layernorm(128, 40000),
        "layernorm-bf16-256x40000": layernorm(256, 40000, "bf16", residual=False),
        "layernorm-128x40000-online": layernorm(128, 40000, config=ONLINE),
        "layernorm-bf16-256x40000-online": layernorm(256, 40000, "bf16", residual=False, config=ONLINE),
        "max-256x65536-cluster": row_reduce(256, 65536, "max", keepdim=False, config=CLUSTER),
        # Issue #45's 16-bit norms (task norm16): rows of 128 vectors (bf16
        # 1024) take one warp a row, two rows a block by default
        # (kRowsPerBlockByDefault); -t64: the old default (one row a block
        # of 64 threads, two vectors a thread); -r4: four rows a block.
        **{f"{name}-bf16-16384x1024{tag}": fn(16384, 1024, "bf16", config=cfg)
           for name, fn in (("layernorm", layernorm), ("rmsnorm", rmsnorm))
           for tag, cfg in (("-t64", "threads = 64"),
                            ("-r4", "block = [4], threads = 128"))},
        # A persistent grid of warp rows (block = [2], grid = G, asked for
        # by hand): each warp loads its next row before it reduces and
        # stores this one; G = 16 or 8 blocks a multiprocessor of 132.
        # Rows without a prologue only (kept packed: 56 registers; a
        # residual's f32 rows take 128).
        **{f"{name}-bf16-16384x1024-g{g}": fn(16384, 1024, "bf16", config=f"block = [2], grid = {g}")
           for name, fn in (("rmsnorm", rmsnorm),
                            ("layernorm-plain", lambda *a, **k: layernorm(*a, residual=False, **k)))
           for g in (2112, 1056)},
        # The persistent warp rows' edges, for the check and memcheck: rows
        # of 1000 (a partial last chunk) over 200 warps (the last rows of a
        # warp's loop), a min (the chunk past the end holds +inf).
        "rmsnorm-bf16-1000x1000-g100": rmsnorm(1000, 1000, "bf16", config="block = [2], grid = 100"),
        "min-bf16-4096x1000-g100": row_reduce(4096, 1000, "min", keepdim=False, dtype="bf16", config="block = [2], grid = 100"),
        "layernorm-plain-bf16-16384x1024": layernorm(16384, 1024, "bf16", residual=False),
        "layernorm-plain-bf16-16384x1024-t64": layernorm(16384, 1024, "bf16", residual=False, config="threads = 64"),
        # bf16 rows of 8192: 256 threads of four vectors (the default, 57
        # registers: 4 blocks a multiprocessor), 512 of two (32-39).
        "layernorm-bf16-4096x8192-t512": layernorm(4096, 8192, "bf16", config="threads = 512"),
        "rmsnorm-bf16-4096x8192-t512": rmsnorm(4096, 8192, "bf16", config="threads = 512"),
        # Online instead of clusters where the rows fill the chip and the
        # rows in flight fit a quarter of L2 (kOnlineRowsInFlightBytes):
        # bf16 256 x 40000 now online by default (-cluster: the old
        # default); its neighbours 512 x 40000 bf16 (online) and f32 256 x
        # 40000 (21 MB in flight: clusters), each with the other strategy.
        "layernorm-bf16-256x40000-cluster": layernorm(256, 40000, "bf16", residual=False, config=CLUSTER),
        "layernorm-bf16-512x40000": layernorm(512, 40000, "bf16", residual=False),
        "layernorm-bf16-512x40000-cluster": layernorm(512, 40000, "bf16", residual=False, config=CLUSTER),
        "layernorm-256x40000": layernorm(256, 40000, residual=False),
        "layernorm-256x40000-online": layernorm(256, 40000, residual=False, config=ONLINE),
        "layernorm-7x100003": layernorm(7, 100003),
        "rmsnorm-bf16-5x40000": rmsnorm(5, 40000, "bf16"),
        "max-9x70001": row_reduce(9, 70001, "max", keepdim=False),
        # kb.log_softmax: registers (8192, bf16 1024), online (65536), the
        # residual add fused, odd rows (aligned chunks; fused: vector 1).
        "logsoftmax-4096x8192": log_softmax(4096, 8192),
        "logsoftmax-1024x65536": log_softmax(1024, 65536),
        "logsoftmax-bf16-16384x1024": log_softmax(16384, 1024, "bf16"),
        "logsoftmax-res-4096x8192": log_softmax(4096, 8192, residual=True),
        "logsoftmax-1000x1001": log_softmax(1000, 1001),
        "logsoftmax-res-1000x1001": log_softmax(1000, 1001, residual=True),
    },
    # Reductions over the last axis (RowNorm.cpp), a first or middle axis
    # (ColumnReduce.cpp) and the whole tensor (WholeReduce.cpp), issue #45's
    # targets; odd shapes for the check.
    "reductions": {
        **{f"{k}-last-8192x8192": reduce_nd((8192, 8192), k) for k in ("sum", "mean", "max")},
        **{f"{k}-first-8192x8192": reduce_nd((8192, 8192), k, axis=0) for k in ("sum", "mean", "max")},
        **{f"{k}-last-64x4096x4096": reduce_nd((64, 4096, 4096), k) for k in ("sum", "mean", "max")},
        **{f"{k}-first-64x4096x4096": reduce_nd((64, 4096, 4096), k, axis=0) for k in ("sum", "mean", "max")},
        "sum-mid-64x4096x4096": reduce_nd((64, 4096, 4096), "sum", axis=1),
        "sum-all-2p28": reduce_nd((1 << 28,), "sum", whole=True),
        "max-all-2p28": reduce_nd((1 << 28,), "max", whole=True),
        "sum-first-bf16-8192x8192": reduce_nd((8192, 8192), "sum", axis=0, dtype="bf16"),
        "sum-first-1000x1001": reduce_nd((1000, 1001), "sum", axis=0),
        "mean-first-keep-1000x1001": reduce_nd((1000, 1001), "mean", axis=0, keepdim=True),
        "max-mid-7x1000x33": reduce_nd((7, 1000, 33), "max", axis=1),
        "min-first-bf16-4096x1000": reduce_nd((4096, 1000), "min", axis=0, dtype="bf16"),
        "sum-all-1000x1001": reduce_nd((1000, 1001), "sum", whole=True),
        "mean-all-keep-1000x1001": reduce_nd((1000, 1001), "mean", whole=True, keepdim=True),
        "min-all-bf16-1000x1000": reduce_nd((1000, 1000), "min", whole=True, dtype="bf16"),
        "sum-all-7x3": reduce_nd((7, 3), "sum", whole=True),
    },
    # Attention (issue #46): kb.attention, FlashAttention-style, against
    # F.scaled_dot_product_attention (flash and efficient backends) and
    # torch.compile of the written-out form. 16 x 32 heads at S 1024-8192
    # (the range); S 1000 and the
    # mask for the checks (a sequence length that is no multiple of a tile).
    "attention": dict(
        [(f"attn-{dt}-16x32x{s}x{d}" + ("-causal" if c else ""), attention(16, 32, s, d, dt, c))
         for dt in ("f32", "bf16") for s in (1024, 4096, 8192) for d in (64, 128) for c in (False, True)] +
        [("attn-f32-2x4x1000x64", attention(2, 4, 1000, 64)),
         ("attn-f32-2x4x1000x64-causal", attention(2, 4, 1000, 64, causal=True)),
         ("attn-f32-mask-2x4x1000x64", attention(2, 4, 1000, 64, mask=True)),
         ("attn-bf16-2x4x1000x128-causal", attention(2, 4, 1000, 128, "bf16", causal=True)),
         ("attn-bf16-mask-2x4x1000x64", attention(2, 4, 1000, 64, "bf16", mask=True)),
         ("attn-explicit-f32-8x1000x64", attention_explicit(8, 1000, 64)),
         # Issue #46's "5x the unfused kb program at sequence 4096": the
         # written-out form fused (one kb.attention) against its -unfused
         # bundle (q k^T, scale, softmax, p v: 4.3 GB of f32 scores at 64
         # batch-heads; 16 x 32 would be 34 GB a buffer).
         ("attn-explicit-f32-64x4096x64", attention_explicit(64, 4096, 64)),
         ("attn-explicit-f32-64x4096x128", attention_explicit(64, 4096, 128)),
         # The wgmma kernel (sm_90a) with the serial schedule (its default
         # until 2026-12-07; -overlap- below is the default since).
         ("attn-bf16-2x4x1000x128-causal-wgmma-sm90a", attention(2, 4, 1000, 128, "bf16", causal=True, mma="wgmma_bf16", schedule="serial")),
         ("attn-bf16-mask-2x4x1000x64-wgmma-sm90a", attention(2, 4, 1000, 64, "bf16", mask=True, mma="wgmma_bf16", schedule="serial")),
         ("attn-f16-2x4x1000x64-wgmma-sm90a", attention(2, 4, 1000, 64, "f16", mma="wgmma_f16", schedule="serial"))] +
        [(f"attn-bf16-16x32x4096x{d}" + ("-causal" if c else "") + "-wgmma-sm90a",
          attention(16, 32, 4096, d, "bf16", c, mma="wgmma_bf16", schedule="serial"))
         for d in (64, 128) for c in (False, True)] + [
         # The wgmma kernel's warpgroups in ping-pong (schedule = "pingpong",
         # opt-in; built, not yet run on a GPU): a check case and the two
         # timed shapes of bench/results/2026-12-07-h200-norms-attn-wgmma.
         ("attn-bf16-2x4x1000x128-causal-pingpong-sm90a", attention(2, 4, 1000, 128, "bf16", causal=True, mma="wgmma_bf16", schedule="pingpong")),
         ("attn-f16-mask-2x4x1000x64-pingpong-sm90a", attention(2, 4, 1000, 64, "f16", mask=True, mma="wgmma_f16", schedule="pingpong")),
         ("attn-bf16-16x32x4096x64-pingpong-sm90a", attention(16, 32, 4096, 64, "bf16", mma="wgmma_bf16", schedule="pingpong")),
         ("attn-bf16-16x32x4096x128-causal-pingpong-sm90a", attention(16, 32, 4096, 128, "bf16", True, mma="wgmma_bf16", schedule="pingpong")),
         ("attn-explicit-f32-8x1000x64-causal", attention_explicit(8, 1000, 64, causal=True)),
         # schedule = "overlap" (the default since 2026-12-07): each
         # warpgroup's softmax under its own P V; check cases and the timed
         # shapes beside -wgmma- (serial) and -pingpong-.
         ("attn-bf16-2x4x1000x128-causal-overlap-sm90a", attention(2, 4, 1000, 128, "bf16", causal=True, mma="wgmma_bf16", schedule="overlap")),
         ("attn-f16-mask-2x4x1000x64-overlap-sm90a", attention(2, 4, 1000, 64, "f16", mask=True, mma="wgmma_f16", schedule="overlap"))] +
        # block = [128, 128] (two consumer warpgroups) written out: the
        # default at D 64 and S 4096 (not causal) is [192, 128] since
        # session 31.
        [(f"attn-bf16-16x32x4096x{d}" + ("-causal" if c else "") + "-overlap-sm90a",
          attention(16, 32, 4096, d, "bf16", c, mma="wgmma_bf16", schedule="overlap", block=(128, 128)))
         for d in (64, 128) for c in (False, True)] + [
         # Three consumer warpgroups (block = [192, 128], 512 threads,
         # overlap; D 64 without a mask only): check cases (S 1000: partial
         # key and query blocks; causal; f16) and the timed shapes beside
         # -overlap- (block = [128, 128]). The lse case is in
         # test/Target/gpu-attention-wgmma-b192.mlir.
         ("attn-bf16-2x4x1000x64-b192-overlap-sm90a", attention(2, 4, 1000, 64, "bf16", mma="wgmma_bf16", schedule="overlap", block=(192, 128))),
         ("attn-bf16-2x4x1000x64-causal-b192-overlap-sm90a", attention(2, 4, 1000, 64, "bf16", causal=True, mma="wgmma_bf16", schedule="overlap", block=(192, 128))),
         ("attn-f16-2x4x1000x64-causal-b192-overlap-sm90a", attention(2, 4, 1000, 64, "f16", causal=True, mma="wgmma_f16", schedule="overlap", block=(192, 128)))] +
        [(f"attn-bf16-16x32x{s}x64" + ("-causal" if c else "") + "-b192-sm90a",
          attention(16, 32, s, 64, "bf16", c, mma="wgmma_bf16", schedule="overlap", block=(192, 128)))
         for s in (1024, 4096, 8192) for c in (False, True)] + [
         # Two warpgroups at S 8192, not causal, written out (the default while
         # three warpgroups are hand-set only; the same kernel as the default).
         ("attn-bf16-16x32x8192x64-overlap-sm90a", attention(16, 32, 8192, 64, "bf16", mma="wgmma_bf16", schedule="overlap", block=(128, 128))),
         # Wider key blocks at D 64 with two warpgroups (FlashAttention-3
         # takes 192 x 192 there; kb's three warpgroups refuse BKV > 128 for
         # registers, two fit 176 without spill: 168 registers, 153 KB of
         # shared memory at 3 stages): a check case (S 1000: 5.7 key blocks)
         # and the timed shape. Not yet run on a GPU.
         ("attn-bf16-2x4x1000x64-k176-overlap-sm90a", attention(2, 4, 1000, 64, "bf16", mma="wgmma_bf16", schedule="overlap", block=(128, 176))),
         ("attn-bf16-16x32x4096x64-k160-sm90a", attention(16, 32, 4096, 64, "bf16", mma="wgmma_bf16", schedule="overlap", block=(128, 160))),
         ("attn-bf16-16x32x4096x64-k176-sm90a", attention(16, 32, 4096, 64, "bf16", mma="wgmma_bf16", schedule="overlap", block=(128, 176))),
         # bthd (issue #47): q, k, v and O [B, S, H, D], a linear's output
         # seen as heads (no transposes around the op); the peer is SDPA on
         # the transpose(1, 2) views. Check cases (S 1000: partial blocks;
         # causal; the mask; f32 on mma.sync, bf16 on wgmma, three warpgroups
         # by hand) and the timed shapes beside the BHTD ones.
         ("attn-bf16-bthd-2x4x1000x64", attention(2, 4, 1000, 64, "bf16", bthd=True)),
         ("attn-bf16-bthd-2x4x1000x128-causal", attention(2, 4, 1000, 128, "bf16", causal=True, bthd=True)),
         ("attn-bf16-bthd-mask-2x4x1000x64", attention(2, 4, 1000, 64, "bf16", mask=True, bthd=True)),
         ("attn-f32-bthd-2x4x1000x64-causal", attention(2, 4, 1000, 64, causal=True, bthd=True)),
         ("attn-bf16-bthd-2x4x1000x64-causal-b192-overlap-sm90a", attention(2, 4, 1000, 64, "bf16", causal=True, mma="wgmma_bf16", schedule="overlap", block=(192, 128), bthd=True))] +
        [(f"attn-bf16-bthd-16x32x4096x{d}" + ("-causal" if c else ""), attention(16, 32, 4096, d, "bf16", c, bthd=True))
         for d in (64, 128) for c in (False, True)]),
    "fusion": {
        "bgd-16384x8192": bias_gelu_dropout(16384, 8192),
        "bgd-4096x1024": bias_gelu_dropout(4096, 1024),
        "bgd-1000x1001": bias_gelu_dropout(1000, 1001),
        "attn-probs-8192x4096": scaled_masked_softmax_dropout(8192, 4096),
        "attn-probs-1000x1001": scaled_masked_softmax_dropout(1000, 1001),
        "attn-probs-256x200000": scaled_masked_softmax_dropout(256, 200000),
        # The fused wide softmax's split: one block per part (no persistent
        # grid), 16 blocks per row, 4 blocks per row.
        "attn-probs-256x200000-np": scaled_masked_softmax_dropout(256, 200000, 'strategy = "split_global", grid = 1073741824'),
        "attn-probs-256x200000-c16": scaled_masked_softmax_dropout(256, 200000, 'strategy = "split_global", cluster = 16'),
        "attn-probs-256x200000-c4": scaled_masked_softmax_dropout(256, 200000, 'strategy = "split_global", cluster = 4'),
        "mm-bias-gelu-tf32-4096": matmul_bias_gelu(4096, 4096, 4096, "tf32"),
        "mm-bias-gelu-ieee-4096": matmul_bias_gelu(4096, 4096, 4096, "ieee"),
        "mm-bias-gelu-tf32-1000x700x1500": matmul_bias_gelu(1000, 700, 1500, "tf32"),
        "mm-bias-gelu-tf32-4096-sm90a": matmul_bias_gelu(4096, 4096, 4096, "tf32"),
        # The bytes of a 4096x4096 softmax moved by the simplest kernel: what
        # fraction of the 1 GiB copy bandwidth a 128 MB pass can reach.
        "relu-4096x4096": relu(4096, 4096),
        "relu-16384x16384": relu(16384, 16384),
        # The transpose kb-select-mma puts in front of a wgmma matmul.
        "transpose-4096x4096": transpose(4096, 4096),
        "transpose-4096x4096-t32": transpose(4096, 4096, "block = [32, 32]"),
        "mm-bias-gelu-tf32-1000x700x1500-sm90a": matmul_bias_gelu(1000, 700, 1500, "tf32"),
    },
    # The activations of issue #45 in one fused kernel (and unfused, one
    # kernel an op), f32 and bf16: memory-bound at 3 buffers of 128 Mi
    # elements if the 17 ops' arithmetic keeps up.
    "activations": {
        "acts-16384x8192": activations(16384, 8192),
        "acts-bf16-16384x8192": activations(16384, 8192, "bf16"),
        "acts-1000x1001": activations(1000, 1001),
    },
    "linear": {
        # nn.Linear shapes of transformer layers (issue #18's targets), wgmma.
        "linear-tf32-4096x13824x5120-sm90a": linear(4096, 13824, 5120, "tf32"),
        "linear-tf32-4096x5120x13824-sm90a": linear(4096, 5120, 13824, "tf32"),
        "linear-tf32-2048x28672x8192-sm90a": linear(2048, 28672, 8192, "tf32"),
        "linear-tf32-8192x8192x8192-sm90a": linear(8192, 8192, 8192, "tf32"),
        "linear-bias-relu-tf32-2048x4096x4096-sm90a": linear(2048, 4096, 4096, "tf32", ("bias", "relu")),
        "linear-bias-scale-gelu-tf32-1024x16384x4096-sm90a": linear(1024, 16384, 4096, "tf32", ("bias", "scale", "gelu_erf")),
        "linear-swish-tf32-4096x11008x4096-sm90a": linear(4096, 11008, 4096, "tf32", ("swish",)),
        "linear-bias-relu-tf32-512x4096x4096-sm90a": linear(512, 4096, 4096, "tf32", ("bias", "relu")),
        # 4096^3 with B^T given, in row order (kb-tile's choice) and with
        # raster = 16 (17% fewer bytes a wave by kb-tile's model).
        "matmul-tf32-4096-tb-r16-sm90a": matmul(4096, 4096, 4096, "tf32", trans_b=True, config="raster = 16"),
    },
    "matmul": {
        "matmul-ieee-4096": matmul(4096, 4096, 4096, "ieee"),
        "matmul-ieee-2048": matmul(2048, 2048, 2048, "ieee"),
        "matmul-ieee-1000x700x1500": matmul(1000, 700, 1500, "ieee"),
        "matmul-ieee-1024x1024x1024": matmul(1024, 1024, 1024, "ieee"),
        "matmul-ieee-batch4-512-tb": matmul(512, 384, 256, "ieee", trans_b=True, batch=4),
        "matmul-tf32-2048": matmul(2048, 2048, 2048, "tf32"),
        "matmul-tf32-4096": matmul(4096, 4096, 4096, "tf32"),
        "matmul-tf32-8192": matmul(8192, 8192, 8192, "tf32"),
        "matmul-tf32-4000": matmul(4000, 4000, 4000, "tf32"),
        "matmul-tf32-1000x700x1500": matmul(1000, 700, 1500, "tf32"),
        "matmul-tf32-batch4-512-tb": matmul(512, 384, 256, "tf32", trans_b=True, batch=4),
        # mma.sync with B given K-major: B's fragments by ldmatrix like A's.
        "matmul-tf32-4096-tb": matmul(4096, 4096, 4096, "tf32", trans_b=True),
        "matmul-tf32x3-2048": matmul(2048, 2048, 2048, "tf32x3"),
        "matmul-tf32-4096-b128x128x16": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 16], warp = [64, 32]"),
        "matmul-tf32-4096-b128x256x16": matmul(4096, 4096, 4096, "tf32", config="block = [128, 256, 16], warp = [64, 64]"),
        "matmul-tf32-4096-b64x128x32": matmul(4096, 4096, 4096, "tf32", config="block = [64, 128, 32], warp = [32, 64]"),
        "matmul-tf32-4096-s4": matmul(4096, 4096, 4096, "tf32", config="stages = 4"),
        "matmul-tf32-4096-s3": matmul(4096, 4096, 4096, "tf32", config="stages = 3"),
        "matmul-tf32-4096-s2": matmul(4096, 4096, 4096, "tf32", config="stages = 2"),
        "matmul-tf32-4096-b128x256x32": matmul(4096, 4096, 4096, "tf32", config="block = [128, 256, 32], warp = [64, 64]"),
        "matmul-tf32-4096-b256x128x32": matmul(4096, 4096, 4096, "tf32", config="block = [256, 128, 32], warp = [64, 64]"),
        "matmul-tf32-4096-b128x128x32-w64x64": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 32], warp = [64, 64]"),
        "matmul-tf32-4096-b128x256x32-s2": matmul(4096, 4096, 4096, "tf32", config="block = [128, 256, 32], warp = [64, 64], stages = 2"),
        "matmul-tf32-4096-b128x128x64-s2": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 64], warp = [64, 32], stages = 2"),
        "matmul-tf32-4096-b256x128x32-s2": matmul(4096, 4096, 4096, "tf32", config="block = [256, 128, 32], warp = [64, 64], stages = 2"),
        "matmul-tf32-4096-b128x256x64-s2": matmul(4096, 4096, 4096, "tf32", config="block = [128, 256, 64], warp = [64, 64], stages = 2"),
        "matmul-tf32-8192-b128x256x32": matmul(8192, 8192, 8192, "tf32", config="block = [128, 256, 32], warp = [64, 64]"),
        "matmul-tf32-4096-b128x128x32-w32x64": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 32], warp = [32, 64]"),
        # More warps per scheduler (smaller warp tiles, fewer registers):
        # 16 warps per SM where the default has 8.
        "matmul-tf32-4096-b128x256x32-w64x32": matmul(4096, 4096, 4096, "tf32", config="block = [128, 256, 32], warp = [64, 32], stages = 3"),
        "matmul-tf32-4096-b256x128x32-w64x32": matmul(4096, 4096, 4096, "tf32", config="block = [256, 128, 32], warp = [64, 32], stages = 3"),
        "matmul-tf32-4096-b128x128x32-w64x32": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 32], warp = [64, 32], stages = 3"),
        "matmul-ieee-4096-b128x128x8": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 8], thread = [8, 8]"),
        "matmul-ieee-4096-1stage": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 1"),
        "matmul-ieee-8192": matmul(8192, 8192, 8192, "ieee"),
        "matmul-ieee-4096-b128x128x32": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 32], thread = [8, 8]"),
        # cp.async stages instead of the register prefetch (stages >= 3).
        # The previous default: two buffers, the next tile through registers.
        "matmul-ieee-4096-s2": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 2"),
        "matmul-ieee-1000x700x1500-s2": matmul(1000, 700, 1500, "ieee", config="stages = 2"),
        "matmul-ieee-4096-s3": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 3"),
        "matmul-ieee-4096-s4": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 4"),
        "matmul-ieee-4096-s6": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 6"),
        "matmul-ieee-4096-s4-w32x64": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], warp = [32, 64], stages = 4"),
        "matmul-ieee-4096-s4-w64x32": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 16], thread = [8, 8], warp = [64, 32], stages = 4"),
        "matmul-ieee-4096-s4-b128x128x8": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 8], thread = [8, 8], stages = 4"),
        "matmul-ieee-4096-b128x128x32-s3": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 32], thread = [8, 8], stages = 3"),
        # Which of BK = 32 / stages / warp arrangement matters, at 4096 and
        # at the awkward 4000 (run 5: default 0.74x cuBLAS at 4000).
        # cuBLAS's fp32 kernel at 4096^3 (2026-11-30 run 15, ncu):
        # sm80_xmma_gemm_..._tilesize256x128x8_stage3_warpsize4x2x1_ffma,
        # 256 threads, 254 registers, one block per SM: 16 x 8 per thread.
        "matmul-ieee-4096-b256x128x8-t16x8-s3": matmul(4096, 4096, 4096, "ieee", config="block = [256, 128, 8], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-4096-b256x128x16-t16x8-s3": matmul(4096, 4096, 4096, "ieee", config="block = [256, 128, 16], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-4096-b256x128x16-t16x8-s4": matmul(4096, 4096, 4096, "ieee", config="block = [256, 128, 16], thread = [16, 8], warp = [64, 64], stages = 4"),
        "matmul-ieee-4096-b256x128x32-t16x8-s3": matmul(4096, 4096, 4096, "ieee", config="block = [256, 128, 32], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-4096-b256x128x8-t16x8-rows-s3": matmul(4096, 4096, 4096, "ieee", config="block = [256, 128, 8], thread = [16, 8], stages = 3"),
        "matmul-ieee-4096-b128x256x8-t8x16-s3": matmul(4096, 4096, 4096, "ieee", config="block = [128, 256, 8], thread = [8, 16], warp = [32, 128], stages = 3"),
        "matmul-ieee-8192-b256x128x8-t16x8-s3": matmul(8192, 8192, 8192, "ieee", config="block = [256, 128, 8], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-8192-b256x128x16-t16x8-s3": matmul(8192, 8192, 8192, "ieee", config="block = [256, 128, 16], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-2048-b256x128x8-t16x8-s3": matmul(2048, 2048, 2048, "ieee", config="block = [256, 128, 8], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-2048-b256x128x16-t16x8-s3": matmul(2048, 2048, 2048, "ieee", config="block = [256, 128, 16], thread = [16, 8], warp = [64, 64], stages = 3"),
        "matmul-ieee-4000-b256x128x16-t16x8-s3": matmul(4000, 4000, 4000, "ieee", config="block = [256, 128, 16], thread = [16, 8], warp = [64, 64], stages = 3"),
        # Blocks of 4 warps (4 per SM): fewer warps meet at each barrier.
        "matmul-ieee-4096-b128x64x16-s3": matmul(4096, 4096, 4096, "ieee", config="block = [128, 64, 16], thread = [8, 8], warp = [32, 64], stages = 3"),
        "matmul-ieee-4096-b128x64x16-s4": matmul(4096, 4096, 4096, "ieee", config="block = [128, 64, 16], thread = [8, 8], warp = [32, 64], stages = 4"),
        "matmul-ieee-4096-b64x128x16-s3": matmul(4096, 4096, 4096, "ieee", config="block = [64, 128, 16], thread = [8, 8], warp = [32, 64], stages = 3"),
        "matmul-ieee-4096-b64x128x16-s4": matmul(4096, 4096, 4096, "ieee", config="block = [64, 128, 16], thread = [8, 8], warp = [32, 64], stages = 4"),
        "matmul-ieee-4096-b128x128x32-s3-w64x32": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 32], thread = [8, 8], warp = [64, 32], stages = 3"),
        "matmul-ieee-4096-b128x128x32-s3-w32x64": matmul(4096, 4096, 4096, "ieee", config="block = [128, 128, 32], thread = [8, 8], warp = [32, 64], stages = 3"),
        "matmul-ieee-4000-s4": matmul(4000, 4000, 4000, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 4"),
        "matmul-ieee-4000-s3-w32x64": matmul(4000, 4000, 4000, "ieee", config="block = [128, 128, 16], thread = [8, 8], warp = [32, 64], stages = 3"),
        "matmul-ieee-4000-b128x128x32-s3": matmul(4000, 4000, 4000, "ieee", config="block = [128, 128, 32], thread = [8, 8], stages = 3"),
        "matmul-ieee-4000-b128x128x32-s3-w32x64": matmul(4000, 4000, 4000, "ieee", config="block = [128, 128, 32], thread = [8, 8], warp = [32, 64], stages = 3"),
        "matmul-ieee-8192-b128x128x32-s3": matmul(8192, 8192, 8192, "ieee", config="block = [128, 128, 32], thread = [8, 8], stages = 3"),
        "matmul-ieee-2048-b128x128x32-s3": matmul(2048, 2048, 2048, "ieee", config="block = [128, 128, 32], thread = [8, 8], stages = 3"),
        "matmul-ieee-4000-s3": matmul(4000, 4000, 4000, "ieee", config="block = [128, 128, 16], thread = [8, 8], stages = 3"),
        "matmul-ieee-1000x700x1500-s3": matmul(1000, 700, 1500, "ieee", config="stages = 3"),
        "matmul-ieee-batch4-512-tb-s3": matmul(512, 384, 256, "ieee", trans_b=True, batch=4, config="stages = 3"),
        # Awkward shapes next to their nearest tile multiples (issue 5: within 15%).
        "matmul-ieee-4000": matmul(4000, 4000, 4000, "ieee"),
        "matmul-ieee-1024x768x1536": matmul(1024, 768, 1536, "ieee"),
        "matmul-tf32-1024x768x1536": matmul(1024, 768, 1536, "tf32"),
        # The nearest multiple of the 64x64x32 tiles kb uses at 1000x700x1500
        # (rows of 1504 floats are 32-byte aligned; of 1500, 16-byte only).
        "matmul-ieee-1024x704x1504": matmul(1024, 704, 1504, "ieee"),
        "matmul-tf32-1024x704x1504": matmul(1024, 704, 1504, "tf32"),
        "matmul-tf32-1024x704x1504-sm90a": matmul(1024, 704, 1504, "tf32"),
        # Same M, N as the aligned reference with K = 1500: does K's alignment
        # alone explain the awkward shape's loss?
        "matmul-tf32-1024x768x1500-sm90a": matmul(1024, 768, 1500, "tf32"),
        "matmul-tf32-1024x768x1500": matmul(1024, 768, 1500, "tf32"),
        # K = 1504 (32-byte-aligned rows, no K edge), 1512 (32-byte-aligned
        # rows, a K edge), 1500 (16-byte-aligned rows, a K edge): which of
        # row alignment and edge guards costs the wgmma kernel its time. The
        # -tb twins take B K-major (no transpose kernel in front).
        "matmul-tf32-1024x768x1504-sm90a": matmul(1024, 768, 1504, "tf32"),
        "matmul-tf32-1024x768x1512-sm90a": matmul(1024, 768, 1512, "tf32"),
        "matmul-tf32-1024x768x1500-tb-sm90a": matmul(1024, 768, 1500, "tf32", trans_b=True),
        "matmul-tf32-1024x768x1504-tb-sm90a": matmul(1024, 768, 1504, "tf32", trans_b=True),
        "matmul-tf32-1024x768x1512-tb-sm90a": matmul(1024, 768, 1512, "tf32", trans_b=True),
        "matmul-tf32-1000x700x1500-tb-sm90a": matmul(1000, 700, 1500, "tf32", trans_b=True),
        "matmul-tf32-1024x704x1504-tb-sm90a": matmul(1024, 704, 1504, "tf32", trans_b=True),
        "matmul-tf32-1000x700x1504-sm90a": matmul(1000, 700, 1504, "tf32"),
        # wgmma (compiled with chip=sm_90a: names ending in -sm90a); a row-major B
        # goes through a kb.transpose kernel first.
        "matmul-tf32-2048-sm90a": matmul(2048, 2048, 2048, "tf32"),
        "matmul-tf32-4096-sm90a": matmul(4096, 4096, 4096, "tf32"),
        "matmul-tf32-8192-sm90a": matmul(8192, 8192, 8192, "tf32"),
        "matmul-tf32-4000-sm90a": matmul(4000, 4000, 4000, "tf32"),
        "matmul-tf32-1000x700x1500-sm90a": matmul(1000, 700, 1500, "tf32"),
        # A persistent grid (grid = G, wgmma with TMA) with fewer blocks than
        # tiles, edges in M, a split and a batch; uneven split-K (chunks of
        # ceil(313 / 7) = 45 k tiles, the last of 43) on every kernel that
        # splits: checked, memchecked and racechecked by gpu-check.sh.
        "matmul-tf32-1000x512x256-tb-g20-sm90a": matmul(1000, 512, 256, "tf32", trans_b=True, config="block = [128, 128, 32], grid = 20"),
        "matmul-tf32-300x256x10000-s7-g10-sm90a": matmul(300, 256, 10000, "tf32", config="block = [128, 128, 32], split = 7, grid = 10"),
        "matmul-tf32-batch4-512-tb-g16-sm90a": matmul(512, 384, 256, "tf32", trans_b=True, batch=4, config="grid = 16"),
        "matmul-tf32-300x256x10000-tb-s7-cpasync-sm90a": matmul(300, 256, 10000, "tf32", trans_b=True, config='block = [64, 64, 32], split = 7, copy = "cp_async"'),
        "matmul-tf32-300x256x10000-s7": matmul(300, 256, 10000, "tf32", config="split = 7"),
        "matmul-ieee-300x256x10000-s7": matmul(300, 256, 10000, "ieee", config="split = 7"),
        # The staged epilogue of the persistent B^T kernel: with split-K
        # partials, and with a fused epilogue (K = 64: persistent by default).
        "matmul-tf32-300x256x10000-tb-s7-g10-sm90a": matmul(300, 256, 10000, "tf32", trans_b=True, config="block = [128, 128, 32], split = 7, grid = 10"),
        "linear-bias-scale-gelu-tf32-4096x2048x64-sm90a": linear(4096, 2048, 64, "tf32", ("bias", "scale", "gelu_erf")),
        "matmul-tf32-1024x768x1536-sm90a": matmul(1024, 768, 1536, "tf32"),
        "matmul-tf32-batch4-512-tb-sm90a": matmul(512, 384, 256, "tf32", trans_b=True, batch=4),
        "matmul-tf32-4096-tb-sm90a": matmul(4096, 4096, 4096, "tf32", trans_b=True),
        "matmul-tf32-8192-tb-sm90a": matmul(8192, 8192, 8192, "tf32", trans_b=True),
        "matmul-tf32-4096-tb-b256x128-sm90a": matmul(4096, 4096, 4096, "tf32", trans_b=True, config="block = [256, 128, 32]"),
        "matmul-tf32-4096-tb-s3-sm90a": matmul(4096, 4096, 4096, "tf32", trans_b=True, config="stages = 3"),
        "matmul-tf32-4096-tb": matmul(4096, 4096, 4096, "tf32", trans_b=True),
        # N % 4 != 0, and N odd (C's rows 4-byte aligned only: scalar stores).
        "matmul-tf32-1000x702x1500-sm90a": matmul(1000, 702, 1500, "tf32"),
        # Smaller than one tile in every dimension: TMA boxes larger than the
        # tensor (zero-filled), and the smallest K wgmma takes.
        "matmul-tf32-16x24x32-sm90a": matmul(16, 24, 32, "tf32"),
        "matmul-tf32-1x8x4-sm90a": matmul(1, 8, 4, "tf32"),
        "matmul-tf32-100x72x100-sm90a": matmul(100, 72, 100, "tf32"),
        "matmul-tf32-1000x701x1500-sm90a": matmul(1000, 701, 1500, "tf32"),
        "matmul-tf32-4096-b128x128-sm90a": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 32]"),
        "matmul-tf32-4096-s3-sm90a": matmul(4096, 4096, 4096, "tf32", config="stages = 3"),
        "matmul-tf32-4096-b128x128-s3-sm90a": matmul(4096, 4096, 4096, "tf32", config="block = [128, 128, 32], stages = 3"),
        "matmul-tf32-2048-s3-sm90a": matmul(2048, 2048, 2048, "tf32", config="stages = 3"),
        "matmul-tf32-1000x700x1500-b64x128-sm90a": matmul(1000, 700, 1500, "tf32", config="block = [64, 128, 32]"),
        # Tile sweep for the small and middle shapes (fewer, bigger blocks).
        "matmul-tf32-1000x700x1500-b128x128-sm90a": matmul(1000, 700, 1500, "tf32", config="block = [128, 128, 32]"),
        "matmul-tf32-1000x700x1500-b128x64-sm90a": matmul(1000, 700, 1500, "tf32", config="block = [128, 64, 32]"),
        "matmul-tf32-1000x700x1500-b128x256-sm90a": matmul(1000, 700, 1500, "tf32", config="block = [128, 256, 32]"),
        "matmul-tf32-1024x768x1536-b128x128-sm90a": matmul(1024, 768, 1536, "tf32", config="block = [128, 128, 32]"),
        "matmul-tf32-1024x704x1504-b128x64-sm90a": matmul(1024, 704, 1504, "tf32", config="block = [128, 64, 32]"),
        "matmul-tf32-1024x704x1504-b64x128-sm90a": matmul(1024, 704, 1504, "tf32", config="block = [64, 128, 32]"),
        "matmul-tf32-1024x768x1536-b128x64-sm90a": matmul(1024, 768, 1536, "tf32", config="block = [128, 64, 32]"),
        "matmul-tf32-2048-b128x256-sm90a": matmul(2048, 2048, 2048, "tf32", config="block = [128, 256, 32]"),
        "matmul-tf32-2048-b256x128-sm90a": matmul(2048, 2048, 2048, "tf32", config="block = [256, 128, 32]"),
        "matmul-tf32-4096-b256x128-sm90a": matmul(4096, 4096, 4096, "tf32", config="block = [256, 128, 32]"),
        # The wgmma kernel with per-thread cp.async copies instead of TMA (the
        # default since 2026-11-30 run 35), for the same-call comparison.
        "matmul-tf32-4096-cpasync-sm90a": matmul(4096, 4096, 4096, "tf32", config='copy = "cp_async"'),
        "matmul-tf32-8192-cpasync-sm90a": matmul(8192, 8192, 8192, "tf32", config='copy = "cp_async"'),
        "matmul-tf32-4096-tb-cpasync-sm90a": matmul(4096, 4096, 4096, "tf32", trans_b=True, config='copy = "cp_async"'),
        "matmul-tf32-1000x700x1500-cpasync-sm90a": matmul(1000, 700, 1500, "tf32", config='copy = "cp_async"'),
        "matmul-tf32-1024x704x1504-cpasync-sm90a": matmul(1024, 704, 1504, "tf32", config='copy = "cp_async"'),
        "matmul-tf32-4000-cpasync-sm90a": matmul(4000, 4000, 4000, "tf32", config='copy = "cp_async"'),
    },
    # The gemv kernel's edges at both register-pipeline depths (stages 1
    # and 2): every form, K ending inside a k tile and K % 4 != 0 (scalar
    # loads), weight rows past the blocks, N % 4 != 0 in the row-major form,
    # a split, chunks of one or two k tiles. Checked and memchecked by
    # gpu-check.sh (docs/shapes.md "Register pipeline").
    "gemv": {
        f"gemv-{name}-p{st}-sm90a": matmul(m, n, k, prec, trans_b=tb,
                                           config=f'mma = "gemv", stages = {st}' + extra)
        for st in (1, 2)
        for name, (m, n, k, prec, tb, extra) in {
            "rows-3x1001x4099-tb": (3, 1001, 4099, "tf32", True, ""),
            "rows-1x4097x5000-tb": (1, 4097, 5000, "ieee", True, ""),
            "rows-2x300x50000-tb-split": (2, 300, 50000, "tf32", True, ""),
            "rows-4x64x1024-tb-one-tile": (4, 64, 1024, "tf32", True, ""),
            "cols-777x1x5003": (777, 1, 5003, "tf32", False, ""),
            "cols-1000x3x2048": (1000, 3, 2048, "ieee", False, ""),
            "columns-1x1000x4099": (1, 1000, 4099, "tf32", False, ""),
            "columns-3x4096x3000": (3, 4096, 3000, "tf32", False, ""),
            # split-K by hand (kb-tile gives 4100 columns k groups since
            # run 17), and k groups with one column a thread and K ending
            # inside a k tile.
            "columns-1x4100x20000-split": (1, 4100, 20000, "tf32", False,
                                           ", block = [1, 512, 8], thread = [1, 4], split = 5"),
            "columns-groups-1x4100x20000": (1, 4100, 20000, "tf32", False, ""),
            "columns-groups-2x4099x3001": (2, 4099, 3001, "ieee", False, ""),
            "columns-2x512x24": (2, 512, 24, "tf32", False, ""),
        }.items()
    },
    # The realigned 16-byte loads of a 16-bit row-major B (thread TN = 8:
    # each thread's 8 columns from the aligned chunk under them and its
    # neighbour's, by a warp shuffle): N and K odd (kb-tile's default for
    # one row), K a multiple of BK (the last tile guarded anyway), N % 8 = 4,
    # N < 248 (every tile guarded), f16, a split, row segments of 4, 8, 32
    # and 64 threads (BN 32 to 512), no k groups, two rows, both pipeline
    # depths. Checked (float64) and memchecked by gpu-check.sh.
    "gemv16": {
        f"gemv16-{name}-p{st}-sm90a": half_matmul(m, n, k, dt, trans_b=False,
                                                  config=f'mma = "gemv", stages = {st}' + extra)
        for st in (1, 2)
        for name, (m, n, k, dt, extra) in {
            # kb-tile's realign tile written out (its rule is off until
            # these pass on a GPU: kGemvRealignByDefault).
            "realign-1x4093x4099": (1, 4093, 4099, "bf16", _realign(1, 32, 1024)),
            "realign-1x4093x4096": (1, 4093, 4096, "bf16", _realign(1, 32, 1024)),
            "realign-1x1020x515": (1, 1020, 515, "bf16", _realign(1, 64, 256)),
            "realign-1x37x1001": (1, 37, 1001, "bf16", _realign(1, 32, 64)),
            "realign-f16-1x2051x777": (1, 2051, 777, "f16", _realign(1, 128, 128)),
            "realign-1x4093x8195-split": (1, 4093, 8195, "bf16", _realign(1, 32, 1024) + ", split = 3"),
            "realign-1x1001x3001-b256": (1, 1001, 3001, "bf16", _realign(1, 256, 128)),
            "realign-1x1001x333-b512": (1, 1001, 333, "bf16", _realign(1, 512, 16)),
            "realign-1x999x301-b256-nogroups": (1, 999, 301, "bf16", _realign(1, 256, 16, rows=None)),
            "realign-2x999x777": (2, 999, 777, "bf16", _realign(2, 64, 256)),
        }.items()
    },
}

def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-") or len(args) not in (1, 3) or \
            (len(args) == 3 and args[1] != "--only"):
        print("usage: python3 bench/programs.py OUT_DIR [--only FAMILY]  (families: "
              + ", ".join(PROGRAMS) + ")", file=sys.stderr)
        return 2
    out = args[0]
    only = args[2] if len(args) == 3 else None
    if only and only not in PROGRAMS:
        print(f"bench/programs.py: no family {only!r} (families: {', '.join(PROGRAMS)})",
              file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    for family, progs in PROGRAMS.items():
        if only and family != only:
            continue
        for name, text in progs.items():
            with open(os.path.join(out, name + ".mlir"), "w") as f:
                f.write(text)

if __name__ == "__main__":
    sys.exit(main())
