"""Repository-wide pytest set-up (loaded for tests/ and notebooks/ alike): the offline guard.

The whole suite must pass with the network disabled (issue 5). GT_OFFLINE=1 plus
tests/offline/ on PYTHONPATH make every Python process the tests start (nbval's kernels,
JupyterLab and its kernels) load tests/offline/sitecustomize.py, which refuses non-loopback
connections and name look-ups; this process loads it directly. The browser is kept offline
by its own flags (tools/jlab.py). Set GT_OFFLINE=0 to switch the guard off.
"""

import os
import runpy
from pathlib import Path

_GUARD = Path(__file__).resolve().parent / "tests" / "offline"

if os.environ.get("GT_OFFLINE", "1") == "1":
    os.environ["GT_OFFLINE"] = "1"
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(_GUARD) not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([str(_GUARD), *parts])
    runpy.run_path(str(_GUARD / "sitecustomize.py"))
