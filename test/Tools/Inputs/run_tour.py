#!/usr/bin/env python3
"""Runs every command of README.md's "A short tour" block, as a new user
would from a fresh checkout (issue #22): build/bin/ is the built tools'
folder, /tmp/ a scratch folder. kb-opt commands must exit 0; a kb-run
command must exit 0, or 2 with kb-run's one-line "no GPU" message on a
machine without a GPU or driver. Prints one line per command and exits 1 if
any command failed.

Usage: run_tour.py README.md SOURCE_ROOT TOOLS_DIR SCRATCH_DIR"""
import os
import re
import subprocess
import sys


def tour_commands(readme):
    text = open(readme).read()
    start = text.index("## A short tour")
    block = text[start:].split("```sh", 1)[1].split("```", 1)[0]
    commands, cur = [], ""
    for line in block.splitlines():
        line = line.rstrip()
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            commands.append(cur.strip())
            cur = ""
    return commands


def main():
    readme, src, tools, scratch = sys.argv[1:5]
    os.makedirs(scratch, exist_ok=True)
    failed = 0
    commands = tour_commands(readme)
    for cmd in commands:
        # /tmp/ first: the tools' own path may lie under /tmp (a checkout
        # there) and must not be rewritten.
        run = cmd.replace("/tmp/", scratch.rstrip("/") + "/").replace("build/bin/", tools.rstrip("/") + "/")
        p = subprocess.run(run, shell=True, cwd=src, capture_output=True, text=True, timeout=300)
        tool = os.path.basename(cmd.split()[0])
        ok = p.returncode == 0 or (
            tool == "kb-run" and p.returncode == 2 and re.search(r"no NVIDIA driver|no GPU", p.stderr))
        print(f"{'ok' if ok else 'FAIL'} (exit {p.returncode}): {cmd}")
        if not ok:
            print("  " + (p.stderr.strip().splitlines() or ["(no output)"])[-1])
            failed += 1
    print(f"tour: {len(commands)} commands, {failed} failed")
    return 1 if failed or not commands else 0


if __name__ == "__main__":
    sys.exit(main())
