"""The census of tests/test_check_messages.py: the message of every ExerciseError the exercise checks raise in this
process (imported by tests/conftest.py, so a whole test run records it as it goes). As a pytest plugin
(``-p message_census``, when the census test has to run the check tests itself) it also writes them, as a JSON list,
to the file named by GT_MESSAGE_CENSUS."""

import json
import os
from collections import Counter

from helpers.checks import base

# the tests that hand wrong answers to the checks
CHECK_TESTS = ("test_attention_checks.py", "test_checks_01_02.py", "test_checks_base.py", "test_checks_foundation.py",
               "test_induction_checks.py", "test_circuits_checks.py", "test_by_hand_checks.py", "test_mlp_checks.py",
               "test_layernorm_checks.py", "test_training_checks.py", "test_gpt2_checks.py")
RAISED: list[str] = []
RECORDING = True  # tests/conftest.py records only while a test of CHECK_TESTS runs
_init = base.ExerciseError.__init__


def _recording_init(self, *args, **kwargs):
    if RECORDING:
        RAISED.append(str(args[0]) if args else "")
    _init(self, *args, **kwargs)


base.ExerciseError.__init__ = _recording_init   # NotWrittenYet and every other subclass too


# tests/conftest.py counts, per test file, the tests collected and the tests that passed in this process (under
# pytest-xdist a worker collects every test but runs only its share)
COLLECTED: Counter[str] = Counter()
PASSED: Counter[str] = Counter()


def whole() -> bool:
    """Whether every check test ran and passed in this process, so RAISED holds all they raised."""
    return all(PASSED[name] == COLLECTED[name] > 0 for name in CHECK_TESTS)


def pytest_sessionfinish(session):
    with open(os.environ["GT_MESSAGE_CENSUS"], "w", encoding="utf-8") as f:
        json.dump(RAISED, f)
