#!/usr/bin/env python3
"""Copies a bundle and edits its manifest: mutate-manifest.py [--record] SRC DST STMT...

Each STMT is a Python statement run with `m` bound to the parsed manifest
(e.g. "m['kernels'][0]['grid'][1] = 70000"); the result is written to
DST/manifest.json. Used by the kb-run lit tests to build the malformed
bundles of repros/README.md (kb-run section).

--record rewrites each PTX's bundle record to match (docs/bundle.md), for
the tests of what kb-run checks behind the record."""
import importlib.util
import json
import os
import shutil
import sys

args = sys.argv[1:]
record = args[:1] == ["--record"]
if record:
    args = args[1:]
src, dst, stmts = args[0], args[1], args[2:]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst, symlinks=True)
with open(f"{src}/manifest.json") as f:
    m = json.load(f)
for s in stmts:
    exec(s)
with open(f"{dst}/manifest.json", "w") as f:
    json.dump(m, f, indent=1)

if record:
    # kb's own rule (python/kb/record.py), loaded without the kb package.
    spec = importlib.util.spec_from_file_location(
        "kb_record", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "..", "..", "..", "python", "kb", "record.py"))
    rec_mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rec_mod)
    r = rec_mod.bundle_record_of(m)
    tag = "// kb.bundle-record "
    for i, k in enumerate(m.get("kernels", [])):
        path = os.path.join(dst, k["ptx"])
        lines = [l for l in open(path).read().split("\n") if not l.startswith(tag)]
        text = "\n".join(lines).rstrip("\n")
        text += "\n" + tag + json.dumps({"kernel": i, "manifest": r}) + "\n"
        os.unlink(path)  # a copy, not the source's file through a link
        open(path, "w").write(text)
