"""The series served to a class by JupyterHub: three students at once, in headless Chromium.

tools/hub.py starts a real JupyterHub, offline: the learner copy of notebook 04 in a local git repository (as an
instructor publishes it), a test login, configurable-http-proxy from its npm package, and each student's own
server — real Unix accounts when the test runs as root and they can run this environment's Python, separate home
folders otherwise (the test prints which). Each student logs in with their own browser session and opens the
class link: nbgitpuller pulls the notebooks into their home and JupyterLab opens notebook 04. All three
notebooks run at the same time; then each student operates the attention explorer from the keyboard, and the
checks of tests/browser/test_widgets_in_browser.py apply (every widget rendered, no cell error, the caption and
the picture follow every control, nothing asked of the internet). One student's edit, saved, must reach only
that student's copy. Last, the memory the three students' servers and kernels use is printed and written to
artifacts/hub/memory.md (docs/teaching.md's memory per student comes from it).

Skipped, with the reason, where Node.js or the proxy is missing; under CI=true a missing proxy with npm present
is a failure (`bash run.sh test` installs it).
"""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import ARTIFACTS, ROOT, in_ci

from tools import jlab

from tools import hub as hubtool

# JupyterHub, three students' servers and kernels, Chromium; the browser group
# runs on one worker (conftest.py's servers and Chromium start once)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("browser")]

NOTEBOOK = "04_attention_matrix.ipynb"
MARK = "An edit only student one makes"
LIMIT_MB = 1024  # the memory limit per student docs/teaching.md recommends


@pytest.fixture(scope="module")
def class_hub(browser_available):
    problem = hubtool.proxy_problem()
    if problem:
        if in_ci() and shutil.which("npm"):
            pytest.fail(f"CI=true and npm is here, but the hub cannot start: {problem}")
        pytest.skip(problem)
    # (the in-page checks of tools/jlab/ read JupyterLab's state through window.jupyterapp)
    with hubtool.Hub(n_users=3, notebooks=[ROOT / "notebooks" / NOTEBOOK],
                     server_args=("--LabApp.expose_app_in_browser=True",)) as hub:
        yield hub


def _login(ctx, hub, user: str) -> None:
    page = ctx.new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", hub.password)
    page.click("[type=submit]")
    page.wait_for_url(lambda url: "/hub/login" not in url, timeout=60000)
    page.close()


def _copy(hub, user: str):
    return hub.home(user) / hubtool.REPO_NAME / NOTEBOOK


def test_three_students_at_once(class_hub, capsys):
    hub, path = class_hub, f"{hubtool.REPO_NAME}/{NOTEBOOK}"
    with jlab.browser_sessions(len(hub.users)) as sessions:  # a browser session (and login) each
        pages = []
        for ctx, user in zip(sessions, hub.users):
            _login(ctx, hub, user)
            nbp = jlab.NotebookPage(ctx, hub.server(user), path, timeout=300)
            try:
                nbp.open()  # the class link: the hub starts the server, nbgitpuller pulls, JupyterLab opens 04
            except TimeoutError as e:
                raise AssertionError(f"{user}: {e}\nthe page is at {nbp.page.url}\nthe hub's log ends:\n"
                                     f"{hub.log()}") from None
            pages.append(nbp)
        for user in hub.users:
            assert _copy(hub, user).is_file(), f"{user}: nbgitpuller put no {NOTEBOOK} in {hub.home(user)}"
        homes = {hub.home(u) for u in hub.users}
        assert len(homes) == 3, f"the students share home folders: {homes}"
        if hub.mode == "unix-users":
            for user in hub.users:
                owner = _copy(hub, user).stat().st_uid
                assert owner == hubtool.pwd.getpwnam(user).pw_uid, f"{user}'s copy belongs to uid {owner}"
                assert not hub.home(user).stat().st_mode & 0o077, f"other students can read {hub.home(user)}"

        for nbp in pages:  # all three kernels run notebook 04 at the same time
            nbp.start_run_all()
        for nbp in pages:
            nbp.wait_run_all()
        for nbp, user in zip(pages, hub.users):
            nbp.check_outputs()
            explorers = nbp.operate_explorers() if not nbp.report.problems else []
            nbp.screenshot(ARTIFACTS.parent / "hub" / f"{user}.png")
            report = nbp.finish()
            assert not report.problems, f"{user}: " + "\n  ".join(report.problems)
            assert any(c["kind"] == "slider" for e in explorers for c in e["controls"]) and report.operated, \
                f"{user}: the attention explorer was not operated: {report.operated}"

        # one student's edit, saved, reaches only that student's copy
        first = pages[0]
        first.js("m => { const c = window.jupyterapp.shell.currentWidget.content.model.cells.get(0);"
                 " c.sharedModel.setSource(c.sharedModel.getSource() + '\\n\\n' + m); }", MARK)
        first.js("() => window.jupyterapp.commands.execute('docmanager:save')")
        first.page.wait_for_function(
            "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=30000)
        assert MARK in _copy(hub, hub.users[0]).read_text(encoding="utf-8"), "the first student's save was lost"
        for user in hub.users[1:]:
            assert MARK not in _copy(hub, user).read_text(encoding="utf-8"), \
                f"the first student's edit appeared in {user}'s copy"

        memory = {user: hubtool.user_memory(hub, user) for user in hub.users}
        for nbp in pages:
            nbp.close()
    for user, m in memory.items():
        assert m["servers"] == 1 and m["kernels"] == 1, f"{user}: expected one server and one kernel, found {m}"
        # docs/teaching.md: a 1 GB limit per student holds their server and one notebook's kernel
        assert m["server_rss"] + m["kernel_peak"] < LIMIT_MB, \
            f"{user}: server {m['server_rss']:.0f} MB + kernel peak {m['kernel_peak']:.0f} MB > {LIMIT_MB} MB"
    table = memory_table(hub, memory)
    (ARTIFACTS.parent / "hub").mkdir(parents=True, exist_ok=True)
    (ARTIFACTS.parent / "hub" / "memory.md").write_text(table, encoding="utf-8")
    with capsys.disabled():
        print("\n" + table)


def memory_table(hub, memory: dict) -> str:
    rows = [f"Three students on one JupyterHub ({hub.mode}: {hub.mode_reason}), each with notebook 04 run and "
            f"its explorer operated (threads per kernel: {os.environ.get('GT_THREADS', '1')}):", "",
            "| student | server RSS | server PSS | kernel RSS | kernel PSS | kernel peak RSS | server + kernel PSS |",
            "|---|---|---|---|---|---|---|"]
    for user, m in memory.items():
        rows.append(f"| {user} | {m['server_rss']:.0f} MB | {m['server_pss']:.0f} MB | {m['kernel_rss']:.0f} MB | "
                    f"{m['kernel_pss']:.0f} MB | {m['kernel_peak']:.0f} MB | "
                    f"{m['server_pss'] + m['kernel_pss']:.0f} MB |")
    total = sum(m["server_pss"] + m["kernel_pss"] for m in memory.values())
    rows += ["", f"All three: {total:.0f} MB PSS (RSS counts the shared libraries once per process; PSS shares them "
             "out, so it is what each further student adds)."]
    return "\n".join(rows) + "\n"
