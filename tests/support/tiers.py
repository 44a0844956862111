"""The fast tier stays fast: a pytest plugin (the root conftest.py loads it) that makes a slow test left unmarked
visible.

A test is slow when it says so where it is declared: ``pytestmark = pytest.mark.slow`` for a whole file,
``@pytest.mark.slow`` for one test (nbval's notebook cells are marked by the root conftest.py). ``bash run.sh test
fast`` runs the others. For each test that is not marked slow:

* Starting a process fails it, naming the process: a kernel, a server, a browser, another Python, git or ruff
  all cost seconds, and they are what made the fast tier slow. Python's audit events (``sys.addaudithook``) report
  every start (subprocess, os.system, os.spawn*, os.posix_spawn, os.fork, os.exec*) while the test and its fixtures
  are set up and run; nothing is patched. Not counted: a library looking up a C library (ctypes.util.find_library
  runs ldconfig once, at whichever test first needs it: helpers.runtime's malloc_trim). Nor is a fixture torn down
  after the test: a session's fixtures end during whichever test happens to run last.
* Its CPU time (this process's, every thread, while it is set up and run) is measured, and the end of the run lists
  the tests over the ``fast_test_cpu_budget`` (pyproject.toml, seconds). CPU time rather than the clock, so that a
  busy machine does not make a test look slow; a list rather than a failure, because a slower computer than this
  one uses more CPU time for the same test.
"""

from __future__ import annotations

import os
import sys
import time

import pytest

PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty", "os.exec")
BUDGET_INI = "fast_test_cpu_budget"
CPU_KEY = "fast test cpu seconds"

_started: list[str] | None = None  # the processes the running fast test started; None while no fast test runs


FIND_LIBRARY = os.path.join("ctypes", "util.py")


def _finding_a_library() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(FIND_LIBRARY):
            return True
        frame = frame.f_back
    return False


def _audit(event: str, args: tuple) -> None:
    if _started is not None and event in PROCESS_EVENTS and not _finding_a_library():
        what = args[1] if event == "subprocess.Popen" and len(args) > 1 and args[1] else (args[0] if args else "")
        if isinstance(what, bytes):  # os.system's command
            what = what.decode(errors="replace")
        elif isinstance(what, (list, tuple)):
            what = " ".join(map(str, what))
        _started.append(f"{event}: {str(what)[:160]}")


sys.addaudithook(_audit)  # once per process: this module is imported once (an audit hook cannot be removed)


def pytest_addoption(parser):
    parser.addini(BUDGET_INI, "CPU seconds a test of the fast tier may take before the run lists it", default="3")


def pytest_configure(config):
    config.pluginmanager.register(Tiers(config), "gentle-transformers tiers")


def fast(item: pytest.Item) -> bool:
    return item.get_closest_marker("slow") is None


class Tiers:
    def __init__(self, config: pytest.Config):
        self.budget = float(config.getini(BUDGET_INI))
        self.over: list[tuple[float, str]] = []
        self.cpu_at_setup = 0.0

    @pytest.hookimpl(tryfirst=True)  # before the fixtures are set up
    def pytest_runtest_setup(self, item):
        global _started
        _started = [] if fast(item) else None
        self.cpu_at_setup = time.process_time()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        global _started
        report = yield
        if call.when != "call" or not fast(item):
            return report
        started, _started = _started or [], None
        report.user_properties.append((CPU_KEY, time.process_time() - self.cpu_at_setup))
        if started and report.outcome != "skipped":
            report.outcome = "failed"
            report.longrepr = (f"{item.nodeid} is in the fast tier but started a process:\n  "
                               + "\n  ".join(started[:5]) + "\nA test that starts one is slow: mark it where it is "
                               "declared, @pytest.mark.slow (or pytestmark = pytest.mark.slow for its file).")
        return report

    def pytest_runtest_logreport(self, report):
        """(In the main process, also under pytest-xdist: a worker's report carries its user_properties.)"""
        for key, seconds in report.user_properties:
            if key == CPU_KEY and seconds > self.budget:
                self.over.append((seconds, report.nodeid))

    def pytest_terminal_summary(self, terminalreporter):
        if self.over:
            terminalreporter.write_sep("-", f"fast tests over their CPU budget of {self.budget:g} s "
                                            "(fast_test_cpu_budget): make them smaller or mark them slow")
            for seconds, nodeid in sorted(self.over, reverse=True):
                terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")
