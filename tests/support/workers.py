"""How the tests share pytest-xdist's workers: a pytest plugin (the root conftest.py loads it).

`bash run.sh test` runs the suite on GT_WORKERS workers (default: the CPUs it may use, up to 4), each with one torch
thread, with xdist's own ``--dist loadgroup``: the tests of one ``xdist_group`` go to one worker, as one unit, and
units go to whichever worker is free (run.sh passes ``-n N --dist loadgroup``; ``-n`` alone means xdist's ``--dist
load``, which would split a notebook's cells over two kernels, so this plugin refuses it and says what to add).
What must stay together:

* a notebook's nbval cells share one kernel: their group is the notebook (added at collection below, since no Python
  file declares them);
* a file's tests share its module fixtures (one nbgrader course, one run of every notebook): every test that names
  no group of its own gets its file's (added below too);
* tests/browser/'s files that use its session fixtures (JupyterLab servers, Chromium) declare
  ``xdist_group("browser")``: they share one worker, so those start once;
* a file marked ``apart`` (each test a run of its own: a notebook under other settings, another Python) gets no
  group: xdist spreads its tests one by one.

Units start longest first (LONGEST_FIRST, measured), so that no worker is left with a long one at the end: every
worker sorts its collection alike, and under loadgroup xdist is told to keep that order (the option
``--no-loadscope-reorder``, set here).
"""

from __future__ import annotations

import pytest

LONGEST_FIRST = ["test_exercises.py", "@browser", "test_site.py", "test_add_a_notebook.py", ".ipynb",
                 "test_determinism.py", "test_seeds.py", "test_pythons.py", "test_gpt2.py", "test_setup.py",
                 "test_lab.py"]


def pytest_configure(config):
    config.addinivalue_line("markers", "xdist_group(name): the tests of one group run on one worker")
    config.addinivalue_line("markers", "apart: each test of this file is a run of its own, on any worker")
    dist = getattr(config.option, "dist", "no")  # (on a worker always "no": only the main process schedules)
    if dist == "load":
        raise pytest.UsageError("pytest-xdist's --dist load (what -n gives alone) would split a notebook's cells over "
                                "two kernels and a file's module fixtures over two workers: add --dist loadgroup, "
                                "or run bash run.sh test, which does")
    if dist == "loadgroup":
        config.option.loadscopereorder = False  # xdist reads it when the run starts, after every configure hook


def unit(item: pytest.Item) -> str | None:
    """The group a test joins when it names none: its file (a notebook's cells: the notebook), or none if apart."""
    if item.get_closest_marker("xdist_group") or item.get_closest_marker("apart"):
        return None
    return item.nodeid.split("::", 1)[0]


def start_rank(nodeid: str) -> int:
    """Where a test's unit starts: the longest kinds first (LONGEST_FIRST), then the rest in collection order."""
    path = nodeid.split("::", 1)[0]
    for rank, part in enumerate(LONGEST_FIRST):
        if path.endswith(part) or nodeid.endswith(part):
            return rank
    return len(LONGEST_FIRST)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    for item in items:  # before xdist reads the groups
        group = unit(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    result = yield
    if hasattr(config, "workerinput"):  # on an xdist worker, after every other hook: all workers sort alike (stable)
        items.sort(key=lambda item: start_rank(item.nodeid))
    return result
