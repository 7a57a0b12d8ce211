#!/usr/bin/env python3
"""Copies a bundle and edits its manifest: mutate-manifest.py SRC DST STMT...

Each STMT is a Python statement run with `m` bound to the parsed manifest
(e.g. "m['kernels'][0]['grid'][1] = 70000"); the result is written to
DST/manifest.json. Used by the kb-run lit tests to build the malformed
bundles of repros/README.md (kb-run section)."""
import json
import shutil
import sys

src, dst, stmts = sys.argv[1], sys.argv[2], sys.argv[3:]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst, symlinks=True)
with open(f"{src}/manifest.json") as f:
    m = json.load(f)
for s in stmts:
    exec(s)
with open(f"{dst}/manifest.json", "w") as f:
    json.dump(m, f, indent=1)
