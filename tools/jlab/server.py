"""The JupyterLab (or Notebook 7) server the browser tests drive: started on 127.0.0.1 with its own token and
private Jupyter directories, stopped by its own process id; notebooks staged into a scratch folder."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

WIDGET_MANAGER = "@jupyter-widgets/jupyterlab-manager"


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


