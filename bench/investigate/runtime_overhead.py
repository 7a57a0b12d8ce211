#===- bench/investigate/runtime_overhead.py - Dynamo's profiler hooks ----===#
#
# Throwaway (issue #47), removed from the tree in the next commit: a
# compiled MLP call with Dynamo over a constant backend, with
# torch._dynamo.config.record_runtime_overhead on (the default) and off.
#   . scripts/python-env.sh; $KB_PYTHON bench/investigate/runtime_overhead.py
#
#===----------------------------------------------------------------------===#
import timeit, types, warnings; warnings.simplefilter("ignore")
import torch, kb.models as M
X = torch.randn(64, 256); out0 = torch.empty(64, 128)
def fresh():
    f = M.MLP.forward
    cls = type("MLPx", (M.MLP,), {"forward": types.FunctionType(f.__code__.replace(), f.__globals__, "forward")})
    return cls(256, 512, 128).eval()
fs = {}
with torch.no_grad():
    for flag in (True, False):
        with torch._dynamo.config.patch(record_runtime_overhead=flag):
            fs[flag] = torch.compile(fresh(), backend=lambda gm, ex: (lambda *a: (out0,)))
            fs[flag](X[:1]); fs[flag](X)
    acc = {}
    for _ in range(5):
        for k, f in fs.items():
            acc.setdefault(k, []).append(min(timeit.repeat(lambda: f(X), number=3000, repeat=1)) / 3000 * 1e6)
    for k, v in acc.items():
        v.sort(); print(f"record_runtime_overhead={k}: min {v[0]:.2f} median {v[2]:.2f} us")
