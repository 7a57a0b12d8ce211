"""kb.load's bundle-record check (docs/bundle.md), on a bundle kb-opt wrote."""
import json

import pytest

import kb
from kb.bundle import check_bundle_record


def compiled(tmp_path):
    p = kb.Program("rec")
    x = p.input("x", (64, 128))
    b = p.input("bias", (128,))
    p.output(p.gelu(p.bias_add(x, b), "tanh"), "y")
    bundle = kb.compile(p, output=tmp_path / "b", ptxas="none")
    m = bundle.manifest
    ptx = (tmp_path / "b" / m["kernels"][0]["ptx"]).read_bytes()
    return m, ptx


def test_the_compiled_bundle_agrees(tmp_path, can_compile):
    m, ptx = compiled(tmp_path)
    check_bundle_record(m, 0, ptx)
    m["buffers"][0]["init"] = {"dist": "uniform", "mean": 0, "std": 3}  # left out of the record
    m["compiler"] = "kb elsewhere"
    check_bundle_record(m, 0, ptx)


@pytest.mark.parametrize("edit, message", [
    (lambda m: m["kernels"][0]["grid"].__setitem__(0, 7), r"manifest: kernels\[0\]\.grid\[0\] is 7 but"),
    (lambda m: m["buffers"][0]["shape"].__setitem__(1, 129), r"manifest: buffers\[0\]\.shape\[1\] is 129 but"),
    (lambda m: m["kernels"][0].__setitem__("dependent_launch", True),
     r"manifest: kernels\[0\]\.dependent_launch is true but .* compiled for \"absent\""),
    (lambda m: m["program"][0]["attrs"].__setitem__("approximate", "none"), r"manifest: program\[0\]\.attrs"),
])
def test_an_edited_manifest_is_refused(tmp_path, can_compile, edit, message):
    m, ptx = compiled(tmp_path)
    edit(m)
    with pytest.raises(kb.KbError, match=message):
        check_bundle_record(m, 0, ptx)


def test_a_ptx_without_or_with_two_records(tmp_path, can_compile):
    m, ptx = compiled(tmp_path)
    lines = ptx.split(b"\n")
    without = b"\n".join(l for l in lines if not l.startswith(b"// kb.bundle-record "))
    with pytest.raises(kb.KbError, match="has no kb.bundle-record line"):
        check_bundle_record(m, 0, without)
    rec = [l for l in lines if l.startswith(b"// kb.bundle-record ")][0]
    with pytest.raises(kb.KbError, match="more than one kb.bundle-record line"):
        check_bundle_record(m, 0, ptx + rec + b"\n")
    other = json.loads(rec[len(b"// kb.bundle-record "):])
    other["kernel"] = 3
    with pytest.raises(kb.KbError, match="compiled as kernel 3"):
        check_bundle_record(m, 0, without + b"\n// kb.bundle-record " + json.dumps(other).encode() + b"\n")
