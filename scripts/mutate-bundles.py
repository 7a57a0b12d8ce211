#!/usr/bin/env python3
#===- scripts/mutate-bundles.py - mutated bundles: refused, or run right -===#
#
# Issue #49's GPU fuzz sample: every mutated bundle that `kb-run --check`
# accepts must run correctly on the GPU. From the bundles under SRC (each a
# folder with manifest.json, e.g. scripts/differential.sh's build/diff/bundles),
# writes mutants OUT/mNNNN, each with 1 to 3 random edits of its manifest
# (numbers, strings, booleans, fields, list entries), half of them anywhere,
# half where the bundle record does not look (docs/bundle.md), and checks
# each with `kb-run --check` until ACCEPTED pass or TRIES were made.
# `make` writes OUT/index.json (the counts, refusals by message, each
# mutant's edits) and OUT/accepted.txt (a kb-run --batch file).
# `run` (on the GPU machine) runs the sources, then the accepted mutants, with
# kb-run --no-time (every kernel run once and checked against its reference)
# in batches: a kernel that faults leaves its CUDA context unusable, so after
# a `device` error (or a batch past its time) the rest run in a new batch.
# Writes RESULT (JSON): each mutant's status (ok, wrong, error, device,
# timeout, input: refused at run time) and message, the counts; exit 1
# unless every accepted mutant of a source that ran ok ran ok or was refused.
# scripts/gpu-check.sh does both when build/fuzz-src was carried.
#
# Usage: scripts/mutate-bundles.py make SRC OUT [--seed S] [--accepted N]
#          [--tries T] [--kb-run PATH]
#        scripts/mutate-bundles.py run OUT SRC RESULT [--budget S] [--kb-run PATH]
#===----------------------------------------------------------------------===#
import argparse
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser(
    description="Mutated bundles: refused by kb-run --check, or run right on the GPU")
sub = ap.add_subparsers(dest="cmd", required=True)
mk = sub.add_parser("make", help="write mutants of the bundles under SRC into OUT")
mk.add_argument("src")
mk.add_argument("out")
mk.add_argument("--seed", type=int, default=1)
mk.add_argument("--accepted", type=int, default=200)
mk.add_argument("--tries", type=int, default=4000)
rn = sub.add_parser("run", help="run OUT's accepted mutants (and SRC's bundles) on the GPU")
rn.add_argument("out")
rn.add_argument("src")
rn.add_argument("result")
rn.add_argument("--budget", type=float, default=400, help="seconds for all batches")
for p in (mk, rn):
    p.add_argument("--kb-run", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                    "..", "build", "bin", "kb-run"))
a = ap.parse_args()
rng = random.Random(getattr(a, "seed", 1))


def bundles_under(src):
    return sorted(d for d in (os.path.join(os.path.abspath(src), n) for n in os.listdir(src))
                  if os.path.isfile(os.path.join(d, "manifest.json")))


if not os.access(a.kb_run, os.X_OK):
    sys.exit(f"mutate-bundles: kb-run not found at {a.kb_run} (--kb-run PATH)")
sources = bundles_under(a.src) if os.path.isdir(a.src) else []
if not sources:
    sys.exit(f"mutate-bundles: no bundle (folder with manifest.json) under {a.src}")

NUMBERS = [0, -1, 1, 2, 3, 31, 32, 33, 1024, 65536, 2**31, 2**32 + 1, 2**62, 2**63 - 1, 0.5, 1e30]
KNOWN = ["", "f32", "f16", "bf16", "i32", "input", "output", "scratch", "workspace", "tensor_map",
         "sm_80", "sm_90", "sm_90a", "normal", "uniform", "128B", "64B", "32B", "kb.matmul", "kb.softmax"]
OUTSIDE = ["init", "compiler", "resources"]  # what the bundle record leaves out


def paths(node, prefix=()):
    """Every (path, value) below node, containers included."""
    yield prefix, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, prefix + (i,))


def strings(m):
    return [v for _, v in paths(m) if isinstance(v, str) and len(v) < 200]


def get(m, p):
    for k in p:
        m = m[k]
    return m


def edit(m, outside):
    """One random edit of m in place; returns its description."""
    cands = [(p, v) for p, v in paths(m) if p]
    if outside:
        cands = [(p, v) for p, v in cands if any(k in OUTSIDE for k in p if isinstance(k, str))]
        if not cands:
            return None
    p, v = rng.choice(cands)
    parent, key = get(m, p[:-1]), p[-1]
    where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in p).lstrip(".")
    r = rng.random()
    if r < 0.12 and isinstance(parent, dict):
        del parent[key]
        return f"drop {where}"
    if isinstance(v, bool):
        parent[key] = not v
    elif isinstance(v, (int, float)):
        choices = NUMBERS + [v + 1, v - 1, v * 2, v // 2 if isinstance(v, int) else v / 2, -v]
        if outside and p[-1] in ("mean", "std"):
            choices += [0.0, 0.01, 3.0, 10.0]
        parent[key] = rng.choice(choices)
    elif isinstance(v, str):
        parent[key] = rng.choice(strings(m) + KNOWN)
    elif isinstance(v, list) and v:
        i, j = rng.randrange(len(v)), rng.randrange(len(v))
        op = rng.choice(["drop", "repeat", "swap"])
        if op == "drop":
            del v[i]
        elif op == "repeat":
            v.insert(i, copy.deepcopy(v[j]))
        else:
            v[i], v[j] = v[j], v[i]
        return f"{op} in {where}"
    elif isinstance(v, dict) and v:
        del v[rng.choice(list(v))]
        return f"drop a field of {where}"
    else:
        return None
    return f"{where}: {json.dumps(v)[:60]} -> {json.dumps(parent[key])[:60]}"


def make():
    # OUT is replaced only if it is empty or an earlier run's mutants (its
    # index.json): never a folder of someone's other files.
    if os.path.exists(a.out):
        if not os.path.isdir(a.out) or (os.listdir(a.out) and
                                        not os.path.isfile(os.path.join(a.out, "index.json"))):
            sys.exit(f"mutate-bundles: {a.out} exists and is not an earlier run's mutants "
                     "(no index.json): give a new or empty folder")
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    index = {"seed": a.seed, "sources": len(sources), "tries": 0, "accepted": 0, "refused": 0,
             "refusals": {}, "mutants": []}
    n = 0
    while index["accepted"] < a.accepted and index["tries"] < a.tries:
        index["tries"] += 1
        src = rng.choice(sources)
        m = json.load(open(os.path.join(src, "manifest.json")))
        outside = rng.random() < 0.5
        edits = [e for e in (edit(m, outside) for _ in range(rng.randint(1, 3))) if e]
        if not edits:
            continue
        name = f"m{n:04d}"
        n += 1
        dst = os.path.join(a.out, name)
        shutil.copytree(src, dst)
        with open(os.path.join(dst, "manifest.json"), "w") as f:
            json.dump(m, f, indent=1)
        try:
            r = subprocess.run([a.kb_run, "--check", "-q", dst], capture_output=True, text=True,
                               timeout=60)
            rc, msg = r.returncode, (r.stderr.strip().splitlines() or [""])[-1]
        except subprocess.TimeoutExpired:
            rc, msg = "timeout", "kb-run --check ran past 60 s"
        rec = {"name": name, "source": os.path.basename(src), "mode": "outside" if outside else "anywhere",
               "edits": edits, "check_rc": rc, "message": msg[:300]}
        index["mutants"].append(rec)
        if rc == 0:
            index["accepted"] += 1
        else:
            index["refused"] += 1
            shutil.rmtree(dst)
            # The message's kind: its words up to the first number or quote.
            kind = re.sub(r"^kb-run: (/\S+: )?", "", msg)
            kind = re.sub(r"\d+", "N", re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", kind))[:72]
            index["refusals"][kind] = index["refusals"].get(kind, 0) + 1
        if rc not in (0, 1):
            print(f"mutate-bundles: {name}: kb-run --check exit {rc}: {msg}", file=sys.stderr)
    with open(os.path.join(a.out, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
    with open(os.path.join(a.out, "accepted.txt"), "w") as f:
        for r in index["mutants"]:
            if r["check_rc"] == 0:
                f.write(os.path.join(os.path.abspath(a.out), r["name"]) + "\n")
    bad = [r for r in index["mutants"] if r["check_rc"] not in (0, 1)]
    print(f"mutate-bundles: {index['tries']} tries, {index['accepted']} accepted, "
          f"{index['refused']} refused by kb-run --check, {len(bad)} with another exit")
    return 1 if bad else 0


def batch(dirs, budget):
    """kb-run --no-time over dirs in batches; {dir: slot}. After a device
    error or a batch past its time, the dirs without a final slot run again
    in a new batch (the one that faulted or hung keeps its slot)."""
    slots, todo, t_end = {}, list(dirs), time.time() + budget
    while todo and time.time() < t_end:
        with tempfile.TemporaryDirectory() as tmp:
            lst, jl = os.path.join(tmp, "list.txt"), os.path.join(tmp, "out.jsonl")
            open(lst, "w").write("\n".join(todo) + "\n")
            try:
                subprocess.run([a.kb_run, "--no-time", "-q", "--jsonl-out", jl, "--batch", lst],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=max(1.0, t_end - time.time()))
                timed_out = False
            except subprocess.TimeoutExpired:
                timed_out = True
            got = []
            for line in open(jl) if os.path.exists(jl) else []:
                try:
                    got.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        done = {g.get("bundle"): g for g in got}
        # Slots in launch order. After a device error the rest ran in a
        # broken context; the first without a slot was running when the
        # batch ran out of time (or kb-run died): it keeps that, the rest
        # run again.
        rest = []
        for k, d in enumerate(todo):
            g = done.get(d)
            if g is None:
                slots[d] = {"status": "timeout" if timed_out else "died",
                            "message": "no report: the batch ran out of time" if timed_out
                            else "no report: kb-run exited before it"}
                rest = todo[k + 1:]
                break
            slots[d] = g
            if g.get("error") == "device":
                rest = [x for x in todo[k + 1:]]
                break
        todo = [d for d in rest if d not in slots]
    for d in todo:
        slots[d] = {"status": "not_run", "message": "the budget ran out first"}
    return slots


def status(slot):
    """ok, wrong, device, timeout, died, not_run, error; `input` where kb-run
    refused the inputs at run time (no value could be checked: fp32 may
    overflow everywhere for the init drawn), a one-line refusal like
    --check's."""
    if slot.get("status") == "error":
        return {"device": "device", "input": "input"}.get(slot.get("error"), "error")
    return slot.get("status", "error")


def run():
    index = json.load(open(os.path.join(a.out, "index.json")))
    t0 = time.time()
    src_slots = batch(sources, a.budget / 4)
    src_status = {os.path.basename(d): status(s) for d, s in src_slots.items()}
    accepted = [m for m in index["mutants"] if m["check_rc"] == 0]
    dirs = [os.path.join(os.path.abspath(a.out), m["name"]) for m in accepted]
    slots = batch(dirs, a.budget - (time.time() - t0))
    counts, rows = {}, []
    for m, d in zip(accepted, dirs):
        s = slots[d]
        st = status(s)
        counts[st] = counts.get(st, 0) + 1
        rows.append({**m, "status": st, "source_status": src_status.get(m["source"], "?"),
                     "run_message": s.get("message", "")[:300]})
    bad = [r for r in rows if r["status"] not in ("ok", "input") and r["source_status"] == "ok"]
    result = {"tries": index["tries"], "refused_by_check": index["refused"],
              "accepted": len(accepted), "counts": counts,
              "sources": len(sources), "source_counts": {k: list(src_status.values()).count(k)
                                                         for k in set(src_status.values())},
              "bad": len(bad), "refusals": index["refusals"], "mutants": rows,
              "seconds": round(time.time() - t0, 1)}
    with open(a.result, "w") as f:
        json.dump(result, f, indent=1)
    print(f"mutate-bundles: {len(accepted)} accepted mutants of {len(sources)} bundles run: "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f"; {len(bad)} neither ok nor an input refusal whose source ran ok")
    for r in bad[:20]:
        print(f"  {r['name']} ({r['source']}): {r['status']}: {'; '.join(r['edits'])}: {r['run_message']}")
    return 1 if bad else 0


sys.exit(make() if a.cmd == "make" else run())
