#===- kb/record.py - the part of a manifest the bundle record holds -------===#
#
# docs/bundle.md, "The bundle record": the rule of lib/Runtime/BundleRecord.cpp.
# Standard library only: test/Tools/Inputs/mutate-manifest.py loads this file
# without the kb package.
#
#===----------------------------------------------------------------------===#
import json

RECORD_TAG = b"// kb.bundle-record "


def bundle_record_of(manifest: dict) -> dict:
    r = json.loads(json.dumps(manifest))
    r.pop("compiler", None)
    for k in r.get("kernels", []):
        for f in ("ptx", "cubin", "resources"):
            k.pop(f, None)
    for b in r.get("buffers", []):
        b.pop("init", None)
    return r
