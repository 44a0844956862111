"""Binder and Colab: everything that names the repository's public address, made from the one place it is
written (pyproject.toml: ``[project.urls] Repository`` and ``[tool.gentle-transformers] ref``).

    python -m tools.notebooks cloud [--repo owner/name[@ref]] [--check]

writes (``--repo`` first rewrites pyproject.toml's two lines, e.g. for a fork):
- the Colab cell, the first code cell of every notebook: in Colab only, it pip-installs the helpers package
  from the repository with its ``colab`` extra (what Colab lacks, pinned as in requirements.txt), then goes on;
  anywhere else it does nothing;
- README.md's badges (top) and the links of every notebook on docs/cloud.md ("Binder and Colab");
- binder/requirements.txt: requirements.txt's pins for Binder's Python (binder/runtime.txt) without the test
  tools, with PyTorch's CPU-only build of the same version.

``--check`` writes nothing and exits 1 if any of them is out of date (tests/tools/test_cloud.py checks the same).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
from packaging.requirements import Requirement

from tools.clean import COLAB_HEAD, cleaned, is_colab_cell

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: pytest brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
README = ROOT / "README.md"
CLOUD_PAGE = ROOT / "docs" / "cloud.md"
BINDER = ROOT / "binder"
REQUIREMENTS = ROOT / "requirements.txt"
PACKAGE = "gentle-transformers-helpers"  # pyproject's [project] name
EXTRA = "colab"
# PyTorch's index of CPU-only builds (a local version "+cpu"): Binder has no GPU, and PyPI's Linux build
# brings GBs of CUDA libraries
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
TESTS_HEADING = "# tests"  # requirements.txt: the pins below this line are the test tools, not needed to learn
# Colab's own packages the notebooks use (its runtime ships them; as of 2026). The colab extra must name none of
# them: replacing a package Colab has already imported needs a runtime restart. The notebooks' other needs are
# the extra's (tests/tools/test_cloud.py checks the two together cover requirements.txt's run-time pins).
COLAB_SHIPS = ("torch", "numpy", "matplotlib", "ipywidgets", "ipykernel", "tqdm", "safetensors", "pyarrow",
               "huggingface-hub", "tokenizers")
# What only the hub of `bash run.sh hub` runs: Binder brings its own JupyterHub, whose version it chooses
HUB_SIDE = ("jupyterhub", "jupyterhub-idle-culler")
# requirements.txt's packages for running Jupyter, serving a class and grading, which Colab replaces with its own
NOT_IN_COLAB = ("jupyterlab", "notebook", "nbgrader", *HUB_SIDE, "nbgitpuller")
BADGES = ("<!-- badges: start (python -m tools.notebooks cloud) -->", "<!-- badges: end -->")
LINKS = ("<!-- cloud: start (python -m tools.notebooks cloud) -->", "<!-- cloud: end -->")


def _pyproject(text: str | None = None) -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8") if text is None else text)


def repository(text: str | None = None) -> tuple[str, str]:
    """("owner/name", "ref") from pyproject.toml (or its ``text``)."""
    data = _pyproject(text)
    url = data["project"]["urls"]["Repository"]
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+)", url)
    if not m:
        raise ValueError(f"pyproject.toml's Repository is {url!r}; expected https://github.com/owner/name")
    return m[1], data["tool"]["gentle-transformers"]["ref"]


def with_repository(text: str, repo: str, ref: str) -> str:
    """pyproject.toml's ``text`` with its Repository and ref lines set to ``repo`` ("owner/name") and ``ref``."""
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repo) or not re.fullmatch(r"[\w./-]+", ref):
        raise ValueError(f"expected owner/name[@ref], got {repo}@{ref}")
    text, n = re.subn(r'^Repository = "[^"]*"$', f'Repository = "https://github.com/{repo}"', text, flags=re.M)
    text, k = re.subn(r'^(\[tool\.gentle-transformers\]\nref = )"[^"]*"$', rf'\g<1>"{ref}"', text, flags=re.M)
    if (n, k) != (1, 1):
        raise ValueError("pyproject.toml has no Repository line or no [tool.gentle-transformers] ref line")
    return text


def colab_extra(text: str | None = None) -> list[str]:
    """The ``colab`` extra's requirements (pyproject.toml)."""
    return _pyproject(text)["project"]["optional-dependencies"][EXTRA]


def pip_target(repo: str, ref: str) -> str:
    """What the Colab cell gives pip: the helpers package with its colab extra, from the repository at ``ref``."""
    return f"{PACKAGE}[{EXTRA}] @ git+https://github.com/{repo}.git@{ref}"


def colab_cell(repo: str, ref: str) -> str:
    """The first code cell of every notebook (plain Python, so a test can run it)."""
    return f"""{COLAB_HEAD}: this series' helpers package with its trained models,
# and the corpus and word-vector packages (the series' page "Binder and Colab"). Anywhere else it does nothing.
import sys

if "google.colab" in sys.modules:
    import importlib
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "{pip_target(repo, ref)}"], check=True)
    importlib.invalidate_caches()  # so the next cell finds what pip just installed
    from google.colab import output

    output.enable_custom_widget_manager()  # the series' sliders and buttons are ipywidgets 8"""


def with_colab_cell(nb: nbformat.NotebookNode, source: str) -> nbformat.NotebookNode:
    """The notebook with ``source`` as its Colab cell, right after the opening markdown cell."""
    if len(nb.cells) > 1 and is_colab_cell(nb.cells[1]):
        nb.cells[1].source = source
    else:
        nb.cells.insert(1, nbformat.v4.new_code_cell(source))
    return nb


def binder_url(repo: str, ref: str, notebook: str | None = None) -> str:
    url = f"https://mybinder.org/v2/gh/{repo}/{ref}"
    return url + f"?urlpath=lab/tree/learn/{notebook or ''}"  # the learner copies: the exercises blank


def colab_url(repo: str, ref: str, notebook: str) -> str:
    return f"https://colab.research.google.com/github/{repo}/blob/{ref}/learn/{notebook}"


BINDER_BADGE = "https://mybinder.org/badge_logo.svg"
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"


def badges(repo: str, ref: str, first: str) -> str:
    return (f"[![Binder]({BINDER_BADGE})]({binder_url(repo, ref, first)}) "
            f"[![Open In Colab]({COLAB_BADGE})]({colab_url(repo, ref, first)})")


def links(repo: str, ref: str, names: list[str]) -> str:
    """docs/cloud.md's table: each notebook on Binder and in Colab."""
    rows = [f"[![Binder]({BINDER_BADGE})]({binder_url(repo, ref)}) the whole series in JupyterLab on Binder "
            f"(`{repo}`, branch `{ref}`)", "", "| notebook | Binder | Colab |", "|---|---|---|"]
    rows += [f"| {n} | [open]({binder_url(repo, ref, n)}) | "
             f"[![Open In Colab]({COLAB_BADGE})]({colab_url(repo, ref, n)}) |" for n in names]
    return "\n".join(rows)


def between(text: str, marks: tuple[str, str], content: str) -> str:
    """``text`` with what lies between the two marker lines replaced by ``content``."""
    head, rest = text.split(marks[0])
    _, tail = rest.split(marks[1])
    return f"{head}{marks[0]}\n{content}\n{marks[1]}{tail}"


def requirement_lines(text: str) -> list[tuple[Requirement, bool]]:
    """requirements.txt's requirements, each with whether it is a test tool (below the "# tests" line)."""
    out, tests = [], False
    for line in text.splitlines():
        tests = tests or line.strip() == TESTS_HEADING
        line = line.split("#")[0].strip()
        if line:
            out.append((Requirement(line), tests))
    return out


def pins_for(python: str, text: str | None = None, tests: bool = True) -> dict[str, str]:
    """{name: version} requirements.txt pins on Python ``python`` ("3.11"); without the test tools if not ``tests``."""
    text = REQUIREMENTS.read_text(encoding="utf-8") if text is None else text
    env = {"python_version": python, "python_full_version": python + ".0"}
    return {r.name.lower(): str(r.specifier).removeprefix("==") for r, is_test in requirement_lines(text)
            if (r.marker is None or r.marker.evaluate(env)) and (tests or not is_test)}


def binder_python() -> str:
    m = re.fullmatch(r"python-(3\.\d+)", (BINDER / "runtime.txt").read_text(encoding="utf-8").strip())
    if not m:
        raise ValueError("binder/runtime.txt must say python-3.X")
    return m[1]


def binder_requirements() -> str:
    """binder/requirements.txt, made from requirements.txt."""
    python = binder_python()
    lines = [f"# Binder (repo2docker) installs these into Python {python} (runtime.txt), then runs postBuild.",
             f"# Written by `python -m tools.notebooks cloud` from ../requirements.txt: its pins for Python {python},",
             "# without the test tools and the hub's own packages (Binder runs its own JupyterHub), and PyTorch's",
             "# CPU-only build of the same torch (Binder has no GPU).",
             f"--extra-index-url {TORCH_CPU_INDEX}"]
    for name, version in pins_for(python, tests=False).items():
        if name in HUB_SIDE:
            continue
        lines.append(f"{name}=={version}+cpu" if name == "torch" else f"{name}=={version}")
    return "\n".join(lines) + "\n"


def notebook_paths() -> list[Path]:
    return sorted((ROOT / "notebooks").glob("*.ipynb"))


def wanted() -> dict[Path, str]:
    """Every file this command writes -> the text it should hold."""
    repo, ref = repository()
    out = {}
    cell = colab_cell(repo, ref)
    for path in notebook_paths():
        nb = with_colab_cell(nbformat.read(path, as_version=4), cell)
        out[path] = nbformat.writes(cleaned(nb)) + "\n"
    names = [p.name for p in notebook_paths()]
    out[README] = between(README.read_text(encoding="utf-8"), BADGES, badges(repo, ref, names[0]))
    out[CLOUD_PAGE] = between(CLOUD_PAGE.read_text(encoding="utf-8"), LINKS, links(repo, ref, names))
    out[BINDER / "requirements.txt"] = binder_requirements()
    return out


def main(argv: list[str]) -> int:
    check = "--check" in argv
    argv = [a for a in argv if a != "--check"]
    if argv[:1] == ["--repo"] and len(argv) == 2 and not check:
        repo, _, ref = argv[1].partition("@")
        try:
            text = with_repository(PYPROJECT.read_text(encoding="utf-8"), repo, ref or repository()[1])
        except ValueError as e:
            print(f"cloud: {e}", file=sys.stderr)
            return 2
        PYPROJECT.write_text(text, encoding="utf-8")
    elif argv:
        print(__doc__)
        return 2
    stale = []
    for path, text in wanted().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(path)
        if not check:
            path.write_text(text, encoding="utf-8")
    for path in stale:
        print(f"{'out of date' if check else 'wrote'}: {path.relative_to(ROOT)}")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
