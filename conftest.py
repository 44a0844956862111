"""Repository-wide pytest set-up (loaded for tests/ and notebooks/ alike): the offline guard, no warning under a
notebook cell, the two tiers (tests/support/tiers.py) and how the tests share pytest-xdist's workers.

The whole suite must pass with the network disabled. GT_OFFLINE=1 plus
tests/offline/ on PYTHONPATH make every Python process the tests start (nbval's kernels,
JupyterLab and its kernels) load tests/offline/sitecustomize.py, which refuses non-loopback
connections and name look-ups; this process loads it directly. The browser is kept offline
by its own flags (tools/jlab/). Set GT_OFFLINE=0 to switch the guard off.
"""

import os
import re
import runpy
from pathlib import Path

import pytest

_GUARD = Path(__file__).resolve().parent / "tests" / "offline"

if os.environ.get("GT_OFFLINE", "1") == "1":
    os.environ["GT_OFFLINE"] = "1"
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(_GUARD) not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(_GUARD), *parts])
    runpy.run_path(str(_GUARD / "sitecustomize.py"))

# Threads that wait sleep instead of spinning (OpenMP's passive wait policy), in every process the tests start. The
# "other machine" runs with two torch threads (tests/notebooks/test_determinism.py) share 2 cores with another test
# worker, and spinning made them 2.5x slower there. It changes no number: the negative control in
# tests/notebooks/test_determinism.py compares the trained weights under both policies, bit for bit.
os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


# --- a clean run shows the learner no warnings ----------------------------------------------------------------------
# nbval runs every notebook cell by cell; after each cell, anything the cell wrote to stderr that looks like a
# Python warning (a UserWarning from torch, a DeprecationWarning, ...) fails that cell: a learner should not have to
# wonder whether "UserWarning: ..." under a cell means they did something wrong. (Progress bars in a kernel are
# widgets, not stderr; tests/unit/test_progress.py checks they end green.)
WARNING = re.compile(r"\b[A-Z]\w*Warning: ")  # how Python prints one: "file.py:12: UserWarning: message"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    outputs = getattr(item, "test_outputs", None)  # set by nbval's cell items only
    if outputs:
        stderr = "".join(o.get("text", "") for o in outputs
                         if o.get("output_type") == "stream" and o.get("name") == "stderr")
        if WARNING.search(stderr):
            raise AssertionError(f"this notebook cell shows the learner a warning:\n{stderr[-1500:]}")
    return result


# --- the fast tier and the workers -------------------------------------------------------------------------------
# `bash run.sh test fast` (pytest -m "not slow") runs what a developer runs while changing helpers/: under a minute on 2
# cores. A test is slow where it is declared (pytestmark = pytest.mark.slow, or @pytest.mark.slow); nbval's notebook
# cells, declared nowhere in Python, are marked below. tests/support/tiers.py fails a fast test that starts a process
# and lists the fast tests over their CPU budget. `bash run.sh test` runs everything, on pytest-xdist's workers with
# --dist loadgroup: tests/support/workers.py says which tests stay together.
pytest_plugins = ["support.tiers", "support.workers"]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:  # before -m reads the marks
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
