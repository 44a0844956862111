"""`bash run.sh lab`, exactly as the README says (plus only server flags: no browser, a free port on
127.0.0.1, a token), starts JupyterLab for any user, root included, and serves notebook 01 from the learner's own
workspace, with every exercise blank; `bash run.sh notebook` does the same in Jupyter Notebook 7.

The server runs in its own process group, which is stopped (SIGTERM, then SIGKILL) and checked empty at
the end; every wait is bounded. Offline: the server is reached on 127.0.0.1, which the guard allows.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # JupyterLab and Notebook 7 started

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "learn/01_bigrams.ipynb"  # what the learner's workspace is made from
START_TIMEOUT = 120  # s; JupyterLab answers in 3-5 s on a quiet machine, much later on a busy one
ANNOUNCEMENTS = "@jupyterlab/apputils-extension:announcements"  # the plugin that asks, and checks for updates
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never a proxy for 127.0.0.1


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, token: str) -> tuple[int, bytes]:
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    try:
        with OPENER.open(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def stop(proc: subprocess.Popen) -> None:
    """Stop the server's whole process group: SIGTERM (JupyterLab shuts down cleanly), then SIGKILL."""
    pgid = proc.pid  # start_new_session: the group is the one run.sh started in
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        if not group_alive(pgid):
            break
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and group_alive(pgid):
            proc.poll()  # reap the leader, or the group never looks empty
            time.sleep(0.2)
    proc.wait(timeout=10)
    assert not group_alive(pgid), "processes of the lab server were left running"


@pytest.fixture(params=["lab", "notebook"])
def lab_server(tmp_path, request):
    port, token = free_port(), secrets.token_hex(16)
    log_path = tmp_path / "lab.log"
    # JUPYTER_RUNTIME_DIR: the server's connection files go to tmp_path, not the user's home; GT_WORK: the
    # learner's workspace too, not the clone's work/
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"), GT_WORK=str(tmp_path / "work"))
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            ["bash", "run.sh", request.param, "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}"],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc, f"http://127.0.0.1:{port}", token, log_path, request.param
    finally:
        stop(proc)
    with socket.socket() as s:  # nothing listens on the port any more
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_run_sh_lab_starts_jupyterlab_and_serves_notebook_01(lab_server):
    proc, url, token, log_path, app = lab_server
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"`bash run.sh {app}` exited with {proc.returncode} before serving:\n{log_path.read_text()}")
        try:
            if get(f"{url}/api/status", token)[0] == 200:
                break
        except OSError:
            pass  # not listening yet
        if time.monotonic() > deadline:
            pytest.fail(f"JupyterLab did not answer on {url} within {START_TIMEOUT} s:\n{log_path.read_text()}")
        time.sleep(0.5)

    log = log_path.read_text()
    if os.geteuid() == 0:
        assert "==> You are root: adding --allow-root" in log, log
    else:
        assert "--allow-root" not in log, log

    # run.sh opens the learner's workspace, which it has just filled: the series' learner copies, 01 first
    n = len(list((ROOT / "learn").glob("*.ipynb")))
    assert f"Your workspace {Path(log_path).parent / 'work'}: {n} notebook(s) copied in" in log, log
    status, body = get(f"{url}/api/contents", token)
    assert status == 200, body[:500]
    served = {item["name"] for item in json.loads(body)["content"]}
    assert served == {nb.name for nb in (ROOT / "learn").glob("*.ipynb")}, served
    for name in served:  # no solution in any of them: each exercise says "YOUR CODE HERE"
        status, body = get(f"{url}/api/contents/{name}?content=1", token)
        code = "\n".join("".join(c["source"]) for c in json.loads(body)["content"]["cells"] if c["cell_type"] == "code")
        assert "### BEGIN SOLUTION" not in code and "# YOUR CODE HERE" in code, name

    name = Path(NOTEBOOK).name
    status, body = get(f"{url}/api/contents/{name}?content=1", token)
    assert status == 200, body[:500]
    model = json.loads(body)
    assert model["type"] == "notebook" and model["name"] == name
    on_disk = json.loads((ROOT / NOTEBOOK).read_text())
    assert len(model["content"]["cells"]) == len(on_disk["cells"])
    assert "".join(model["content"]["cells"][0]["source"]).startswith("# 01")

    page = f"{url}/lab/tree/{name}" if app == "lab" else f"{url}/notebooks/{name}"
    status, body = get(page, token)
    assert status == 200 and (b"JupyterLab" in body if app == "lab" else b"Jupyter Notebook" in body), page
    # the series' own Jupyter settings are applied: JupyterLab's announcements, which ask about Jupyter's news over
    # the first notebook, are off (tests/browser/test_first_command.py looks at the screen itself)
    config = json.loads(re.search(rb'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                  body, re.S)[1])
    assert ANNOUNCEMENTS in config["disabledExtensions"], config["disabledExtensions"]
    status, _ = get(f"{url}/api/contents/{name}", "wrong-token")
    assert status == 403, "the server must want its token"
