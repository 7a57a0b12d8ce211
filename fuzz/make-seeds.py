#!/usr/bin/env python3
"""Writes the seed corpora of kb's fuzz targets (scripts/fuzz.sh runs it).

  make-seeds.py SRC OUT KB_OPT

SRC is the project root, OUT the folder to fill (OUT/<target>/), KB_OPT a
kb-opt binary used to compile seed bundles for the manifest target.
  kb-compile: examples/*.mlir and every `// -----` case of the lit inputs
              under test/ (RUN/CHECK lines dropped; a `// chip=...` first
              line where the test's RUN line names a chip);
  manifest:   manifest.json of bundles compiled from examples/ for sm_80,
              sm_90 and sm_90a with ptxas=none, plus a few hand-made ones;
  npy:        small .npy files (f4 of several ranks, and
              the kinds kb-run must refuse: f8, i4, Fortran order, v2.0).
"""
import hashlib
import json
import pathlib
import re
import subprocess
import sys
import tempfile

src, out, kb_opt = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


# --- kb-compile -----------------------------------------------------------
mlir_files = sorted(src.glob("examples/*.mlir")) + sorted(src.glob("test/**/*.mlir"))
for f in mlir_files:
    text = f.read_text()
    chip = re.search(r"chip=(sm_80|sm_90a|sm_90)\b", text)
    for case in text.split("// -----"):
        lines = [l for l in case.splitlines()
                 if not re.match(r"\s*//\s*(RUN|CHECK|REQUIRES)", l)]
        body = "\n".join(lines).strip()
        if "func.func" not in body and "module" not in body:
            continue
        if chip:
            body = f"// chip={chip.group(1)}\n" + body
        put("kb-compile", body + "\n")

# --- manifest -------------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    for f in sorted(src.glob("examples/*.mlir")):
        for chip in ["sm_80", "sm_90", "sm_90a"]:
            b = pathlib.Path(tmp) / f"{f.stem}-{chip}"
            r = subprocess.run([kb_opt, str(f), f"--kb-compile=output={b} chip={chip} ptxas=none",
                                "-o", "/dev/null"], capture_output=True)
            if r.returncode == 0 and (b / "manifest.json").exists():
                put("manifest", (b / "manifest.json").read_bytes())
            else:
                print(f"make-seeds: {f.name} ({chip}) did not compile: "
                      f"{r.stderr.decode().strip()[:200]}", file=sys.stderr)
tiny = {
    "format": "kb-bundle", "version": 1, "target": "sm_90", "function": "f",
    "buffers": [{"name": "x", "role": "input", "dtype": "f32", "shape": [4, 8]},
                {"name": "y", "role": "output", "dtype": "f32", "shape": [4, 8],
                 "init": {"dist": "uniform", "mean": 0.0, "std": 1.0}}],
    "program": [{"op": "kb.relu", "inputs": ["x"], "output": "y", "shape": [4, 8],
                 "kernel": "k0", "attrs": {}}],
    "kernels": [{"name": "k0", "ptx": "k0.ptx", "grid": [4, 1, 1], "block": [32, 1, 1],
                 "cluster": [1, 1, 1], "dynamic_shared_bytes": 0, "args": ["x", "y"],
                 "ops": [0], "config": "#kb.config<>",
                 "resources": {"registers": 8, "shared_static_bytes": 0}}],
}
put("manifest", json.dumps(tiny, indent=1))
put("manifest", '{"format": "kb-bundle", "version": 2}')
put("manifest", "{}")

# --- npy ------------------------------------------------------------------
# Written by hand (NumPy's format 1.0/2.0) so that no NumPy is needed.
import random
import struct

rng = random.Random(17)


def npy(shape, descr="<f4", fortran=False, version=1):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, "True" if fortran else "False", dims)
    pre = 10 if version == 1 else 12
    header += " " * ((64 - (pre + len(header) + 1) % 64) % 64) + "\n"
    n = 1
    for d in shape:
        n *= d
    size = {"<f4": 4, ">f4": 4, "<i4": 4, "<f8": 8}[descr]
    body = bytes(rng.getrandbits(8) for _ in range(n * size))
    if descr == "<f4":
        body = b"".join(struct.pack("<f", rng.gauss(0, 1)) for _ in range(n))
    length = struct.pack("<H", len(header)) if version == 1 else struct.pack("<I", len(header))
    return b"\x93NUMPY" + bytes([version, 0]) + length + header.encode() + body


for shape in [(), (1,), (7,), (3, 5), (2, 3, 4), (1, 1, 1, 2), (0,), (4, 0)]:
    put("npy", npy(shape))
put("npy", npy((3, 4), version=2))
put("npy", npy((3, 4), fortran=True))
put("npy", npy((5,), descr="<f8"))
put("npy", npy((2, 3), descr="<i4"))
put("npy", npy((2, 2), descr=">f4"))
for t in ["kb-compile", "manifest", "npy"]:
    print(f"make-seeds: {t}: {len(list((out / t).iterdir()))} seeds")
