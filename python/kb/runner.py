"""kb.run: kb-run --json on a bundle, its report as a dict.

Inputs given as arrays are written as .npy files of their buffer's dtype
(docs/bundle.md): f32 '<f4', f16 '<f2', bf16 '<u2' holding the raw bf16
bits (numpy has no bfloat16), rounded to nearest even on the way.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .bundle import Bundle, find_tool
from .ir import KbError


def find_kb_run() -> str:
    p = find_tool("kb-run", "KB_RUN")
    if not p:
        raise KbError("kb-run not found: set KB_RUN, put it on PATH, or build it "
                      "(build/bin/kb-run; it needs the CUDA toolkit to build)")
    return p


def run(bundle, inputs: Optional[Dict[str, object]] = None, baseline=None,
        check_only: bool = False, profile: bool = False, seed: Optional[int] = None,
        args: Sequence[str] = (), timeout: Optional[float] = None,
        raise_on_error: bool = True) -> dict:
    """Runs kb-run on `bundle` (a Bundle or a folder) and returns its JSON
    report (docs/kb-run-json.md). `inputs` maps input buffer names to arrays
    (numpy or torch), written as .npy files for --input. `baseline` is
    another bundle timed in the same run. Raises KbRunError (a KbError)
    with kb-run's message when it reports an error (status "error": no GPU,
    a bad bundle or input; unless raise_on_error=False) or prints no
    report; a report of a wrong result (status "wrong", exit 3) is returned
    as it is."""
    import numpy as np
    path = bundle.path if isinstance(bundle, Bundle) else Path(bundle)
    cmd = [find_kb_run(), str(path), "--json"]
    tmp = None
    if inputs:
        b = bundle if isinstance(bundle, Bundle) else Bundle.open(path)
        dtypes = {x["name"]: x.get("dtype", "f32") for x in b.manifest["buffers"]}
        tmp = tempfile.TemporaryDirectory(prefix="kb-run-inputs-")
        for name, arr in inputs.items():
            a = npy_array(arr, dtypes.get(name, "f32"))
            f = Path(tmp.name) / f"{name}.npy"
            np.save(f, a)
            cmd += ["--input", f"{name}={f}"]
    if baseline is not None:
        cmd += ["--baseline", str(baseline.path if isinstance(baseline, Bundle) else baseline)]
    if check_only:
        cmd.append("--no-time")
    if profile:
        cmd.append("--profile")
    if seed is not None:
        cmd += ["--seed", str(int(seed))]
    cmd += list(args)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    finally:
        if tmp is not None:
            tmp.cleanup()
    out = r.stdout.strip()
    report = None
    if out:
        try:
            report = json.loads(out)
        except json.JSONDecodeError:
            report = None
    if report is None:
        msg = r.stderr.strip() or out or f"exit code {r.returncode}"
        raise KbError(f"kb-run {path} failed (exit {r.returncode}): {msg}")
    report.setdefault("exit_code", r.returncode)
    if report.get("status") == "error" and raise_on_error:
        raise KbRunError(f"kb-run {path}: {report.get('message', 'failed')} (exit {r.returncode}, "
                         f"{report.get('error', 'error')})", report)
    return report


def bf16_bits(a):
    """float32 values as the raw bits of bf16 (uint16), rounded to nearest
    even as kb.convert and torch do (a NaN stays a quiet NaN)."""
    import numpy as np
    a = np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), r)


def npy_array(arr, dtype: str = "f32"):
    """`arr` (numpy or torch) as the array kb-run reads for a buffer of
    `dtype` ("f32", "f16", "bf16")."""
    import numpy as np
    if hasattr(arr, "detach"):
        t = arr.detach().cpu()
        if dtype == "bf16":
            import torch
            return np.ascontiguousarray(t.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        arr = t.numpy()
    if dtype == "bf16":
        return bf16_bits(arr)
    if dtype == "f16":
        return np.ascontiguousarray(np.asarray(arr, dtype=np.float16))
    if dtype != "f32":
        raise KbError(f"kb.run writes inputs of f32, f16 or bf16 buffers, not {dtype}")
    return np.ascontiguousarray(np.asarray(arr, dtype=np.float32))


class KbRunError(KbError):
    """kb-run reported an error (no GPU, a bad bundle or input); `.report`
    is its JSON report."""

    def __init__(self, msg, report):
        super().__init__(msg)
        self.report = report
