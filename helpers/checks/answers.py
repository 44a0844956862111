"""The series' own answer to an exercise, for a learner who asks after trying: ``checks.answer("1.1")``.

The learner copies (learn/, a learner's workspace, Binder, Colab, nbgrader's release) have every exercise blank. The
solutions written in the series' notebooks are kept in helpers/checks/solutions.py (written by
``python -m tools.notebooks clean`` from notebooks/, and tested to match them), so this works offline, in Colab and on
Binder alike. An answer is shown once the exercise's check has given a verdict on what the learner handed it in this
kernel (right or wrong; a blank exercise's "not written yet" does not count), so that verdict comes first;
``answer("1.1", anyway=True)`` shows it before that. A course that grades the exercises switches answers off with
GT_ANSWERS=0 in the kernels' environment.
"""

from __future__ import annotations

from helpers.checks import base
from helpers.checks.offer import switched_off
from helpers.checks.solutions import SOLUTIONS


def answer(number: str, anyway: bool = False) -> None:
    """Print the series' solution of exercise `number` ("1.1", "9.3", ...)."""
    number = str(number).strip()
    if number not in SOLUTIONS:
        known = ", ".join(SOLUTIONS)
        raise base.ExerciseError(f'there is no exercise "{number}": the exercises are {known} (as a string: '
                                 'answer("1.1"))')
    if switched_off():
        print(f"The answers are switched off here (GT_ANSWERS=0): your course grades exercise {number}. Ask your "
              "instructor, or read the hints above the exercise again.")
        return
    s = SOLUTIONS[number]
    tried = any(name in base.ATTEMPTED for name in s["checks"])
    if not (tried or anyway):
        checks = " and ".join(f"checks.{name}" for name in s["checks"])
        print(f"Exercise {number} · {s['title']}: try it first. Write your function in the cell under the exercise "
              f"and run the check ({checks}) on it in this kernel: its verdict says what is right or what to look "
              f'at. Then ask again, and the series\' answer is shown. (To see it now anyway: checks.answer("{number}", '
              "anyway=True).)")
        return
    print(f"Exercise {number} · {s['title']} ({s['notebook']}) — the series' answer:\n")
    print(s["code"])
