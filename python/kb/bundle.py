"""Compiling kb programs to bundles (kb-opt) and reading bundles.

A bundle is the folder kb-opt --kb-compile writes (docs/bundle.md). The
Python front end adds one file, `kb_python.json`, which says how the
Python callable's arguments map onto the bundle's input buffers (a graph
input may be viewed with another shape, e.g. (B, S, K) as (B*S, K) for a
Linear) and how outputs are shaped back; kb-run ignores it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .ir import KbError, Program

CHIPS = ("sm_90a", "sm_90", "sm_80")
SIDECAR = "kb_python.json"


def _repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def find_tool(name: str, env: str) -> Optional[str]:
    """KB_OPT / KB_RUN, then PATH, then the checkout's build/bin."""
    v = os.environ.get(env)
    if v:
        if not (os.path.isfile(v) and os.access(v, os.X_OK)):
            raise KbError(f"{env}={v} is not an executable")
        return v
    p = shutil.which(name)
    if p:
        return p
    local = _repo_root() / "build" / "bin" / name
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return None


def find_kb_opt() -> str:
    p = find_tool("kb-opt", "KB_OPT")
    if not p:
        raise KbError("kb-opt not found: set KB_OPT, put it on PATH, or build it "
                      "(bash scripts/setup.sh writes build/bin/kb-opt). Compiling needs "
                      "kb-opt; kb.load of an existing bundle does not.")
    return p


@dataclass
class Bundle:
    """A compiled kb program: `path` (the bundle folder), its manifest, and
    the Python calling convention (`signature`)."""
    path: Path
    manifest: dict
    signature: dict = field(default_factory=dict)
    mlir: str = ""

    @classmethod
    def open(cls, path) -> "Bundle":
        path = Path(path)
        mf = path / "manifest.json" if path.is_dir() else path
        if not mf.is_file():
            raise KbError(f"{path}: not a bundle (no manifest.json); write one with kb.compile "
                          f"or kb-opt --kb-compile")
        try:
            manifest = json.loads(mf.read_text())
        except json.JSONDecodeError as e:
            raise KbError(f"{mf}: invalid JSON: {e}")
        if manifest.get("format") != "kb-bundle" or manifest.get("version") != 1:
            raise KbError(f"{mf}: not a kb bundle of version 1")
        root = mf.parent
        sig = {}
        if (root / SIDECAR).is_file():
            sig = json.loads((root / SIDECAR).read_text())
        mlir = (root / "program.mlir").read_text() if (root / "program.mlir").is_file() else ""
        return cls(root, manifest, sig or default_signature(manifest), mlir)

    def buffers(self, role=None) -> List[dict]:
        return [b for b in self.manifest["buffers"] if role is None or b["role"] == role]

    @property
    def kernels(self) -> List[dict]:
        return self.manifest["kernels"]

    @property
    def target(self) -> str:
        return self.manifest.get("target", "")

    def __repr__(self):
        names = ", ".join(k["name"] for k in self.kernels)
        return f"<kb bundle {self.path} ({self.target}): {names}>"


def default_signature(manifest) -> dict:
    """Inputs in manifest order, each its own argument; outputs as stored."""
    ins = [b for b in manifest["buffers"] if b["role"] == "input"]
    outs = [b for b in manifest["buffers"] if b["role"] == "output"]
    return {
        "args": [{"name": b["name"], "shape": b["shape"]} for b in ins],
        "inputs": [{"buffer": b["name"], "arg": i, "shape": b["shape"]} for i, b in enumerate(ins)],
        "outputs": [{"buffer": b["name"], "shape": b["shape"]} for b in outs],
        "single_output": len(outs) == 1,
    }


def compile_program(program: Program, output=None, chip: str = "sm_90a",
                    fuse: bool = True, ptxas: str = "auto", signature: Optional[dict] = None,
                    extra: Optional[dict] = None, tuning_db=None) -> Bundle:
    """Runs kb-opt --kb-compile on `program` and returns the bundle. An
    `output` folder that holds an earlier bundle is replaced whole by
    kb-opt; one that holds anything else is refused (no file is deleted).
    `tuning_db` is a kb-tune database (docs/kb-tune.md)."""
    if chip not in CHIPS:
        raise KbError(f"unknown chip {chip!r} (known: {', '.join(CHIPS)})")
    kb_opt = find_kb_opt()
    text = program.mlir() if isinstance(program, Program) else str(program)
    if output is None:
        output = tempfile.mkdtemp(prefix=f"kb-{getattr(program, 'name', 'prog')}-")
    out = Path(output).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    opts = f"output={out} chip={chip} fuse={'true' if fuse else 'false'} ptxas={ptxas}"
    if tuning_db is not None:
        db = Path(tuning_db).resolve()
        if not db.is_file():
            raise KbError(f"tuning_db {tuning_db}: not a file (write one with kb-tune --db)")
        opts += f" tuning-db={db}"
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        src = f.name
    t0 = time.time()
    try:
        r = subprocess.run([kb_opt, src, f"--kb-compile={opts}", "-o", os.devnull],
                           capture_output=True, text=True)
    finally:
        os.unlink(src)
    if r.returncode != 0:
        msg = r.stderr.strip().replace(src, "<program>")
        raise KbError(f"kb-opt refused the program:\n{msg}\n--- the program ---\n{text}")
    (out / "program.mlir").write_text(text)
    manifest = json.loads((out / "manifest.json").read_text())
    sig = signature or default_signature(manifest)
    sig = dict(sig)
    sig["chip"] = chip
    sig["fuse"] = fuse
    sig["compile_seconds"] = round(time.time() - t0, 3)
    if extra:
        sig.update(extra)
    (out / SIDECAR).write_text(json.dumps(sig, indent=1))
    return Bundle(out, manifest, sig, text)


# The bundle record (docs/bundle.md): kb-opt ends each kernel's PTX with the
# manifest it compiled the kernel for, less what does not change the
# kernels' work (kb.record). kb-run --check and kb.load refuse a manifest
# that differs.
from .record import RECORD_TAG, bundle_record_of  # noqa: E402


def _first_difference(compiled, given, path=""):
    """(field, compiled, given) where they first differ, or None."""
    if isinstance(compiled, dict) and isinstance(given, dict):
        for key in sorted(set(compiled) | set(given)):
            sub = f"{path}.{key}" if path else key
            if key not in given:
                return sub, compiled[key], "missing"
            if key not in compiled:
                return sub, "absent", given[key]
            d = _first_difference(compiled[key], given[key], sub)
            if d:
                return d
        return None
    if isinstance(compiled, list) and isinstance(given, list):
        for i, (c, g) in enumerate(zip(compiled, given)):
            d = _first_difference(c, g, f"{path}[{i}]")
            if d:
                return d
        if len(compiled) != len(given):
            return path, f"{len(compiled)} entries", f"{len(given)} entries"
        return None
    # JSON's true is not 1 (Python's True == 1 is); 1 and 1.0 are one number.
    if isinstance(compiled, bool) or isinstance(given, bool):
        same = type(compiled) is type(given) and compiled == given
    else:
        same = type(compiled) is type(given) or (
            isinstance(compiled, (int, float)) and isinstance(given, (int, float)))
        same = same and compiled == given
    return None if same else (path or "the manifest", compiled, given)


def check_bundle_record(manifest: dict, index: int, ptx: Optional[bytes]) -> None:
    """Raises KbError unless kernel `index`'s PTX holds exactly one record,
    of this kernel, equal to the manifest's (bundle_record_of)."""
    k = manifest["kernels"][index]
    where = f"kernels[{index}] ({k.get('name')})"
    lines = [l for l in (ptx or b"").split(b"\n") if l.startswith(RECORD_TAG)]
    if not lines:
        raise KbError(f"{where}: {k.get('ptx')} has no kb.bundle-record line (a PTX kb-opt did not "
                      f"write, or of a kb older than the record): recompile the bundle")
    if len(lines) > 1:
        raise KbError(f"{where}: {k.get('ptx')} has more than one kb.bundle-record line")
    try:
        rec = json.loads(lines[0][len(RECORD_TAG):])
        kernel, compiled = rec["kernel"], rec["manifest"]
    except (ValueError, KeyError, TypeError):
        raise KbError(f"{where}: {k.get('ptx')}'s kb.bundle-record line is not a JSON object with "
                      f"\"kernel\" and \"manifest\"")
    if kernel != index:
        raise KbError(f"{where}: {k.get('ptx')} was compiled as kernel {kernel} of its bundle")
    d = _first_difference(compiled, bundle_record_of(manifest))
    if d:
        field_, was, now = d
        raise KbError(f"manifest: {field_} is {json.dumps(now)} but {k.get('ptx')} was compiled for "
                      f"{json.dumps(was)} (its kb.bundle-record): recompile the bundle instead of editing it")
