"""PyTorch's result for an imported program, and kb's dropout mask.

reference() runs the traced graph in float64 (or another dtype) with every
training-mode dropout using the mask kb's kernels draw (Philox4x32-10,
docs/bundle.md), and every dtype conversion the program makes (a kb.convert)
rounding to its type and back, so that a 16-bit program's reference sees the
same rounded values as the kernels.
"""

from __future__ import annotations

import functools
import math

# -- dropout's mask, as kb computes it (docs/bundle.md, lib/Runtime/Philox.cpp)


def philox4x32_10(c, k):
    """Random123's Philox4x32-10 on numpy arrays: c = 4 counter words, k = 2
    key words (uint32 values in uint64 arrays or ints); returns 4 arrays."""
    import numpy as np
    M = np.uint64(0xFFFFFFFF)
    c0, c1, c2, c3 = (np.asarray(x, dtype=np.uint64) & M for x in c)
    k0, k1 = int(k[0]) & 0xFFFFFFFF, int(k[1]) & 0xFFFFFFFF
    m0, m1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    for _ in range(10):
        p0 = m0 * c0
        p1 = m1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & M
        hi1, lo1 = p1 >> np.uint64(32), p1 & M
        c0, c1, c2, c3 = hi1 ^ c1 ^ np.uint64(k0), lo1, hi0 ^ c3 ^ np.uint64(k1), lo0
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


@functools.lru_cache(maxsize=8)
def philox_keep_mask(numel: int, p: float, seed: int):
    """A numpy bool array: element i of a kb.dropout with (p, seed) is kept
    (docs/bundle.md: counter (i / 4, 0, 0, 0), key (seed), word i % 4, kept
    when word >> 8 >= ceil(p 2^24))."""
    import numpy as np
    idx = np.arange(numel, dtype=np.uint64)
    group = idx >> np.uint64(2)
    zero = np.zeros_like(group)
    words = np.stack(philox4x32_10((group & np.uint64(0xFFFFFFFF), group >> np.uint64(32), zero, zero),
                                   (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF)))
    w = words[(idx & np.uint64(3)).astype(np.int64), np.arange(numel)]
    threshold = min(math.ceil(float(np.float32(p)) * 16777216.0), 16777216)
    return (w >> np.uint64(8)) >= np.uint64(threshold)


def reference(imported, module, inputs, dtype=None):
    """PyTorch's result for `inputs`, with every dropout using kb's mask (so
    that a training-mode dropout can be checked), computed in `dtype`
    (default float64) on the inputs' device; a conversion the program
    makes rounds to its type and comes back to `dtype`."""
    import torch
    import torch.fx as fx
    import numpy as np
    dtype = dtype or torch.float64
    gm = imported.graph_module
    drops = imported.dropouts
    if module is not None:
        import copy
        gm = copy.deepcopy(gm)
    gm = gm.to(dtype)

    converts = getattr(imported, "converts", {})
    to_torch = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

    class Ref(fx.Interpreter):
        def run_node(self, node):
            if node.name in converts:  # round as kb.convert does, compute on in dtype
                x = self.env[node.args[0]]
                return x.to(to_torch[converts[node.name]]).to(dtype)
            if node.name in drops:
                p, seed = drops[node.name]
                x = self.env[node.args[0]] if isinstance(node.args[0], fx.Node) else node.args[0]
                keep = torch.from_numpy(philox_keep_mask(x.numel(), p, seed)).to(x.device).reshape(x.shape)
                scale = float(np.float32(1.0) / (np.float32(1.0) - np.float32(p)))
                return torch.where(keep, x * scale, torch.zeros_like(x))
            return super().run_node(node)

    args = [t.to(dtype) for t in inputs]
    with torch.no_grad():
        return Ref(gm).run(*args)
