"""How the tests share pytest-xdist's workers (tests/support/workers.py), on a small suite of its own that pytest runs
with two workers in a fresh process, as run.sh runs the suite (-n 2 --dist loadgroup): a notebook's nbval cells
run on one worker (each cell needs the one before it in the same kernel); a file's tests run on one worker, its
module fixture set up once; an xdist_group declared in two files keeps them together; a file marked apart is spread
over both workers. -n alone (xdist's --dist load) is refused with what to add. The negative control: without the
plugin, --dist loadgroup alone gives the same file's tests to both workers (and sets its module fixture up twice)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow  # pytest with two workers and a kernel, in fresh processes

TESTS = Path(__file__).resolve().parents[1]
N = 30  # tests in the grouped file: under --dist load, two workers surely share them

FILES = {
    "test_0_apart.py": '''
import time
import pytest

pytestmark = pytest.mark.apart


@pytest.mark.parametrize("i", range(6))
def test_apart(i):
    time.sleep(0.2)
''',
    "test_file.py": f'''
import os
import time
import pytest


@pytest.fixture(scope="module")
def once():
    with open(os.environ["SETUPS"], "a") as f:
        f.write("set up\\n")


@pytest.mark.parametrize("i", range({N}))
def test_in_the_file(once, i):
    time.sleep(0.02)
''',
    "test_g1.py": 'import pytest\n\n\n@pytest.mark.xdist_group("shared")\ndef test_g1():\n    pass\n',
    "test_g2.py": 'import pytest\n\n\n@pytest.mark.xdist_group("shared")\ndef test_g2():\n    pass\n',
}
INI = "[pytest]\naddopts = --nbval-lax --nbval-current-env -p no:cacheprovider\nmarkers =\n    apart: spread\n"


def notebook() -> str:
    """Four cells, each needing the one before it in the same kernel."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")] + \
        [nbformat.v4.new_code_cell(f"assert x == {i}\nx = {i + 1}") for i in range(1, 4)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nbformat.writes(nb)


def run(tmp_path: Path, *args: str, plugin: bool = True) -> tuple[dict[str, set[str]], str, int]:
    """{test file: the workers that ran its tests}, the output, and how often the module fixture was set up."""
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "cells.ipynb").write_text(notebook(), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(INI, encoding="utf-8")
    setups = tmp_path / "setups.txt"
    setups.unlink(missing_ok=True)
    env = {**os.environ, "SETUPS": str(setups),
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "pytest", "-n", "2", "-v", *(["-p", "support.workers"] if plugin else []), *args,
               str(tmp_path)]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == (4 if "--dist" not in args else 0), out[-4000:]  # (4: pytest's usage error)
    workers = defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d)\] \[\s*\d+%\] PASSED (\S+)", out, flags=re.M):
        workers[nodeid.split("::")[0]].add(worker)
    return workers, out, len(setups.read_text().splitlines()) if setups.exists() else 0


def test_groups_stay_on_one_worker(tmp_path):
    workers, out, setups = run(tmp_path, "--dist", "loadgroup")
    assert "scheduling tests via LoadGroupScheduling" in out, out[:2000]
    assert len(workers["cells.ipynb"]) == 1          # the four cells passed, each after the one before, in one kernel
    assert len(workers["test_file.py"]) == 1 and setups == 1
    assert len(workers["test_g1.py"] | workers["test_g2.py"]) == 1
    assert sum(1 for line in out.splitlines() if " PASSED " in line) == 6 + N + 2 + 4, out[-3000:]


def test_a_file_marked_apart_is_spread(tmp_path):
    """Six units of one test each: xdist starts each worker with two, so both run some."""
    workers, out, _ = run(tmp_path, "--dist", "loadgroup", "-k", "apart")
    assert workers["test_0_apart.py"] == {"gw0", "gw1"}, out[-3000:]


def test_negative_control_without_the_plugin_a_files_tests_are_shared(tmp_path):
    workers, out, setups = run(tmp_path, "--dist", "loadgroup", "-k", "in_the_file", plugin=False)
    assert len(workers["test_file.py"]) == 2 and setups == 2, json.dumps({k: sorted(v) for k, v in workers.items()})


def test_n_alone_is_refused_with_what_to_add(tmp_path):
    workers, out, setups = run(tmp_path)
    assert "add --dist loadgroup" in out and not workers, out[-3000:]
