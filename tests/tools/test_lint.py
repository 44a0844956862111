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


LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    if not LINT_IMPORTS.exists():
        pytest.fail(f"import-linter is not installed in {LINT_IMPORTS.parent}: run `bash run.sh test`")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(cwd)}
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env)


def test_the_helpers_keep_their_floors_and_have_no_import_circles():
    """pyproject.toml's [tool.importlinter] contracts: every module of helpers has a floor, imports only from below,
    and no package's modules import each other in a circle."""
    done = _lint_imports(ROOT)
    assert done.returncode == 0, "import-linter found a broken contract (`.venv/bin/lint-imports`):\n" + \
        done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_the_import_contracts_catch_a_floor_broken_a_circle_and_a_module_without_a_floor(tmp_path):
    import shutil

    shutil.copytree(ROOT / "helpers", tmp_path / "helpers", ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    config = tmp_path / "helpers" / "model" / "config.py"
    config.write_text(config.read_text() + "\nimport helpers.lessons.facts  # noqa\n")   # the model reads a lesson
    broken = _lint_imports(tmp_path)
    assert broken.returncode != 0 and "helpers.model.config -> helpers.lessons.facts" in broken.stdout
    config.write_text(config.read_text().replace("import helpers.lessons.facts  # noqa", ""))
    offer = tmp_path / "helpers" / "checks" / "offer.py"
    offer.write_text(offer.read_text() + "\nimport helpers.checks.answers  # noqa\n")   # answers reads offer
    circle = _lint_imports(tmp_path)
    assert circle.returncode != 0 and "No import circles" in circle.stdout and "BROKEN" in circle.stdout
    offer.write_text(offer.read_text().replace("import helpers.checks.answers  # noqa", ""))
    (tmp_path / "helpers" / "newthing.py").write_text('"""A module nobody gave a floor."""\n')
    unplaced = _lint_imports(tmp_path)
    assert unplaced.returncode != 0 and "newthing" in unplaced.stdout + unplaced.stderr
