#!/usr/bin/env python3
"""Checks a gen_programs.py --half batch: check-half-programs.py DIR MIN_SHARE.

Every program the index marks "dtype" bf16 or f16 has an argument of that
type and no other 16-bit type but in a kb.convert (and a result it makes); its matmuls carry no
precision keyword and its chip is sm_90 (mma.sync) or sm_90a (wgmma); its
softmax rows are at most 32768 wide; a program without "dtype" has no 16-bit
tensor. At least MIN_SHARE of the programs are 16-bit. Prints the counts
(and the 16-bit matmul programs per chip); exit 1 with the first offence."""
import json
import re
import sys

d, share = sys.argv[1], float(sys.argv[2])
progs = json.load(open(f"{d}/index.json"))["programs"]
count = {"f32": 0, "bf16": 0, "f16": 0}
chips = {}  # 16-bit matmuls per chip
for p in progs:
    text = open(f"{d}/{p['file']}").read()
    dt = p.get("dtype", "f32")
    count[dt] += 1

    def bad(why):
        sys.exit(f"{p['file']} ({dt}): {why}")

    if dt == "f32":
        if re.search(r"xb?f16>", text):
            bad("a 16-bit tensor in an f32 program")
        continue
    if not re.search(rf"%a\d+: tensor<[0-9x]+x{dt}>", text.split("\n")[0]):
        bad(f"no {dt} argument")
    other = "f16" if dt == "bf16" else "bf16"
    for line in text.splitlines():
        body = not line.startswith(("func.func", "  return"))
        if body and f"x{other}>" in line and "kb.convert" not in line:
            bad(f"{other} outside a kb.convert: {line.strip()}")
        if "kb.matmul" in line:
            if "precision(" in line:
                bad(f"a 16-bit matmul with a precision keyword: {line.strip()}")
            if p["chip"] not in ("sm_90", "sm_90a"):
                bad(f"a 16-bit matmul on {p['chip']}, not sm_90 or sm_90a")
            chips[p["chip"]] = chips.get(p["chip"], 0) + 1
        m = re.match(r"\s*%v\d+ = kb.softmax .*x(\d+)x(\w+)>$", line)
        if m and int(m.group(1)) > 32768:
            bad(f"a softmax row of {m.group(1)} (the registers strategy holds 32768)")
n16 = count["bf16"] + count["f16"]
print(f"f32 {count['f32']} bf16 {count['bf16']} f16 {count['f16']}")
print("16-bit matmuls: " + " ".join(f"{c} {n}" for c, n in sorted(chips.items())))
if n16 < share * len(progs):
    sys.exit(f"only {n16} of {len(progs)} programs are 16-bit")
