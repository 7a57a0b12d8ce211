"""Shared pieces of the bench/*_check.sh call builders (linear_check.sh,
streamk_check.sh): nn.Linear programs with an epilogue written into
build/gpu/programs, and the hand-set variants (program, variant name,
config) that bench/gpu_call.sh builds from build/gpu/variants.txt."""
import sys

sys.path.insert(0, "bench")
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


def write_variants():
    with open("build/gpu/variants.txt", "w") as f:
        for v in variants:
            f.write("\t".join(v) + "\n")
