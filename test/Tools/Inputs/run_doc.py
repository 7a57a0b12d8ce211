#!/usr/bin/env python3
"""Runs the marked blocks of a doc (docs/user-guide.md, docs/tutorial.md) as
a test (issue #49): the doc's commands run, and its quoted outputs are
checked against what the tools print now.

A marker is an HTML comment on the line before a fence; unmarked fences are
prose:

  <!-- test: file NAME -->   the fence is written to NAME in the scratch folder
                             (every file of a doc before its first command)
  <!-- test: run -->         each command of the sh fence runs and must exit 0
                             (kb-run: 0, or 2 with its one-line "no GPU")
  <!-- test: run exit=N -->  ... must exit N
  <!-- test: python -->      the python fence runs (one interpreter per doc,
                             its blocks sharing their names) and must not raise
  <!-- test: gpu -->         the fence needs a GPU: not run here, listed
                             (scripts/gpu-check.sh runs the GPU side)
  <!-- test: output -->      each non-blank line of the fence occurs, in this
                             order, in the output (stdout and stderr) of the
                             block run just before; `...` in a line matches
                             any text

Commands run in the scratch folder, which links the checkout's examples/,
python/ and bench/; `build/bin/` means the built tools, `/tmp/` the scratch
folder. Prints a line per block and exits 1 if any failed.

Usage: run_doc.py SOURCE_ROOT TOOLS_DIR SCRATCH_DIR DOC.md..."""
import os
import re
import shutil
import subprocess
import sys

MARK = re.compile(r"^<!--\s*test:\s*(.*?)\s*-->\s*$")


def blocks(path):
    """(line, marker, fence language, fence text) of every marked fence."""
    lines = open(path).read().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m or i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            continue
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        lang = lines[i + 1][3:].strip()
        out.append((i + 2, m.group(1), lang, "\n".join(lines[i + 2:end]) + "\n"))
    return out


def commands(text):
    """The commands of a sh fence: continuation lines joined, comments and
    a trailing `# ...` after a command dropped."""
    cmds, cur = [], ""
    for line in text.splitlines():
        line = line.rstrip()
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            cmds.append(re.sub(r"\s+#\s.*$", "", cur).strip())
            cur = ""
    return cmds


def matches(expected, output):
    """Whether the expected lines occur in order in `output`."""
    got = output.splitlines()
    at = 0
    for want in expected.splitlines():
        if not want.strip():
            continue
        pat = re.compile(".*".join(re.escape(p.strip()) for p in want.split("...")))
        while at < len(got) and not pat.search(got[at]):
            at += 1
        if at == len(got):
            return want
        at += 1
    return None


def python_for_docs():
    for p in [os.environ.get("KB_PYTHON"), sys.executable, "/usr/bin/python3"]:
        if p and subprocess.run([p, "-c", "import torch"], capture_output=True).returncode == 0:
            return p
    return None


def run_python(code, scratch, src, env, state):
    """Runs one python block in the doc's interpreter (started on first use)."""
    if state.get("proc") is None:
        py = python_for_docs()
        if py is None:
            return 1, "no python3 that imports torch"
        driver = (
            "import sys, io, traceback, contextlib\n"
            "ns = {}\n"
            "while True:\n"
            "    n = int(sys.stdin.readline())\n"
            "    code = sys.stdin.read(n)\n"
            "    buf = io.StringIO(); rc = 0\n"
            "    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):\n"
            "        try: exec(compile(code, 'doc', 'exec'), ns)\n"
            "        except BaseException:\n"
            "            traceback.print_exc(); rc = 1\n"
            "    out = buf.getvalue()\n"
            "    sys.stdout.write(f'{rc} {len(out)}\\n' + out); sys.stdout.flush()\n")
        state["proc"] = subprocess.Popen([py, "-c", driver], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, text=True, cwd=scratch, env=env)
    proc = state["proc"]
    code = code.replace("/tmp/", scratch.rstrip("/") + "/")
    proc.stdin.write(f"{len(code)}\n{code}")
    proc.stdin.flush()
    head = proc.stdout.readline().split()
    if len(head) != 2:
        state["proc"] = None
        return 1, "the interpreter died"
    rc, n = int(head[0]), int(head[1])
    return rc, proc.stdout.read(n)


def main():
    src, tools, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
    docs = sys.argv[4:]
    os.makedirs(scratch, exist_ok=True)
    for d in ("examples", "python", "bench"):
        link = os.path.join(scratch, d)
        if not os.path.exists(link):
            os.symlink(os.path.join(src, d), link)
    env = dict(os.environ)
    env["PATH"] = tools + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.path.join(src, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env["KB_OPT"] = os.path.join(tools, "kb-opt")
    total = failed = 0
    gpu = []
    for doc in docs:
        state, last = {}, None
        marked = blocks(os.path.join(src, doc))
        # The doc's files first: a command may come before the program it
        # compiles is shown.
        for line, marker, lang, text in marked:
            kind, *args = marker.split()
            if kind == "file":
                total += 1
                with open(os.path.join(scratch, args[0]), "w") as f:
                    f.write(text)
                print(f"ok: {doc}:{line}: wrote {args[0]}")
        for line, marker, lang, text in marked:
            where = f"{doc}:{line}"
            kind, *args = marker.split()
            if kind == "file":
                continue
            total += 1
            if kind == "gpu":
                last = None
                for c in commands(text) if lang in ("sh", "") else [f"({lang} block)"]:
                    gpu.append(f"{where}: {c}")
                print(f"skipped (gpu): {where}")
            elif kind == "run":
                want = int(args[0].split("=")[1]) if args else 0
                last = ""
                for c in commands(text):
                    run = c.replace("/tmp/", scratch + "/").replace("build/bin/", tools + "/")
                    p = subprocess.run(run, shell=True, cwd=scratch, capture_output=True,
                                       text=True, timeout=300, env=env)
                    last += p.stdout + p.stderr
                    tool = os.path.basename(c.split()[0])
                    ok = p.returncode == want or (
                        tool == "kb-run" and p.returncode == 2 and
                        re.search(r"no NVIDIA driver|no GPU", p.stderr))
                    if not ok:
                        failed += 1
                        tail = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
                        print(f"FAIL: {where}: exit {p.returncode}, not {want}: {c}\n  {tail}")
                        break
                else:
                    print(f"ok: {where}: {len(commands(text))} commands")
            elif kind == "python":
                rc, last = run_python(text, scratch, src, env, state)
                if rc:
                    failed += 1
                    print(f"FAIL: {where}: the python block raised:\n  " +
                          "\n  ".join(last.strip().splitlines()[-3:]))
                else:
                    print(f"ok: {where}: python")
            elif kind == "output":
                if last is None:
                    print(f"skipped (after a gpu block): {where}")
                    continue
                missing = matches(text, last)
                if missing is not None:
                    failed += 1
                    print(f"FAIL: {where}: the output has no line like: {missing}\n  it was:\n  " +
                          "\n  ".join(last.strip().splitlines()[:20]))
                else:
                    print(f"ok: {where}: output")
            else:
                failed += 1
                print(f"FAIL: {where}: unknown marker '{marker}'")
        if state.get("proc"):
            state["proc"].kill()
    for g in gpu:
        print(f"gpu-only: {g}")
    print(f"docs: {total} blocks, {failed} failed, {len(gpu)} gpu-only commands")
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())
