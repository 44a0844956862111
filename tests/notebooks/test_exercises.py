"""The exercises, as learners and instructors meet them (CONTRIBUTING, "Exercises"):

- nbgrader releases the learner copies from the committed notebooks and grades them with the notebooks'
  own checks: an unfilled copy scores 0 on every exercise, the solutions full marks, a wrong answer 0 with the
  check's message as its feedback. (No check reads a model trained live in the notebook — 9.3 grades shipped copies
  of 09's model, 10 reads a shipped one — so grading "on another machine" is left to tests/notebooks/test_determinism.py,
  which runs every solution notebook, its checks included, as another machine.)
- an unfilled learner copy runs to the end with no error: each check says "not written yet" on stderr
  (so "Run All" works for a learner, and nbgrader scores it 0);
- nothing above an exercise computes what it asks for: no notebook cell calls a helper that answers it
  (traced in the kernel, so a renamed import can't hide one — tests/support/exercise_trace.py), and no cell holds
  one of the solution's expressions (compared with every variable name blanked out); at least one
  exercise a notebook is answered nowhere in the copy.

One autograde of the whole series, run once for the module (about as long as running every notebook twice).
"""

from __future__ import annotations

import ast
import html
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from helpers import checks
from tools import notebooks as nbtool

pytestmark = pytest.mark.slow  # the learner copies, nbgrader's release and autograde, the other-machine grading

ROOT = Path(__file__).resolve().parents[2]

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
if os.environ.get("GT_EXERCISE_NOTEBOOKS"):  # e.g. "01,02": while working on some notebooks, grade only those
    NOTEBOOKS = [p for p in NOTEBOOKS if p.name[:2] in os.environ["GT_EXERCISE_NOTEBOOKS"].split(",")]
NAMES = [p.stem for p in NOTEBOOKS]
WRONG = "01_bigrams"  # the submission with a deliberately wrong answer (a fast notebook)
WRONG_ANSWERS = WRONG in NAMES
# The solutions graded by nbgrader for full marks: four fast notebooks whose exercises cover every kind of graded cell
# (a function, a function of notebook variables, a circuit built by hand). Every solution notebook also runs top to
# bottom under nbval, and test_notebooks_clean.py checks every graded cell's nbgrader metadata (points = stars): a
# full-marks run of the seven slower notebooks would repeat both at about 2.5 minutes of CI.
FULL_MARKS = [name for name in NAMES if name[:2] in ("01", "03", "07", "10")]


def solution_cells(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]


def check_name(cell) -> str:
    names = [n.attr for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Attribute)
             and isinstance(n.value, ast.Name) and n.value.id == "checks" and n.attr.startswith("check_")]
    assert len(names) == 1, f"a check cell calls one checks.check_*: {cell.source!r}"
    return names[0]


def tracer_profile(folder: Path) -> Path:
    """An IPYTHONDIR whose start-up file is tests/support/exercise_trace.py."""
    startup = folder / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "support" / "exercise_trace.py", startup / "00-trace.py")
    return folder / "ipython"


def wrong_answer(source: str) -> str:
    """Notebook 01's first exercise answered with the usual mistake: rows instead of columns."""
    return source.replace("# YOUR CODE HERE\n    raise NotImplementedError()",
                          "return C / C.sum(dim=1, keepdim=True).clamp(min=1e-12)")


def nbgrader_steps(course: Path, steps: list[list[str]], env: dict | None = None) -> None:
    failed = nbtool.nbgrader_steps(course, steps, env)
    assert not failed, "\n".join(failed)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course folder with the series as assignments, three submissions of every notebook (the
    released copy, the solutions, and for 01 a wrong answer), autograded with the call tracer on."""
    root = tmp_path_factory.mktemp("course")
    nbtool.make_course(root, NOTEBOOKS)
    nbgrader_steps(root, [["generate_assignment", name] for name in NAMES])
    graded = []
    for name in NAMES:
        for student, src in (("learner", root / "release"), ("teacher", root / "source")):
            if student == "teacher" and name not in FULL_MARKS:
                continue
            dest = root / "submitted" / student / name
            dest.mkdir(parents=True)
            shutil.copy(src / name / f"{name}.ipynb", dest)
            graded.append(["autograde", name, student])
    if WRONG_ANSWERS:
        wrong = nbformat.read(root / "release" / WRONG / f"{WRONG}.ipynb", as_version=4)
        first = solution_cells(wrong)[0]
        wrong.cells[first].source = wrong_answer(wrong.cells[first].source)
        assert "NotImplementedError" not in wrong.cells[first].source
        (root / "submitted" / "wrong" / WRONG).mkdir(parents=True)
        nbformat.write(wrong, root / "submitted" / "wrong" / WRONG / f"{WRONG}.ipynb")
        graded += [["autograde", WRONG, "wrong"], ["generate_feedback", WRONG, "wrong"]]

    ipython = tracer_profile(root)
    traces = root / "traces"
    traces.mkdir()
    env = os.environ | {"IPYTHONDIR": str(ipython), "GT_TRACE_DIR": str(traces), "MPLBACKEND": "Agg",
                        "GT_THREADS": os.environ.get("GT_THREADS", "1")}
    nbgrader_steps(root, graded, env=env)
    return root


def grades(course: Path, name: str, student: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (score, max_score) of every check cell in one autograded notebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(name, name, student)
        return {g.name: (g.score, g.max_score) for g in nb.grades}


def autograded(course: Path, name: str, student: str):
    return nbformat.read(course / "autograded" / student / name / f"{name}.ipynb", as_version=4)


def errors(cell) -> list[str]:
    return [f"{o.ename}: {o.evalue}" for o in cell.get("outputs", []) if o.output_type == "error"]


@pytest.mark.parametrize("name", NAMES)
def test_the_released_copy_scores_zero_and_runs_to_the_end(course, name):
    scores = grades(course, name, "learner")
    assert scores and all(score == 0 for score, _ in scores.values()), scores
    nb = autograded(course, name, "learner")
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        found = errors(cell)
        assert not found, f"cell {i} fails in the learner copy with every exercise unfilled: {found}"
        if cell.metadata.get("nbgrader", {}).get("grade"):  # says so on stderr, which nbgrader scores 0
            said = "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stderr")
            assert "not written yet" in said, (i, cell.outputs)


@pytest.mark.parametrize("name", FULL_MARKS)
def test_the_solutions_get_full_marks(course, name):
    scores = grades(course, name, "teacher")
    assert len(scores) == len(nbtool.exercises(ROOT / "notebooks" / f"{name}.ipynb"))
    assert all(score == top > 0 for score, top in scores.values()), scores


@pytest.mark.skipif(not WRONG_ANSWERS, reason=f"GT_EXERCISE_NOTEBOOKS leaves out {WRONG}")
def test_a_wrong_answer_scores_zero_and_its_feedback_is_the_checks_message(course):
    scores = grades(course, WRONG, "wrong")
    first = sorted(scores)[0]
    assert scores[first][0] == 0
    nb = autograded(course, WRONG, "wrong")
    check = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == first)
    (error,) = [o for o in check.outputs if o.output_type == "error"]
    # the message alone, not a traceback through the check's code (ExerciseError._render_traceback_), and after it
    # how to see the series' answer
    assert error.traceback == [f"\x1b[0;31mExerciseError\x1b[0m: {error.evalue}",
                               '(Stuck after trying? checks.answer("1.1") shows the series\' answer.)']
    assert "each *column* is a distribution" in error.evalue
    feedback = html.unescape((course / "feedback" / "wrong" / WRONG / f"{WRONG}.html").read_text(encoding="utf-8"))
    assert "each *column* is a distribution" in feedback


def traced_calls(course: Path, name: str) -> list[dict]:
    path = course / "traces" / f"learner__{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


class _Blank(ast.NodeTransformer):
    """Every variable and argument name becomes "_": `scores / totals.sum(0)` ~ `C / t.sum(0)`."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id="_", ctx=ast.Load()), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg="_"), node)


def shapes(source: str, smallest: int = 8) -> set[str]:
    """The blanked-out form of every expression in the code with at least `smallest` syntax nodes."""
    try:
        tree = _Blank().visit(ast.parse(source))
    except SyntaxError:
        return set()

    markers = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)

    def size(node) -> int:  # syntax nodes, not counting Load/Store or operator markers
        return sum(1 for m in ast.walk(node) if not isinstance(m, markers))
    return {ast.dump(n) for n in ast.walk(tree) if isinstance(n, ast.expr) and size(n) >= smallest}


def solution_source(cell) -> str:
    return textwrap.dedent(nbtool.solution_body(cell.source))


@pytest.mark.parametrize("name", NAMES)
def test_nothing_above_an_exercise_computes_its_answer(course, name):
    source = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    copy = autograded(course, name, "learner")
    cell_index = {}
    for i, cell in enumerate(copy.cells):
        cell_index.setdefault(cell.source, i)
    calls = [(cell_index.get(c["cell"], -1), c["helper"]) for c in traced_calls(course, name)]
    answered_nowhere = []
    for at in solution_cells(source):
        check = getattr(checks, check_name(source.cells[at + 1]))
        assert hasattr(check, "answered_by"), f"{check.__name__} names the helpers that answer it: @exercise(...)"
        helpers_ = set(check.answered_by)
        above = sorted({(i, h) for i, h in calls if h in helpers_ and 0 <= i < at})
        assert not above, (f"cells above exercise {check.__name__} (cell {at}) call the helper that answers it: "
                           f"{above}")
        solution = shapes(solution_source(source.cells[at]))
        shown = {i: solution & shapes(c.source) for i, c in enumerate(copy.cells[:at]) if c.cell_type == "code"}
        shown = {i: s for i, s in shown.items() if s}
        assert not shown, f"cells above {check.__name__} compute the solution's expressions: {shown}"
        later = [i for i, h in calls if h in helpers_ and i > at + 1]
        later += [i for i, c in enumerate(copy.cells) if i > at + 1 and c.cell_type == "code"
                  and solution & shapes(c.source)]
        if not later:
            answered_nowhere.append(check.__name__)
    assert answered_nowhere, "at least one exercise is answered nowhere in the learner copy"


def test_the_tracer_sees_a_renamed_helper(tmp_path):
    """The tracing the test above relies on: a helper imported under another name, called from a cell,
    is recorded; the same helper called by another helper is not."""
    from nbclient import NotebookClient

    ipython = tracer_profile(tmp_path)
    work = tmp_path / "student" / "nb"
    work.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import torch\nfrom helpers.ngrams import normalize_columns as tidy"),
                nbformat.v4.new_code_cell("P = tidy(torch.ones(3, 3))"),
                nbformat.v4.new_code_cell("from helpers import ngrams\n"
                                          "ngrams.bigram_probs(torch.tensor([0, 1, 2, 1]), 3)")]
    env = os.environ | {"IPYTHONDIR": str(ipython), "GT_TRACE_DIR": str(tmp_path)}
    NotebookClient(nb, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute(env=env)
    lines = [json.loads(x) for x in (tmp_path / "student__nb.jsonl").read_text().splitlines()]
    assert [(x["helper"], x["cell"]) for x in lines] == [("helpers.ngrams.normalize_columns", nb.cells[1].source)]


def test_the_learner_command_writes_what_nbgrader_releases(tmp_path, course):
    run = subprocess.run([sys.executable, "-m", "tools.notebooks", "learner", str(tmp_path), str(NOTEBOOKS[0])],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    mine = nbformat.read(tmp_path / NOTEBOOKS[0].name, as_version=4)
    released = nbformat.read(course / "release" / NAMES[0] / NOTEBOOKS[0].name, as_version=4)
    assert [c.source for c in mine.cells] == [c.source for c in released.cells]
    in_process = nbtool.learner_copy(nbformat.read(NOTEBOOKS[0], as_version=4))
    assert [c.source for c in in_process.cells] == [c.source for c in released.cells]
    for name, path in zip(NAMES, NOTEBOOKS):  # learn/, what a learner's workspace, Binder and Colab open
        released = nbformat.read(course / "release" / name / path.name, as_version=4)
        committed = nbformat.read(nbtool.LEARN / path.name, as_version=4)
        assert [c.source for c in committed.cells] == [c.source for c in released.cells], path.name
