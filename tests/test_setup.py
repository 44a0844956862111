"""The set-up files agree with each other and with the README's two commands."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pins(lines):
    out = {}
    for line in lines:
        line = line.split("#")[0].strip().lstrip("- ").strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([^\s]+)", line)
        if m:
            out[m.group(1).lower()] = m.group(2)
    return out


def test_environment_yml_lists_the_same_pins_as_requirements():
    req = pins((ROOT / "requirements.txt").read_text().splitlines())
    env_text = (ROOT / "environment.yml").read_text()
    pip_section = env_text.split("- pip:", 1)[1].splitlines()
    env = pins(pip_section)
    assert req, "requirements.txt pins packages"
    assert env == req


def test_every_requirement_is_pinned_and_torch_is_the_cpu_version():
    lines = [l.split("#")[0].strip() for l in (ROOT / "requirements.txt").read_text().splitlines()]
    lines = [l for l in lines if l]
    assert all("==" in l for l in lines), [l for l in lines if "==" not in l]
    assert pins(lines)["torch"] == "2.13.0"
    for needed in ("jupyterlab", "numpy", "torch", "matplotlib", "ipywidgets", "nbval"):
        assert needed in pins(lines)


def test_readme_shows_exactly_the_two_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^\s*(bash run\.sh \w+)", readme, flags=re.M)
    assert commands[:2] == ["bash run.sh lab", "bash run.sh test"]
    assert "bash run.sh test" in (ROOT / ".ci" / "run").read_text()


def test_readme_lists_every_notebook():
    readme = (ROOT / "README.md").read_text()
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert nb.name in readme, f"README.md does not list {nb.name}"
