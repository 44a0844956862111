"""tools/hub.py without a browser: the hub's configuration and the reasons it gives.

The hub itself, with three students in Chromium, is tests/browser/test_hub.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tools import hub


def test_a_folder_closed_to_others_is_named():
    top = Path(tempfile.mkdtemp(prefix="gt-reach-"))  # (pytest's tmp_path lies in a folder closed to others)
    top.chmod(0o755)
    closed = top / "closed"
    (closed / "bin").mkdir(parents=True)
    python = closed / "bin" / "python3"
    python.touch()
    closed.chmod(0o700)
    try:
        assert hub.python_reachable_by_others(python) == str(closed)
        closed.chmod(0o711)  # searchable: its own folders are reached (ROOT and this Python's are checked too)
        assert hub.python_reachable_by_others(python) != str(closed)
    finally:
        closed.chmod(0o755)
        shutil.rmtree(top)


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
def test_without_node_the_hub_says_what_to_install(tmp_path):
    env = dict(os.environ, PATH=str(tmp_path))  # no node on PATH
    code = "from tools import hub; print(hub.proxy_problem())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=hub.ROOT)
    assert "Node.js is not installed" in out.stdout and "configurable-http-proxy" in out.stdout, out


def test_config_serves_the_learners_safely(tmp_path):
    h = hub.Hub(n_users=2, workdir=tmp_path, unix_users=False)
    assert h.mode == "separate-homes" and h.users == ["student1", "student2"]
    conf = {}
    exec(h.config(), {"c": _Config(conf)})  # the file jupyterhub reads, run as jupyterhub would
    assert conf["JupyterHub.ip"] == "127.0.0.1"  # this machine only unless --ip says otherwise
    assert conf["Authenticator.allowed_users"] == {"student1", "student2"}
    assert conf["JupyterHub.spawner_class"] == "simple"
    assert conf["SimpleLocalProcessSpawner.home_dir_template"] == str(tmp_path / "home" / "{username}")
    args = conf["Spawner.args"]
    assert f"--MappingKernelManager.cull_idle_timeout={hub.CULL_KERNELS_S}" in args
    assert any(s["name"] == "idle-culler" and f"--timeout={hub.CULL_SERVERS_S}" in s["command"]
               for s in conf["JupyterHub.services"])
    assert conf["Spawner.environment"]["GIT_CONFIG_GLOBAL"] == str(tmp_path / "gitconfig")
    # every user's JupyterLab has the series' settings, as bash run.sh lab's has (no news question)
    config_path = Path(conf["Spawner.environment"]["JUPYTER_CONFIG_PATH"])
    page_config = json.loads((config_path / "labconfig" / "page_config.json").read_text())
    assert page_config["disabledExtensions"]["@jupyterlab/apputils-extension:announcements"] is True
    assert conf["Spawner.cmd"][0].endswith("jupyterhub-singleuser")


@pytest.mark.skipif(os.geteuid() == 0, reason="as root the hub can use real Unix accounts")
def test_real_unix_users_need_root(tmp_path):
    with pytest.raises(SystemExit, match="not running as root"):
        hub.Hub(n_users=1, workdir=tmp_path, unix_users=True)


class _Config:
    """``c.Section.name = value`` into a flat dict, like traitlets' config object."""

    def __init__(self, store: dict, prefix: str = ""):
        object.__setattr__(self, "_store", store)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name):
        key = f"{self._prefix}{name}"
        if key in self._store:
            return self._store[key]
        return _Config(self._store, f"{key}.")

    def __setattr__(self, name, value):
        self._store[f"{self._prefix}{name}"] = value
