"""Drive the series in a real browser: a JupyterLab server and a headless Chromium (Playwright).

Shared by the browser tests (tests/browser/, which put tools/ on sys.path) and the benchmark
(tools/bench.py). It imports nothing from helpers/ or tests/. Nothing here
sleeps for a fixed time: every wait is a wait on a state (HTTP status, kernel status, a DOM
attribute), with a timeout that says what it was waiting for.

* ``LabServer`` starts ``jupyter lab`` on 127.0.0.1 with a token it generates, in a private set of
  Jupyter directories (config, settings, workspaces, runtime), and stops it by its own process id.
  ``widgets=False`` disables the ipywidgets front-end (the negative control).
* ``browser()`` launches Debian's Chromium (``/usr/bin/chromium``) with the flags this machine needs.
* ``NotebookPage`` opens one notebook, waits until its kernel is really connected and idle, runs all
  cells, scrolls through them, and reports what the learner would see.

What an explorer is, in the page (``gt.explorers()``): the VBox whose child is the HTML widget holding
``<div class="gt-caption" data-state="k=v;...">``; its picture is the HTML widget whose root is
``<div class="gt-view" data-state="...">`` (the same state as the caption's when the picture is the
picture of the value shown), or, in explorers from before that contract, an <img> or other HTML.
Its controls, one entry each: slider (any noUiSlider), choice (a ToggleButtons group, however many
buttons), toggle (a lone ToggleButton), checkbox, text (Text, Combobox) and dropdown, which is only
reported: a focused <select> cannot be changed by keys in JupyterLab (DROPDOWN_PROBLEM).

``NotebookPage.press_control`` changes a control from the KEYBOARD ONLY (focus, then keys; no clicks)
and ``_operate`` checks the result: the caption names the new value, the picture's .gt-view shows the
caption's state, the picture changed. What a screen reader is told is read from Chromium's own
accessibility tree (the DevTools protocol): ``keyboard_walk`` Tabs through an explorer and every stop must
have a role and a name; ``picture_problems`` finds an unnamed image in a picture and a picture not
described by its own caption (aria-describedby). ``wait_quiet`` and ``stale_problems`` let a test press keys
faster than the kernel answers and then check that the last value won. ``gt.installProbe`` is the
in-page latency probe of tools/bench.py (keydown anywhere in an explorer -> redraw painted).

The package, by what it drives: ``server`` (LabServer, stage_notebooks), ``browser`` (Chromium), ``page``
(NotebookPage, check_notebook, the in-page helpers page.js), ``widget`` (explorers and their controls, and what a
screen reader is told about them) and ``audit`` (axe-core on a notebook's outputs).
"""

from .audit import IMPACTS, audit, serious
from .browser import CHROMIUM, CHROMIUM_ARGS, browser, browser_sessions, chromium_problem
from .page import PAGE_JS, NotebookPage, Report, check_notebook
from .server import DATA_DIRS, UIS, WIDGET_MANAGER, LabServer, free_port, stage_notebooks, terminate, wait_http
from .widget import (DROPDOWN_PROBLEM, FALLBACK_PATTERNS, FALLBACK_RE, ExplorerControls, parse_state,
                     slider_expected)

__all__ = ["IMPACTS", "audit", "serious", "CHROMIUM", "CHROMIUM_ARGS", "browser", "browser_sessions",
           "chromium_problem", "PAGE_JS", "NotebookPage", "Report", "check_notebook", "DATA_DIRS", "UIS",
           "WIDGET_MANAGER", "LabServer", "free_port", "stage_notebooks", "terminate", "wait_http", "DROPDOWN_PROBLEM",
           "FALLBACK_PATTERNS", "FALLBACK_RE", "ExplorerControls", "parse_state", "slider_expected"]
