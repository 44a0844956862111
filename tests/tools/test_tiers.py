"""The fast tier's guard (tests/support/tiers.py), on a small suite of its own that pytest runs in a fresh process:
a fast test that starts a process fails and names it, also when a fixture starts it; a test marked slow may, and so
may a library that looks up a C library (ctypes runs ldconfig); the
fast tests over their CPU budget are listed, also from pytest-xdist's workers; and the same suite without the guard
passes with nothing said (so the failures are the guard's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pytest in fresh processes

TESTS = Path(__file__).resolve().parents[1]

SUITE = '''
import os
import subprocess
import sys
import time

import pytest


@pytest.fixture(scope="module")
def server():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return "started"


def test_quick():
    assert sum(range(10)) == 45


def test_finds_a_c_library():
    import ctypes.util

    assert ctypes.util.find_library("c")


def test_starts_a_python():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_runs_a_shell_command():
    assert os.system("true") == 0


def test_a_fixture_starts_it(server):
    assert server == "started"


@pytest.mark.slow
def test_marked_slow_may():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


def test_burns_cpu():
    end = time.process_time() + 0.6
    while time.process_time() < end:
        pass
'''
INI = "[pytest]\nmarkers =\n    slow: not in the fast tier\nfast_test_cpu_budget = 0.3\n"


def run(tmp_path: Path, *args: str) -> str:
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(INI, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args, str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return done.stdout + done.stderr


def outcomes(out: str) -> dict[str, str]:
    """{test name: PASSED/FAILED} from pytest's -rA summary."""
    found = {}
    for line in out.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASSED", "FAILED") and "::" in rest:
            found[rest.split("::", 1)[1].split(" ", 1)[0]] = word
    return found


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_fast_test_that_starts_a_process_fails_and_cpu_over_budget_is_listed(tmp_path, workers):
    out = run(tmp_path, "-p", "support.tiers", *workers)
    assert outcomes(out) == {"test_quick": "PASSED", "test_finds_a_c_library": "PASSED",
                             "test_starts_a_python": "FAILED", "test_runs_a_shell_command": "FAILED",
                             "test_a_fixture_starts_it": "FAILED", "test_marked_slow_may": "PASSED",
                             "test_burns_cpu": "PASSED"}, out
    assert "is in the fast tier but started a process" in out and "mark it where it is declared" in out
    assert f"subprocess.Popen: {sys.executable} -c pass" in out and "os.system: true" in out
    listed = out.split("fast tests over their CPU budget of 0.3 s", 1)[1].split("short test summary")[0]
    assert "test_burns_cpu" in listed and "test_quick" not in listed, out


def test_without_the_guard_the_same_suite_passes_silently(tmp_path):
    out = run(tmp_path)
    assert set(outcomes(out).values()) == {"PASSED"} and len(outcomes(out)) == 7, out
    assert "started a process" not in out and "CPU budget" not in out
