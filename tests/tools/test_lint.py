"""The linter (ruff, pinned in requirements.txt, configured in pyproject.toml) passes on the repository.

It catches what review kept missing: stale `noqa` marks, f-strings without placeholders, unused
imports, blank-line slips, over-long lines. Run it yourself with `.venv/bin/ruff check .`
(`--fix` repairs most findings). Notebooks are excluded for now (see pyproject.toml).
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.each_python]  # ruff, a process of its own

ROOT = Path(__file__).resolve().parents[2]
RUFF = Path(sys.executable).parent / "ruff"  # installed into the same environment as the tests


def _pinned() -> str:
    match = re.search(r"^ruff==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert match, "requirements.txt must pin ruff (ruff==X.Y.Z)"
    return match.group(1)


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    if not RUFF.exists():
        pytest.fail(f"ruff is not installed in {RUFF.parent}: run `bash run.sh test` (it installs requirements.txt)")
    return subprocess.run([str(RUFF), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_ruff_is_the_pinned_version():
    assert _ruff("--version").stdout.split() == ["ruff", _pinned()]


def test_the_repository_passes_ruff():
    done = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, \
        f"ruff found problems (most are fixed by `.venv/bin/ruff check --fix .`):\n{done.stdout}{done.stderr}"


def test_ruff_catches_what_it_is_configured_to(tmp_path):
    """The negative control: the project's configuration, on a file with one slip of each kind."""
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "slips.py").write_text(
        'import os  # noqa: E402\n'
        'x = f"no placeholders"\n\n\n\n'
        'def f():\n    return x\n'
        'y = "' + "a" * 130 + '"\n')
    found = {d["code"] for d in json.loads(_ruff("check", "--no-cache", "--output-format", "json", "slips.py",
                                                   cwd=tmp_path).stdout)}
    assert found == {"RUF100", "F401", "F541", "E303", "E305", "E501"}, found
