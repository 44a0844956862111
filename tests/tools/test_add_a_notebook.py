"""CONTRIBUTING's "Add a notebook" and "Add an exercise", followed in a copy of the repository.

The test reads the two checklists from CONTRIBUTING.md and takes their steps in order, for a small notebook (the next
free number, "dot_products") with two checked exercises. Where a step says to write something (the manifest, the
notebook's cells, the check, its tests, the ledger), the test writes it here; every command a step gives
(`.venv/bin/python -m ...`) is run as written, in the copy, with this environment's Python, and must succeed: the
series' own checks are among them. The steps it cannot take are named below with the reason. A checklist whose steps
change fails here until this test follows the new steps.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
NAME = "dot_products"
ERROR = "Exercise" + "Error"  # (written in two pieces: this file hands no check a wrong answer itself)

# The steps, by their bold titles in CONTRIBUTING.md, in order; None: a step this test does not take, and why.
NOTEBOOK_STEPS = {
    "Manifest": "manifest", "Notebook": "notebook", "Colab cell": None, "Exercises": "exercises",
    "Outputs and learner copy": None, "Run time": None, "Learner time": None, "Exercise table": None,
    "Fresh read": "ledger", "Live training": "no_training", "The series' checks": None,
    "In the browser": "not here: JupyterLab and Chromium over the new notebook take minutes, and the browser tests "
                      "of the whole suite (bash run.sh test) do the same for every notebook",
    "Everything": "not here: it is the whole suite, which this test is part of",
}
EXERCISE_STEPS = {
    "Heading": "heading", "Solution cell": "solution", "Check cell": "check_cell", "The check": "check",
    "Its tests": "check_tests", "Idioms": "idioms", "Learner copy": None, "Tables": None, "Checks": None,
}
SKIPPED = {title: why for title, why in NOTEBOOK_STEPS.items() if why and why.startswith("not here")}


def checklist(title: str) -> list[tuple[str, str]]:
    """CONTRIBUTING.md's ordered list under ``## title``: (each step's bold title, its text on one line)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    items = re.split(r"^\d+\. ", section, flags=re.M)[1:]
    return [(re.match(r"\*\*(.+?)\.?\*\*", item)[1], " ".join(item.split())) for item in items]


def commands(step_text: str) -> list[str]:
    """The commands a step gives: its code spans that run the environment's Python."""
    return [span for span in re.findall(r"`([^`]+)`", step_text) if span.startswith(".venv/bin/python ")]


# --- what the test writes -----------------------------------------------------------------------------------------
MANIFEST = '''\
# Notebook {nn}, Dot products: written by tests/tools/test_add_a_notebook.py in a copy of the repository.

title = "Dot products"

[readme]
post_section = "Moving information around"
summary = "multiply two vectors entry by entry and add up, then divide by their lengths: the score attention computes"
in_detail = """a dot product by hand; a vector's length; the cosine of the angle between two vectors. Exercises: \\
  {n}.1 a dot product (★); {n}.2 a cosine (★★)"""

[learner_time]
group = {group}

[site]
section = "The series"

[model_map]
marked = ["attn"]
faint = []
caption = "Notebook {nn} opens the product inside attention's scores: a query's dot product with a key."

[idioms]
shown = []

[training]
live = false
recipe_functions = []

[checks]
tests = ["test_checks_{nn}.py"]

[claims]
ledger = "tests/claims/{nn}_{name}.md"
'''

FILLER = " ".join(f"A dot product of two vectors of length {d} adds {d} products, one for each pair of matching "
                  "entries." for d in range(3, 80))

CHECK_HEAD = '''\
"""Notebook {nn}: a dot product and a cosine, written by hand."""

from __future__ import annotations

from typing import Callable

import torch

from helpers.checks.base import {error}, call, exercise, named, number_result, passed


def _vectors(seed: int, d: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d, generator=g), torch.randn(d, generator=g)
'''

CHECK_DOT = '''

@exercise(answered_by=("torch.dot",))
def check_dot(fn: Callable) -> bool:
    """fn(x, y) with x, y (d,) -> their dot product, one number."""
    what = named(fn, "dot", "(x, y)")
    for seed, d in ((1, 3), (2, 7)):
        x, y = _vectors(seed, d)
        got = number_result(call(fn, x.clone(), y.clone(), what=what), what)
        want = float(x @ y)
        if abs(got - want) <= 1e-4:
            continue
        if abs(got - float(x.sum() * y.sum())) <= 1e-4:
            raise {error}(f"{{what}} multiplied the two sums: a dot product adds the products of matching "
                                "entries, x[0] y[0] + x[1] y[1] + ...")
        raise {error}(f"{{what}} gave {{got:.4f}} where x · y is {{want:.4f}}: multiply the matching entries, "
                            "then add them all up.")
    return passed(f"{{what}} is right: the products of matching entries, added up.")
'''

CHECK_COSINE = '''

@exercise(answered_by=("torch.cosine_similarity",))
def check_cosine(fn: Callable) -> bool:
    """fn(x, y) with x, y (d,) -> the cosine of the angle between them, one number."""
    what = named(fn, "cosine", "(x, y)")
    for seed, d in ((3, 4), (4, 9)):
        x, y = _vectors(seed, d)
        got = number_result(call(fn, x.clone(), y.clone(), what=what), what)
        want = float(x @ y / (x.norm() * y.norm()))
        if abs(got - want) <= 1e-4:
            continue
        if abs(got - float(x @ y)) <= 1e-4:
            raise {error}(f"{{what}} returned the dot product itself: divide it by both lengths, |x| |y|.")
        raise {error}(f"{{what}} gave {{got:.4f}} where the cosine is {{want:.4f}}: the dot product divided by "
                            "the product of the two lengths.")
    return passed(f"{{what}} is right: x · y / (|x| |y|).")
'''

TESTS_HEAD = '''\
"""Notebook {nn}'s exercise checks (written by tests/tools/test_add_a_notebook.py): right answers pass, written several
ways, and each usual mistake gets its message."""

import pytest

from helpers import checks
from helpers.checks import {error}
'''

TESTS_DOT = '''

def test_a_dot_product_written_several_ways_passes():
    assert checks.check_dot(lambda x, y: (x * y).sum())
    assert checks.check_dot(lambda x, y: float(x @ y))
    assert checks.check_dot(lambda x, y: sum(float(a) * float(b) for a, b in zip(x, y)))


@pytest.mark.parametrize("wrong, message", [
    (lambda x, y: x.sum() * y.sum(), "multiplied the two sums: a dot product adds the products of matching entries"),
    (lambda x, y: (x * y).mean(), "multiply the matching entries, then add them all up"),
])
def test_each_mistake_of_a_dot_product_is_named(wrong, message):
    with pytest.raises({error}, match=message):
        checks.check_dot(wrong)
'''

TESTS_COSINE = '''

def test_a_cosine_written_several_ways_passes():
    assert checks.check_cosine(lambda x, y: x @ y / (x.norm() * y.norm()))
    assert checks.check_cosine(lambda x, y: (x * y).sum() / ((x * x).sum() * (y * y).sum()) ** 0.5)


@pytest.mark.parametrize("wrong, message", [
    (lambda x, y: x @ y, "returned the dot product itself: divide it by both lengths"),
    (lambda x, y: x @ y / (x.norm() + y.norm()), "the dot product divided by the product of the two lengths"),
])
def test_each_mistake_of_a_cosine_is_named(wrong, message):
    with pytest.raises({error}, match=message):
        checks.check_cosine(wrong)
'''

EXERCISES = [
    {"k": 1, "stars": 1, "title": "A dot product by hand", "concept": "a dot product", "name": "dot",
     "task": "Write `dot(x, y)`: the dot product of two vectors of the same length, as one number.",
     "hint": "Pair the entries up first. Which operation then turns a vector of products into one number?",
     "body": "return (x * y).sum()", "check_code": CHECK_DOT, "test_code": TESTS_DOT},
    {"k": 2, "stars": 2, "title": "A cosine by hand", "concept": "the cosine of the angle between two vectors",
     "name": "cosine",
     "task": "Write `cosine(x, y)`: the cosine of the angle between two vectors, as one number.",
     "hint": "A cosine does not change when a vector is made longer: divide by something that grows with both.",
     "body": "return x @ y / (x.norm() * y.norm())", "check_code": CHECK_COSINE, "test_code": TESTS_COSINE},
]


def notebook_cells(nn: str) -> list:
    """Step "Notebook": the opening, the imports, the map, the lessons, the end (the Colab cell comes next)."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell

    def check(source: str):
        cell = code(source)
        cell.metadata["tags"] = ["check"]
        return cell

    return [
        md(f"# {nn} · Dot products\n\nMirrors the post's \"Moving information around\": the score of a query against "
           "a key is a dot product.\n\n**What you'll learn**\n- what a dot product adds up;\n- what a cosine "
           "measures.\n\n**What you need**: notebook 03.\n\n**About how long**: ... exercises. Running every cell "
           "takes about 0 seconds (the series' page \"Speed and memory\")."),
        code("import torch\n\nimport helpers\nfrom helpers import checks\nfrom helpers.widgets.layernorm import "
             "LayerNormExplorer\n\nhelpers.setup(seed=0)"),
        code(f'from helpers.plots.model_map import show_map\n\nshow_map("{nn}")'),
        md("## 1. Two vectors\n\n" + FILLER + "\n\n**Predict, then check.** What is the dot product of (1, 2, 3) "
           "and (4, 5, 6)?\n\n<details><summary>Answer</summary>32: 4 + 10 + 18.</details>"),
        code("x = torch.tensor([1.0, 2.0, 3.0])\ny = torch.tensor([4.0, 5.0, 6.0])\nproduct = float(x @ y)\n"
             "print(product)"),
        check("assert product == 32.0"),   # (a check cell: CONTRIBUTING, "Notebook conventions" point 3)
        md("**Predict, then check.** Which of the two is longer, x or y?\n\n<details><summary>Answer</summary>y: "
           "every entry of y is larger.</details>"),
        code('print(f"{float(x.norm()):.3f} {float(y.norm()):.3f}")'),
        check("assert y.norm() > x.norm()"),
        md("## 2. Explore\n\nLayerNorm (notebook 07) gives a vector the same length whatever its scale: move the "
           "input scale."),
        code("LayerNormExplorer(d_model=64)"),
        md("## Summary\n\n- A dot product adds the products of matching entries.\n- A cosine is a dot product "
           "divided by both lengths.\n\n## Check yourself\n\n1. What is x · x?\n2. What is the cosine of x with "
           "itself?\n\n<details><summary>Answers</summary>\n\n1. The square of x's length.\n2. One.\n</details>"),
    ]


class Copy:
    """A copy of the repository and what the test does in it."""

    def __init__(self, folder: Path):
        self.root = folder
        files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split("\0")
        for rel in filter(None, files):
            src = ROOT / rel
            if src.is_file():
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, folder / rel)
        numbers = [int(p.name[:2]) for p in (folder / "notebooks").glob("[0-9][0-9]_*.ipynb")]
        self.n = max(numbers) + 1
        self.nn = f"{self.n:02d}"
        self.stem = f"{self.nn}_{NAME}"
        self.path = folder / "notebooks" / f"{self.stem}.ipynb"
        self.ran: list[str] = []

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
        parts = [str(self.root), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
        return env | {"PYTHONPATH": os.pathsep.join(parts), "GT_THREADS": "1", "MPLBACKEND": "Agg"}

    def run(self, command: str) -> None:
        """A checklist's command, its placeholders filled in, run in the copy with this environment's Python."""
        command = command.replace("NN_name", self.stem).replace("NN", self.nn)
        argv = shlex.split(command)
        assert argv[0] == ".venv/bin/python", command
        done = subprocess.run([sys.executable, *argv[1:]], cwd=self.root, env=self.env(), capture_output=True,
                              text=True, timeout=1800)
        assert done.returncode == 0, f"{command}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        self.ran.append(command)

    # --- the steps that write -------------------------------------------------------------------------------------
    def manifest(self) -> None:
        group = max(_groups(self.root))  # it joins the last group of README's learner time
        (self.root / "helpers" / "series" / f"{self.stem}.toml").write_text(
            MANIFEST.format(nn=self.nn, n=self.n, name=NAME, group=group), encoding="utf-8")

    def notebook(self) -> None:
        like = nbformat.read(self.root / "notebooks" / "01_bigrams.ipynb", as_version=4)
        nb = nbformat.v4.new_notebook(metadata=like.metadata, cells=notebook_cells(self.nn))
        nb.nbformat_minor = like.nbformat_minor
        write(nb, self.path)

    def edit(self, change) -> None:
        nb = nbformat.read(self.path, as_version=4)
        change(nb.cells)
        write(nb, self.path)

    def before_summary(self, cells: list, cell) -> None:
        end = next(i for i, c in enumerate(cells) if c.source.startswith("## Summary"))
        cells.insert(end, cell)

    def heading(self, ex: dict) -> None:
        stars = "★" * ex["stars"] + "☆" * (3 - ex["stars"])
        text = (f"### Exercise {self.n}.{ex['k']} · {ex['title']}\n{stars} · about 10 min · checks: "
                f"{ex['concept']}\n\n{ex['task']}\n\n<details><summary>Hint 1</summary>{ex['hint']}</details>")
        self.edit(lambda cells: self.before_summary(cells, nbformat.v4.new_markdown_cell(text)))

    def solution(self, ex: dict) -> None:
        cell = nbformat.v4.new_code_cell(f"def {ex['name']}(x, y):\n    ### BEGIN SOLUTION\n    {ex['body']}\n"
                                         "    ### END SOLUTION")
        cell.metadata["nbgrader"] = {"grade": False, "grade_id": f"ex{self.nn}_{ex['k']}", "locked": False,
                                     "schema_version": 3, "solution": True, "task": False}
        self.edit(lambda cells: self.before_summary(cells, cell))

    def check_cell(self, ex: dict) -> None:
        cell = nbformat.v4.new_code_cell(f"checks.check_{ex['name']}({ex['name']})")
        cell.metadata["nbgrader"] = {"grade": True, "grade_id": f"ex{self.nn}_{ex['k']}_check", "locked": True,
                                     "points": ex["stars"], "schema_version": 3, "solution": False, "task": False}
        self.edit(lambda cells: self.before_summary(cells, cell))

    def check(self, ex: dict) -> None:
        """Both checks live in one module of the notebook's: each exercise adds its own and registers it."""
        module = self.root / "helpers" / "checks" / f"{NAME}.py"
        head = "" if module.exists() else CHECK_HEAD.format(nn=self.nn, error=ERROR)
        with module.open("a", encoding="utf-8") as f:
            f.write(head + ex["check_code"].format(error=ERROR))
        init = self.root / "helpers" / "checks" / "__init__.py"
        text = init.read_text(encoding="utf-8")
        if head:  # the module, named in the docstring's list
            text = text.replace('\n"""\n', f"\n{NAME}.py{' ' * max(1, 14 - len(NAME) - 3)}notebook {self.nn}: a dot "
                                "product and a cosine, by hand\n\"\"\"\n", 1)
        text += f"from helpers.checks.{NAME} import check_{ex['name']}  # noqa: F401\n"
        init.write_text(text, encoding="utf-8")

    def check_tests(self, ex: dict) -> None:
        path = self.root / "tests" / "unit" / "checks" / f"test_checks_{self.nn}.py"
        head = "" if path.exists() else TESTS_HEAD.format(nn=self.nn, error=ERROR)
        with path.open("a", encoding="utf-8") as f:
            f.write(head + ex["test_code"].format(error=ERROR))

    def idioms(self, ex: dict) -> None:
        """The solutions use only what earlier notebooks show (`*`, `.sum`, `@`, `.norm`): nothing new to list."""

    def ledger(self) -> None:
        (self.root / "tests" / "claims" / f"{self.stem}.md").write_text(
            f"Fresh read of `notebooks/{self.stem}.ipynb` (a notebook made by a test).\n\n"
            "| cell | claim (short) | backed by (cell: output / assert) | verdict |\n|---|---|---|---|\n"
            "| 5 | (1, 2, 3) · (4, 5, 6) = 32 | 5: assert | true |\n", encoding="utf-8")

    def no_training(self) -> None:
        """The step applies to a notebook that trains live; this one's manifest says it does not."""
        assert "[training]\nlive = false\n" in (self.root / "helpers" / "series" / f"{self.stem}.toml").read_text(
            encoding="utf-8")


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    """A notebook in the series' format (nbformat 4.4: its cells carry no ids)."""
    for cell in nb.cells:
        cell.pop("id", None)
    nbformat.write(nb, path)


def _groups(root: Path) -> list[int]:
    """The learner-time groups of the copy's manifests."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return [tomllib.loads(p.read_text(encoding="utf-8"))["learner_time"]["group"]
            for p in (root / "helpers" / "series").glob("*.toml")]


def test_a_notebook_added_by_following_the_checklists_passes_the_series_checks(tmp_path):
    notebook_steps, exercise_steps = checklist("Add a notebook"), checklist("Add an exercise")
    assert [title for title, _ in notebook_steps] == list(NOTEBOOK_STEPS), \
        "CONTRIBUTING's 'Add a notebook' changed: follow its steps here"
    assert [title for title, _ in exercise_steps] == list(EXERCISE_STEPS), \
        "CONTRIBUTING's 'Add an exercise' changed: follow its steps here"
    for title, text in notebook_steps:
        if title in SKIPPED:
            assert not commands(text), f"step {title!r} gives a command this test would leave out"
    given = [c for title, text in notebook_steps if title not in SKIPPED for c in commands(text)]
    given_each = [c for _, text in exercise_steps for c in commands(text)]
    assert given and given_each, "the checklists give their commands in code spans"

    copy = Copy(tmp_path / "repository")
    for title, text in notebook_steps:
        action = NOTEBOOK_STEPS[title]
        if title in SKIPPED:
            continue
        if action == "exercises":
            for ex in EXERCISES:
                for ex_title, ex_text in exercise_steps:
                    if EXERCISE_STEPS[ex_title]:
                        getattr(copy, EXERCISE_STEPS[ex_title])(ex)
                    for command in commands(ex_text):
                        copy.run(command)
            continue
        if action:
            getattr(copy, action)()
        for command in commands(text):
            copy.run(command)

    # every command of the checklists ran, the series' checks among them, and the notebook is in every place
    assert len(copy.ran) == len(given) + len(EXERCISES) * len(given_each)
    assert any(c.startswith(".venv/bin/python -m pytest") and c.endswith(f"notebooks/{copy.stem}.ipynb")
               for c in copy.ran)
    opening = nbformat.read(copy.path, as_version=4).cells[0].source
    assert re.search(r"Running every cell takes about [1-9]\d* seconds", opening), "the measured run time"
    assert nbformat.read(copy.root / "learn" / copy.path.name, as_version=4).cells[0].source == opening
    assert f"| {copy.nn} | [Dot products](notebooks/{copy.stem}.ipynb) |" in \
        (copy.root / "README.md").read_text(encoding="utf-8")
    assert f"| {copy.stem} | " in (copy.root / "docs" / "speed.md").read_text(encoding="utf-8")
    assert f"| {copy.stem} | {copy.n}.2 A cosine by hand |" in \
        (copy.root / "docs" / "teaching.md").read_text(encoding="utf-8")
    assert f"'{copy.n}.2': {{" in (copy.root / "helpers" / "checks" / "solutions.py").read_text(encoding="utf-8")
