"""Every bench/results path that README.md and docs/*.md cite is in the tree,
or in git history where bench/results/README.md's history table says so.

A citation is `bench/results/RUN[/PATH]` (a folder or a file), or
`bench/results/RUN/ARCHIVE.tar.xz:MEMBER` (a file or folder inside a run's
archive). Placeholders (RUN, DIR, FOLDER, `*`, `<...>`, `{...}`) are not
paths. A path that left the tree must be covered by a row of the history
table (the row's path equal to it or a folder above it); in a git checkout
the named commit must hold that path.
"""
import io
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INDEX = ROOT / "bench" / "results" / "README.md"

# A citation, allowed to break across a line after a '-' or '/'
# (bench/results/2026-12-02-gemv-\n  writeback).
_CITE = re.compile(r"bench/results/[A-Za-z0-9_.*{}<>,:/-]*(?:(?<=[-/])\n[ \t>*`(]*[A-Za-z0-9_.:/-]+)*")
_PLACEHOLDER = re.compile(r"(^|[/:])(RUN|DIR|FOLDER|PATH|NAME)([/:.]|$)|[*<>{}]|\.\.\.")


def citations(text):
    """(line, path) of each bench/results citation in a markdown text."""
    for m in _CITE.finditer(text):
        s = re.sub(r"\n[ \t>*`(]*", "", m.group(0))
        s = s.rstrip(".,:;)/`'\"")
        if s == "bench/results" or _PLACEHOLDER.search(s[len("bench/results/"):]):
            continue
        yield text.count("\n", 0, m.start()) + 1, s


def history():
    """The history table of bench/results/README.md: path -> commit."""
    rows = {}
    for line in INDEX.read_text().splitlines():
        m = re.match(r"\|\s*`?(bench/results/[^`|\s]+?)`?\s*\|\s*([0-9a-f]{7,40})\s*\|", line)
        if m:
            rows[m.group(1).rstrip("/")] = m.group(2)
    return rows


def in_archive(arc: Path, member: str) -> bool:
    member = member.strip("/")
    with tarfile.open(arc) as t:
        return any(n.strip("/") == member or n.startswith(member + "/") for n in t.getnames())


def in_tree(path: str) -> bool:
    arc, sep, member = path.partition(".tar.xz:")
    if sep:
        return (ROOT / (arc + ".tar.xz")).is_file() and in_archive(ROOT / (arc + ".tar.xz"), member)
    return (ROOT / path).exists()


def covering(path: str, rows):
    """The history row covering path: itself or a folder above it."""
    plain = path.replace(".tar.xz:", ".tar.xz/")
    for p, commit in rows.items():
        if plain == p or plain.startswith(p + "/"):
            return p, commit
    return None


def git_has(commit: str, path: str):
    """True/False where this is a git checkout holding the commit; None if
    it cannot tell (no git, a shallow clone, an exported tree)."""
    try:
        have = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
                              capture_output=True).returncode == 0
        if not have:
            return None
        return subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}:{path}"],
                              capture_output=True).returncode == 0
    except OSError:
        return None


def cited_files():
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def test_citations_are_found():
    # The reader itself: a wrapped citation is joined, placeholders skipped.
    text = ("see bench/results/2026-12-02-gemv-\n  writeback), bench/results/RUN/raw.tar.xz:PATH and\n"
            "`bench/results/2026-12-01-run4/raw.tar.xz:kb_results.json`.")
    assert [p for _, p in citations(text)] == ["bench/results/2026-12-02-gemv-writeback",
                                               "bench/results/2026-12-01-run4/raw.tar.xz:kb_results.json"]
    assert in_tree("bench/results/2026-12-01-run4/raw.tar.xz:kb_results.json")
    assert not in_tree("bench/results/2026-12-01-run4/raw.tar.xz:no-such-member.json")


@pytest.mark.parametrize("doc", cited_files(), ids=lambda p: p.name)
def test_every_cited_path_exists(doc):
    rows = history()
    missing = []
    for line, path in citations(doc.read_text()):
        if in_tree(path):
            continue
        row = covering(path, rows)
        if row is None:
            missing.append(f"{doc.relative_to(ROOT)}:{line}: {path} is not in the tree "
                           f"nor in bench/results/README.md's history table")
        elif git_has(row[1], row[0]) is False:
            missing.append(f"{doc.relative_to(ROOT)}:{line}: {path}: commit {row[1]} has no {row[0]}")
    assert not missing, "\n".join(missing)


def git_archive_has(commit: str, arc: str, member: str):
    """Like git_has, for a member of an archive as the commit holds it."""
    if not git_has(commit, arc):
        return git_has(commit, arc)
    data = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{arc}"], capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        member = member.strip("/")
        return any(n.strip("/") == member or n.startswith(member + "/") for n in t.getnames())


def test_history_rows_hold_their_paths():
    rows = history()
    assert rows, "bench/results/README.md has no history table"
    for path, commit in rows.items():
        assert not in_tree(path), f"{path} is in the tree and in the history table"
        arc, sep, member = path.partition(".tar.xz:")
        has = git_archive_has(commit, arc + ".tar.xz", member) if sep else git_has(commit, path)
        assert has is not False, f"commit {commit} has no {path}"
