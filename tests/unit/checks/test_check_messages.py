"""Every message an exercise check can give is one a test makes it give (the rule: "every specific message can
actually fire, a test per message").

The message text is read from helpers/checks/*.py itself: every literal piece (20 characters or more, with a space)
of every string outside docstrings and passed(...) calls — the literal parts of an f-string one by one, so a
message with numbers in it counts too. The check tests are the files of this folder: the last test below runs
them in a pytest of its own (the fast ones: the slow ones here start other Pythons, whose raises this process
cannot see) with tests/support/message_trace.py measuring every ExerciseError raised inside helpers/checks, and
each piece must appear in one of them. A message that no wrong answer reaches (a test earlier in the check catches
the same answers, or it is unreachable) fails here, naming its file and line: give it a wrong answer that reaches
it, merge it into the one that fires, or delete it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent  # tests/unit/checks: the tests that hand the checks wrong answers
ROOT = HERE.parents[2]
CHECKS = ROOT / "helpers" / "checks"
# tests elsewhere that raise ExerciseError too but give right answers or whole notebooks (no message of their own)
OTHER_TESTS = ("test_exercises.py", "test_notebooks_clean.py")
NOT_CHECKS = ("answers.py", "offer.py", "solutions.py")  # the series' answers on request and the line offering them:
# code and prints, no check's message (test_answers.py gives each of their texts)


def check_modules() -> list[Path]:
    return [path for path in sorted(CHECKS.glob("*.py")) if path.name not in NOT_CHECKS]


def message_pieces(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every literal piece of message text in one check module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            skip.add(id(body[0].value))                                       # a docstring
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "passed":
            skip.update(id(sub) for sub in ast.walk(node))                     # a success message
    pieces = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
            if id(node) not in skip:
                pieces += [(v.lineno, v.value) for v in node.values if isinstance(v, ast.Constant)]
    pieces += [(node.lineno, node.value) for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip]
    return [(line, text.strip()) for line, text in pieces if len(text.strip()) >= 20 and " " in text.strip()]


def test_the_census_reads_messages_and_nothing_else():
    pieces = {text for path in check_modules() for _, text in message_pieces(path)}
    assert len(pieces) > 300
    assert "the causal mask is missing: query i sees keys j > i. Use softmax* (−inf above the" in " ".join(pieces)
    assert not any(text.startswith("fn(x, W_1, b_1, W_2, b_2) with x") for text in pieces)       # a docstring
    assert not any("layer_norm is right: each column" in text for text in pieces)                 # a passed(...)


def test_every_test_that_gives_a_check_wrong_answers_is_a_check_test():
    """The measurement below runs this folder: a test file elsewhere that hands a check a wrong answer belongs here."""
    raising = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")
               if "ExerciseError" in p.read_text(encoding="utf-8") and HERE not in p.parents
               and p.name not in OTHER_TESTS}
    assert not raising, "move these into tests/unit/checks/ (or, if they give right answers only, add to OTHER_TESTS)"


def traced(tmp_path: Path, *args: str) -> list[str]:
    """Every ExerciseError message raised inside helpers/checks while a pytest of its own runs these tests."""
    out = tmp_path / "raised.json"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "support.message_trace", *args],
                         cwd=ROOT, env={**os.environ, "GT_MESSAGE_TRACE": str(out)}, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.slow  # a pytest of its own
def test_the_measurement_tells_apart_the_messages_one_line_raises(tmp_path):
    """check_mlp raises each usual mistake's message from one line (`raise ExerciseError(message)` in a loop over a
    table), which line coverage would count as given as soon as one of them fires: the trace sees which did."""
    raised = traced(tmp_path, str(HERE / "test_mlp_checks.py"), "-k", "wrong_answers_are_explained and not sigmoid")
    assert any("That is tanh" in m for m in raised) and not any("That is a sigmoid" in m for m in raised)


@pytest.mark.slow  # the check tests again, in a pytest of their own, traced
def test_every_message_of_every_check_is_given_by_a_test(tmp_path):
    raised = "\n".join(traced(tmp_path, "-m", "not slow", str(HERE)))
    assert "Not the MLP yet." in raised and "not written yet" in raised   # the measurement saw the raises
    never = [f"helpers/checks/{path.name}:{line}: {text[:90]}"
             for path in check_modules() for line, text in message_pieces(path) if text not in raised]
    assert not never, "no test makes these messages fire:\n" + "\n".join(never)
