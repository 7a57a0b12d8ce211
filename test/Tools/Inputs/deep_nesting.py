#!/usr/bin/env python3
"""Writes deep_tuple.mlir and deep_array_attr.mlir, nested N levels deep
(default 100000), into the folder given: the inputs of
../shared/repros/crash/parser_deep_nesting.py."""
import os, sys
d = sys.argv[1] if len(sys.argv) > 1 else "."
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
open(os.path.join(d, "deep_tuple.mlir"), "w").write(
    "func.func private @f(%x: " + "tuple<" * n + "f32" + ">" * n + ")\n")
open(os.path.join(d, "deep_array_attr.mlir"), "w").write(
    "func.func private @f() attributes {a = " + "[" * n + "]" * n + "}\n")
