"""One notebook open in a browser page: opened, run, its outputs checked, its explorers operated (``widget.py``).

The in-page helpers (``window.gt``) are ``page.js``, injected once per page."""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from .server import UIS, LabServer
from .widget import FALLBACK_RE, ExplorerControls

PAGE_JS = (Path(__file__).with_name("page.js")).read_text(encoding="utf-8")
# (JupyterLab is exposed as window.jupyterapp by --LabApp.expose_app_in_browser.)


def _note_request(page, req) -> None:
    url = req.url
    if not re.match(r"^(https?|wss?)://(127\.0\.0\.1|localhost)(:\d+)?/", url) and \
            not url.startswith(("data:", "blob:", "about:")):
        page.gt_outside.append(url)


@dataclass
class Report:
    """What one notebook looked like in the browser; ``problems`` empty means it passed."""
    path: str
    problems: list[str] = field(default_factory=list)
    widget_outputs: int = 0
    explorers: int = 0
    operated: list[str] = field(default_factory=list)
    images_changed: set = field(default_factory=set)
    seconds: dict = field(default_factory=dict)
    problem_cells: list = field(default_factory=list)
    audit: dict = field(default_factory=dict)     # axe-core's findings (jlab.audit), when asked for
    tab_stops: dict = field(default_factory=dict)  # explorer -> what each Tab stop is called (keyboard_walk)


class NotebookPage(ExplorerControls):
    """One notebook open in JupyterLab (ui="lab") or Jupyter Notebook 7 (ui="notebook") in one browser page.

    Both front-ends are built from JupyterLab's components and expose the app as window.jupyterapp, whose
    shell's current widget is the notebook panel, so every in-page check below works in both. Notebook 7
    shows one notebook per page: each notebook gets a fresh page there (JupyterLab's page is reused)."""

    _pages: dict = {}  # (browser context, server url) -> page: JupyterLab boots once per server

    def __init__(self, ctx, server: LabServer, path: str, *, timeout: float = 180, ui: str = "lab"):
        if ui not in UIS:
            raise ValueError(f"ui must be one of {UIS}, got {ui!r}")
        self.ctx, self.server, self.path, self.timeout_ms, self.ui = ctx, server, path, timeout * 1000, ui
        server.wait_ready()
        key = (id(ctx), server.url, ui)
        page = self._pages.get(key)
        self.reused = page is not None and not page.is_closed() and ui == "lab"
        if not self.reused:
            page = ctx.new_page()
            page.gt_outside, page.gt_errors = [], []
            page.on("request", lambda req: _note_request(page, req))
            page.on("pageerror", lambda e: page.gt_errors.append(str(e)))
            self._pages[key] = page
        self.page = page
        page.gt_outside.clear()
        page.gt_errors.clear()
        self.outside_requests, self.page_errors = page.gt_outside, page.gt_errors
        self.report = Report(path)

    def js(self, expr: str, *args):
        return self.page.evaluate(expr, *args) if args else self.page.evaluate(expr)

    def wait(self, expr: str, arg=None, *, what: str, timeout_ms: float | None = None):
        """Wait until ``expr`` (polled every 100 ms) is truthy; returns its value."""
        from playwright.sync_api import TimeoutError as PWTimeout
        try:
            handle = self.page.wait_for_function(expr, arg=arg, timeout=timeout_ms or self.timeout_ms, polling=100)
        except PWTimeout:
            raise TimeoutError(f"{self.path}: timed out waiting for {what} "
                               f"(kernel {self._safe('() => window.gt && gt.kernelStatus()')})") from None
        return handle.json_value()

    def _safe(self, expr: str):
        try:
            return self.js(expr)
        except Exception as e:
            return f"? ({e.__class__.__name__})"

    # -- steps ----------------------------------------------------------------------------------
    def open(self) -> None:
        t = time.monotonic()
        if self.reused:  # JupyterLab is up: open the notebook from it, as a learner would
            self.js("p => gt.open(p)", self.path)
        else:
            self.page.goto(self.server.page_url(self.path, self.ui))
        self.wait("p => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
                  "window.jupyterapp.shell.currentWidget.sessionContext && "
                  "window.jupyterapp.shell.currentWidget.context.path === p", self.path,
                  what=f"{'JupyterLab' if self.ui == 'lab' else 'Jupyter Notebook 7'} to open the notebook")
        self.js(PAGE_JS)
        if self.ui == "lab":
            self.js("() => window.jupyterapp.shell.collapseLeft()")  # more notebook in the screenshot
        self.wait("p => gt.kernelReady(p)", self.path, what="the kernel to be connected and idle")
        self.report.seconds["open"] = round(time.monotonic() - t, 1)

    def run_all(self) -> None:
        self.start_run_all()
        self.wait_run_all()

    def start_run_all(self) -> None:
        """Run All, returning once a cell has started (``wait_run_all`` waits for the end): several users'
        notebooks can run at once."""
        self._run_started = time.monotonic()
        for attempt in (1, 2):
            self.js("() => gt.runAll()")
            try:
                self.wait("() => gt.started()", what="Run All to start a cell", timeout_ms=15000)
                break
            except TimeoutError:
                if attempt == 2:
                    raise
                # Run All was swallowed (JupyterLab ignores a Run All sent before the notebook's kernel is
                # connected and idle, as right after opening it): wait for the kernel again and retry once.
                self.wait("p => gt.kernelReady(p)", self.path, what="the kernel to be connected and idle")

    def wait_run_all(self) -> None:
        self.wait("() => gt.finished()", what="all cells to finish running")
        self.report.seconds["run_all"] = round(time.monotonic() - self._run_started, 1)
        for i, c in enumerate(self.js("() => gt.cells()")):
            for err in c.get("errors", []):
                self.report.problems.append(f"cell {i} raised {err}")
            if c["type"] == "code" and c["count"] is None and not c.get("errors"):
                pass  # not run because an earlier cell failed; reported above

    def check_outputs(self) -> None:
        """Scroll through every cell; each widget output must render as a widget, and no output
        area may show a widget's text fallback."""
        cells = self.js("() => gt.cells()")
        for i, c in enumerate(cells):
            if c["type"] != "code":
                continue
            self.js("i => gt.scrollTo(i)", i)
            widx = c["widgetOutputs"]
            self.report.widget_outputs += len(widx)
            if widx:
                try:
                    self.wait("([i, w]) => gt.settled(i, w)", [i, widx], what=f"cell {i}'s widgets to render",
                              timeout_ms=30000)
                except TimeoutError as e:
                    self.report.problems.append(str(e))
            outs = self.js("i => gt.outputs(i)", i)
            n_before = len(self.report.problems)
            for j in widx:
                if j < len(outs) and not outs[j]["widget"]:
                    self.report.problems.append(
                        f"cell {i}: a widget rendered as text, not as a widget: {outs[j]['text'][:120]!r}")
            for o in outs:
                m = FALLBACK_RE.search(o["text"] or "")
                if m:
                    self.report.problems.append(f"cell {i}: text fallback {m.group(0)!r} in an output area: "
                                                f"{o['text'][:120]!r}")
            if len(self.report.problems) > n_before:
                self.report.problem_cells.append(i)

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.report.problem_cells:  # show the first cell that went wrong
            self.js("i => gt.scrollTo(i)", self.report.problem_cells[0])
        self.page.screenshot(path=str(path))

    def finish(self) -> Report:
        if self.outside_requests:
            self.report.problems.append(f"the page asked for non-local URLs: {self.outside_requests[:5]}")
        if self.page_errors:
            self.report.problems.append(f"JavaScript errors in the page: {self.page_errors[:3]}")
        return self.report

    def close(self) -> None:
        """Shut this notebook's kernel down; JupyterLab's page stays for the next notebook, Notebook 7's closes."""
        with contextlib.suppress(Exception):
            self.js("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        if self.ui == "notebook":
            with contextlib.suppress(Exception):
                self.page.close()


def check_notebook(ctx, server: LabServer, path: str, *, screenshot: Path | None = None,
                   operate: bool = True, timeout: float = 180, ui: str = "lab", audit: bool = False,
                   zoom: Path | None = None) -> Report:
    """Open, run, scroll through and operate one notebook in JupyterLab or Notebook 7 (``ui``); what was found.
    ``audit``: after Run All, axe-core audits the outputs (``report.audit``; jlab.audit). ``zoom``: after
    operating, the same at 200 % zoom (ExplorerControls.check_zoom), with a screenshot to that path."""
    nbp = NotebookPage(ctx, server, path, timeout=timeout, ui=ui)
    try:
        nbp.open()
        nbp.run_all()
        nbp.check_outputs()
        if audit and not nbp.report.problems:
            from .audit import audit as run_audit

            nbp.report.audit = run_audit(nbp.page)
        if operate and not nbp.report.problems:
            t = time.monotonic()
            nbp.operate_explorers()
            nbp.report.seconds["operate"] = round(time.monotonic() - t, 1)
            if zoom and not nbp.report.problems:
                nbp.check_zoom(zoom)
        if screenshot:
            nbp.screenshot(screenshot)
    except TimeoutError as e:
        nbp.report.problems.append(str(e))
        if screenshot:
            with contextlib.suppress(Exception):
                nbp.screenshot(screenshot)
    finally:
        report = nbp.finish()
        nbp.close()
    return report
