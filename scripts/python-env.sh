# Sourced: sets KB_PYTHON to the interpreter kb's Python commands use, and
# puts python/ on PYTHONPATH. The default is the host venv with torch 2.11
# that scripts/setup-python.sh makes (under ${XDG_CACHE_HOME:-~/.cache}/kb/),
# with LD_LIBRARY_PATH set for its CUDA 13 libraries (/usr/local/cuda and the
# three nvidia-* wheels the toolkit lacks); when that venv is absent, a
# python3 on PATH that imports torch (a GPU machine's torch 2.11), else
# Debian's /usr/bin/python3. An exported KB_PYTHON is kept.
_kb_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
if [ -z "${KB_PYTHON:-}" ] && [ -z "${KB_SKIP_VENV:-}" ]; then
  _kb_hash=$(sha256sum "$_kb_root/python/requirements-host.txt" 2>/dev/null | cut -c1-12)
  _kb_venv="${XDG_CACHE_HOME:-$HOME/.cache}/kb/venv-$_kb_hash"
  if [ -n "$_kb_hash" ] && [ -f "$_kb_venv/.kb-complete" ]; then
    KB_PYTHON="$_kb_venv/bin/python3"
    _kb_sp="$_kb_venv/lib/python3.11/site-packages/nvidia"
    export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:$_kb_sp/cu13/lib:$_kb_sp/cusparselt/lib:$_kb_sp/nvshmem/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  unset _kb_hash _kb_venv _kb_sp
fi
if [ -z "${KB_PYTHON:-}" ]; then
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import torch" 2>/dev/null; then
      KB_PYTHON=$(command -v "$p"); break
    fi
  done
fi
export KB_PYTHON=${KB_PYTHON:-python3}
export PYTHONPATH="$_kb_root/python${PYTHONPATH:+:$PYTHONPATH}"
unset _kb_root
