#!/usr/bin/env bash
# Gentle Transformers — the one entry point (README.md shows the two commands a new machine needs).
#
#   bash run.sh lab     set up on first use, then open the series in JupyterLab
#   bash run.sh test    set up on first use, then run every test (unit tests + every notebook via nbval)
#   bash run.sh bench   set up on first use, then print the benchmark table (timings, memory)
#   bash run.sh refresh-notebooks   re-run the notebooks and store their checked outputs (maintainers)
#
# Set-up = a project-local virtual environment in .venv with the pinned packages of requirements.txt
# and this repo's `helpers` package installed in editable mode. It is redone only when
# requirements.txt or pyproject.toml change. GT_THREADS sets torch's thread count (default 1 in tests).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
VENV=.venv
PY="$VENV/bin/python"

find_python() {
  for cand in python3.11 python3 python; do
    if command -v "$cand" >/dev/null 2>&1 &&
       "$cand" -c 'import sys; sys.exit(0 if (3, 10) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      echo "$cand"; return 0
    fi
  done
  echo "run.sh: needs Python 3.10-3.13 (3.11 recommended); none found on PATH." >&2
  return 1
}

setup() {
  local stamp want
  want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
  stamp="$VENV/.gt-installed"
  if [ -x "$PY" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  local base; base=$(find_python)
  echo "==> Setting up $VENV with $("$base" --version) (first run takes about a minute)"
  [ -x "$PY" ] || "$base" -m venv "$VENV"
  "$PY" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  # (grep drops pip's notes about local index folders this machine's pip config names but lacks)
  "$PY" -m pip install --quiet -r requirements.txt 2> >(grep -v "is ignored: it is neither" >&2)
  "$PY" -m pip install --quiet --no-deps -e . 2> >(grep -v "is ignored: it is neither" >&2)
  echo "$want" > "$stamp"
}

# Debian's chromium for the real-browser widget tests (test tools' own browser downloads fail here).
browser() {
  if command -v chromium >/dev/null 2>&1; then return 0; fi
  if [ "$(id -u)" = 0 ]; then
    echo "==> Installing Debian's chromium for the browser tests"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ||
      echo "run.sh: could not install chromium; the browser tests will say so." >&2
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || true
  else
    echo "run.sh: chromium is not installed and this user cannot apt-get it; browser tests will be skipped." >&2
  fi
}

cmd="${1:-lab}"; shift || true
case "$cmd" in
  lab)
    setup
    exec "$VENV/bin/jupyter" lab notebooks/01_bigrams.ipynb "$@"
    ;;
  test)
    setup
    browser
    export GT_THREADS="${GT_THREADS:-1}" MPLBACKEND=Agg
    exec "$PY" -m pytest "$@"
    ;;
  bench)
    setup
    browser
    exec "$PY" tools/bench.py "$@"
    ;;
  refresh-notebooks)
    setup
    export GT_THREADS="${GT_THREADS:-1}"
    exec "$PY" tools/notebooks.py refresh "$@"
    ;;
  *)
    echo "usage: bash run.sh [lab|test|bench|refresh-notebooks]" >&2; exit 2 ;;
esac
