"""Fixtures for the real-browser tests: one JupyterLab server and one headless Chromium per session.

The notebooks are copied into a temporary folder that the server serves, so the browser's
autosave never writes outputs into the repository. Screenshots go to artifacts/browser/.
Without Chromium the tests skip with the reason; under CI=true they fail instead. The files that use these fixtures
declare xdist_group("browser"): one worker runs them all, so the servers and Chromium start once (test_site.py,
test_lab.py and test_split_redraw.py start their own and may run on any worker).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools import jlab

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

collect_ignore_glob = ["fixtures/*"]  # the fixture notebook is run by the browser tests, not by nbval
FIXTURE = HERE / "fixtures" / "fixture_explorer.ipynb"
ARTIFACTS = ROOT / "artifacts" / "browser"


def series_notebooks() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def browser_available():
    problem = jlab.chromium_problem()
    if problem:
        if in_ci():
            pytest.fail(f"CI=true and the real-browser tests cannot run: {problem}")
        pytest.skip(problem)


@pytest.fixture(scope="session")
def staged(tmp_path_factory, browser_available) -> Path:
    root = tmp_path_factory.mktemp("served")
    jlab.stage_notebooks(root, series_notebooks() + [FIXTURE])
    return root


@pytest.fixture(scope="session")
def servers(staged):
    """Both servers start at once (each takes seconds); each is stopped by its own process id."""
    with jlab.LabServer(staged) as lab, jlab.LabServer(staged, widgets=False) as without:
        lab.launch()
        without.launch()
        yield lab, without


@pytest.fixture(scope="session")
def lab(servers):
    return servers[0].wait_ready()


@pytest.fixture(scope="session")
def notebook7(staged):
    """`jupyter notebook` (Notebook 7) serving the same copies, as a class using that interface would start it."""
    with jlab.LabServer(staged, app="notebook") as server:
        yield server.start()


@pytest.fixture(scope="session")
def lab_without_widgets(servers):
    """The negative control: the same notebooks with the ipywidgets front-end disabled."""
    return servers[1].wait_ready()


@pytest.fixture(scope="session")
def chromium(browser_available):
    with jlab.browser() as ctx:
        yield ctx
