"""Every Python the README names sets up and passes, not only the one running this suite.

`bash run.sh test` with CI=true, or with GT_PYTHONS="3.10 3.13", first prepares an environment for each
other supported Python found on the machine (PATH or pyenv), with the project's own set-up
(`GT_PYTHON=... GT_VENV=... bash run.sh setup`), under ${XDG_CACHE_HOME:-~/.cache}/gentle-transformers/
venv-py3.X, where every clone on the machine reuses it while requirements.txt and pyproject.toml are
unchanged. Installing needs the network, so it happens there and never here (this suite runs offline).

Here, for each such Python: the environment holds exactly the pins of requirements.txt for that Python and
this clone's helpers, `pip check` is content, and notebook 01 passes through nbval inside it, with the project's
pytest options, and every module of helpers/ and tools/ imports; the newest supported Python also passes the unit
tests there (`UNIT_TESTS` below);
where a Python has its own nbgrader pin (3.10), nbgrader releases and grades notebook 01's exercises there
too (tests/notebooks/test_exercises.py, on 01 only).
Without CI=true or GT_PYTHONS this test skips (learners don't pay for it); so it does where a Python is not
installed, or, outside CI, where its environment was not prepared. Under CI=true a missing or broken
environment fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = [pytest.mark.slow, pytest.mark.apart]  # the other Pythons' environments, each a run of its own

ROOT = Path(__file__).resolve().parents[2]
RUN_SH = (ROOT / "run.sh").read_text()
SUPPORTED = re.search(r'^SUPPORTED_PYTHONS="([^"]*)"', RUN_SH, flags=re.M).group(1).split()
DATA_ONLY_ON_310 = re.search(r'^DATA_ONLY_ON_310="([^"]*)"', RUN_SH, flags=re.M).group(1).split()
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gentle-transformers"
THIS_PYTHON = "%d.%d" % sys.version_info[:2]


# What runs inside each other Python. Every one imports every module of helpers/ and tools/ (what a new or removed
# piece of syntax or of the standard library breaks, it breaks at import), and runs notebook 01 and the offline guard.
# The newest supported Python, where behaviour changes first, also runs the unit tests: tests/unit (every test of
# helpers/ not marked slow, and the slow ones that start a Python, pip or git, marked each_python, since each Python
# imports and installs in its own way) and the each_python tests elsewhere (the tools a learner or an instructor runs:
# the workspace, the hub, the wheel). The tests that read the repository's files (its layout, its notebooks' text)
# give the same answer on every Python and run in the main run only, as does what starts kernels, servers or browsers.
def each_python_files() -> list[str]:
    """The test files outside tests/unit that hold a test marked each_python (this one aside)."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")
                  if not p.is_relative_to(ROOT / "tests" / "unit") and p.name != "test_pythons.py"
                  and "pytest.mark.each_python" in p.read_text(encoding="utf-8"))


UNIT_TESTS = ["-m", "not slow or each_python", "tests/unit", *each_python_files()]
FULL = (SUPPORTED[-1],)  # the Pythons that run UNIT_TESTS
IMPORT_ALL = """
import importlib, pkgutil
import helpers, tools
names = sorted(m.name for pkg in (helpers, tools) for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
               if not m.name.endswith("__main__"))
for name in names:
    importlib.import_module(name)
print(len(names))
"""
NOTEBOOK = "notebooks/01_bigrams.ipynb"
EXERCISES = "01"  # tests/notebooks/test_exercises.py grades only this notebook with nbgrader there
TIMEOUT = 900  # s, for the whole run inside one environment


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def asked() -> list[str] | None:
    value = os.environ.get("GT_PYTHONS", "").split()
    return value or None


def wanted_stamp() -> str:
    """run.sh's stamp: sha256 of requirements.txt followed by pyproject.toml."""
    return hashlib.sha256((ROOT / "requirements.txt").read_bytes() + (ROOT / "pyproject.toml").read_bytes()).hexdigest()


def expected_pins(version: str) -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        r = Requirement(line)
        if r.marker is None or r.marker.evaluate({"python_version": version}):
            out[r.name] = str(r.specifier).removeprefix("==")
        elif version == "3.10" and r.name in DATA_ONLY_ON_310:
            out[r.name] = str(r.specifier).removeprefix("==")  # run.sh installs the same pin on 3.10
    return out


def run(cmd: list[str], env: dict, timeout: float, log: Path) -> tuple[int, str]:
    """Run cmd in its own process group, output to log; on timeout the whole group is killed."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            return -1, log.read_text() + f"\n[killed after {timeout} s]"
        finally:
            try:  # nothing it started may outlive it
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return proc.returncode, log.read_text()


def prepared_venv(version: str) -> Path:
    """The environment run.sh prepared for `version`, or a skip / failure that says why there is none."""
    names = asked()
    if version == THIS_PYTHON:
        pytest.skip(f"Python {version} runs this whole suite")
    if names is None and not in_ci():
        pytest.skip('the other-Pythons pass runs only with CI=true or GT_PYTHONS (e.g. GT_PYTHONS="3.10 3.13" '
                    "bash run.sh test)")
    if names is not None and version not in names:
        pytest.skip(f"GT_PYTHONS={' '.join(names)} does not name {version}")
    found = subprocess.run(["bash", str(ROOT / "run.sh"), "find-python", version], capture_output=True,
                           text=True, timeout=60)
    if found.returncode != 0:
        pytest.skip(f"Python {version} is not installed on this machine (neither python{version} on PATH nor "
                    "in pyenv's versions)")
    venv = CACHE / f"venv-py{version}"
    stamp = venv / ".gt-installed"
    if not (venv / "bin" / "python").exists():
        problem = f"{venv} does not exist"
    elif not stamp.exists() or stamp.read_text().strip() != wanted_stamp():
        problem = f"{venv} was not (fully) set up for this requirements.txt and pyproject.toml"
    else:
        return venv
    message = (f"{problem}. `bash run.sh test` prepares it when CI=true or GT_PYTHONS names {version}; "
               "its output says why it could not")
    if in_ci():
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("version", SUPPORTED)
def test_other_python_sets_up_and_passes(version, tmp_path):
    venv = prepared_venv(version)
    py = str(venv / "bin" / "python")
    env = dict(os.environ, GT_VENV=str(venv), GT_THREADS="1", MPLBACKEND="Agg", GT_EXERCISE_NOTEBOOKS=EXERCISES)

    # the right Python, exactly the pins of requirements.txt for it, and this clone's helpers
    probe = ("import sys, json, importlib.metadata as m, helpers\n"
             "names = json.loads(sys.argv[1])\n"
             "print(json.dumps({'python': '%d.%d' % sys.version_info[:2], 'helpers': helpers.__file__,\n"
             "                  'versions': {n: m.version(n) for n in names}}))")
    pins = expected_pins(version)
    code, out = run([py, "-c", probe, json.dumps(sorted(pins))], env, 120, tmp_path / "probe.log")
    assert code == 0, f"the environment for Python {version} is broken:\n{out[-3000:]}"
    facts = json.loads(out.strip().splitlines()[-1])
    assert facts["python"] == version
    assert Path(facts["helpers"]).resolve().is_relative_to(ROOT), \
        f"{venv}'s helpers come from {facts['helpers']}, not this clone; `bash run.sh test` re-points it"
    got = {n: v.split("+")[0] for n, v in facts["versions"].items()}  # torch 2.13.0+cpu counts as 2.13.0
    assert got == pins

    code, out = run([py, "-m", "pip", "check"], env, 120, tmp_path / "pip-check.log")
    assert code == 0, out[-3000:]

    # every module imports
    code, out = run([py, "-c", IMPORT_ALL], env, 300, tmp_path / "imports.log")
    assert code == 0, f"Python {version}: a module of helpers/ or tools/ does not import:\n{out[-3000:]}"
    assert int(out.strip().splitlines()[-1]) > 100, out[-500:]

    # the unit tests, then notebook 01 and the offline guard (a sitecustomize.py, read by each Python in its own way),
    # and nbgrader's pass where this Python's nbgrader is another one
    slow = [NOTEBOOK, "tests/tools/test_offline.py"]
    if pins["nbgrader"] != expected_pins(THIS_PYTHON)["nbgrader"]:
        slow.append("tests/notebooks/test_exercises.py")  # the main run grades with the main nbgrader
    runs = [("notebook 01 and more", [py, "-m", "pytest", "-q", "-n", "0", *slow], 10)]
    if version in FULL:
        runs.insert(0, ("unit tests", [py, "-m", "pytest", "-q", "-n", "0", *UNIT_TESTS], 1000))
    for what, cmd, least in runs:
        code, out = run(cmd, env, TIMEOUT, tmp_path / f"pytest {what}.log")
        summary = out.strip().splitlines()[-1] if out.strip() else ""
        assert code == 0, f"Python {version}, {what}: `{' '.join(cmd[1:])}` in {venv} failed:\n{out[-6000:]}"
        passed = re.search(r"(\d+) passed", summary)
        assert passed and int(passed.group(1)) >= least and "failed" not in summary, summary
        print(f"Python {version}, {what}: {summary}")
