"""Issue #48's layout targets: bench/ holds at most ten top-level entries
(files and folders, grouped by job: ab/, peers/, tune/, fuzz/, ...), and no
script in bench/ or scripts/ is referenced by nothing.

A file is referenced when another tracked text file names its path from
the repository root (`bench/ab/ab.sh`, `scripts/gpu-check.sh`): a script,
a test, CI, a doc or the README. bench/results/README.md counts; the run
folders under bench/results do not (they record what ran then, at the paths
of then). The recorded runs themselves are bench/results' own citations,
checked by test_cited_paths.py.
"""
import subprocess

import pytest
from conftest import ROOT

BENCH_ENTRIES = 10


def tracked():
    """The tracked files (paths from the root), or a skip where this is no
    git checkout."""
    try:
        r = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    except OSError:
        r = None
    if r is None or r.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [p for p in r.stdout.decode().split("\0") if p and (ROOT / p).is_file()]


def is_record(path):
    return path.startswith("bench/results/") and path != "bench/results/README.md"


def unreferenced(files, read):
    """The scripts of bench/ and scripts/ (run records left out) that no
    other file among `files` names; `read(path)` gives a file's text."""
    texts = {}
    for p in files:
        if is_record(p):
            continue
        try:
            texts[p] = read(p)
        except UnicodeDecodeError:
            continue
    scripts = [p for p in files if p.startswith(("bench/", "scripts/")) and not is_record(p)]
    return [s for s in scripts if not any(s in t for p, t in texts.items() if p != s)]


def test_bench_has_at_most_ten_entries():
    entries = sorted({p.split("/")[1] for p in tracked() if p.startswith("bench/")})
    assert len(entries) <= BENCH_ENTRIES, (
        f"bench/ has {len(entries)} top-level entries (issue #48: at most {BENCH_ENTRIES}): "
        + " ".join(entries))


def test_every_bench_and_scripts_file_is_referenced():
    files = tracked()
    missing = unreferenced(files, lambda p: (ROOT / p).read_text(encoding="utf-8"))
    assert not missing, ("referenced by no other tracked file (name it where it belongs, "
                         "or let it leave the tree): " + " ".join(missing))


def test_the_reference_check_finds_an_orphan():
    # The reader itself: a script only a run record or itself names is found.
    texts = {"bench/a.sh": "bash bench/b.py", "bench/b.py": "print('bench/b.py')",
             "bench/orphan.sh": "bench/orphan.sh itself", "docs/x.md": "see bench/a.sh",
             "bench/results/RUN/COMMAND.txt": "bash bench/orphan.sh"}
    assert unreferenced(list(texts), texts.__getitem__) == ["bench/orphan.sh"]
