"""Keep the committed notebooks clean and their checked outputs current.

    python -m tools.notebooks clean   [NOTEBOOK ...]   strip outputs and execution noise; write learn/'s copies
    python -m tools.notebooks refresh [NOTEBOOK ...]   run on a fresh kernel, then clean
    python -m tools.notebooks check   [NOTEBOOK ...]   exit 1 if any notebook or learner copy is not current
    python -m tools.notebooks learner OUTDIR [NOTEBOOK ...]  copies without the exercise solutions
    python -m tools.notebooks course  DIR                  an nbgrader course folder holding the series
    python -m tools.notebooks exercises [--write]           every exercise (--write: into docs/teaching.md)
    python -m tools.notebooks cloud [--repo owner/name[@ref]] [--check]  the Colab cells, Binder and Colab links
                                                            (tools/cloud.py)

"Clean" means: no execution counts, no widget state, no outputs, except in cells tagged
``nbval-check-output``; those keep exactly the text a fresh seeded run printed, which
nbval (``--nbval-lax``) compares on every test run, and a fixed execution count (the cell's
position among the code cells, not counting the Colab cell at the top), without which nbval would not compare
them. nbval's comment markers (``# NBVAL_CHECK_OUTPUT`` and the others) become cell tags, out of the learner's
sight (tools/clean.py). Default: every notebook in notebooks/.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from tools import cloud
from tools.clean import CHECK_TAG, KERNELSPEC, MARK, cleaned, is_checked, is_clean, write  # noqa: F401 (the tools' names)

ROOT = Path(__file__).resolve().parent.parent
# nbgrader's markers: `nbgrader generate_assignment` (and `learner` below, through nbgrader's own
# ClearSolutions) replaces what lies between them by "# YOUR CODE HERE / raise NotImplementedError()"
SOLUTION_START, SOLUTION_END = "### BEGIN SOLUTION", "### END SOLUTION"


NOTEBOOKS = ROOT / "notebooks"  # the series as written, with the solutions (nbval, nbgrader's source, instructors)
LEARN = ROOT / "learn"  # the learner copies made from them: what Binder, Colab and a learner's workspace open


def notebooks(args: list[str]) -> list[Path]:
    return [Path(a).resolve() for a in args] if args else sorted(NOTEBOOKS.glob("*.ipynb"))


def is_series(path: Path) -> bool:
    return path.resolve().parent == NOTEBOOKS


def learner_copy(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The learner's copy: nbgrader's own ClearSolutions replaces each solution between the markers by
    "# YOUR CODE HERE" and ``raise NotImplementedError()``, so the check after it says "not written
    yet" — the same text ``nbgrader generate_assignment`` writes. Outputs are dropped."""
    from nbgrader.preprocessors import ClearSolutions

    nb = cleaned(nb)
    nb, _ = ClearSolutions().preprocess(nb, {})
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def learner_text(nb: nbformat.NotebookNode) -> str:
    """The committed text of the learner copy of a series notebook."""
    copy = learner_copy(nb)
    nbformat.validate(copy)
    return nbformat.writes(copy) + "\n"


def write_learner_copy(nb: nbformat.NotebookNode, path: Path) -> Path:
    """learn/NAME from the series notebook `nb` read from notebooks/NAME."""
    LEARN.mkdir(exist_ok=True)
    out = LEARN / path.name
    out.write_text(learner_text(nb), encoding="utf-8")
    return out


SOLUTIONS = ROOT / "helpers" / "checks" / "solutions.py"  # what checks.answer("1.1") shows (helpers/checks/answers.py)


def solutions_text(paths: list[Path]) -> str:
    """helpers/checks/solutions.py: every exercise's solution cell (its markers taken out) and its checks."""
    lines = ['"""The series\' solution of every exercise, for helpers/checks/answers.py. Written by',
             "`python -m tools.notebooks clean` from the solution cells of notebooks/",
             '(tests/notebooks/test_notebooks_clean.py checks it is current): do not edit."""',
             "# ruff: noqa: E501", "", "SOLUTIONS = {"]
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        for ex in exercises(path):
            _, solution, check = ex["cells"]
            code = "\n".join(line for line in nb.cells[solution].source.splitlines()
                             if line.strip() not in (SOLUTION_START, SOLUTION_END))
            checks = re.findall(r"\b(check_\w+)\(", nb.cells[check].source)
            lines += [f"    {ex['number']!r}: {{", f"        'notebook': {path.name!r},",
                      f"        'title': {ex['title']!r},", f"        'checks': {checks!r},",
                      f"        'code': {code!r},", "    },"]
    return "\n".join([*lines, "}", ""])


def solution_body(source: str) -> str:
    """What lies between a solution cell's markers (what the learner copy clears), as the cell has it."""
    return source.split(SOLUTION_START, 1)[1].split(SOLUTION_END, 1)[0]


def solution_lines(path: Path) -> set[str]:
    """The lines of a series notebook's solutions that appear nowhere else in it: what a learner copy must not show
    (a `with torch.no_grad():` the notebook also has elsewhere gives nothing away)."""
    nb = nbformat.read(path, as_version=4)
    bodies = [solution_body(nb.cells[ex["cells"][1]].source) for ex in exercises(path)]
    rest = "\n".join(cell.source for cell in nb.cells)
    for body in bodies:
        rest = rest.replace(body, "")
    return {line.strip() for body in bodies for line in body.splitlines()
            if len(line.strip()) > 12 and line.strip() not in rest}


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


EXERCISE = re.compile(r"^### Exercise (\d+)\.(\d+) · (.+)$", re.M)
LEVEL = re.compile(r"^(★+☆*) · about (\d+) min · checks: (.+)$", re.M)
LEVELS = {1: "warm-up", 2: "core", 3: "stretch"}


def exercises(path: Path) -> list[dict]:
    """Every exercise of a notebook, from its heading (CONTRIBUTING, "Exercises"): number, title,
    difficulty (1-3 stars), minutes, the concept it checks, hints, and the positions of its three cells
    (heading, solution, check)."""
    nb = nbformat.read(path, as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        m = EXERCISE.search(cell.source) if cell.cell_type == "markdown" else None
        if not m:
            continue
        level = LEVEL.search(cell.source)
        found.append({
            "notebook": path.name, "number": f"{m[1]}.{m[2]}", "title": m[3].strip(),
            "stars": level[1].count("★") if level else None, "minutes": int(level[2]) if level else None,
            "concept": level[3].strip() if level else None,
            "hints": len(re.findall(r"<summary>Hint", cell.source)),
            "cells": (i, i + 1, i + 2),
        })
    return found


def exercise_table(paths: list[Path]) -> str:
    rows = ["| notebook | exercise | difficulty | time | what it checks |", "|---|---|---|---|---|"]
    for path in paths:
        for e in exercises(path):
            stars = "★" * e["stars"] + "☆" * (3 - e["stars"])
            rows.append(f"| {path.stem} | {e['number']} {e['title']} | {stars} {LEVELS[e['stars']]} | "
                        f"{e['minutes']} min | {e['concept']} |")
    return "\n".join(rows)


TABLE_START = "<!-- exercises: start (python -m tools.notebooks exercises --write) -->"
TABLE_END = "<!-- exercises: end -->"


EXERCISES_PAGE = ROOT / "docs" / "teaching.md"  # "Every exercise", the instructors' table


def with_exercise_table(page: str, table: str) -> str:
    """``page`` (docs/teaching.md's text) with the table between its exercises markers replaced by ``table``."""
    head, rest = page.split(TABLE_START)
    _, tail = rest.split(TABLE_END)
    return f"{head}{TABLE_START}\n{table}\n{TABLE_END}{tail}"


NBGRADER_CONFIG = """\
# nbgrader's configuration for a course that teaches with Gentle Transformers
# (written by `python -m tools.notebooks course`). Run nbgrader in this folder.
c = get_config()
c.CourseDirectory.course_id = "gentle-transformers"
c.CourseDirectory.root = {root!r}
c.Execute.timeout = 600            # seconds per cell when autograding (notebook 08 evaluates 24 models)
c.ClearSolutions.enforce_metadata = True
"""


def make_course(root: Path, paths: list[Path]) -> list[str]:
    """An nbgrader course folder: ``source/NN_name/NN_name.ipynb`` (one assignment per notebook, with the
    solutions) and ``nbgrader_config.py``. Returns the assignment names."""
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(NBGRADER_CONFIG.format(root=str(root)), encoding="utf-8")
    names = []
    for path in paths:
        folder = root / "source" / path.stem
        folder.mkdir(parents=True, exist_ok=True)
        write(cleaned(nbformat.read(path, as_version=4)), folder / path.name)
        names.append(path.stem)
    return names


def with_venv_path(env: dict) -> dict:
    """The environment with this Python's scripts first on PATH: nbgrader runs `alembic` from PATH, which
    misses the virtual environment's when it was not activated."""
    return env | {"PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}


# nbgrader's own Python API (NbGraderAPI, what its formgrader calls: the same apps as its command line) runs a course's
# steps in one process; the command line would start nbgrader afresh for each step, about 5 s each.
_STEPS = r"""
import json, sys
from traitlets.config.loader import PyFileConfigLoader
from nbgrader.apps import NbGraderAPI

api = NbGraderAPI(config=PyFileConfigLoader("nbgrader_config.py", path=".").load_config())
failed = []
for step in json.loads(sys.argv[1]):
    result = getattr(api, step[0])(*step[1:])
    if not result["success"]:
        failed.append(f"nbgrader {step}: {result.get('error', '')}\n{result.get('log', '')[-3000:]}")
print(json.dumps(failed))
"""


def nbgrader_steps(course: Path, steps: list[list[str]], env: dict | None = None) -> list[str]:
    """Run ``steps`` ([a method of nbgrader's NbGraderAPI, its arguments...], e.g. ["autograde", "01_bigrams",
    "ada"]) in a course folder, in one process of this Python's nbgrader. Returns what failed, each with its log
    (empty: every step succeeded)."""
    run = subprocess.run([sys.executable, "-c", _STEPS, json.dumps(steps)], cwd=course, capture_output=True,
                         text=True, env=with_venv_path(env or dict(os.environ)))
    if run.returncode:
        return [f"nbgrader could not run its steps:\n{run.stdout[-3000:]}{run.stderr[-3000:]}"]
    return json.loads(run.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("clean", "refresh", "check", "learner", "course", "exercises", "cloud"):
        print(__doc__)
        return 2
    if argv[0] == "cloud":
        return cloud.main(argv[1:])
    if argv[0] == "learner":
        if len(argv) < 2:
            print(__doc__)
            return 2
        # the copies nbgrader itself releases, so this and `nbgrader generate_assignment` never differ
        outdir = Path(argv[1])
        outdir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as course:
            names = make_course(Path(course), notebooks(argv[2:]))
            failed = nbgrader_steps(Path(course), [["generate_assignment", name] for name in names])
            if failed:
                raise SystemExit("\n".join(failed))
            for name in names:
                release = Path(course) / "release" / name / f"{name}.ipynb"
                nb = nbformat.read(release, as_version=4)
                write(nb, outdir / release.name)
                print(f"wrote {outdir / release.name}")
        return 0
    if argv[0] == "course":
        if len(argv) != 2:
            print(__doc__)
            return 2
        names = make_course(Path(argv[1]), notebooks([]))
        print(f"wrote {Path(argv[1]) / 'nbgrader_config.py'} and source/ with {len(names)} assignments: "
              f"{', '.join(names)}")
        return 0
    if argv[0] == "exercises":
        table = exercise_table(notebooks([]))
        if argv[1:] == ["--write"]:
            page = EXERCISES_PAGE
            page.write_text(with_exercise_table(page.read_text(encoding="utf-8"), table), encoding="utf-8")
            print(f"wrote the table of exercises into {page.relative_to(ROOT)}")
        else:
            print(table)
        return 0
    cmd, paths = argv[0], notebooks(argv[1:])
    bad = []
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if cmd == "check":
            if not is_clean(path):
                bad.append(path)
            if is_series(path) and learner_text(nb) != _read(LEARN / path.name):
                bad.append(LEARN / path.name)
            continue
        if cmd == "refresh":
            from nbclient import NotebookClient

            start = time.perf_counter()
            NotebookClient(nb, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            print(f"{path.name}: ran in {time.perf_counter() - start:.1f} s")
        write(cleaned(nb), path)
        if is_series(path):
            write_learner_copy(nb, path)
    if cmd != "check":
        SOLUTIONS.write_text(solutions_text(notebooks([])), encoding="utf-8")
    elif solutions_text(notebooks([])) != _read(SOLUTIONS):
        bad.append(SOLUTIONS)
    for path in bad:
        if path == SOLUTIONS:
            print(f"{path} does not hold the solutions of notebooks/: run `python -m tools.notebooks clean`")
            continue
        source = NOTEBOOKS / path.name
        print(f"{path} is not clean or not made from {source.relative_to(ROOT)}: run "
              f"`python -m tools.notebooks clean {source.relative_to(ROOT)}`")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
