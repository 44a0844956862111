"""The suite runs offline: the guard (root conftest.py + tests/offline/sitecustomize.py) is active
here and in the kernels the tests start, and it blocks non-local connections but not loopback."""

import os
import socket
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.skipif(os.environ.get("GT_OFFLINE") != "1", reason="GT_OFFLINE=0: guard switched off"),
              pytest.mark.slow]  # the offline guard, in fresh interpreters and kernels


def test_guard_blocks_outside_connections_here():
    with pytest.raises(OSError, match="offline guard"):
        socket.create_connection(("93.184.215.14", 80), timeout=1)
    with pytest.raises(OSError, match="offline guard"):
        socket.getaddrinfo("pypi.org", 443)


def test_guard_allows_loopback():
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        with socket.create_connection(srv.getsockname(), timeout=2):
            pass
    assert socket.getaddrinfo("localhost", 80)


def test_guard_reaches_child_processes_and_kernels():
    """Kernels are separate processes: they get the guard through PYTHONPATH + GT_OFFLINE."""
    code = ("import socket, urllib.request\n"
            "assert getattr(socket, 'GT_OFFLINE_GUARD', False)\n"
            "try:\n    urllib.request.urlopen('https://pypi.org/simple/', timeout=2)\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "offline guard" in out.stdout


def test_guard_in_a_jupyter_kernel():
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        out = []
        reply = kc.execute_interactive("import socket; print(getattr(socket, 'GT_OFFLINE_GUARD', False))",
                                       output_hook=out.append, timeout=60)
        text = "".join(m["content"].get("text", "") for m in out if m["msg_type"] == "stream")
        assert reply["content"]["status"] == "ok"
        assert text.strip() == "True", text
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
