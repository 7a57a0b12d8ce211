#!/usr/bin/env python3
"""Measures one program's tuning batch with kb-run, robustly (for
scripts/gpu-tune.sh, on the GPU machine; Python's standard library only).

kb-run --jsonl-out writes each bundle's report as one JSON line as soon as
the bundle is done. This runs kb-run over the bundles and watches that file:
a bundle with no report after --stall seconds (a kernel that waits forever,
such as the row-major-B wgmma kernels of 640 threads before main's
setmaxnreg fix) gets kb-run killed, and a fresh kb-run measures the bundles
after it; at --limit seconds everything stops. What was written is kept.

Writes OUT (a kb-run batch object: the reports in the bundles' order, plus
"not_reported": the bundles without one and why) and OUT's .jsonl (every
line kb-run wrote). Prints one line: bundles, reports, hung, seconds, and
the median and largest wall_s of a bundle.

usage: tune_batch.py --kb-run KB_RUN --out NAME.json --limit S [--stall S]
                     [--run-args "ARGS"] BUNDLE...
"""
import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time


def read_lines(path):
    """The reports in a --jsonl-out file; a last line cut short is dropped."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                if not line.endswith("\n"):
                    break  # still being written, or cut by the kill
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    except FileNotFoundError:
        pass
    return out


def stop(proc):
    """SIGTERM, then SIGKILL; the process group (kb-run alone)."""
    for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


def name_of(bundle):
    return os.path.basename(bundle.rstrip("/"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb-run", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=float, required=True)
    ap.add_argument("--stall", type=float, default=15)
    ap.add_argument("--first-extra", type=float, default=10,
                    help="more seconds for a process's first bundle (its "
                    "context, cuBLAS handle and copy bandwidth)")
    ap.add_argument("--run-args", default="")
    ap.add_argument("bundles", nargs="+")
    a = ap.parse_args()
    t0 = time.time()
    deadline = t0 + a.limit
    base = a.out[:-5] if a.out.endswith(".json") else a.out
    reports = {}  # bundle name -> report line
    why = {}  # bundle name -> why it has no report
    remaining = list(a.bundles)
    part = 0
    all_lines = []
    hung = 0
    while remaining and time.time() < deadline:
        jsonl = "%s.part%d.jsonl" % (base, part)
        listing = "%s.part%d.txt" % (base, part)
        with open(listing, "w") as f:
            f.write("\n".join(remaining) + "\n")
        cmd = ([a.kb_run, "--json", "--no-baselines", "--quiet"] +
               shlex.split(a.run_args) + ["--jsonl-out", jsonl, "--batch", listing])
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                start_new_session=True)
        seen, last, first = 0, time.time(), True
        stalled = timed_out = False
        while proc.poll() is None:
            time.sleep(0.2)
            n = len(read_lines(jsonl))
            now = time.time()
            if n > seen:
                seen, last, first = n, now, False
            if now >= deadline:
                timed_out = True
            elif now - last > a.stall + (a.first_extra if first else 0):
                stalled = True
            if stalled or timed_out:
                stop(proc)
                break
        lines = read_lines(jsonl)
        all_lines += lines
        for r in lines:
            reports[name_of(r.get("bundle", ""))] = r
        left = [b for b in remaining if name_of(b) not in reports]
        if not left:
            remaining = []
            break
        if stalled:
            # kb-run runs the bundles in order: the first without a report
            # is the one it was in.
            hung += 1
            why[name_of(left[0])] = ("no report after %.0f s: hung or too slow; "
                                     "kb-run killed" % a.stall)
            print("tune_batch: %s: no report after %.0f s; kb-run killed, "
                  "going on after it" % (left[0], a.stall), file=sys.stderr)
            remaining = left[1:]
        elif timed_out:
            remaining = left
            break
        else:
            # kb-run ended without a report for these: not a hang.
            for b in left:
                why[name_of(b)] = "kb-run exited (rc %s) without its report" % proc.returncode
            remaining = []
        part += 1
    for b in remaining:
        why.setdefault(name_of(b), "no report within the limit, %.0f s" % a.limit)
    ordered = [reports[name_of(b)] for b in a.bundles if name_of(b) in reports]
    status = "ok" if all(r.get("status") == "ok" for r in ordered) else "error"
    batch = {"schema": 1, "batch": True, "status": status,
             "exit_code": max([r.get("exit_code", 1) for r in ordered] or [1]),
             "reports": ordered,
             "not_reported": [{"bundle": b, "why": why[b]} for b in
                              [name_of(x) for x in a.bundles] if b in why]}
    with open(a.out, "w") as f:
        json.dump(batch, f, indent=1)
    with open(base + ".jsonl", "w") as f:
        for r in all_lines:
            f.write(json.dumps(r) + "\n")
    for i in range(part + 1):
        for ext in ("jsonl", "txt"):
            try:
                os.remove("%s.part%d.%s" % (base, i, ext))
            except FileNotFoundError:
                pass
    walls = [r["wall_s"] for r in all_lines if isinstance(r.get("wall_s"), (int, float))]
    print("%d bundles, %d reports, %d hung, %d cut by the limit, %.1f s; wall_s a "
          "bundle: median %.2f, max %.2f" %
          (len(a.bundles), len(ordered), hung,
           sum(1 for w in why.values() if w.startswith("no report within")),
           time.time() - t0, statistics.median(walls) if walls else 0,
           max(walls) if walls else 0))
    return 0 if ordered else 1


if __name__ == "__main__":
    sys.exit(main())
