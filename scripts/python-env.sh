# Sourced: sets KB_PYTHON to a python3 that imports torch (python3 on PATH,
# else Debian's /usr/bin/python3) and puts python/ on PYTHONPATH.
if [ -z "${KB_PYTHON:-}" ]; then
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import torch" 2>/dev/null; then
      KB_PYTHON=$(command -v "$p"); break
    fi
  done
fi
export KB_PYTHON=${KB_PYTHON:-python3}
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
