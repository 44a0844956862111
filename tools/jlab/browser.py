"""Debian's Chromium, headless, driven by Playwright: one persistent context, or several separate sessions."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
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


_RUNNING: list = []  # the Playwright that an enclosing browser() or browser_sessions() of this process started


@contextlib.contextmanager
def _playwright():
    """Playwright's sync API, started once: inside an open browser() (a test session's shared browser, say), a second
    sync_playwright() would refuse to start ("Sync API inside the asyncio loop"), so the running one is reused."""
    if _RUNNING:
        yield _RUNNING[-1]
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        _RUNNING.append(p)
        try:
            yield p
        finally:
            _RUNNING.pop()


@contextlib.contextmanager
def browser(user_data_dir: Path | None = None):
    """A headless Debian Chromium driven by Playwright; yields a persistent browser context."""
    tmp = Path(user_data_dir or tempfile.mkdtemp(prefix="gt-chromium-"))
    with _playwright() as p:
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
    with _playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield [chromium.new_context(viewport={"width": 1280, "height": 900}, device_scale_factor=1,
                                        service_workers="block") for _ in range(n)]
        finally:
            chromium.close()


