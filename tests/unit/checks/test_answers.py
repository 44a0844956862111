"""The series' answer on request (helpers/checks/answers.py): shown after the learner's own attempt, never before
unless asked for anyway, switched off for a graded class, and the same code as the solution in the notebook."""

from __future__ import annotations

import nbformat
import pytest

from helpers import checks
from helpers.checks import base
from helpers.checks.solutions import SOLUTIONS
from tools import notebooks as nbtool


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(base, "ATTEMPTED", set())
    monkeypatch.delenv("GT_ANSWERS", raising=False)


def test_every_exercise_has_its_solution_and_check():
    found = {ex["number"]: ex for path in nbtool.notebooks([]) for ex in nbtool.exercises(path)}
    assert list(SOLUTIONS) == list(found) and len(SOLUTIONS) >= 30
    for number, s in SOLUTIONS.items():
        assert s["notebook"] == found[number]["notebook"] and s["title"] == found[number]["title"]
        assert s["checks"] and all(callable(getattr(checks, name)) for name in s["checks"])
        nb = nbformat.read(nbtool.NOTEBOOKS / s["notebook"], as_version=4)
        cell = nb.cells[found[number]["cells"][1]].source
        kept = [line for line in cell.splitlines() if line.strip() not in (nbtool.SOLUTION_START, nbtool.SOLUTION_END)]
        assert s["code"].splitlines() == kept  # the whole solution cell as the notebook has it, markers out
        assert nbtool.SOLUTION_START not in s["code"]
    assert nbtool.solutions_text(nbtool.notebooks([])) == nbtool.SOLUTIONS.read_text(encoding="utf-8"), \
        "run: python -m tools.notebooks clean"


def test_not_before_an_attempt(capsys):
    checks.answer("1.1")
    out = capsys.readouterr().out
    assert "try it first" in out and "checks.check_bigram_table" in out and 'anyway=True' in out
    assert SOLUTIONS["1.1"]["code"] not in out
    checks.answer("1.1", anyway=True)
    assert SOLUTIONS["1.1"]["code"] in capsys.readouterr().out


def test_after_a_wrong_attempt_and_a_right_one(capsys, monkeypatch):
    with pytest.raises(base.ExerciseError) as wrong:
        checks.check_bigram_table(lambda C: C)
    assert wrong.value.exercise_check == "check_bigram_table"
    shown = wrong.value._render_traceback_()
    assert shown[-1] == '(Stuck after trying? checks.answer("1.1") shows the series\' answer.)'
    checks.answer("1.1")
    out = capsys.readouterr().out
    assert out.startswith("Exercise 1.1 · From counts to probabilities (01_bigrams.ipynb) — the series' answer:")
    assert SOLUTIONS["1.1"]["code"] in out

    monkeypatch.setattr(base, "_in_jupyter", lambda: True)   # a right answer, in Jupyter: the ✔ line, then the offer
    checks.check_heldout_cross_entropy(lambda P, ids: float(-P[ids[1:], ids[:-1]].log().mean()))
    out = capsys.readouterr().out
    assert out.splitlines()[-1].strip() == 'To compare with the series\' own answer: checks.answer("1.2")'
    checks.answer(1.2)                                        # a number works too
    assert SOLUTIONS["1.2"]["code"] in capsys.readouterr().out


def test_a_blank_exercise_is_no_attempt(capsys, monkeypatch):
    def blank(C):
        raise NotImplementedError()
    monkeypatch.setattr(base, "_in_jupyter", lambda: True)
    checks.check_bigram_table(blank)                          # "not written yet", on stderr
    captured = capsys.readouterr()
    assert "not written yet" in captured.err and "checks.answer" not in captured.err + captured.out
    assert base.ATTEMPTED == set()


def test_switched_off_for_a_graded_class(capsys, monkeypatch):
    monkeypatch.setenv("GT_ANSWERS", "0")
    with pytest.raises(base.ExerciseError) as wrong:
        checks.check_bigram_table(lambda C: C)
    assert len(wrong.value._render_traceback_()) == 1        # no offer under the verdict
    checks.answer("1.1", anyway=True)
    out = capsys.readouterr().out
    assert "switched off here (GT_ANSWERS=0)" in out and SOLUTIONS["1.1"]["code"] not in out


def test_an_unknown_exercise_is_named():
    with pytest.raises(base.ExerciseError, match=r'there is no exercise "99.1": the exercises are 1.1, 1.2'):
        checks.answer("99.1")


def test_a_check_that_breaks_on_what_it_was_given_counts_as_an_attempt():
    @base.exercise()
    def check_something(fn):
        fn()
        raise RuntimeError("the check's own code broke on a model of another shape")

    with pytest.raises(RuntimeError):
        check_something(lambda: None)
    assert base.ATTEMPTED == {"check_something"}
