#!/usr/bin/env python3
"""Writes a .npy file with a given header dictionary and N data bytes:
write-npy.py FILE 'DICT' N [MAJOR]. Builds the malformed .npy inputs of
repros/README.md (kb-run section) without NumPy's own checks."""
import struct
import sys

path, header, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
major = int(sys.argv[4]) if len(sys.argv) > 4 else 1
header = header.encode() + b"\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY" + bytes([major, 0]))
    f.write(struct.pack("<H" if major == 1 else "<I", len(header)))
    f.write(header)
    f.write(b"\0" * n)
