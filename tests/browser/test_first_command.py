"""The series as a new learner first meets it: the README's first command, `bash run.sh lab`, in a real browser.

The command runs as the README gives it (plus server flags only: no browser of its own, a free port on 127.0.0.1, a
token, and the app exposed to the test's scripts) with the workspace in a temporary folder (GT_WORK). Chromium opens
every notebook of the workspace in the JupyterLab it starts, and what the notebook panel holds (each cell's source,
as the editor shows it) must have every exercise blank: "# YOUR CODE HERE" once per exercise, no solution marker and
no line of a solution. Notebook 01 is then run with Run All: it must reach its last cell with each check saying
"not written yet", as a learner's first Run All does. The first screen is quiet: no notification (JupyterLab's
question about Jupyter's news, or a newer version) over the first notebook.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ROOT

from tools import jlab
from tools import notebooks as nbtool

# `bash run.sh lab`, JupyterLab and Chromium; the browser group
# runs on one worker (conftest.py's servers and Chromium start once)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

CELLS_JS = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model;
  const out = [];
  for (let i = 0; i < model.cells.length; i++) {
    const c = model.cells.get(i);
    out.push([c.type, c.sharedModel.getSource()]);
  }
  return out;
}"""
OUTPUT_TEXT_JS = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model;
  const out = [];
  for (let i = 0; i < model.cells.length; i++) {
    const c = model.cells.get(i);
    out.push(c.type === 'code' ? c.outputs.toJSON().map(o => [].concat(o.text || '').join('')).join('') : '');
  }
  return out;
}"""


class RunShLab:
    """`bash run.sh lab`, started as the README says, with the interface tools.jlab's NotebookPage drives."""

    def __init__(self, work: Path, log: Path):
        self.port, self.token, self.log_path = jlab.free_port(), secrets.token_hex(16), log
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, GT_WORK=str(work), JUPYTER_RUNTIME_DIR=str(work.parent / "runtime"))
        self._log = open(log, "w")
        self.proc = subprocess.Popen(
            ["bash", "run.sh", "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={self.port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
             # for the test's eyes: the page's window.jupyterapp, and settings kept out of the user's home
             "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={work.parent / 'settings'}",
             f"--LabApp.workspaces_dir={work.parent / 'workspaces'}"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True)
        self._ready = False

    def wait_ready(self) -> "RunShLab":
        if not self._ready:
            jlab.wait_http(self.proc, f"{self.url}/api/status?token={self.token}", "bash run.sh lab",
                           time.monotonic() + 180, log=lambda: self.log_path.read_text(), stop=self.stop)
            self._ready = True
        return self

    def page_url(self, path: str, ui: str = "lab") -> str:
        return f"{self.url}/lab/tree/{path}?reset&token={self.token}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            jlab.terminate(self.proc, 15)
        with contextlib.suppress(ProcessLookupError):  # nothing it started (a kernel) outlives it
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._log.close()


@pytest.fixture(scope="module")
def chromium(browser_available):
    """A browser of this file's own, closed at its end: tests/browser/test_hub.py starts Playwright afresh after it."""
    with jlab.browser() as ctx:
        yield ctx


@pytest.fixture(scope="module")
def first_start(tmp_path_factory, browser_available):
    folder = tmp_path_factory.mktemp("learner")
    lab = RunShLab(folder / "work", folder / "lab.log")
    try:
        yield lab.wait_ready(), folder / "work"
    finally:
        lab.stop()


def test_the_first_command_opens_every_notebook_with_its_exercises_blank(first_start, chromium):
    lab, work = first_start
    log = lab.log_path.read_text()
    assert f"==> Your workspace {work}:" in log and "copied in" in log, log
    names = sorted(p.name for p in work.glob("*.ipynb"))
    assert names == [p.name for p in nbtool.notebooks([])]
    for name in names:
        page = jlab.NotebookPage(chromium, lab, name)
        try:
            page.open()
            cells = page.js(CELLS_JS)
        finally:
            page.close()
        code = "\n".join(source for kind, source in cells if kind == "code")
        n = len(nbtool.exercises(nbtool.NOTEBOOKS / name))
        assert code.count("# YOUR CODE HERE") == n, f"{name}: {code.count('# YOUR CODE HERE')} blanks for {n}"
        assert nbtool.SOLUTION_START not in code
        shown = [line for line in nbtool.solution_lines(nbtool.NOTEBOOKS / name) if line in code]
        assert not shown, f"{name} shows the learner solution lines: {shown}"


def test_run_all_on_the_first_notebook_reaches_the_end_with_each_check_saying_not_written_yet(first_start, chromium):
    lab, work = first_start
    page = jlab.NotebookPage(chromium, lab, "01_bigrams.ipynb")
    try:
        page.open()
        page.run_all()
        cells = page.js("() => gt.cells()")
        printed = page.js(OUTPUT_TEXT_JS)
    finally:
        page.close()
    assert not page.report.problems, page.report.problems
    code = [c for c in cells if c["type"] == "code"]
    assert code and all(c["count"] is not None for c in code), "Run All stopped before the last cell"
    checks = [ex["cells"][2] for ex in nbtool.exercises(nbtool.NOTEBOOKS / "01_bigrams.ipynb")]
    for i in checks:
        assert "not written yet" in printed[i], f"cell {i}, an exercise's check, printed: {printed[i]!r}"
    assert sum("not written yet" in text for text in printed) == len(checks)


TOASTS_JS = "() => [...document.querySelectorAll('.Toastify__toast')].map(t => t.innerText.trim())"
# the status bar's bell: how many notifications the notification centre holds
COUNT_JS = "() => Number(document.querySelector('.jp-Notification-Status-Text').innerText.trim())"
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"


def test_the_first_screen_asks_nothing(first_start, chromium):
    """JupyterLab's announcements (its question "Would you like to get notified about official Jupyter news?" and its
    check for a newer JupyterLab) are off in the JupyterLab `bash run.sh lab` starts: a fresh page on the first
    notebook, with the user's settings empty as on a first start, shows no notification once it has settled, and its
    notification centre is empty. A notification emitted in the same page is counted, so the look is real."""
    lab, _ = first_start
    page = chromium.new_page()
    try:
        page.goto(lab.page_url("01_bigrams.ipynb"))
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
                               "window.jupyterapp.shell.currentWidget.context.path === '01_bigrams.ipynb' && "
                               "document.querySelector('.jp-Notification-Status-Text')", timeout=180_000)
        page.evaluate("() => window.jupyterapp.restored")
        page.wait_for_timeout(5000)  # the news question came within a second of the restore, when it came
        assert page.evaluate(TOASTS_JS) == []
        assert "Jupyter news" not in page.evaluate("() => document.body.innerText")
        assert page.evaluate(COUNT_JS) == 0
        assert not page.evaluate("id => window.jupyterapp.hasPlugin(id)", ANNOUNCEMENTS)
        # the negative control: a notification emitted in this page is counted where the news question would be
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:notify', "
                      "{message: 'Would you like to get notified about official Jupyter news?', type: 'default'})")
        page.wait_for_function(f"() => ({COUNT_JS})() === 1", timeout=10_000)
    finally:
        page.close()
