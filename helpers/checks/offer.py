"""The line under a check's verdict on the learner's own function that says how to see the series' answer
(``helpers.checks.answers``): which exercise a check belongs to, and whether a course has switched answers off."""

from __future__ import annotations

import os

from helpers.checks.solutions import SOLUTIONS


def exercise_of(check_name: str) -> str | None:
    """The number ("1.1") of the exercise whose check is `check_name`, if it is one."""
    return next((number for number, s in SOLUTIONS.items() if check_name in s["checks"]), None)


def switched_off() -> bool:
    return os.environ.get("GT_ANSWERS", "1").strip().lower() in ("0", "off", "no", "false")


def offer(check_name: str, right: bool) -> str:
    """The line printed under a check's verdict on the learner's own function: how to see the series' answer."""
    number = exercise_of(check_name)
    if number is None or switched_off():
        return ""
    if right:
        return f'  To compare with the series\' own answer: checks.answer("{number}")'
    return f'(Stuck after trying? checks.answer("{number}") shows the series\' answer.)'
