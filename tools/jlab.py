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
caption's state, the picture changed. ``wait_quiet`` and ``stale_problems`` let a test press keys
faster than the kernel answers and then check that the last value won. ``gt.installProbe`` is the
in-page latency probe of tools/bench.py (keydown anywhere in an explorer -> redraw painted).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = os.environ.get("GT_CHROMIUM", "/usr/bin/chromium")
# The flags Chromium needs on these machines (no sandbox as root, no GPU, no background traffic
# to Google that the closed network refuses). Every non-loopback request also goes to a dead proxy
# so nothing can download; loopback bypasses proxies implicitly.
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--proxy-server=http://127.0.0.1:9",
]
WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"

# Text that means a widget was NOT rendered as a widget (searched only inside output areas).
FALLBACK_PATTERNS = [
    r"\b(?:Int|Float|FloatLog|IntRange|FloatRange|Selection|SelectionRange)Slider\(",
    r"\b(?:VBox|HBox|Box|GridBox|Tab|Accordion)\(children=",
    r"\b(?:Dropdown|Text|Textarea|ToggleButton|Checkbox|Button|Image|HTML|Label|Output|"
    r"Select|RadioButtons|ToggleButtons|Play|IntText|FloatText)\((?:value|options|description|layout|outputs)=",
    r"Loading widget\.\.\.",
    r"Error displaying widget",
    r"A Jupyter widget could not be displayed",
]
FALLBACK_RE = re.compile("|".join(FALLBACK_PATTERNS))

DROPDOWN_PROBLEM = ("a dropdown can't be changed from the keyboard in JupyterLab (ArrowDown moves to the next "
                    "cell): use ToggleButtons or a SelectionSlider")


def parse_state(state: str | None) -> dict[str, str]:
    """``"n=3;text=a b"`` -> ``{"n": "3", "text": "a b"}`` (the caption's data-state, values untrimmed)."""
    out = {}
    for kv in (state or "").split(";"):
        k, sep, v = kv.partition("=")
        if sep and k.strip():
            out[k.strip()] = v
    return out


def slider_expected(readout: str) -> tuple[str, float]:
    """A slider's readout -> (the value the caption should name, the tolerance its rounding allows)."""
    expected = readout.strip().replace("\u2212", "-")
    dec = expected.split(".")[1] if "." in expected else ""
    return expected, (0.5 * 10 ** -len(dec) + 1e-9 if dec.isdigit() else 0.5)


def chromium_problem() -> str | None:
    """None when the browser test can run here, else why not (for a skip or, under CI, a failure)."""
    if not Path(CHROMIUM).exists():
        return (f"Chromium not found at {CHROMIUM}: `bash run.sh test` installs Debian's chromium "
                "when run as root (or with passwordless sudo); otherwise `apt-get install chromium`.")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as e:  # pragma: no cover - pinned in requirements.txt
        return f"playwright is not importable ({e}); run `bash run.sh test` to set up .venv"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(proc: subprocess.Popen, url: str, name: str, deadline: float, *, log, stop) -> None:
    """Wait until ``url`` answers 200 (polled every 0.2 s) while ``proc`` runs; its ``log()`` in the error if it
    exits, or if ``deadline`` (time.monotonic()) passes, after ``stop()``."""
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop()
            raise TimeoutError(f"{name} did not answer on {url.split('?')[0]} in time:\n{log()}")
        time.sleep(0.2)  # polling interval of the readiness wait, not a fixed delay


def terminate(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM, then SIGKILL if ``proc`` has not exited after ``grace`` seconds."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


UIS = ("lab", "notebook")  # JupyterLab (/lab/tree/...) or Jupyter Notebook 7 (/notebooks/...)


class LabServer:
    """``jupyter lab`` serving ``root_dir`` on 127.0.0.1 with a fresh token, in private dirs."""

    def __init__(self, root_dir: Path, *, widgets: bool = True, timeout: float = 90, app: str = "lab"):
        if app not in UIS:
            raise ValueError(f"app must be one of {UIS}, got {app!r}")
        self.app = app  # "lab": `jupyter lab`; "notebook": `jupyter notebook` (Notebook 7), as a class would start it
        self.root_dir = Path(root_dir)
        self.widgets = widgets
        self.token = secrets.token_hex(24)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.home = Path(tempfile.mkdtemp(prefix="gt-lab-"))
        self.log_path = self.home / "server.log"
        self.proc: subprocess.Popen | None = None
        self._ready = False
        self.timeout = timeout

    # -- start / stop ---------------------------------------------------------------------------
    def start(self) -> "LabServer":
        return self.launch().wait_ready()

    def launch(self) -> "LabServer":
        """Start the process and return at once (``wait_ready`` waits for it to answer)."""
        if self.proc is not None:
            return self
        h = self.home
        settings = h / "settings"
        # No news/update pop-ups over the notebook; the notebook keeps rendering every cell it shows.
        _write_json(settings / "@jupyterlab/apputils-extension/notification.jupyterlab-settings",
                    {"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True})
        if not self.widgets:
            _write_json(h / "config/labconfig/page_config.json",
                        {"disabledExtensions": {WIDGET_MANAGER: True}})
        env = dict(os.environ)
        env.update(JUPYTER_CONFIG_DIR=str(h / "config"), JUPYTER_RUNTIME_DIR=str(h / "runtime"),
                   IPYTHONDIR=str(h / "ipython"), JUPYTER_PLATFORM_DIRS="1",
                   GT_THREADS=env.get("GT_THREADS", "1"), MPLBACKEND="Agg")
        server = ["--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={self.port}", "--port-retries=0",
                  f"--ServerApp.root_dir={self.root_dir}", f"--IdentityProvider.token={self.token}",
                  "--ServerApp.password=", "--ServerApp.terminals_enabled=False",
                  "--ContentsManager.allow_hidden=False"]
        if self.app == "lab":
            front = ["-m", "jupyterlab", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
                     "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                     f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={h / 'workspaces'}"]
        else:  # `jupyter notebook`: Notebook 7's front-end on the same server options
            front = ["-m", "notebook", "--JupyterNotebookApp.expose_app_in_browser=True",
                     f"--JupyterNotebookApp.user_settings_dir={settings}",
                     f"--JupyterNotebookApp.workspaces_dir={h / 'workspaces'}"]
        cmd = [sys.executable, *front, *server]
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     cwd=self.root_dir, start_new_session=True)
        self._started = time.monotonic()
        return self

    def wait_ready(self) -> "LabServer":
        self.launch()
        if self._ready:
            return self
        wait_http(self.proc, f"{self.url}/api/status?token={self.token}", "jupyter lab",
                  self._started + self.timeout, log=self.log, stop=self.stop)
        self._ready = True
        return self

    def api(self, method: str, path: str) -> object:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        return json.loads(body) if body else None

    def page_url(self, path: str, ui: str = "lab") -> str:
        """The address that opens notebook ``path`` (relative to root_dir) in JupyterLab or Notebook 7."""
        where = f"lab/tree/{path}?reset&" if ui == "lab" else f"notebooks/{path}?"
        return f"{self.url}/{where}token={self.token}"

    def shutdown_kernels(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            for k in self.api("GET", "/api/kernels") or []:
                with contextlib.suppress(OSError):
                    self.api("DELETE", f"/api/kernels/{k['id']}")

    def stop(self) -> None:
        """Shut the kernels down, then stop the server by its own process id."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.shutdown_kernels()
            terminate(self.proc, 15)
        self._log.close()
        self.proc, self._ready = None, False

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def __enter__(self) -> "LabServer":
        return self.launch()  # NotebookPage waits until it answers

    def __exit__(self, *exc) -> None:
        self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


DATA_DIRS = ("checkpoints", "data", "assets", "images")


def stage_notebooks(dest: Path, notebooks: list[Path]) -> list[str]:
    """Copy notebooks (with their folders' other files) into ``dest``, so that the browser's
    autosave never writes outputs into the repository; link the repository's data folders beside
    them (notebooks read ``../checkpoints``). Returns paths relative to dest."""
    rel = []
    for nb in notebooks:
        nb = Path(nb).resolve()
        folder = dest / nb.parent.name
        if not folder.exists():
            shutil.copytree(nb.parent, folder, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
            repo = nb.parent.parent
            for entry in (repo.iterdir() if nb.parent.name == "notebooks" else []):
                link = dest / entry.name
                if entry.is_dir() and entry.name in DATA_DIRS and not link.exists():
                    link.symlink_to(entry, target_is_directory=True)
        rel.append(f"{nb.parent.name}/{nb.name}")
    return rel


@contextlib.contextmanager
def browser(user_data_dir: Path | None = None):
    """A headless Debian Chromium driven by Playwright; yields a persistent browser context."""
    from playwright.sync_api import sync_playwright

    tmp = Path(user_data_dir or tempfile.mkdtemp(prefix="gt-chromium-"))
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, device_scale_factor=1,
            service_workers="block")
        try:
            yield ctx
        finally:
            ctx.close()
            shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def browser_sessions(n: int):
    """One headless Chromium with ``n`` separate sessions (own cookies and storage each): several people's
    browsers, e.g. students logged in to one JupyterHub. Yields the list of browser contexts."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield [chromium.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1,
                                        service_workers="block") for _ in range(n)]
        finally:
            chromium.close()


# --------------------------------------------------------------------------------------------
# In-page helpers (JupyterLab is exposed as window.jupyterapp by --LabApp.expose_app_in_browser).
# --------------------------------------------------------------------------------------------
PAGE_JS = r"""
() => {
  if (window.gt) return;
  const app = () => window.jupyterapp;
  const panel = () => app().shell.currentWidget;
  const kernel = () => { const s = panel() && panel().sessionContext; return s && s.session && s.session.kernel; };
  const parseState = (s) => { const out = {}; (s || '').split(';').forEach(kv => {
      const i = kv.indexOf('='); if (i > 0) out[kv.slice(0, i).trim()] = kv.slice(i + 1).trim(); }); return out; };
  // (sliders print negative numbers with a Unicode minus sign)
  const norm = (s) => String(s).replace(/\u2212/g, '-').replace(/\s+/g, ' ').trim().toLowerCase();
  const TRUE = ['true', '1', 'on', 'yes'], FALSE = ['false', '0', 'off', 'no'];
  const matches = (kind, value, expected, tol) => {
    if (kind === 'slider') {
      const a = parseFloat(norm(value)), b = parseFloat(norm(expected));
      if (!isNaN(a) && !isNaN(b) && /^[-+0-9.eE]+$/.test(String(value).trim())) return Math.abs(a - b) <= tol;
      return norm(value) === norm(expected);
    }
    if (kind === 'toggle' || kind === 'checkbox') return (expected ? TRUE : FALSE).includes(norm(value));
    // a button's or option's label may say more than the state ("head 0" for head=0), or less
    if (kind === 'choice' || kind === 'dropdown') return norm(value) === norm(expected) ||
        norm(expected).split(' ').includes(norm(value)) || norm(value).split(' ').includes(norm(expected));
    return norm(value) === norm(expected);  // text
  };
  window.gt = {
    parseState,
    path: () => panel() && panel().context && panel().context.path,
    // Connected AND idle AND ready, continuously for 300 ms (the widget manager's comm requests
    // after a kernel connects make 'idle' flicker; Run All issued then can be lost).
    kernelReady(path) {
      const p = panel(), k = kernel();
      const ok = p && p.context && p.context.path === path && p.sessionContext.isReady && k &&
                 k.connectionStatus === 'connected' && k.status === 'idle';
      if (!ok) { gt._since = null; return false; }
      if (gt._since == null) gt._since = performance.now();
      return performance.now() - gt._since > 300;
    },
    kernelStatus() { const k = kernel(); return k ? k.status + '/' + k.connectionStatus : 'no kernel'; },
    runAll() { return app().commands.execute('notebook:run-all-cells'); },
    // Close the current notebook (its kernel shut down, its edits dropped) and open another.
    async open(path) {
      const p = panel();
      if (p && p.sessionContext) { await p.sessionContext.shutdown(); p.context.model.dirty = false; p.dispose(); }
      await app().commands.execute('docmanager:open', {path, factory: 'Notebook'});
    },
    cells() {
      const cells = panel().content.model.cells, out = [];
      for (let i = 0; i < cells.length; i++) {
        const c = cells.get(i);
        if (c.type !== 'code') { out.push({type: c.type}); continue; }
        const outs = c.outputs.toJSON();
        out.push({type: 'code', count: c.executionCount, state: c.executionState || null,
          widgetOutputs: outs.map((o, j) => (o.data && o.data['application/vnd.jupyter.widget-view+json']) ? j : -1).filter(j => j >= 0),
          errors: outs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue)});
      }
      return out;
    },
    started() { return gt.cells().some(c => c.type === 'code' && (c.count != null || c.state === 'running')) ||
                       (kernel() && kernel().status === 'busy'); },
    finished() {
      const k = kernel(); if (!k || k.status !== 'idle') return false;
      const cells = gt.cells().filter(c => c.type === 'code');
      if (cells.some(c => c.state === 'running')) return false;
      return cells.some(c => c.errors.length) || cells.every(c => c.count != null);
    },
    cellNode(i) { return panel().content.widgets[i].node; },
    async scrollTo(i) { await panel().content.scrollToItem(i, 'start'); panel().content.widgets[i].node.scrollIntoView({block: 'start'}); },
    // What the learner sees in the output areas of cell i.
    outputs(i) {
      const node = gt.cellNode(i);
      return Array.from(node.querySelectorAll('.jp-OutputArea-child')).map(ch => {
        const o = ch.querySelector('.jp-OutputArea-output');
        return {widget: !!(o && o.querySelector('.jupyter-widgets')), text: o ? o.innerText : '',
                mime: o ? o.getAttribute('data-mime-type') : null};
      });
    },
    settled(i, widgetIdx) {
      const outs = gt.outputs(i);
      return widgetIdx.every(j => outs[j] && (outs[j].widget || (outs[j].text && !/Loading widget/.test(outs[j].text))));
    },
    // Tag every explorer and its controls. An explorer is the box (VBox) whose direct child is the
    // gt-caption's HTML widget; its picture is the box's `.gt-view` element (helpers.widgets.base.Explorer:
    // an HTML widget whose root div carries the same data-state as the caption) or, for explorers from
    // before that contract, its <img> (PNG) or its other HTML widget.
    // Control kinds: slider (every noUiSlider: Int/Float/FloatLog/SelectionSlider, one handle), choice (a
    // ToggleButtons group, ONE control however many buttons), toggle (a lone ToggleButton), checkbox, text
    // (Text, Combobox: an <input>), and dropdown, found only to be reported (see jlab.DROPDOWN_PROBLEM).
    explorers() {
      const roots = [];
      document.querySelectorAll('.jp-OutputArea-output .gt-caption').forEach(cap => {
        const w = cap.closest('.widget-html'), r = w && w.parentElement;
        if (r && !roots.includes(r)) roots.push(r);
      });
      const ws = panel().content.widgets;
      return roots.map((r, e) => {
        r.dataset.gtExplorer = e;
        const cell = ws.findIndex(w => w.node.contains(r));
        const controls = [];
        const add = (kind, el, extra) => {
          el.dataset.gtControl = e + '-' + controls.length;
          // (textContent, not innerText: a cell scrolled out of view is not rendered and has no innerText)
          const box = el.closest('.widget-toggle-buttons, .widget-checkbox, .widget-inline-hbox');
          const text = (n) => n ? n.textContent.replace(/\u200b/g, '').trim() : '';
          const label = (box && (text(box.querySelector('.widget-label')) || text(box.querySelector('.widget-label-basic')))) ||
                        text(el);
          controls.push(Object.assign({kind, id: el.dataset.gtControl, label, el}, extra || {}));
        };
        r.querySelectorAll('.widget-slider .noUi-handle-lower').forEach(el => add('slider', el));
        r.querySelectorAll('.widget-toggle-buttons').forEach(el =>
          add('choice', el, {options: Array.from(el.querySelectorAll('button.widget-toggle-button')).map(b => b.textContent.trim())}));
        r.querySelectorAll('.widget-dropdown select').forEach(el => add('dropdown', el));
        r.querySelectorAll('.widget-text input, .widget-textarea textarea').forEach(el =>
          add('text', el, {combobox: el.hasAttribute('list')}));
        r.querySelectorAll('button.widget-toggle-button').forEach(el => { if (!el.closest('.widget-toggle-buttons')) add('toggle', el); });
        r.querySelectorAll('.widget-checkbox input[type=checkbox]').forEach(el => add('checkbox', el));
        // in the order the learner sees them (the ids stay as tagged)
        controls.sort((a, b) => (a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING) ? -1 : 1);
        controls.forEach(c => delete c.el);
        return {id: e, cell, controls, state: gt.view(e).state, hasView: gt.view(e).hasView};
      });
    },
    root(e) { return document.querySelector(`[data-gt-explorer="${e}"]`); },
    picture(r) {
      const gv = r.querySelector('.gt-view');
      if (gv) return gv;
      const kids = Array.from(r.children);
      return kids.find(k => k.matches('img.widget-image')) ||
             kids.filter(k => k.matches('.widget-html') && !k.querySelector('.gt-caption')).pop() || null;
    },
    signature(pic) {
      if (!pic) return null;
      if (pic.tagName === 'IMG') return pic.getAttribute('src');
      const t = pic.innerHTML; let h = 0;
      for (let i = 0; i < t.length; i++) h = (h * 31 + t.charCodeAt(i)) | 0;
      return 'html:' + t.length + ':' + h;
    },
    view(e) {
      const r = gt.root(e);
      const cap = r.querySelector('.gt-caption'), pic = gt.picture(r), gv = r.querySelector('.gt-view');
      return {state: cap ? cap.getAttribute('data-state') : null, error: !!(cap && cap.classList.contains('gt-error')),
              caption: cap ? cap.innerText : '', src: gt.signature(pic), kind: pic ? pic.tagName.toLowerCase() : null,
              hasView: !!gv, viewState: gv ? gv.getAttribute('data-state') : null,
              loaded: !!pic && (pic.tagName !== 'IMG' || (pic.complete && pic.naturalWidth > 0))};
    },
    matches,
    // The key of `now` whose value changed from `before` and names `expected`, or null.
    changedKey(before, now, kind, expected, tol) {
      if (now === before) return null;
      const a = parseState(now), b = parseState(before);
      return Object.keys(a).find(k => a[k] !== b[k] && matches(kind, a[k], expected, tol)) || null;
    },
    // The caption names the expected value under a key that changed (returns that key).
    updated(e, before, kind, expected, tol) { return gt.changedKey(before.state, gt.view(e).state, kind, expected, tol) || false; },
    // The picture shown is the picture of the state the caption names (no .gt-view: nothing to compare).
    consistent(e) { const v = gt.view(e); return !v.hasView || v.viewState === v.state; },
    // The kernel has finished the redraw (iopub is handled in order: caption, picture, then idle)
    // and the image shown, if an <img>, is loaded.
    settledView(e) { const k = kernel(), v = gt.view(e); return k && k.status === 'idle' && v.loaded; },
    // Kernel idle, and nothing (kernel status, caption state, picture) changed for `ms`: a burst of
    // key presses has been fully answered. Reset with gt.quietReset() before each wait.
    quietReset() { gt._quiet = null; },
    quiet(e, ms) {
      const k = kernel(), v = gt.view(e), now = performance.now();
      const snap = [k && k.status, v.state, v.viewState, v.src, v.loaded].join('|');
      const q = gt._quiet;
      if (!q || q.snap !== snap || !k || k.status !== 'idle' || !v.loaded) { gt._quiet = {snap, since: now}; return false; }
      return now - q.since >= ms;
    },
    // Test-only: overwrite the caption's or the picture's data-state (the stale check's negative control).
    doctor(e, which, state) {
      const el = gt.root(e).querySelector(which === 'view' ? '.gt-view' : '.gt-caption');
      const old = el.getAttribute('data-state'); el.setAttribute('data-state', state); return old;
    },
    // The index of the button after the active one in a choice group (cyclic).
    nextChoice(id) {
      const bs = Array.from(document.querySelectorAll(`[data-gt-control="${id}"] button.widget-toggle-button`));
      const i = bs.findIndex(b => b.classList.contains('mod-active'));
      return bs.length < 2 ? -1 : (i + 1) % bs.length;
    },
    // Latency probe for one explorer: any key press inside it (keydown, capture phase, so every control
    // starts the timer) -> the redraw painted. The redraw is over when the kernel is idle after being
    // busy since the press AND the explorer shows a new state: the caption's data-state changed (or, with
    // no caption change, the picture) and the picture's .gt-view carries the caption's state. Both orders
    // happen: usually the caption and picture change while the kernel is busy, but the idle status can
    // be handled before the widget updates reach the page, so a MutationObserver checks again when they
    // do. An idle with nothing changed (e.g. the answer to a ToggleButtons' extra "click" message) is not
    // the redraw; a new busy period waits for its idle. An <img> is also decoded. Then one frame
    // (requestAnimationFrame + a task) for the paint; the caption's and picture's data-state are recorded
    // then. `armed = false` lets untimed keys (a Backspace before a retype) through.
    installProbe(e) {
      if (gt._probeOff) gt._probeOff();
      const r = gt.root(e), k = kernel();
      const p = gt.probe = {armed: true, t0: null, busy: false, idle: false, before: null, samples: [], states: [],
                            viewStates: [], changed: [], via: []};
      const onKey = () => {
        if (!p.armed || p.t0 != null) return;
        p.t0 = performance.now(); p.busy = false; p.idle = false; p.before = gt.view(e);
      };
      const check = (via) => {
        if (p.t0 == null || !p.idle) return;
        const now = gt.view(e), b = p.before;
        if (now.state === b.state && now.src === b.src) return;
        if (now.hasView && now.viewState !== now.state) return;  // the picture's update is still to come
        const t0 = p.t0, pic = gt.picture(r), changed = now.src !== b.src; p.t0 = null;
        (changed && pic && pic.tagName === 'IMG' ? pic.decode().catch(() => null) : Promise.resolve()).then(() =>
          requestAnimationFrame(() => setTimeout(() => {
            const v = gt.view(e);
            p.samples.push(performance.now() - t0); p.states.push(v.state); p.viewStates.push(v.viewState);
            p.changed.push(changed); p.via.push(via);
          }, 0)));
      };
      const onStatus = (_, status) => {
        if (p.t0 == null) return;
        if (status === 'busy') { p.busy = true; p.idle = false; return; }
        if (status !== 'idle' || !p.busy) return;
        p.idle = true;
        check('status');
      };
      const observer = new MutationObserver(() => check('dom'));  // 'dom': the idle came first
      observer.observe(r, {subtree: true, childList: true, attributes: true, characterData: true});
      r.addEventListener('keydown', onKey, {capture: true});
      k.statusChanged.connect(onStatus);
      gt._probeOff = () => {
        r.removeEventListener('keydown', onKey, {capture: true}); k.statusChanged.disconnect(onStatus); observer.disconnect();
      };
    },
  };
}
"""


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


class NotebookPage:
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
                # Run All was swallowed (DESIGN.md section 7): wait for the kernel again and retry once.
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

    def operate_explorers(self) -> list[dict]:
        """Operate every control of every gt-caption explorer from the keyboard; the caption must name
        the new value, the picture (its .gt-view) must show that same state, and it must change."""
        explorers = self.js("() => gt.explorers()")
        self.report.explorers = len(explorers)
        for ex in explorers:
            self.js("i => gt.scrollTo(i)", ex["cell"])
            if not ex["hasView"]:
                self.report.problems.append(f"explorer {ex['id']} ({ex['state']}): its picture has no "
                                            '<div class="gt-view" data-state=...> root (helpers.widgets.base.'
                                            "Explorer draws one), so no test can tell whose picture it is")
            for ctl in ex["controls"]:
                try:
                    self._operate(ex["id"], ctl)
                except TimeoutError as e:
                    self.report.problems.append(str(e))
            # A change may legitimately draw the same picture (identical PNG: no new image), but
            # an explorer whose picture never changes is not redrawing.
            operable = [c for c in ex["controls"] if c["kind"] != "dropdown"]
            if operable and ex["id"] not in self.report.images_changed:
                self.report.problems.append(f"explorer {ex['id']} ({ex['state']}): the caption followed "
                                            "the controls but the picture never changed")
        return explorers

    def control(self, ctl: dict):
        """The Playwright locator of a control found by ``gt.explorers()``."""
        return self.page.locator(f'[data-gt-control="{ctl["id"]}"]')

    def press_control(self, ctl: dict, *, word: str | None = None,
                      key: str | None = None) -> tuple[object, float] | None:
        """Change one control with the keyboard only, as a learner without a mouse would: focus it, press
        keys. Returns (the value the caption should now name, tolerance), or None when the control has
        nothing to change to (a one-button choice, a slider with one value). No clicks, no ``select_option``:
        slider    focus the handle, ``key`` or ArrowRight (ArrowLeft at the top): noUiSlider handles the arrows
                  and preventDefaults them, so JupyterLab's command-mode arrow shortcuts never see them.
        choice    focus the button after the active one, Space. Why Space: no JupyterLab shortcut is
                  bound to it, and a focused <button> or checkbox activates on it (on keyup) in every
                  browser. Enter works on buttons too (checked in JupyterLab 4.6: its only Enter shortcut,
                  notebook:enter-edit-mode, is bound to `.jp-Notebook.jp-mod-commandMode .jp-Cell:focus`,
                  the cell itself, not a button inside it), but Enter does nothing on a checkbox, so one
                  key serves every button-like control.
        toggle,
        checkbox  focus, Space.
        text      focus (no click), Control+A, type ``word`` (default: corpus words), Enter (a Combobox or a Text with
                  continuous_update=False only commits on Enter; for the others it changes nothing).
        dropdown  raises: it cannot be changed from the keyboard in JupyterLab (DROPDOWN_PROBLEM)."""
        loc, kind, kb = self.control(ctl), ctl["kind"], self.page.keyboard
        if kind == "slider":
            now, top = float(loc.get_attribute("aria-valuenow")), float(loc.get_attribute("aria-valuemax"))
            if top <= float(loc.get_attribute("aria-valuemin")):
                return None  # one value only (e.g. a query slider over a one-token text)
            readout = self.readout(ctl)
            old = readout.inner_text()
            loc.focus()
            # Notebook 7 binds plain ArrowLeft/Right in command mode (notebook:move-cursor-heading-above-or-collapse /
            # -below-or-expand) and, unlike JupyterLab, handles them before the slider does: the handle never moves.
            # Shift+arrow (one step, no binding) and PageUp/PageDown work there; the README says so to learners.
            shift = "Shift+" if self.ui == "notebook" and not key else ""
            kb.press(key or (shift + ("ArrowLeft" if now >= top else "ArrowRight")))
            self.wait("([el, old]) => el.innerText !== old", [readout.element_handle(), old],
                      what=f"slider {ctl['label']!r}: the readout to move", timeout_ms=10000)
            return slider_expected(readout.inner_text())
        if kind == "choice":
            i = self.js("id => gt.nextChoice(id)", ctl["id"])
            if i < 0:
                return None
            button = loc.locator("button.widget-toggle-button").nth(i)
            button.focus()
            kb.press("Space")
            return button.text_content().strip(), 0.0
        if kind in ("toggle", "checkbox"):
            was = loc.evaluate("el => el.type === 'checkbox' ? el.checked : el.classList.contains('mod-active')")
            loc.focus()
            kb.press("Space")
            return (not was), 0.0
        if kind == "text":
            # Common words of the corpus over the box's text: one word where the box holds one token,
            # a few where it holds a prompt (one token would leave e.g. a query slider no room to move).
            was = loc.input_value().strip().lower()
            if word is None:
                word = ("and the lord said" if was != "and the lord said" else "the lord spake") if " " in was \
                    else ("lord" if was == "the" else "the")
            loc.focus()
            kb.press("ControlOrMeta+a")
            kb.type(word)
            kb.press("Enter")
            return loc.input_value(), 0.0
        raise ValueError(DROPDOWN_PROBLEM if kind == "dropdown" else f"unknown control kind {kind!r}")

    def readout(self, ctl: dict):
        """The text readout beside a slider handle (the value the learner reads)."""
        return self.control(ctl).locator(
            "xpath=ancestor::div[contains(@class,'widget-slider')]//div[contains(@class,'widget-readout')]")

    def _operate(self, e: int, ctl: dict) -> str | None:
        """Change one control from the keyboard and check the redraw; returns the caption's key that
        named the new value (None if the control could not be changed)."""
        before = self.js("e => gt.view(e)", e)
        kind = ctl["kind"]
        name = f"explorer {e} ({before['state']}), {kind} {ctl['label'].strip()!r}"
        if kind == "dropdown":
            self.report.problems.append(f"{name}: {DROPDOWN_PROBLEM}")
            return None
        self.control(ctl).scroll_into_view_if_needed()
        pressed = self.press_control(ctl)
        if pressed is None:
            return None
        expected, tol = pressed
        try:
            key = self.wait("([e, b, k, x, t]) => gt.updated(e, b, k, x, t)", [e, before, kind, expected, tol],
                            what=f"{name}: the caption to name {expected!r}", timeout_ms=20000)
        except TimeoutError as err:
            after = self.js("e => gt.view(e)", e)
            raise TimeoutError(f"{err}; caption now {after['state']!r} (error={after['error']}: "
                               f"{after['caption'][:100]!r})") from None
        self.wait("e => gt.settledView(e)", e, what=f"{name}: the redraw to finish", timeout_ms=20000)
        try:
            self.wait("e => gt.consistent(e)", e, what=f"{name}: the picture to show the caption's state",
                      timeout_ms=5000)
        except TimeoutError:
            v = self.js("e => gt.view(e)", e)
            self.report.problems.append(f"{name}: the picture shows {v['viewState']!r} but the caption names "
                                        f"{v['state']!r}")
        after = self.js("e => gt.view(e)", e)
        if after["src"] != before["src"]:
            self.report.images_changed.add(e)
        if after["error"]:
            self.report.problems.append(f"{name}: caption shows an error after setting {expected!r}: "
                                        f"{after['caption'][:120]!r}")
        self.report.operated.append(f"{kind} -> {after['state']}")
        return key

    def wait_quiet(self, e: int, ms: float = 500, timeout_ms: float = 30000) -> dict:
        """Wait until the kernel is idle and explorer ``e``'s caption and picture have not changed
        for ``ms`` (every key of a burst answered, including ipywidgets' throttled last update);
        returns what is shown then."""
        self.js("() => gt.quietReset()")
        self.wait("([e, ms]) => gt.quiet(e, ms)", [e, ms], what=f"explorer {e} to settle after the keys",
                  timeout_ms=timeout_ms)
        return self.js("e => gt.view(e)", e)

    def stale_problems(self, e: int, key: str, kind: str, expected, tol: float = 1e-9) -> list[str]:
        """What is wrong with explorer ``e`` if its control under caption key ``key`` shows ``expected``:
        the caption must name exactly that value (text: the box's value, character for character),
        show no error, and the picture's .gt-view must carry the caption's state. Empty: not stale."""
        v = self.js("e => gt.view(e)", e)
        state = parse_state(v["state"])
        problems = []
        if v["error"]:
            problems.append(f"the caption shows an error: {v['caption'][:120]!r}")
        elif key not in state:
            problems.append(f"the caption's state {v['state']!r} has no {key!r}")
        else:
            shown = state[key]
            ok = (shown == expected if kind == "text" else
                  self.js("([k, v, x, t]) => gt.matches(k, v, x, t)", [kind, shown, expected, tol]))
            if not ok:
                problems.append(f"stale: the control shows {expected!r} but the caption names {key}={shown!r}")
        if v["hasView"] and v["viewState"] != v["state"]:
            problems.append(f"stale picture: the picture shows {v['viewState']!r}, the caption {v['state']!r}")
        return problems

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
                   operate: bool = True, timeout: float = 180, ui: str = "lab") -> Report:
    """Open, run, scroll through and operate one notebook in JupyterLab or Notebook 7 (``ui``); what was found."""
    nbp = NotebookPage(ctx, server, path, timeout=timeout, ui=ui)
    try:
        nbp.open()
        nbp.run_all()
        nbp.check_outputs()
        if operate and not nbp.report.problems:
            t = time.monotonic()
            nbp.operate_explorers()
            nbp.report.seconds["operate"] = round(time.monotonic() - t, 1)
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
