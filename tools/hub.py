"""A local JupyterHub serving the series to a few users, the way a class gets it (docs/teaching.md).

    python -m tools.hub [--users 3] [--port 8000] [--ip 127.0.0.1]      (what `bash run.sh hub` runs)

Everything runs offline, in a private working folder that is removed on exit:

* **the class's notebooks**: the learner copies (``tools/notebooks.py learner``: the exercise solutions taken out,
  exactly as ``nbgrader generate_assignment`` releases them) committed to a local git repository. Each user's
  server pulls them with **nbgitpuller** when the user opens the class link — the same link an instructor hands
  out on a real hub, with a local repository in place of the GitHub address. A second visit pulls again
  without overwriting the learner's edits (nbgitpuller's merge rules).
* **JupyterHub** with a test login (``DummyAuthenticator``: the listed users, one shared password), behind
  **configurable-http-proxy** from its npm package (``tools/proxy``; ``bash run.sh hub`` installs it when Node.js
  and npm are present). Idle servers are culled by **jupyterhub-idle-culler** (a hub service), idle kernels
  inside each server by the server itself — the settings docs/teaching.md recommends for a class.
* **each user's own server**: run as root, and when other users can run this environment's Python, every user
  is a real Unix account (``gt-student1``, ...; created on first use, marked as this tool's) started by
  ``LocalProcessSpawner`` in its own home; otherwise ``SimpleLocalProcessSpawner`` gives each user a separate
  home folder under the working folder (``Hub.mode`` says which, ``Hub.mode_reason`` why).

``Hub`` is also the fixture of tests/browser/test_hub.py, which logs three users in at once in Chromium;
``user_memory`` reads what each user's server and kernels use (docs/teaching.md's memory per student).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from tools import jlab  # (free_port, wait_http, terminate)

ROOT = Path(__file__).resolve().parent.parent
PROXY_DIR = ROOT / "tools" / "proxy"
CHP = PROXY_DIR / "node_modules" / ".bin" / "configurable-http-proxy"
REPO_NAME = "gentle-transformers"  # the folder nbgitpuller makes in each user's home
UNIX_PREFIX = "gt-"
UNIX_MARK = "Gentle Transformers hub test user"  # the GECOS field of the accounts this tool made
CULL_SERVERS_S, CULL_KERNELS_S = 3600, 1800  # a class's idle limits (docs/teaching.md): servers 1 h, kernels 30 min


def proxy_problem() -> str | None:
    """None when configurable-http-proxy can run here, else why not (a skip message for the hub test)."""
    if shutil.which("node") is None:
        return ("Node.js is not installed, and JupyterHub's proxy (configurable-http-proxy) runs on it: install "
                "Node.js 20 or newer with npm (Debian/Ubuntu: apt install nodejs npm), then `bash run.sh hub`.")
    if not CHP.exists():
        return (f"configurable-http-proxy is not installed in {PROXY_DIR}: `bash run.sh hub` or `bash run.sh test` "
                "installs it with npm (`npm ci` there).")
    return None


def python_reachable_by_others(python: Path = Path(sys.executable)) -> str | None:
    """None when a user other than root can run ``python`` (every folder on the way to the interpreter and its
    standard library is searchable by others), else the first folder that is not."""
    import sysconfig

    for target in (Path(os.path.realpath(python)), Path(sysconfig.get_paths()["stdlib"]),
                   Path(sys.prefix), ROOT):
        for folder in [*reversed(target.parents), target] if target.is_dir() else reversed(target.parents):
            if not folder.stat().st_mode & 0o001:
                return str(folder)
    return None


def unix_user(name: str) -> pwd.struct_passwd:
    """The Unix account ``name`` (``gt-...``), created if missing; refuses an account this tool did not make."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/usr/sbin/nologin", "--comment", UNIX_MARK, name],
                       check=True, capture_output=True)
        entry = pwd.getpwnam(name)
    if entry.pw_gecos != UNIX_MARK:
        raise SystemExit(f"hub: the Unix account {name} exists and was not made by this tool; not using it")
    Path(entry.pw_dir).chmod(0o700)  # no student reads another's home
    return entry


@dataclass
class UserServer:
    """One user's single-user server behind the hub, as tools/jlab.NotebookPage drives it: ``url`` is its base;
    ``page_url`` is the class link (nbgitpuller pulls, then the notebook opens); no token — the browser is logged
    in to the hub."""
    hub: Hub
    name: str
    token: str = ""

    @property
    def url(self) -> str:
        return f"{self.hub.url}/user/{self.name}"

    def wait_ready(self) -> UserServer:
        return self

    def page_url(self, path: str, ui: str = "lab") -> str:
        return self.hub.class_link(path.split("/", 1)[1] if path.startswith(REPO_NAME + "/") else path, ui=ui)


class Hub:
    """A JupyterHub for ``users`` in ``workdir`` (made and removed here when None). ``start()`` returns when the
    hub answers; ``stop()`` stops the servers, the proxy and the hub."""

    def __init__(self, users: list[str] | None = None, *, n_users: int = 3, port: int | None = None,
                 ip: str = "127.0.0.1", workdir: Path | None = None, unix_users: bool | None = None,
                 notebooks: list[Path] | None = None, server_args: tuple[str, ...] = (), timeout: float = 120):
        self.own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="gt-hub-"))
        self.workdir.chmod(0o755)  # the users' servers clone the class repository from here
        self.ip, self.port, self.timeout = ip, port or jlab.free_port(), timeout
        self.hub_port = jlab.free_port()  # the hub's own API, which the users' servers call
        self.url = f"http://{'127.0.0.1' if ip in ('0.0.0.0', '') else ip}:{self.port}"
        self.password = secrets.token_urlsafe(9)
        self.notebooks = notebooks
        self.server_args = list(server_args)  # more options for every user's server (the browser test's)
        reason = "separate home folders were asked for" if unix_users is False else None
        if unix_users is None or unix_users:
            if os.geteuid() != 0:
                reason = "not running as root, so the hub cannot start servers as other Unix users"
            elif shutil.which("useradd") is None:
                reason = "useradd is not installed"
            elif (blocked := python_reachable_by_others()) is not None:
                reason = (f"other users cannot run this environment's Python ({blocked} is not searchable by them; "
                          "install the series under a folder every user can read, e.g. /opt)")
        if unix_users and reason:
            raise SystemExit(f"hub: real Unix users were asked for, but {reason}")
        self.mode = "unix-users" if reason is None else "separate-homes"
        self.mode_reason = reason or "running as root: each user is a real Unix account"
        self.users = users or [f"{UNIX_PREFIX}student{i + 1}" if self.mode == "unix-users" else f"student{i + 1}"
                               for i in range(n_users)]
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "hub.log"

    # -- the class's notebooks ----------------------------------------------------------------------------------
    @property
    def repo(self) -> Path:
        return self.workdir / REPO_NAME  # (nbgitpuller names the folder it makes after this, ".git" included)

    def make_repo(self) -> None:
        """The learner copies in a git repository (one commit on ``main``), as an instructor would publish them."""
        src = self.workdir / "learner"
        cmd = [sys.executable, "-m", "tools.notebooks", "learner", str(src), *[str(p) for p in (self.notebooks or [])]]
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if run.returncode:
            raise SystemExit(f"hub: making the learner copies failed:\n{run.stdout}{run.stderr}")
        git = ["git", "-c", "user.name=Gentle Transformers", "-c", "user.email=hub@localhost",
               "-c", "init.defaultBranch=main"]
        subprocess.run([*git, "init", "-q", str(src)], check=True)
        subprocess.run([*git, "-C", str(src), "add", "."], check=True)
        subprocess.run([*git, "-C", str(src), "commit", "-q", "-m", "The series for the class"], check=True)
        subprocess.run(["git", "clone", "-q", "--bare", str(src), str(self.repo)], check=True)
        shutil.rmtree(src)
        (self.workdir / "gitconfig").write_text(f"[safe]\n\tdirectory = {self.repo}\n", encoding="utf-8")
        (self.workdir / "gitconfig").chmod(0o644)
        for path in [self.repo, *self.repo.rglob("*")]:  # readable by every user's server
            path.chmod(path.stat().st_mode | 0o055 if path.is_dir() else path.stat().st_mode | 0o044)

    def class_link(self, notebook: str, ui: str = "lab") -> str:
        """The nbgitpuller link that pulls the class repository into the user's home and opens ``notebook``."""
        front = "lab/tree" if ui == "lab" else "notebooks"
        query = urllib.parse.urlencode({"repo": self.repo.as_uri(), "branch": "main",
                                        "urlpath": f"{front}/{REPO_NAME}/{notebook}"})
        return f"{self.url}/hub/user-redirect/git-pull?{query}"

    # -- users --------------------------------------------------------------------------------------------------
    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir) if self.mode == "unix-users" else self.workdir / "home" / user

    def prepare_users(self) -> None:
        for user in self.users:
            if self.mode == "unix-users":
                entry = unix_user(user)
                # a fresh first login: the copy an earlier run pulled is removed (only in this tool's accounts)
                shutil.rmtree(Path(entry.pw_dir) / REPO_NAME, ignore_errors=True)
            else:
                self.home(user).mkdir(parents=True, exist_ok=True)

    def server(self, user: str) -> UserServer:
        return UserServer(self, user)

    # -- configuration ------------------------------------------------------------------------------------------
    def config(self) -> str:
        venv_bin = Path(sys.executable).parent
        env = {"GT_THREADS": os.environ.get("GT_THREADS", "1"), "MPLBACKEND": "module://matplotlib_inline.backend_inline",
               # checks.answer("1.1") shows the series' answers unless a graded class has GT_ANSWERS=0 bash run.sh hub
               "GT_ANSWERS": os.environ.get("GT_ANSWERS", "1"),
               "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
               # git refuses to read a repository another account owns unless its global config names it safe
               "GIT_CONFIG_GLOBAL": str(self.workdir / "gitconfig"),
               # the series' own Jupyter settings, as `bash run.sh lab` applies them: JupyterLab's announcements off,
               # so no question about Jupyter's news (nor a newer JupyterLab) over the first notebook
               "JUPYTER_CONFIG_PATH": str(ROOT / "jupyter-config")}
        spawner = "localprocess" if self.mode == "unix-users" else "simple"
        api_port = jlab.free_port()
        args = ["--ServerApp.terminals_enabled=False",
                # idle kernels are shut down by each user's server (docs/teaching.md)
                f"--MappingKernelManager.cull_idle_timeout={CULL_KERNELS_S}",
                "--MappingKernelManager.cull_interval=300",
                # nothing fetched about Jupyter's news or versions (the question itself is off: JUPYTER_CONFIG_PATH)
                "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                *self.server_args]
        if spawner == "simple" and os.geteuid() == 0:
            args.append("--allow-root")  # every user's server runs as root here: say that it is meant
        lines = [
            "# written by tools/hub.py (bash run.sh hub): a local hub for the series",
            f"c.JupyterHub.ip = {self.ip!r}",
            f"c.JupyterHub.port = {self.port}",
            f"c.JupyterHub.hub_port = {self.hub_port}",
            f"c.JupyterHub.db_url = {'sqlite:///' + str(self.workdir / 'jupyterhub.sqlite')!r}",
            f"c.JupyterHub.cookie_secret_file = {str(self.workdir / 'cookie_secret')!r}",
            f"c.JupyterHub.pid_file = {str(self.workdir / 'jupyterhub.pid')!r}",
            "c.JupyterHub.cleanup_servers = True",
            f"c.ConfigurableHTTPProxy.command = [{str(CHP)!r}]",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{api_port}'",
            f"c.ConfigurableHTTPProxy.pid_file = {str(self.workdir / 'proxy.pid')!r}",
            "c.JupyterHub.authenticator_class = 'dummy'",
            f"c.DummyAuthenticator.password = {self.password!r}",
            f"c.Authenticator.allowed_users = {set(self.users)!r}",
            f"c.JupyterHub.spawner_class = {spawner!r}",
            f"c.Spawner.cmd = [{str(venv_bin / 'jupyterhub-singleuser')!r}]",
            "c.Spawner.default_url = '/lab'",
            f"c.Spawner.environment = {env!r}",
            f"c.Spawner.start_timeout = {int(self.timeout)}",
            f"c.Spawner.http_timeout = {int(self.timeout)}",
            f"c.Spawner.args = {args!r}",
        ]
        if spawner == "simple":
            homes = str(self.workdir / "home" / "{username}")
            lines.append(f"c.SimpleLocalProcessSpawner.home_dir_template = {homes!r}")
        # idle servers are stopped by the hub's culler service
        lines += [
            "c.JupyterHub.load_roles = [{'name': 'idle-culler', 'services': ['idle-culler'],"
            " 'scopes': ['list:users', 'read:users:activity', 'read:servers', 'delete:servers']}]",
            f"c.JupyterHub.services = [{{'name': 'idle-culler', 'command': [{sys.executable!r}, '-m',"
            f" 'jupyterhub_idle_culler', '--timeout={CULL_SERVERS_S}']}}]",
        ]
        return "\n".join(lines) + "\n"

    # -- start / stop -------------------------------------------------------------------------------------------
    def start(self) -> Hub:
        problem = proxy_problem()
        if problem:
            raise SystemExit(f"hub: {problem}")
        self.make_repo()
        self.prepare_users()
        conf = self.workdir / "jupyterhub_config.py"
        conf.write_text(self.config(), encoding="utf-8")
        self._log = open(self.log_path, "wb")
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(conf)], cwd=self.workdir,
                                     stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        jlab.wait_http(self.proc, f"{self.url}/hub/api/", "jupyterhub", time.monotonic() + self.timeout,
                       log=self.log, stop=self.stop)
        return self

    def stop(self) -> None:
        """SIGTERM to the hub (it stops the users' servers and its proxy: cleanup_servers), then to whatever of
        its process group is left."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            jlab.terminate(self.proc, 30)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        for pid in self.user_pids():  # a server the hub failed to stop
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self._log.close()
        self.proc = None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def __enter__(self) -> Hub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        if self.own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- memory -------------------------------------------------------------------------------------------------
    def user_pids(self, user: str | None = None) -> list[int]:
        """The processes of the users' servers (``user``'s only, if given), kernels included: every process whose
        environment says JUPYTERHUB_USER, which the spawner sets and the kernels inherit."""
        import psutil

        pids = []
        for p in psutil.process_iter():
            with contextlib.suppress(psutil.Error):
                env = p.environ()
                name = env.get("JUPYTERHUB_USER")
                if name in self.users and (user is None or name == user) \
                        and f":{self.hub_port}/" in env.get("JUPYTERHUB_API_URL", ""):  # this hub's, not another's
                    pids.append(p.pid)
        return pids


def user_memory(hub: Hub, user: str) -> dict:
    """What ``user``'s server and kernels use now, in MB: ``rss`` (resident, counting shared libraries in full for
    every process), ``pss`` (shared pages divided among the processes sharing them: what one more student adds),
    the kernels' peak resident size, and the process counts."""
    import psutil

    out = {"server_rss": 0.0, "server_pss": 0.0, "kernel_rss": 0.0, "kernel_pss": 0.0, "kernel_peak": 0.0,
           "kernels": 0, "servers": 0}
    for pid in hub.user_pids(user):
        with contextlib.suppress(psutil.Error):
            p = psutil.Process(pid)
            mem = p.memory_full_info()
            kind = "kernel" if "ipykernel" in " ".join(p.cmdline()) else "server"
            out[f"{kind}_rss"] += mem.rss / 2**20
            out[f"{kind}_pss"] += mem.pss / 2**20
            out[f"{kind}s"] += 1
            if kind == "kernel":
                status = Path(f"/proc/{pid}/status").read_text()
                hwm = [line for line in status.splitlines() if line.startswith("VmHWM:")]
                out["kernel_peak"] = max(out["kernel_peak"], int(hwm[0].split()[1]) / 1024 if hwm else 0)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="bash run.sh hub")
    ap.add_argument("--users", type=int, default=3, help="how many test users (default 3)")
    ap.add_argument("--port", type=int, default=8000, help="the hub's port (default 8000)")
    ap.add_argument("--ip", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine only)")
    args = ap.parse_args(argv)
    hub = Hub(n_users=args.users, port=args.port, ip=args.ip)
    print(f"==> Making the class repository (the learner copies) and starting JupyterHub in {hub.workdir}")
    with hub:
        first = sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))[0]
        print(f"""
==> JupyterHub is serving the series at {hub.url}
    users:    {', '.join(hub.users)}   ({hub.mode}: {hub.mode_reason})
    password: {hub.password}   (the same for every user: a test login, not for a real class)
    the class link (log in, then it pulls the notebooks into the user's home and opens the first one):
    {hub.class_link(first)}
    Ctrl+C stops the hub and every user's server.""", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
            while hub.proc and hub.proc.poll() is None:
                time.sleep(1)
        print("\n==> Stopping the hub")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
