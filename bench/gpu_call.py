"""Shared pieces of the bench/*_check.sh call builders (linear_check.sh,
streamk_check.sh): nn.Linear programs with an epilogue written into
build/gpu/programs, and the hand-set variants (program, variant name,
config) that bench/gpu_call.sh builds from build/gpu/variants.txt."""
import sys

sys.path.insert(0, "bench")
import shapes  # noqa: E402
from programs import linear  # noqa: E402

P = "build/gpu/programs"
EPILOGUES = {"relu": ("bias", "relu"), "gelu": ("bias", "scale", "gelu_erf"),
             "swish": ("bias", "swish"), "plain": ()}
variants = []


def prog(m, n, k, e):
    """lf-E-MxNxK-sm90a: F.linear of M x K by N x K weights, epilogue E."""
    name = f"lf-{e}-{m}x{n}x{k}-sm90a"
    open(f"{P}/{name}.mlir", "w").write(linear(m, n, k, "tf32", EPILOGUES[e]))
    return name


def variant(name, tag, config):
    """NAME-TAG-sm90a: NAME's program with CONFIG set by hand (bench/ab.sh
    pairs it with NAME when TAG is v<BM>x<BN>s<S>...)."""
    variants.append((name, name[:-len("-sm90a")] + f"-{tag}-sm90a", config))


def resolve(prog, name, config, bundles="build/gpu/bundles"):
    """A variant's name and config with the placeholders filled from the
    default bundle of PROG (its manifest's matmul kernel): {tile} in the
    name becomes v<BM>x<BN>s1; {block} in the config that tile's block, and
    {default} the default's whole config, whose fields the config's other
    fields override (e.g. "{default}, threads = 288")."""
    import json
    import re
    try:
        kernels = json.load(open(f"{bundles}/{prog}/manifest.json"))["kernels"]
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"{prog}: no default bundle to fill {name}'s "
                         f"placeholders from ({e}); compile the program first")
    for k in kernels:
        c = k.get("config", "")
        m = re.search(r"block = \[(\d+), (\d+), (\d+)\]", c)
        if m and "mma" in c:
            break
    else:
        raise SystemExit(f"{prog}: no matmul kernel in its manifest")
    bm, bn, bk = m.groups()
    name = name.replace("{tile}", f"v{bm}x{bn}s1")
    config = config.replace("{block}", f"block = [{bm}, {bn}, {bk}]")
    if "{default}" in config:
        # Split a config body into its fields (commas inside [] kept).
        def fields(text):
            return [f.strip() for f in re.split(r",(?![^\[]*\])", text) if f.strip()]
        extra = fields(config.replace("{default}", ""))
        keys = {f.split("=")[0].strip() for f in extra}
        base = [f for f in fields(c[len("#kb.config<"):-1])
                if f.split("=")[0].strip() not in keys]
        config = ", ".join(base + extra)
    return name, config


def write_variants():
    with open("build/gpu/variants.txt", "w") as f:
        for v in variants:
            f.write("\t".join(v) + "\n")


def fixed(name, m, n, k, tb, config, e=None, prefix="sk"):
    """PREFIX-NAME-sm90a: an M x N x K matmul (B^T where tb) with CONFIG set
    by hand, as a plain matmul (e None) or as F.linear with epilogue E."""
    if e is None:
        text = shapes.program(m, n, k, 1, tb, config)
    else:
        text = linear(m, n, k, "tf32", EPILOGUES[e]).replace(
            "precision(tf32) transpose_b",
            f"precision(tf32) transpose_b {{config = #kb.config<{config}>}}")
    open(f"{P}/{prefix}-{name}-sm90a.mlir", "w").write(text)


def streamk_programs(every=True):
    """Hand-set stream-K (reduce = "stream") where a tile is cut: edges in
    M, N and K, both forms of B, fused epilogues, grids smaller than the
    tiles, 4 tiles over 132 blocks (bench/results/2026-12-03-streamk); with
    every False only the first two."""
    s = 'grid = {}, reduce = "stream"'
    fixed("odd-1000x700x1500-bt", 1000, 700, 1500, True,
          "block = [128, 128, 32], " + s.format(40))
    fixed("swish-1024x5120x13824", 1024, 5120, 13824, True,
          "block = [128, 256, 32], " + s.format(132), "swish")
    if not every:
        return
    fixed("odd-1000x700x1500", 1000, 700, 1500, False,
          "block = [128, 128, 32], " + s.format(40))
    fixed("gelu-999x1000x1500", 999, 1000, 1500, True,
          "block = [128, 128, 32], " + s.format(50), "gelu")
    fixed("plain-2048x2048x4096-g120", 2048, 2048, 4096, True,
          "block = [128, 128, 32], " + s.format(120))
    fixed("plain-256x256x16384-bt", 256, 256, 16384, True,
          "block = [128, 128, 32], " + s.format(132))
