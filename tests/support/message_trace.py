"""A pytest plugin for tests/unit/checks/test_check_messages.py (``-p support.message_trace``): while the tests run,
it records the message of every ExerciseError raised inside helpers/checks, and at the end writes them, as a JSON
list, to the file named by GT_MESSAGE_TRACE.

It measures; it patches nothing. Python's trace hook (sys.settrace, and threading.settrace for the threads a test
starts: the hook coverage.py measures lines with) is given a tracer for the frames of helpers/checks' own code only,
and an "exception" event in one of them carries the exception being raised. Line coverage alone would not do:
about a hundred messages sit in tables of usual mistakes that one ``raise ExerciseError(message)`` line raises,
so that line runs whichever of them fired.
"""

from __future__ import annotations

import json
import os
import sys
import threading

import helpers.checks
from helpers.checks.base import ExerciseError

CHECKS = os.path.dirname(helpers.checks.__file__) + os.sep
RAISED: set[str] = set()


def _in_checks(frame, event, arg):
    if event == "exception" and isinstance(arg[1], ExerciseError):
        RAISED.add(str(arg[1]))
    return _in_checks


def _tracer(frame, event, arg):
    """Called at each new frame: trace it only when it runs helpers/checks' code."""
    return _in_checks if frame.f_code.co_filename.startswith(CHECKS) else None


def pytest_configure(config):
    sys.settrace(_tracer)
    threading.settrace(_tracer)


def pytest_unconfigure(config):
    replaced = sys.gettrace() is not _tracer
    sys.settrace(None)
    threading.settrace(None)
    if replaced:  # something else took the trace hook over: what was recorded may be partial, so say so
        raise RuntimeError("support.message_trace: another tracer replaced this one during the run")
    with open(os.environ["GT_MESSAGE_TRACE"], "w", encoding="utf-8") as f:
        json.dump(sorted(RAISED), f)
