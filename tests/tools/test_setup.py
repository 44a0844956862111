"""The set-up files agree with each other and with the README's two commands, and run.sh says which
Pythons work and which one it uses before it installs anything (fake interpreters: nothing is installed)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = pytest.mark.slow  # run.sh itself, in fresh folders

ROOT = Path(__file__).resolve().parents[2]
RUN_SH = (ROOT / "run.sh").read_text()


def run_sh_list(name: str) -> list[str]:
    """A space-separated setting at the top of run.sh, e.g. SUPPORTED_PYTHONS="3.10 3.11"."""
    m = re.search(rf'^{name}="([^"]*)"', RUN_SH, flags=re.M)
    assert m, f"run.sh sets {name}"
    return m.group(1).split()


SUPPORTED = run_sh_list("SUPPORTED_PYTHONS")
DATA_ONLY_ON_310 = run_sh_list("DATA_ONLY_ON_310")


def requirements() -> list[Requirement]:
    lines = [l.split("#")[0].strip() for l in (ROOT / "requirements.txt").read_text().splitlines()]
    return [Requirement(l) for l in lines if l]


def pins_for(python: str) -> dict[str, str]:
    """{package: version} that pip installs from requirements.txt on Python `python` (markers applied)."""
    out = {}
    for r in requirements():
        if r.marker is None or r.marker.evaluate({"python_version": python, "python_full_version": python + ".0"}):
            assert r.name.lower() not in out, f"requirements.txt pins {r.name} twice for Python {python}"
            out[r.name.lower()] = str(r.specifier).removeprefix("==")
    return out


def yml_pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip().lstrip("- ").strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([^\s]+)", line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_environment_yml_lists_the_same_pins_as_requirements_for_its_python():
    env_text = (ROOT / "environment.yml").read_text()
    python = re.search(r"^\s*-\s*python=(3\.\d+)\s*$", env_text, flags=re.M).group(1)
    assert python in SUPPORTED
    env = yml_pins(env_text.split("- pip:", 1)[1].splitlines())
    assert env, "environment.yml pins packages"
    assert env == pins_for(python)


def test_every_requirement_is_pinned_and_torch_is_2_13_0_everywhere():
    reqs = requirements()
    assert all(len(r.specifier) == 1 and next(iter(r.specifier)).operator == "==" for r in reqs), \
        [str(r) for r in reqs if not str(r.specifier).startswith("==")]
    for python in SUPPORTED:
        pins = pins_for(python)
        assert pins["torch"] == "2.13.0", python
        for needed in ("jupyterlab", "numpy", "torch", "matplotlib", "ipywidgets", "nbval", "pytest"):
            assert needed in pins, (python, needed)


@pytest.mark.parametrize("python", SUPPORTED)
def test_every_package_has_exactly_one_pin_on_every_supported_python(python):
    names = {r.name.lower() for r in requirements()}
    have = set(pins_for(python))  # pins_for also fails on two pins for one Python
    missing = names - have
    if python == "3.10":
        assert missing == set(DATA_ONLY_ON_310), "only run.sh's DATA_ONLY_ON_310 lack a 3.10 pin"
        for name in DATA_ONLY_ON_310:  # run.sh takes the version from the line for newer Pythons
            assert re.search(rf"^{re.escape(name)}==\S+;", (ROOT / "requirements.txt").read_text(), flags=re.M)
    else:
        assert not missing, f"no pin for Python {python}: {sorted(missing)}"


def setup_section(readme: str) -> str:
    """README's "Two commands" section, where the Pythons are named."""
    return readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]


def install_section(page: str) -> str:
    """docs/install.md's "Which Python" and "Platforms" sections."""
    return page.split("## Which Python", 1)[1].split("\n## What a Linux install downloads", 1)[0]


def pythons_named(text: str) -> set[str]:
    return set(re.findall(r"(?<![\d.])3\.\d{1,2}(?![\d.])", text))


def test_readme_and_the_install_page_name_exactly_the_pythons_run_sh_supports():
    named = pythons_named(setup_section((ROOT / "README.md").read_text()))
    assert named == set(SUPPORTED), f"README names {sorted(named)}, run.sh supports {SUPPORTED}"
    section = install_section((ROOT / "docs" / "install.md").read_text())
    named = pythons_named(section)
    assert named == set(SUPPORTED), f"docs/install.md names {sorted(named)}, run.sh supports {SUPPORTED}"
    assert "## Platforms" in section


def test_readme_shows_exactly_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^\s*(bash run\.sh \w+)", readme, flags=re.M)
    assert commands[:2] == ["bash run.sh lab", "bash run.sh test"]
    assert "bash run.sh test" in (ROOT / ".ci" / "run").read_text()


def test_readme_lists_every_notebook():
    readme = (ROOT / "README.md").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"](notebooks/{nb.name})" in readme, f"README.md does not link {nb.name}"


# --- run.sh's choice of interpreter, with fake interpreters (they answer run.sh's version questions and
# refuse everything else, so nothing is ever installed) ---

def fake_python(folder: Path, name: str, version: str) -> Path:
    minor = ".".join(version.split(".")[:2])
    path = folder / name
    path.write_text("#!/bin/sh\n"
                    f'case "$*" in *"version_info[:3]"*) echo {version} ;; *"version_info[:2]"*) echo {minor} ;;\n'
                    '  *) echo "fake python: will not run $*" >&2; exit 1 ;; esac\n')
    path.chmod(0o755)
    return path


def run_setup(tmp_path: Path, env_extra: dict, path: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GT_")}
    env.update(HOME=str(tmp_path / "home"), PYENV_ROOT=str(tmp_path / "no-pyenv"), **env_extra)
    if path is not None:
        env["PATH"] = path
    return subprocess.run(["bash", str(ROOT / "run.sh"), "setup"], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)


def test_run_sh_refuses_an_unsupported_gt_python_and_names_the_supported_ones(tmp_path):
    py = fake_python(tmp_path, "python3.9", "3.9.18")
    r = run_setup(tmp_path, {"GT_PYTHON": str(py), "GT_VENV": "venv"})
    assert r.returncode != 0
    assert f"GT_PYTHON={py} is Python 3.9; the series needs Python 3.10, 3.11, 3.12 or 3.13" in r.stderr
    assert not (tmp_path / "venv").exists(), "nothing is created for an unsupported Python"


def test_run_sh_says_which_pythons_work_and_which_it_uses_before_installing(tmp_path):
    py = fake_python(tmp_path, "python3.12", "3.12.1")
    r = run_setup(tmp_path, {"GT_PYTHON": "python3.12", "GT_VENV": "venv"}, path=f"{tmp_path}:{os.environ['PATH']}")
    assert r.returncode != 0  # the fake cannot make a venv
    lines = r.stdout.splitlines()
    assert lines[:2] == ["==> Gentle Transformers sets up and passes on Python 3.10, 3.11, 3.12 or 3.13.",
                         f"==> Using Python 3.12.1 ({py}, GT_PYTHON) for a new environment in {tmp_path / 'venv'}"]
    assert f"could not create {tmp_path / 'venv'} with {py}" in r.stderr
    assert "Installing" not in r.stdout


def test_run_sh_without_a_supported_python_says_which_ones_it_needs(tmp_path):
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("bash", "sh", "cat", "sha256sum", "cut", "sed", "tr", "ls", "sort", "grep", "dirname", "uname",
                 "id", "env"):
        found = shutil.which(tool)
        if found:
            (bin_ / tool).symlink_to(found)
    fake_python(bin_, "python3", "3.9.18")
    r = run_setup(tmp_path, {"GT_VENV": "venv"}, path=str(bin_))
    assert r.returncode != 0
    assert "no supported Python found. The series needs Python 3.10, 3.11, 3.12 or 3.13" in r.stderr
    assert "Found only: python3 (Python 3.9)" in r.stderr
    assert "GT_PYTHON=/path/to/python3.11 bash run.sh lab" in r.stderr
    assert not (tmp_path / "venv").exists()


def test_run_sh_refuses_a_folder_that_is_not_a_virtual_environment(tmp_path):
    fake_python(tmp_path, "python3.11", "3.11.7")
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "notes.txt").write_text("keep me")
    r = run_setup(tmp_path, {"GT_PYTHON": str(tmp_path / "python3.11"), "GT_VENV": "precious"})
    assert r.returncode != 0
    assert "precious exists and is not a virtual environment" in r.stderr
    assert (tmp_path / "precious" / "notes.txt").read_text() == "keep me"


def test_nbgrader_stays_out_of_the_learners_jupyter():
    """run.sh setup installs nbgrader for instructors but switches its menus and grading server off
    (docs/teaching.md, "Teaching with it", says how to turn them on)."""
    jupyter = Path(sys.executable).parent / "jupyter"
    out = subprocess.run([str(jupyter), "server", "extension", "list"], capture_output=True, text=True)
    listed = re.findall(r"(nbgrader\.server_extensions\.\w+) \S*(enabled|disabled)", out.stdout + out.stderr)
    assert listed and all(state == "disabled" for _, state in listed), listed
    out = subprocess.run([str(jupyter), "labextension", "list"], capture_output=True, text=True)
    assert re.search(r"@jupyter/nbgrader v[\d.]+ \S*disabled", out.stdout + out.stderr)
