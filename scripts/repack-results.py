#!/usr/bin/env python3
"""Repacks a recorded run's archive (bench/results/RUN/raw.tar.xz) in place.

Usage: scripts/repack-results.py ARCHIVE.tar.xz [--keep PATTERN ... | --drop PATTERN ...]

The members are written again, in the same order, into a tar compressed
with xz -9e (preset 9, extreme). A member that is itself gzip-compressed
(NAME.gz, NAME.tgz) is stored decompressed (NAME, NAME.tar): xz cannot
shrink gzip's output, and compresses the text under it 2-4x better. With
--keep, only the members that match a pattern stay; with --drop, those
leave. A pattern is a member's path, a folder (call2: everything under
it) or a glob (call*/kb_results.json). The members left out are listed on
stdout: say in the folder's README which commit still holds them. Prints the sizes before
and after. Run it from any directory; it changes only ARCHIVE.
"""
import fnmatch
import gzip
import io
import lzma
import sys
import tarfile
from pathlib import Path


def matches(name, patterns):
    return any(name == p or name.startswith(p.rstrip("/") + "/") or fnmatch.fnmatchcase(name, p)
               for p in patterns)


def kept(name, keep, drop):
    return (not keep or matches(name, keep)) and not matches(name, drop)


def repack(path: Path, keep, drop):
    out = io.BytesIO()
    dropped = []
    with tarfile.open(path) as t, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as o:
        for m in t.getmembers():
            if not kept(m.name.rstrip("/"), keep, drop):
                if not m.isdir():
                    dropped.append(m.name)
                continue
            if not m.isfile():
                o.addfile(m)
                continue
            data = t.extractfile(m).read()
            if m.name.endswith((".gz", ".tgz")) and data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
                m.name = m.name[:-3] if m.name.endswith(".gz") else m.name[:-4] + ".tar"
            m.size = len(data)
            o.addfile(m, io.BytesIO(data))
    return lzma.compress(out.getvalue(), preset=9 | lzma.PRESET_EXTREME), dropped


def main(argv):
    if not argv or argv[0].startswith("-") or not argv[0].endswith(".tar.xz"):
        print(__doc__, file=sys.stderr)
        return 2
    path, mode, patterns = Path(argv[0]), argv[1] if argv[1:] else None, argv[2:]
    if mode not in (None, "--keep", "--drop") or (mode and not patterns):
        print(f"repack-results: expected --keep or --drop and patterns, got {argv[1:]}", file=sys.stderr)
        return 2
    keep = patterns if mode == "--keep" else []
    drop = patterns if mode == "--drop" else []
    try:
        before = path.stat().st_size
        data, dropped = repack(path, keep, drop)
    except (OSError, tarfile.TarError, lzma.LZMAError, EOFError) as e:
        print(f"repack-results: {path}: {e}", file=sys.stderr)
        return 1
    if not tarfile.open(fileobj=io.BytesIO(data)).getmembers():
        print(f"repack-results: {path}: {mode} {' '.join(patterns)} leaves no member", file=sys.stderr)
        return 1
    path.write_bytes(data)
    for d in dropped:
        print(f"dropped {d}")
    print(f"{path}: {before} -> {len(data)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
