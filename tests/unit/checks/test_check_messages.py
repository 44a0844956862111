"""Every message an exercise check can give is one a test makes it give (the rule: "every specific message can
actually fire, a test per message").

The message text is read from helpers/checks/*.py itself: every literal piece (20 characters or more, with a space)
of every string outside docstrings and passed(...) calls — the literal parts of an f-string one by one, so a
message with numbers in it counts too. tests/message_census.py records every ExerciseError raised while the check
tests run (in the same run, which this test ends; or, when only some files were asked for, in a pytest of their own
that this test starts), and each piece must appear in one of them. A
message that no wrong answer reaches (a test earlier in the check catches the same answers, or it is unreachable)
fails here, naming its file and line: give it a wrong answer that reaches it, merge it into the one that fires,
or delete it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import message_census

ROOT = Path(__file__).resolve().parents[3]
CHECKS = ROOT / "helpers" / "checks"
CHECK_TESTS = message_census.CHECK_TESTS  # the tests that hand wrong answers to the checks
# tests that raise ExerciseError too but give right answers or whole notebooks (slow, and no message of their own)
OTHER_TESTS = ("test_checks_containers.py", "test_exercises.py", "test_notebooks_clean.py", "test_answers.py",
               Path(__file__).name)
NOT_CHECKS = ("answers.py", "solutions.py")  # the series' answers on request: code and prints, no check's message
# (tests/test_answers.py gives each of answers.py's texts)


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


def test_every_test_that_gives_a_check_wrong_answers_is_in_the_census():
    raising = {p.name for p in (ROOT / "tests").rglob("test_*.py")
               if "ExerciseError" in p.read_text(encoding="utf-8")}
    assert raising - set(CHECK_TESTS) - set(OTHER_TESTS) == set(), "add the new test file to CHECK_TESTS"


def test_every_message_of_every_check_is_given_by_a_test(tmp_path):
    if message_census.whole():  # every check test ran earlier in this process (this test runs last among them,
        raised = "\n".join(message_census.RAISED)  # tests/conftest.py) and passed, recording as it went
    else:  # a run of some files only: run the check tests here
        census = tmp_path / "raised.json"
        env = {**os.environ, "GT_MESSAGE_CENSUS": str(census),
               "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT), os.environ.get("PYTHONPATH", "")])}
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "message_census",
                              *[str(ROOT / "tests" / "unit" / "checks" / name) for name in CHECK_TESTS]],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        raised = "\n".join(json.loads(census.read_text(encoding="utf-8")))
    never = [f"helpers/checks/{path.name}:{line}: {text[:90]}"
             for path in check_modules() for line, text in message_pieces(path) if text not in raised]
    assert not never, "no test makes these messages fire:\n" + "\n".join(never)
