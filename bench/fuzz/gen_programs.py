#!/usr/bin/env python3
"""Writes N random valid kb programs (.mlir) from a seed, for the differential
run (scripts/differential.sh compiles them, scripts/differential-gpu.sh runs
and checks them on the GPU).

Every op of the dialect (matmul, softmax, log_softmax, reduce over an axis
or all of them, transpose, add, sub, mul, div,
bias_add, scale, gelu tanh/erf, relu, tanh, sigmoid, exp, dropout), every
precision (ieee, tf32, tf32x3), batched and transpose_b matmuls, explicit
transposes (with and without pad), elementwise chains before and after
softmax and matmul, compiled fused or unfused (the `fuse` option of
kb-compile), for sm_90 and sm_90a. Sizes run from 1 to several thousand,
softmax widths up to 300,000; every program stays under a memory budget
(all its buffers, default 1.5 GB) and a flop budget (default 2e11), so it runs
in milliseconds and kb-run checks it in seconds.

The values stay in fp32's range: the generator tracks a rough bound on each
value's magnitude (inputs are N(0, 1), kb-run's default) and only applies exp
or a product where the result cannot overflow, so kb-run can check every
element. Every argument is used; one program in ten returns an intermediate
value as a second result.

--half F writes a share F of the programs in bf16 or f16 (half each): every
argument in that type, 16-bit matmuls (no precision keyword; an f32 or 16-bit
result) on sm_90a only, softmax rows up to 32768, f16 magnitudes under 1e4,
and a kb.convert now and then. Without it no draw changes: each seed writes
the programs it always wrote.

Writes DIR/pNNNN.mlir and DIR/index.json: per program its chip, fuse option,
classes (the op classes it holds), bytes and flops (and "dtype" for a 16-bit
program). Python 3 standard library
only (numpy is not needed).

Usage: gen_programs.py --count 200 --seed 1 --out build/diff/programs
"""

import argparse
import json
import math
import os
import random

UNARY = ["relu", "tanh", "sigmoid", "exp", "gelu_tanh", "gelu_erf", "scale", "dropout"]
BINARY = ["add", "sub", "mul", "div"]
PRECISIONS = ["ieee", "tf32", "tf32x3"]
CHIPS = ["sm_90", "sm_90a"]
# The widest 16-bit softmax row: the registers strategy, the only 16-bit
# softmax built so far, holds up to 32768.
HALF_SOFTMAX_WIDTH = 32768


# Bytes per element, and the bound an f16 value is kept under (f16's largest
# finite value is 65504; the magnitudes tracked are rough).
BYTES = {"f32": 4, "bf16": 2, "f16": 2}
F16_LIM = 1e4


def ttype(shape, et="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + et + ">"


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def log_uniform(rng, lo, hi):
    """An integer in [lo, hi], log-uniformly, with a bias towards awkward
    sizes (primes, odd, powers of two and one off them)."""
    v = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
    r = rng.random()
    if r < 0.15:
        p = 1 << max(0, int(round(math.log2(max(v, 1)))))
        v = p + rng.choice([-1, 0, 0, 1])
    elif r < 0.25:
        v |= 1
    return max(lo, min(hi, v))


class Program:
    def __init__(self, rng, name, dtype="f32"):
        self.rng = rng
        self.name = name
        self.dtype = dtype  # the program's element type (f32, bf16, f16)
        self.args = []      # (name, shape)
        self.lines = []
        self.count = 0
        self.classes = set()
        self.bytes = 0
        self.flops = 0
        self.mag = {}       # value -> bound on |value| (rough, 6 sigma)
        self.shape = {}
        self.et = {}        # value -> element type
        self.converted = False  # a kb.convert since the last matmul, softmax, transpose

    def t(self, v):
        return ttype(self.shape[v], self.et[v])

    def arg(self, shape, mag=6.0, et=None):
        n = "%a" + str(len(self.args))
        self.args.append((n, shape))
        self.shape[n] = shape
        self.mag[n] = mag
        self.et[n] = et or self.dtype
        self.bytes += BYTES[self.et[n]] * numel(shape)
        return n

    def emit(self, text, shape, mag, cls, et):
        v = "%v" + str(self.count)
        self.count += 1
        self.lines.append(f"  {v} = {text}")
        self.shape[v] = shape
        self.mag[v] = mag
        self.et[v] = et
        self.bytes += BYTES[et] * numel(shape)
        self.classes.add(cls)
        return v

    def lim(self, x, f32_lim):
        """The bound the next result of x's type must stay under: f32's
        rule (f32_lim) for f32 and bf16 (bf16 has f32's range), F16_LIM for
        f16."""
        return F16_LIM if self.et[x] == "f16" else f32_lim

    # -- 16 bits --------------------------------------------------------------
    def convert(self, x, et):
        """kb.convert x to et (an f16 target only for values well under
        f16's bound: a larger x is squashed by tanh first)."""
        if self.et[x] == et:
            return x
        if et == "f16" and self.mag[x] > F16_LIM:
            x = self.unary(x, "tanh")
        self.converted = True
        return self.emit(f"kb.convert {x} : {self.t(x)} -> {ttype(self.shape[x], et)}",
                         self.shape[x], self.mag[x], "convert", et)

    def maybe_convert(self, x):
        """In a 16-bit program, now and then a kb.convert: to f32 (what
        follows is f32 until a convert back), back to the program's type, or
        to the other 16-bit type and back."""
        r = self.rng.random()
        if self.et[x] != self.dtype:
            return self.convert(x, self.dtype)
        if r < 0.6:
            return self.convert(x, "f32")
        other = "f16" if self.dtype == "bf16" else "bf16"
        return self.convert(self.convert(x, other), self.dtype)

    # -- elementwise --------------------------------------------------------
    def unary(self, x, op):
        rng, s, m, et = self.rng, self.shape[x], self.mag[x], self.et[x]
        t = self.t(x)
        if op == "exp":
            if m > (9 if et == "f16" else 20):  # exp would overflow: squash first
                x = self.unary(x, "tanh")
                m = 1.0
            return self.emit(f"kb.exp {x} : {t}", s, math.exp(m), "exp", et)
        if op == "relu":
            return self.emit(f"kb.relu {x} : {t}", s, m, "relu", et)
        if op == "tanh":
            return self.emit(f"kb.tanh {x} : {t}", s, min(m, 1.0), "tanh", et)
        if op == "sigmoid":
            return self.emit(f"kb.sigmoid {x} : {t}", s, 1.0, "sigmoid", et)
        if op == "gelu_tanh":
            return self.emit(f"kb.gelu {x} approx(tanh) : {t}", s, m, "gelu", et)
        if op == "gelu_erf":
            return self.emit(f"kb.gelu {x} approx(erf) : {t}", s, m, "gelu", et)
        if op == "scale":
            f = rng.choice([0.125, 0.5, 2.0, -1.0, 0.1, 1.5, -0.03125, 3.0])
            if m * abs(f) > self.lim(x, 1e6):
                f = 0.125
            return self.emit(f"kb.scale {x} by {f!r} : {t}", s, m * abs(f), "scale", et)
        if op == "dropout":
            p = rng.choice([0.0, 0.1, 0.25, 0.3, 0.5, 0.9])
            seed = rng.randrange(1, 1 << 40)
            if et == "f16" and m / (1 - p) > F16_LIM:
                p = 0.0
            return self.emit(f"kb.dropout {x} p({p}) seed({seed}) : {t}", s,
                             m / (1 - p), "dropout", et)
        raise ValueError(op)

    def other(self, x):
        """A second operand of x's shape and type: a new argument or an
        earlier value."""
        same = [v for v in self.shape if self.shape[v] == self.shape[x] and v != x
                and self.et[v] == self.et[x]]
        if same and self.rng.random() < 0.3:
            return self.rng.choice(same)
        if self.rng.random() < 0.1:
            return x  # x op x (x * x, x - x)
        return self.arg(self.shape[x], et=self.et[x])

    def binary(self, x, op):
        rng, s, et = self.rng, self.shape[x], self.et[x]
        t = self.t(x)
        if op == "div":
            if rng.random() < 0.1 and et != "f16":
                d = self.arg(s, et=et)  # raw N(0,1): a heavy-tailed quotient
                return self.emit(f"kb.div {x}, {d} : {t}", s, self.mag[x] * 1e7, "div", et)
            if self.mag[x] * math.e > self.lim(x, math.inf):
                x = self.unary(x, "tanh")
            # A denominator in [1/e, e]: exp(tanh(y)).
            d = self.unary(self.unary(self.other(x), "tanh"), "exp")
            return self.emit(f"kb.div {x}, {d} : {t}", s, self.mag[x] * math.e, "div", et)
        y = self.other(x)
        if op == "mul" and self.mag[x] * self.mag[y] > self.lim(x, 1e8):
            y = self.unary(y, "tanh")
        if op != "mul" and self.mag[x] + self.mag[y] > self.lim(x, math.inf):
            y = self.unary(y, "tanh")
            if self.mag[x] + 1 > F16_LIM:
                x = self.unary(x, "tanh")
        if op == "mul":
            m = self.mag[x] * self.mag[y]
        else:
            m = self.mag[x] + self.mag[y]
        return self.emit(f"kb.{op} {x}, {y} : {t}", s, m, op, et)

    def bias(self, x):
        s, et = self.shape[x], self.et[x]
        if self.mag[x] + 6 > self.lim(x, math.inf):
            x = self.unary(x, "tanh")
        b = self.arg([s[-1]], et=et)
        return self.emit(f"kb.bias_add {x}, {b} : {self.t(x)}, {ttype([s[-1]], et)} -> {self.t(x)}",
                         s, self.mag[x] + 6, "bias_add", et)

    def chain(self, x, length):
        for _ in range(length):
            if self.dtype != "f32" and self.rng.random() < 0.12:
                x = self.maybe_convert(x)
                continue
            r = self.rng.random()
            if r < 0.15:
                x = self.bias(x)
            elif r < 0.45:
                x = self.binary(x, self.rng.choice(BINARY))
            else:
                x = self.unary(x, self.rng.choice(UNARY))
        return x

    # -- the big ops --------------------------------------------------------
    def softmax(self, x):
        if self.converted:
            # kb-fuse-elementwise puts the convert into the softmax's
            # prologue, which the softmax lowering refuses (a compiler bug,
            # issue #44): generate() compiles these unfused.
            self.classes.add("convert_softmax_prologue")
        self.converted = False
        return self.emit(f"kb.softmax {x} : {self.t(x)}", self.shape[x], 1.0, "softmax",
                         self.et[x])

    def log_softmax(self, x):
        """kb.log_softmax: values in [-(2 mag + log(width)), 0]."""
        if self.converted:
            self.classes.add("convert_softmax_prologue")
        self.converted = False
        mag = 2 * self.mag[x] + math.log(self.shape[x][-1]) + 1
        return self.emit(f"kb.log_softmax {x} : {self.t(x)}", self.shape[x], mag,
                         "log_softmax", self.et[x])

    def reduce(self, x, kind, axis=None, whole=False, keepdim=False):
        """kb.reduce over `axis` (None: the last) or every element."""
        sh = self.shape[x]
        rank = len(sh)
        if whole:
            rs, form, n = ([1] * rank if keepdim else [1]), " all", numel(sh)
        else:
            a = rank - 1 if axis is None else axis
            rs = sh[:a] + ([1] if keepdim else []) + sh[a + 1:]
            form, n = (f" axis({a})" if a != rank - 1 else ""), sh[a]
        mag = self.mag[x] * (n if kind == "sum" else 1)
        kd = " keepdim" if keepdim else ""
        return self.emit(f"kb.reduce {x} {kind}{form}{kd} : {self.t(x)} -> {ttype(rs, self.et[x])}",
                         rs, mag, "reduce_all" if whole else "reduce_axis" if form else "reduce",
                         self.et[x])

    def matmul(self, a, b, precision, trans_b, padded=False):
        """A matmul; 16-bit operands (precision None) have no precision
        keyword, and write f32 or their own type (f32 where an f16 result
        could near f16's bound)."""
        sa, sb = self.shape[a], self.shape[b]
        n = sb[-2] if trans_b else sb[-1]
        sc = sa[:-2] + [sa[-2], n]
        k = sa[-1]
        m = self.mag[a] * self.mag[b] * math.sqrt(k) * 1.0 / 6.0
        et = "f32"
        if precision:
            attrs = f"precision({precision})"
        else:
            attrs = ""
            et = self.et[a] if self.rng.random() < 0.5 else "f32"
            if et == "f16" and m > F16_LIM:
                et = "f32"
            precision = "native"
        if trans_b:
            attrs += " transpose_b"
        if padded:
            attrs += " padded_b"
        attrs = attrs.lstrip()
        self.converted = False
        self.flops += 2 * numel(sc) * k
        self.classes.add("matmul_" + precision)
        if trans_b:
            self.classes.add("matmul_transpose_b")
        if len(sa) == 3:
            self.classes.add("matmul_batched")
        sep = " " + attrs if attrs else ""
        return self.emit(f"kb.matmul {a}, {b}{sep} : {self.t(a)}, {self.t(b)} -> {ttype(sc, et)}",
                         sc, m, "matmul", et)

    def transpose(self, x, pad=None):
        s = self.shape[x]
        rows = s[-2]
        if pad:
            rows = (rows + pad - 1) // pad * pad
        r = s[:-2] + [s[-1], rows]
        p = f" pad({pad})" if pad else ""
        self.converted = False
        return self.emit(f"kb.transpose {x}{p} : {self.t(x)} -> {ttype(r, self.et[x])}", r,
                         self.mag[x], "transpose", self.et[x])

    def text(self, results):
        args = ", ".join(f"{n}: {self.t(n)}" for n, _ in self.args)
        rtypes = ", ".join(self.t(r) for r in results)
        if len(results) > 1:
            rtypes = "(" + rtypes + ")"
        body = "\n".join(self.lines)
        rets = ", ".join(results)
        rt = ", ".join(self.t(r) for r in results)
        return (f"func.func @{self.name}({args}) -> {rtypes} {{\n{body}\n"
                f"  return {rets} : {rt}\n}}\n")


def gen_chain(p, rng, budget):
    shape = random_shape(rng, budget, 300000)
    x = p.arg(shape)
    return [p.chain(x, rng.randint(1, 6))]


def random_shape(rng, budget, max_last):
    """A shape of rank 1 to 4 (mostly 2) with at most `budget` elements."""
    rank = rng.choice([1, 2, 2, 2, 2, 3, 4])
    elems = log_uniform(rng, 1, budget)
    last = log_uniform(rng, 1, min(elems, max_last))
    shape = [last]
    rest = max(1, elems // last)
    for _ in range(rank - 1):
        d = log_uniform(rng, 1, max(1, min(rest, 8192)))
        shape.insert(0, d)
        rest = max(1, rest // d)
    return shape


def gen_softmax(p, rng, budget):
    # 16-bit softmax rows run on the registers strategy only: up to 32768.
    widest = 300000 if p.dtype == "f32" else HALF_SOFTMAX_WIDTH
    width = log_uniform(rng, 1, widest)
    rows = log_uniform(rng, 1, max(1, min(8192, budget // width)))
    r = rng.random()
    if r < 0.8:
        shape = [rows, width]
    elif r < 0.9:
        shape = [rng.randint(1, 4), rows, width]
    else:
        shape = random_shape(rng, budget, widest)
    x = p.arg(shape)
    if rng.random() < 0.7:
        x = p.chain(x, rng.randint(1, 4))
    aux = random.Random(repr(rng.getstate()))  # leaves rng's draws as before
    y = p.log_softmax(x) if aux.random() < 0.25 else p.softmax(x)
    if rng.random() < 0.1:
        y = p.softmax(y)  # a softmax of a softmax
    if rng.random() < 0.6:
        y = p.chain(y, rng.randint(1, 3))
    return [y]


def gen_reduce(p, rng, budget):
    """kb.reduce over the last axis, another axis, or every element, after
    an elementwise chain or not (its own kernel: a reduce fuses with
    nothing)."""
    shape = random_shape(rng, budget, 32768)
    x = p.arg(shape, mag=rng.choice([1.0, 6.0]))
    if rng.random() < 0.4:
        x = p.chain(x, rng.randint(1, 3))
    kind = rng.choice(["sum", "mean", "max", "min"])
    keepdim = rng.random() < 0.3 or len(shape) == 1
    r = rng.random()
    if r < 0.35:
        y = p.reduce(x, kind, whole=True, keepdim=rng.random() < 0.3)
    elif r < 0.8 and len(shape) > 1:
        y = p.reduce(x, kind, axis=rng.randrange(len(shape) - 1), keepdim=keepdim)
    else:
        y = p.reduce(x, kind, keepdim=keepdim)
    return [y]


def matmul_shape(rng, budget, flop_budget):
    for _ in range(100):
        batch = rng.choice([None] * 4 + [log_uniform(rng, 1, 64)])
        m = log_uniform(rng, 1, 4096)
        n = log_uniform(rng, 1, 4096)
        k = log_uniform(rng, 1, 8192) if rng.random() < 0.9 else log_uniform(rng, 8192, 262144)
        b = batch or 1
        elems = b * (m * k + k * n + m * n)
        if elems <= budget and 2 * b * m * n * k <= flop_budget:
            return batch, m, n, k
    return None, 64, 64, 64


def gen_matmul(p, rng, budget, flop_budget, then_softmax=False):
    batch, m, n, k = matmul_shape(rng, budget // 2, flop_budget)
    lead = [batch] if batch else []
    precision = rng.choice(PRECISIONS)
    if p.dtype != "f32":
        precision = None  # a 16-bit matmul: no precision keyword
    trans_b = rng.random() < 0.4
    a = p.arg(lead + [m, k])
    explicit_t = not trans_b and rng.random() < 0.15
    if trans_b:
        b = p.arg(lead + [n, k])
    elif explicit_t:
        # B given as N x K, transposed in the program, then used row-major
        # (or padded and used as transpose_b padded_b).
        bt = p.arg(lead + [n, k])
        if rng.random() < 0.5:
            b = p.transpose(bt)
        else:
            b = p.arg(lead + [k, n])
            b = p.transpose(b, pad=32)
            trans_b = True
    else:
        b = p.arg(lead + [k, n])
    if rng.random() < 0.25:
        a = p.chain(a, rng.randint(1, 2))
        a = p.convert(a, p.et[b])  # a chain that ended in a convert: back
    padded = trans_b and p.shape[b][-1] != k
    c = p.matmul(a, b, precision, trans_b, padded)
    if rng.random() < 0.6:
        c = p.chain(c, rng.randint(1, 4))
    if rng.random() < 0.1:
        # A second matmul on the first's result: C (M x N) x D (N x N2).
        n2 = log_uniform(rng, 1, 512)
        batch_m_n = numel(p.shape[c])
        if 2 * batch_m_n * n2 + p.flops <= flop_budget and 4 * batch_m_n * n2 < budget:
            if p.mag[c] > 1e3:
                c = p.unary(c, "tanh")
            c = p.convert(c, p.dtype)
            d2 = p.arg(lead + [p.shape[c][-1], n2])
            prec2 = rng.choice(PRECISIONS)
            c = p.matmul(c, d2, prec2 if p.dtype == "f32" else None, False)
            p.classes.add("matmul_chain")
    if then_softmax:
        if p.mag[c] > 1e3:
            c = p.unary(c, "scale")
        c = p.softmax(c)
        if rng.random() < 0.5:
            c = p.chain(c, rng.randint(1, 2))
    return [c]


def near(rng, base):
    """BASE or a size next to it: the tile multiples kb-tile's rules are
    written for, and the edges one off them."""
    return max(1, base + rng.choice([0, 0, 0, -1, 1, 3, -5, 17, 40]))


# The shape families kb-tile's rules decide (lib/Transforms/Tile.cpp,
# TileWgmma.cpp, docs/shapes.md), each with its edges: the skinny and
# matrix-vector matmuls (gemv, split-K, the skinny-reduce rule, evict-first
# weights), nn.Linear shapes (widths 160-256, pairs, the wide reduce, the
# persistent grid), batches up to K = 1024 (the batched persistent grid),
# the medium shapes (clusters of 4), long K (split-K) and tall K <= 128
# (the persistent grid of few k tiles).
RULE_FAMILIES = ["skinny", "linear", "batched", "medium", "long_k", "tall",
                 "skinny_reduce", "wide_reduce", "pair"]
# The narrow ones, B^T and tf32 (TileWgmma.cpp): the skinny reduce (M <=
# 128, K 4096-5120, two chunks summed in a cluster), the wide reduce (M <=
# 512, N >= 4096, K >= 8192) and the pair rule (one wave of 128 x 128, K
# 3072-8192, clusters of two), each with a few draws off its bounds.
NARROW = {"skinny_reduce", "wide_reduce", "pair"}


def rule_shape(rng, family):
    mult = lambda lo, hi, q: rng.randint(lo // q, hi // q) * q
    if family == "skinny":
        m = rng.choice([1, 1, 2, 3, 4, 7, 8, 16, 32, 64, 96, 100, 128])
        return None, m, near(rng, mult(2048, 16384, 256)), near(rng, mult(1024, 8192, 256))
    if family == "linear":
        return None, near(rng, mult(256, 4096, 128)), near(rng, mult(1024, 8192, 256)), \
            near(rng, mult(1024, 8192, 256))
    if family == "batched":
        return rng.choice([2, 3, 8, 12, 16, 32, 64, 128, 256]), near(rng, mult(64, 1024, 64)), \
            near(rng, mult(64, 1024, 64)), near(rng, mult(64, 1024, 64))
    if family == "medium":
        return None, rng.randint(500, 2500), rng.randint(500, 2500), rng.randint(500, 2500)
    if family == "long_k":
        return None, near(rng, mult(16, 512, 16)), near(rng, mult(16, 512, 16)), \
            near(rng, mult(16384, 262144, 1024))
    if family == "skinny_reduce":
        return None, rng.randint(65, 128), near(rng, mult(8192, 16384, 256)), near(rng, mult(4096, 5120, 32))
    if family == "wide_reduce":
        return None, rng.choice([256, 384, 512, 512, 500]), rng.choice([4096, 4096, 5120, 8192, 4100]), \
            near(rng, mult(8192, 16384, 32))
    if family == "pair":
        return None, rng.choice([256, 512, 768, 1024, 1000]), near(rng, mult(1024, 4096, 128)), \
            near(rng, mult(3072, 8192, 32))
    return None, near(rng, mult(4096, 65536, 1024)), near(rng, mult(16, 2048, 16)), \
        near(rng, mult(8, 128, 8))


def gen_rule_matmul(p, rng, budget, flop_budget):
    """A matmul (with an epilogue chain half the time) of a shape kb-tile's
    rules decide, mostly tf32 on sm_90a (the wgmma kernels)."""
    family = rng.choice(RULE_FAMILIES)
    for _ in range(100):
        batch, m, n, k = rule_shape(rng, family)
        b = batch or 1
        if b * (m * k + k * n + m * n) <= budget and 2 * b * m * n * k <= flop_budget:
            break
    else:
        # No draw of the family fits the budgets (a small --max-flops):
        # a small matmul, labelled as such.
        batch, m, n, k = None, 100, 100, 100
        family = "fallback"
    lead = [batch] if batch else []
    narrow = family in NARROW
    precision = "tf32" if narrow else rng.choices(PRECISIONS, weights=[15, 70, 15])[0]
    if p.dtype != "f32":
        precision = None
    trans_b = narrow or rng.random() < 0.6
    a = p.arg(lead + [m, k])
    b = p.arg(lead + ([n, k] if trans_b else [k, n]))
    c = p.matmul(a, b, precision, trans_b)
    if rng.random() < 0.5:
        c = p.bias(c)
        c = p.chain(c, rng.randint(0, 2))
    p.classes.add("rule_" + family)
    return [c]


def gen_transpose(p, rng, budget):
    lead = [log_uniform(rng, 1, 16)] if rng.random() < 0.3 else []
    r = log_uniform(rng, 1, 4096)
    c = log_uniform(rng, 1, max(1, min(4096, budget // (r * (lead[0] if lead else 1) * 2))))
    x = p.arg(lead + [r, c])
    pad = rng.choice([None, None, 4, 32, 128])
    y = p.transpose(x, pad)
    if rng.random() < 0.5:
        y = p.chain(y, rng.randint(1, 3))
    return [y]


def generate(index, seed, mem_budget, flop_budget, rules=0.0, half=0.0):
    rng = random.Random(seed * 1000003 + index)
    name = f"p{index:04d}"
    elem_budget = mem_budget // 4
    # A share of rule-shaped matmuls (--rules); without it the draws, and so
    # each seed's programs, are those of the generator before it.
    rule = rules > 0 and rng.random() < rules
    # A share of 16-bit programs (--half), bf16 or f16: every tensor in that
    # type but a matmul's f32 result and what a kb.convert makes. Again no
    # draw without it.
    dtype = "f32"
    if half > 0 and rng.random() < half:
        dtype = rng.choice(["bf16", "f16"])
    for _ in range(50):
        p = Program(rng, name, dtype)
        kind = "rule_matmul" if rule else rng.choices(
            ["chain", "softmax", "matmul", "matmul_softmax", "transpose"],
            weights=[20, 30, 30, 12, 8])[0]
        # Each op keeps its result: leave room for a chain of ~10 buffers.
        per = max(1, elem_budget // 12)
        # Half the chains become a reduction (about one program in ten),
        # drawn from a stream of its own (seeded from the main one's state,
        # which it leaves as it was): the other programs stay those of the
        # generator before it.
        aux = random.Random(repr(rng.getstate()))
        if kind == "chain" and aux.random() < 0.5:
            kind = "reduce"
        if kind == "reduce":
            main_rng, p.rng = p.rng, aux
            results = gen_reduce(p, aux, min(per, 1 << 26))
            p.rng = main_rng
        elif kind == "rule_matmul":
            results = gen_rule_matmul(p, rng, elem_budget // 2, flop_budget)
        elif kind == "chain":
            results = gen_chain(p, rng, min(per, 1 << 26))
        elif kind == "softmax":
            results = gen_softmax(p, rng, min(per, 1 << 26))
        elif kind == "matmul":
            results = gen_matmul(p, rng, per, flop_budget)
        elif kind == "matmul_softmax":
            results = gen_matmul(p, rng, per, flop_budget, then_softmax=True)
        else:
            results = gen_transpose(p, rng, per)
        if p.bytes <= mem_budget and p.flops <= flop_budget:
            break
    # One program in ten also returns an intermediate value (a second
    # output: multi-result kernels and fusions).
    inner = [v for v in p.shape if v.startswith("%v") and v not in results]
    if inner and rng.random() < 0.1:
        results.append(rng.choice(inner))
        p.classes.add("two_results")
    chip = "sm_90a" if rule and rng.random() < 0.85 else rng.choice(CHIPS)
    if dtype != "f32":
        # A 16-bit matmul takes wgmma on sm_90a and mma.sync m16n8k16 on
        # sm_90: the chip drawn above, as for f32.
        p.classes.add("half_" + dtype)
    fuse = rng.random() < 0.75
    if "convert_softmax_prologue" in p.classes:
        fuse = False  # see Program.softmax
    info = {"name": name, "file": name + ".mlir", "kind": kind, "chip": chip, "fuse": fuse,
            "classes": sorted(p.classes), "bytes": p.bytes, "flops": p.flops,
            "args": [s for _, s in p.args]}
    if dtype != "f32":
        info["dtype"] = dtype
    return p.text(results), info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-bytes", type=int, default=1_500_000_000)
    ap.add_argument("--max-flops", type=float, default=2e11)
    ap.add_argument("--rules", type=float, default=0.0,
                    help="the share of programs that are a matmul of a shape kb-tile's rules decide "
                         "(RULE_FAMILIES: skinny, nn.Linear, batched, medium, long K, tall, and the "
                         "skinny-reduce, wide-reduce and pair rules' narrow ranges), mostly tf32 on sm_90a")
    ap.add_argument("--half", type=float, default=0.0,
                    help="the share of programs in bf16 or f16 (half each): every tensor in that "
                         "type, 16-bit matmuls (no precision keyword, an f32 or 16-bit result) on "
                         "sm_90 (mma.sync) or sm_90a (wgmma), softmax rows up to 32768, kb.convert now and then; 0 (the default) "
                         "writes each seed's programs as before")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    index = []
    for i in range(a.count):
        text, info = generate(i, a.seed, a.max_bytes, a.max_flops, a.rules, a.half)
        with open(os.path.join(a.out, info["file"]), "w") as f:
            f.write(text)
        index.append(info)
    with open(os.path.join(a.out, "index.json"), "w") as f:
        head = {"seed": a.seed, "count": a.count, "rules": a.rules}
        if a.half > 0:
            head["half"] = a.half
        json.dump(dict(head, programs=index), f, indent=1)
    print(f"wrote {a.count} programs to {a.out} (seed {a.seed})")


if __name__ == "__main__":
    main()
