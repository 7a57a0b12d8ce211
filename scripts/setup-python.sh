#!/usr/bin/env bash
#===- scripts/setup-python.sh - the host's torch 2.x interpreter ----------===#
#
# Creates (or reuses) the virtual environment kb's Python suite runs in: a
# venv of Debian's /usr/bin/python3 with torch 2.11 (Dynamo, torch.compile,
# F.scaled_dot_product_attention) and the packages pinned in
# python/requirements-host.txt. It lives outside the repository, shared by
# every worktree, at ${XDG_CACHE_HOME:-$HOME/.cache}/kb/venv-<hash of that
# file>, so a changed pin makes a new one. Idempotent: when the venv is
# complete (a stamp file) it only prints its path. Prints the venv's path last.
# KB_SKIP_VENV=1 skips it (scripts/python-env.sh then falls back to a python3
# that imports torch).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
cd "$(dirname "$0")/.."
req=python/requirements-host.txt
hash=$(sha256sum "$req" | cut -c1-12)
venv="${XDG_CACHE_HOME:-$HOME/.cache}/kb/venv-$hash"
if [ -f "$venv/.kb-complete" ]; then
  echo "$venv"; exit 0
fi
echo "kb setup-python: creating $venv (torch 2.11 CPU+CUDA wheel, ~530 MB download)" >&2
mkdir -p "$(dirname "$venv")"
rm -rf "$venv.tmp"
/usr/bin/python3 -m venv "$venv.tmp"
nodeps=$(sed -n 's/^nodeps[[:space:]]\+//p' "$req")
deps=$(grep -v -e '^#' -e '^nodeps' -e '^[[:space:]]*$' "$req")
# shellcheck disable=SC2086
"$venv.tmp/bin/pip" install -q --disable-pip-version-check --no-deps $nodeps >&2
# shellcheck disable=SC2086
"$venv.tmp/bin/pip" install -q --disable-pip-version-check $deps >&2
rm -rf "$venv"
mv "$venv.tmp" "$venv"
# A venv's scripts name its path: rewrite the .tmp in their shebangs.
grep -rl --null "$venv.tmp" "$venv/bin" 2>/dev/null | xargs -0 -r sed -i "s|$venv.tmp|$venv|g"
touch "$venv/.kb-complete"
echo "$venv"
