"""Every notebook follows the series' conventions (CONTRIBUTING.md) and is committed clean."""

import builtins
import re
from pathlib import Path

import nbformat
import pytest

from tools import notebooks as nbtool

ROOT = Path(__file__).resolve().parents[2]

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS][:2] == ["01", "02"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_clean(path):
    assert nbtool.is_clean(path), f"run: python -m tools.notebooks refresh {path.relative_to(ROOT)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_follows_the_series_conventions(path):
    nb = nbformat.read(path, as_version=4)
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    first = nb.cells[0].source
    assert re.match(rf"# {path.name[:2]} · ", first), "opens with '# NN · Topic'"
    for part in ("What you'll learn", "What you need", "About how long"):
        assert part in first, f"the opening cell says {part!r}"
    assert "helpers.setup(" in code, "seeds and sets threads through helpers.setup"
    assert "sys.path" not in code and "wget" not in code and "urlopen" not in code
    assert "../" not in code, "no relative paths: load checkpoints with checkpoint.load_named (works from any folder)"
    assert "checks.check_" in code, "has at least one auto-checked exercise"
    assert re.search(r"from helpers\.widgets\.\w+ import", code), "has at least one widget (helpers.widgets)"
    checked = [c for c in nb.cells if nbtool.is_checked(c)]
    assert checked or "assert " in code, "checks its numbers"
    assert "## Summary" in md and "## Check yourself" in md
    garbled = re.search(r"[\t\x07\x08\x0b\x0c\r]", md)   # "\text" typed in a Python string is a TAB + "ext"
    assert not garbled, ("a control character in the markdown (a LaTeX backslash eaten): "
                         f"{md[garbled.start() - 40:garbled.end() + 20]!r}")
    for c in checked:
        assert c.outputs, "a checked cell must store the output nbval compares (tools/notebooks.py refresh)"
        text = "".join(o.get("text", "") for o in c.outputs)
        assert not re.search(r"0x[0-9a-f]{6,}", text), "no memory addresses in checked output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_exercises_are_laid_out_for_learners_and_nbgrader(path):
    """CONTRIBUTING, "Exercises": 2-4 of growing difficulty, each a heading (stars, minutes, what it checks,
    1-2 folded hints), a solution cell and a check cell, marked for nbgrader."""
    nb = nbformat.read(path, as_version=4)
    found = nbtool.exercises(path)
    assert 2 <= len(found) <= 4, f"{len(found)} exercises; the series asks for 2-4 a notebook"
    number = int(path.name[:2])
    assert [e["number"] for e in found] == [f"{number}.{k}" for k in range(1, len(found) + 1)]
    stars = [e["stars"] for e in found]
    assert None not in stars, "every exercise heading has a line '★★☆ · about N min · checks: ...'"
    assert stars == sorted(stars) and stars[-1] > stars[0], f"difficulty grows through the notebook: {stars}"
    graded = {i for i, c in enumerate(nb.cells) if "nbgrader" in c.metadata}
    for k, e in enumerate(found, 1):
        assert 1 <= e["hints"] <= 2 and 1 <= e["minutes"] <= 60 and e["concept"], e
        head, solution, check = (nb.cells[i] for i in e["cells"])
        assert head.source.count("<details>") >= e["hints"], "hints are folded"
        assert solution.cell_type == "code" and solution.source.count(nbtool.SOLUTION_START) == 1
        assert solution.metadata.nbgrader == {"grade": False, "grade_id": f"ex{number:02d}_{k}", "locked": False,
                                              "schema_version": 3, "solution": True, "task": False}
        assert check.cell_type == "code" and re.fullmatch(r"checks\.check_\w+\([^\n]*\)", check.source.strip())
        assert check.metadata.nbgrader == {"grade": True, "grade_id": f"ex{number:02d}_{k}_check", "locked": True,
                                           "points": e["stars"], "schema_version": 3, "solution": False,
                                           "task": False}
        graded -= set(e["cells"][1:])
    assert not graded, f"cells {sorted(graded)} carry nbgrader metadata but are not an exercise's"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_predict_then_check(path):
    """Before a widget or a result: a question, its answer folded, and the next cell shows it."""
    nb = nbformat.read(path, as_version=4)
    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and "**Predict, then check.**" in c.source]
    assert found, "at least one 'Predict, then check.' question"
    for i in found:
        assert re.search(r"<details><summary>[^<]*[Aa]nswer", nb.cells[i].source), "its answer is folded"
        assert nb.cells[i + 1].cell_type == "code", "the next cell reveals the answer"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_learner_copy_clears_solutions_and_each_check_says_so(path):
    """Cheap twin of tests/notebooks/test_exercises.py: each unfilled exercise with its check, alone. The check's message
    begins with the function as the learner's cell names it (its `def`), not the check's own word for it: a
    learner who wrote `def stable_softmax` is told about stable_softmax, not softmax."""
    from helpers.checks import ExerciseError

    nb = nbformat.read(nbtool.LEARN / path.name, as_version=4)  # the learner copy as handed out
    for e in nbtool.exercises(path):
        solution, check = nb.cells[e["cells"][1]], nb.cells[e["cells"][2]]
        assert "raise NotImplementedError()" in solution.source and not solution.outputs
        defined = re.findall(r"^def (\w+)\(", solution.source, re.M)
        assert len(defined) == 1, f"exercise {e['number']}: one function per solution cell"
        assert re.search(rf"checks\.check_\w+\({defined[0]}\b", check.source), \
            f"exercise {e['number']}: the check cell checks {defined[0]}"
        import torch
        from helpers import checks

        code = compile(solution.source + "\n" + check.source, path.name, "exec")
        namespace = {"torch": torch, "checks": checks}
        # other notebook variables the check is given (a trained model, say) are stand-ins here: a
        # check must call the learner's function, and say "not written yet", before using them
        namespace |= {name: None for name in code.co_names if name not in namespace and not hasattr(builtins, name)}
        with pytest.raises(ExerciseError, match="not written yet") as raised:
            exec(code, namespace)
        assert str(raised.value).startswith(f"{defined[0]}("), \
            f"exercise {e['number']}: the check calls {defined[0]} otherwise: {raised.value}"


def test_the_teaching_page_lists_every_exercise():
    """The instructor table (docs/teaching.md, "Every exercise") is the one the notebooks' headings give."""
    page = nbtool.EXERCISES_PAGE.read_text(encoding="utf-8")
    table = nbtool.exercise_table(NOTEBOOKS)
    assert nbtool.with_exercise_table(page, table) == page, "run: python -m tools.notebooks exercises --write"


def test_the_learner_copies_are_made_from_the_series():
    """learn/ (what Binder, Colab and the learner's workspace open) holds exactly the learner copy of every notebook,
    as `python -m tools.notebooks clean` writes it from notebooks/."""
    assert sorted(p.name for p in nbtool.LEARN.glob("*.ipynb")) == [p.name for p in NOTEBOOKS]
    for path in NOTEBOOKS:
        assert (nbtool.LEARN / path.name).read_text(encoding="utf-8") == \
            nbtool.learner_text(nbformat.read(path, as_version=4)), \
            f"learn/{path.name} is stale: run python -m tools.notebooks clean"
