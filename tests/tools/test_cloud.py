"""Binder and Colab (docs/cloud.md, "Binder and Colab"), checked offline: every link, the notebooks' Colab cell and
binder/ agree with pyproject.toml and requirements.txt; the Colab cell does nothing outside Colab and exactly
the intended pip install in it; an installed (non-editable) helpers package finds and loads its checkpoints;
binder/postBuild does what run.sh's set-up does."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from tools import cloud

ROOT = Path(__file__).resolve().parents[2]

REPO, REF = cloud.repository()
NOTEBOOKS = cloud.notebook_paths()
TEST_TOOLS = {r.name.lower() for r, is_test in cloud.requirement_lines(cloud.REQUIREMENTS.read_text()) if is_test}


def run_sh_list(name: str) -> list[str]:
    m = re.search(rf'^{name}="([^"]*)"', (ROOT / "run.sh").read_text(), flags=re.M)
    return m.group(1).split()


# --- one address, everything made from it ---

def test_everything_made_from_the_address_is_current():
    stale = [str(p.relative_to(ROOT)) for p, text in cloud.wanted().items() if p.read_text(encoding="utf-8") != text]
    assert not stale, f"run: python -m tools.notebooks cloud ({stale})"


def test_every_link_and_install_names_the_repository_of_pyproject():
    texts = {p.name: p.read_text(encoding="utf-8") for p in [ROOT / "README.md", cloud.CLOUD_PAGE, *NOTEBOOKS]}
    found = 0
    for name, text in texts.items():
        for url in re.findall(r"https://(?:github\.com|mybinder\.org/v2/gh|colab\.research\.google\.com/github)"
                              r"/[^\s)\"\\]+", text):
            found += 1
            assert f"/{REPO}" in url, f"{name}: {url} is not {REPO} (pyproject.toml)"
            assert f"/{REF}" in url or f"@{REF}" in url, f"{name}: {url} is not branch {REF}"
    assert found >= 2 * len(NOTEBOOKS) + len(NOTEBOOKS)  # docs/cloud.md's links and badges, one install per notebook


def test_a_fork_rewrites_exactly_the_two_lines_of_pyproject():
    text = cloud.PYPROJECT.read_text(encoding="utf-8")
    forked = cloud.with_repository(text, "someone/gt-fork", "teaching")
    assert cloud.repository(forked) == ("someone/gt-fork", "teaching")
    changed = [(a, b) for a, b in zip(text.splitlines(), forked.splitlines()) if a != b]
    assert len(changed) == 2 and len(text.splitlines()) == len(forked.splitlines())
    assert cloud.with_repository(forked, REPO, REF) == text
    for bad in ("no-slash", "a/b c"):
        with pytest.raises(ValueError, match="owner/name"):
            cloud.with_repository(text, bad, "main")


# --- the Colab cell ---

def test_every_notebook_opens_with_the_same_colab_cell_after_its_title():
    cell = cloud.colab_cell(REPO, REF)
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith(f"# {path.name[:2]} · ")
        assert nb.cells[1].source == cell, path.name
        assert [i for i, c in enumerate(nb.cells) if cloud.is_colab_cell(c)] == [1], path.name
        assert "helpers.setup(" in nb.cells[2].source, "the imports and helpers.setup come right after it"


OUTSIDE_COLAB = textwrap.dedent("""
    import json, os, subprocess, sys
    cell = open(sys.argv[1], encoding="utf-8").read()
    ran = []
    def refuse(*a, **k):
        ran.append(a)
        raise AssertionError("the cell ran a command")
    subprocess.run = subprocess.Popen = subprocess.call = subprocess.check_call = os.system = refuse
    before = (sorted(sys.modules), os.getcwd(), dict(os.environ), sorted(os.listdir(".")))
    namespace = {}
    exec(compile(cell, "colab cell", "exec"), namespace)
    after = (sorted(sys.modules), os.getcwd(), dict(os.environ), sorted(os.listdir(".")))
    print(json.dumps({"same": before == after, "new": sorted(set(after[0]) - set(before[0])), "ran": len(ran),
                      "names": sorted(k for k in namespace if k != "__builtins__")}))
""")


@pytest.mark.slow  # starts a Python
@pytest.mark.each_python
def test_outside_colab_the_cell_changes_nothing(tmp_path):
    (tmp_path / "cell.py").write_text(cloud.colab_cell(REPO, REF), encoding="utf-8")
    (tmp_path / "probe.py").write_text(OUTSIDE_COLAB, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run([sys.executable, str(tmp_path / "probe.py"), str(tmp_path / "cell.py")], cwd=work,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen == {"same": True, "new": [], "ran": 0, "names": ["sys"]}, seen
    assert not list(work.iterdir())


def test_in_colab_the_cell_pip_installs_the_package_with_the_colab_extra_and_goes_on(monkeypatch):
    calls = []
    colab = types.ModuleType("google.colab")
    colab.output = types.SimpleNamespace(enable_custom_widget_manager=lambda: calls.append("widgets"))
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append((a, k)))
    exec(compile(cloud.colab_cell(REPO, REF), "colab cell", "exec"), {})
    assert calls == [(([sys.executable, "-m", "pip", "install", "--quiet", cloud.pip_target(REPO, REF)],),
                      {"check": True}), "widgets"]


def test_what_the_colab_cell_installs_is_the_package_with_requirements_pins_of_what_colab_lacks():
    target = Requirement(cloud.pip_target(REPO, REF))
    project = cloud._pyproject()["project"]
    assert target.name == project["name"] and target.extras == {cloud.EXTRA}
    assert target.url == f"git+https://github.com/{REPO}.git@{REF}"
    assert project["dependencies"] == [], "run.sh's `pip install --no-deps -e .` must never pull another torch"
    extra = {r.name.lower(): r for r in map(Requirement, cloud.colab_extra())}
    assert extra
    for python in ("3.11", "3.12"):  # Colab's Python: 3.11 or 3.12 (the same pins)
        pins = cloud.pins_for(python)
        for name, r in extra.items():
            assert str(r.specifier) == f"=={pins[name]}", f"the colab extra pins {r}, requirements.txt {pins[name]}"
    assert not set(extra) & set(cloud.COLAB_SHIPS), "replacing a package Colab ships would need a restart"
    assert not set(extra) & (set(cloud.NOT_IN_COLAB) | TEST_TOOLS)
    needed = set(cloud.pins_for("3.11", tests=False)) - set(cloud.NOT_IN_COLAB)
    assert needed == set(extra) | set(cloud.COLAB_SHIPS), "Colab's packages and the extra give every run-time need"


# --- Binder ---

def test_binder_requirements_are_requirements_pins_for_its_python_with_cpu_torch():
    python = cloud.binder_python()
    assert python in run_sh_list("SUPPORTED_PYTHONS")
    env_python = re.search(r"^\s*-\s*python=(3\.\d+)\s*$", (ROOT / "environment.yml").read_text(), flags=re.M)[1]
    assert python == env_python
    lines = [l.strip() for l in (ROOT / "binder" / "requirements.txt").read_text().splitlines()]
    assert f"--extra-index-url {cloud.TORCH_CPU_INDEX}" in lines
    reqs = [Requirement(l) for l in lines if l and not l.startswith(("#", "--"))]
    pins = {r.name.lower(): str(r.specifier).removeprefix("==") for r in reqs}
    assert pins.pop("torch") == cloud.pins_for(python)["torch"] + "+cpu"
    expected = cloud.pins_for(python)
    del expected["torch"]
    # the test tools are left out: nothing a learner runs imports them; and so is the hub (Binder brings its own)
    assert {n: v for n, v in expected.items() if n not in TEST_TOOLS and n not in cloud.HUB_SIDE} == pins
    assert "nbgitpuller" in pins and set(cloud.HUB_SIDE) <= set(expected)
    assert TEST_TOOLS == {"pytest", "nbval", "pytest-xdist", "playwright", "ruff", "coloraide", "axe-playwright-python",
                          "transformers", "import-linter", "grimp"}
    imports = re.compile(r"^\s*(?:import|from)\s+"
                         r"(pytest|nbval|xdist|playwright|ruff|coloraide|axe_playwright_python|transformers|"
                         r"importlinter|grimp)\b", re.M)
    sources = [*(ROOT / "helpers").rglob("*.py"),
               *[p for p in (ROOT / "tools").glob("*.py") if p.name not in ("jlab.py", "bench.py")]]
    assert not [p.name for p in sources if imports.search(p.read_text())]
    for path in NOTEBOOKS:
        assert not [c for c in nbformat.read(path, as_version=4).cells if imports.search(c.source)], path.name


@pytest.mark.slow  # starts git
@pytest.mark.each_python
def test_binder_postbuild_installs_helpers_and_switches_nbgrader_off_as_run_sh_does(tmp_path):
    post = ROOT / "binder" / "postBuild"
    assert os.access(post, os.X_OK), "repo2docker runs binder/postBuild only if it is executable"
    mode = subprocess.run(["git", "ls-files", "-s", "binder/postBuild"], cwd=ROOT, capture_output=True, text=True)
    if mode.stdout:  # committed: git keeps the bit
        assert mode.stdout.startswith("100755"), mode.stdout
    log = tmp_path / "log"
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("python", "jupyter"):  # stand-ins that record what they were asked
        (bin_ / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
        (bin_ / tool).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GT_")} | {"PATH": f"{bin_}:{os.environ['PATH']}"}
    out = subprocess.run([str(post)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert log.read_text().splitlines() == [
        "python -m pip install --no-cache-dir --no-deps -e .",
        "jupyter labextension disable --level=sys_prefix @jupyter/nbgrader",
        *[f"jupyter server extension disable --sys-prefix nbgrader.server_extensions.{ext}"
          for ext in run_sh_list("NBGRADER_SERVER_EXTENSIONS")]]
    assert "://" not in post.read_text(), "postBuild uses only what is in the repository"


# --- the package: checkpoints found when installed from a wheel ---

def test_the_package_lists_every_helpers_package():
    packages = set(cloud._pyproject()["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "helpers").rglob("__init__.py")}
    assert packages == found | {"helpers.checkpoints"}


def test_from_a_clone_the_checkpoints_are_the_clones():
    from helpers.model import checkpoint

    assert checkpoint.checkpoints_dir() == ROOT / "checkpoints"


@pytest.mark.slow  # starts pip and a Python
@pytest.mark.each_python
def test_an_installed_wheel_finds_and_loads_its_checkpoints(tmp_path):
    """What Colab's pip install makes: a regular install, away from the source tree. It finds its checkpoints and the
    notebooks' manifests (helpers/series/: the model map and the idioms a notebook shows)."""
    pytest.importorskip("setuptools", reason="building the wheel offline uses this environment's setuptools")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copytree(ROOT / "helpers", src / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "checkpoints").mkdir()
    shipped = sorted(p.name for p in (ROOT / "checkpoints").glob("*.safetensors"))
    for name in shipped:
        shutil.copy(ROOT / "checkpoints" / name, src / "checkpoints")
    env = os.environ | {"PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    pip = [sys.executable, "-m", "pip", "--quiet"]
    run = subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))
    site = tmp_path / "site"
    run = subprocess.run([*pip, "install", "--no-deps", "--target", str(site), str(wheel)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert sorted(p.relative_to(site / "helpers") for p in (site / "helpers").rglob("*.py")) == \
        sorted(p.relative_to(ROOT / "helpers") for p in (ROOT / "helpers").rglob("*.py"))
    probe = ("import json, helpers\nfrom helpers.model import checkpoint\n"
             "from helpers import idioms, series\nfrom helpers.plots import model_map\n"
             "model, meta = checkpoint.load_named('zero')\n"
             "print(json.dumps({'helpers': helpers.__file__, 'dir': str(checkpoint.checkpoints_dir()),"
             " 'names': sorted(p.name for p in checkpoint.checkpoints_dir().glob('*.safetensors')),"
             " 'model': type(model).__name__, 'd_model': model.cfg.d_model,"
             " 'manifests': [nb.name for nb in series.notebooks()], 'map': model_map.map_html('06'),"
             " 'idioms': len(idioms.IDIOMS)}))")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    out = subprocess.run([sys.executable, "-c", probe], cwd=elsewhere, env=env | {"PYTHONPATH": path},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert Path(seen["helpers"]).is_relative_to(site), "the installed copy, not the clone, was imported"
    assert seen["dir"] == str(site / "helpers" / "checkpoints")
    assert seen["names"] == shipped and seen["model"] == "Transformer" and seen["d_model"] > 0
    from helpers import idioms, series
    from helpers.plots import model_map

    assert seen["manifests"] == [nb.name for nb in series.notebooks()] == [p.stem for p in NOTEBOOKS]
    assert seen["map"] == model_map.map_html("06") and seen["idioms"] == len(idioms.IDIOMS) > 100


@pytest.mark.slow  # runs binder/start and git
def test_binder_start_applies_the_series_jupyter_settings_as_run_sh_lab_does(tmp_path):
    """repo2docker runs binder/start before Jupyter: it puts the repository's jupyter-config/ (JupyterLab's
    announcements off: no question about Jupyter's news over the first notebook) on JUPYTER_CONFIG_PATH, ahead of
    any path already there, then runs the command it was given; run.sh lab does the same."""
    start = ROOT / "binder" / "start"
    assert os.access(start, os.X_OK), "repo2docker runs binder/start only if it is executable"
    mode = subprocess.run(["git", "ls-files", "-s", "binder/start"], cwd=ROOT, capture_output=True, text=True)
    if mode.stdout:
        assert mode.stdout.startswith("100755"), mode.stdout
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_CONFIG_PATH"}
    for before, want in ((None, str(ROOT / "jupyter-config")),
                         ("/srv/conf", f"{ROOT / 'jupyter-config'}:/srv/conf")):
        out = subprocess.run([str(start), "sh", "-c", 'echo "$JUPYTER_CONFIG_PATH"'], cwd=tmp_path,
                             env=env | ({"JUPYTER_CONFIG_PATH": before} if before else {}),
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0 and out.stdout.strip() == want, out
    page_config = json.loads((ROOT / "jupyter-config" / "labconfig" / "page_config.json").read_text())
    assert page_config == {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
    assert 'JUPYTER_CONFIG_PATH="$ROOT/jupyter-config' in (ROOT / "run.sh").read_text()
