#!/usr/bin/env python3
"""A mutation run over kb-opt --kb-compile (issue #17): takes the kb programs
of the lit suite and examples/, replaces 1 to 3 integers in each with a
hostile value (0, -1, powers of two around 2^31, 2^32 + 1, 2^62, 2^63 - 1),
compiles it for a random chip with ptxas off, and reports every input on
which kb-opt exits with a status other than 0 or 1, runs past 20 s, or
prints an error and exits 0. Such inputs are kept as bad<SEED>_<i>.mlir in
the folder given (default: a temporary one).

  python3 scripts/mutate-kb-opt.py SEED COUNT [FOLDER]   (after a build)
"""
import glob, os, random, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kb_opt = os.path.join(root, "build", "bin", "kb-opt")
seed, count = int(sys.argv[1]), int(sys.argv[2])
out = sys.argv[3] if len(sys.argv) > 3 else tempfile.mkdtemp(prefix="kb-mutate-")
os.makedirs(out, exist_ok=True)
random.seed(seed)

cases = []
for f in sorted(glob.glob(os.path.join(root, "test", "**", "*.mlir"), recursive=True)
                + glob.glob(os.path.join(root, "examples", "*.mlir"))):
    for c in open(f).read().split("// -----"):
        if "kb." in c and "func.func" in c:
            cases.append(re.sub(r"//.*", "", c))
nasty = ["0", "1", "2", "3", "5", "7", "31", "32", "33", "64", "1023", "1024",
         "1025", "65535", "65536", "2147483647", "2147483648", "4294967297",
         "4611686018427387904", "9223372036854775807", "-1"]
number = re.compile(r"(?<![%#\w@.])\d+")
bad = 0
for i in range(count):
    c = random.choice(cases)
    for _ in range(random.randint(1, 3)):
        nums = list(number.finditer(c))
        if not nums:
            break
        m = random.choice(nums)
        c = c[:m.start()] + random.choice(nasty) + c[m.end():]
    src = os.path.join(out, "in.mlir")
    open(src, "w").write(c)
    chip = random.choice(["sm_80", "sm_90", "sm_90a"])
    cmd = [kb_opt, src, f"--kb-compile=output={out}/bundle chip={chip} ptxas=none",
           "-o", os.devnull]
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=20)
        rc, err = r.returncode, r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = "timeout", ""
    if rc not in (0, 1) or (rc == 0 and "error" in err):
        bad += 1
        open(os.path.join(out, f"bad{seed}_{i}.mlir"), "w").write(
            f"// exit {rc}, chip {chip}\n" + c)
        print("BAD", rc, chip, err[:300])
print(f"{count} inputs, {bad} bad (folder {out})")
sys.exit(1 if bad else 0)
