#!/usr/bin/env python3
"""kb.load with and without programmatic dependent launch, same call.

Loads each bundle twice (dependent_launch True and False), checks that both
give the same bits, then times back-to-back calls of each with CUDA events
(median of repeated batches, the L2 not flushed: this measures the launch
gaps PDL removes, not the kernels): "gpu" with the calls queued behind a
sleep kernel (the GPU's time), "host" without (the host's launch rate may
decide). Prints one JSON object.

Usage (on the GPU machine): python3 bench/python_dependent_launch.py BUNDLE...
(bundles from scripts/build-pybundles.sh, e.g. build/pybundles/tests/split_k).
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import torch  # noqa: E402

import kb  # noqa: E402


def time_calls(fn, args, calls=50, batches=15, queued=False):
    """Median ms a call over batches of back-to-back calls. queued: the
    calls are enqueued behind a 20 ms sleep kernel, so the GPU runs them
    without waiting for the host (the GPU's time, where PDL acts);
    otherwise the host's launch rate can decide."""
    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    per_call = []
    for _ in range(batches):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if queued:
            torch.cuda._sleep(40_000_000)  # about 20 ms at 1.98 GHz
        a.record()
        for _ in range(calls):
            fn(*args)
        b.record()
        b.synchronize()
        per_call.append(a.elapsed_time(b) / calls)
    return statistics.median(per_call)


def main(paths):
    if not paths:
        print(__doc__)
        return 1
    out = {}
    for p in paths:
        b = kb.Bundle.open(p)
        fast, slow = kb.load(b), kb.load(b, dependent_launch=False)
        args = [torch.randn(*a["shape"], device="cuda") for a in b.signature["args"]]
        got, ref = fast(*args), slow(*args)
        got, ref = (got, ref) if isinstance(got, tuple) else ((got,), (ref,))
        same = all(torch.equal(g, r) for g, r in zip(got, ref))
        r = {"kernels": len(fast.kernels), "dependent": sum(k["dependent"] for k in fast.kernels),
             "same_bits": same}
        for mode, queued in (("gpu", True), ("host", False)):
            t_on, t_off = time_calls(fast, args, queued=queued), time_calls(slow, args, queued=queued)
            r[mode] = {"ms_dependent_launch": t_on, "ms_serial": t_off, "saved_us": 1000 * (t_off - t_on)}
        out[Path(p).name] = r
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
