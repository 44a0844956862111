"""Shared test set-up: one torch thread (GT_THREADS), so tests are fast and repeatable on a busy
2-core machine (two threads under contention run 3-5x slower than one)."""

import os
from pathlib import Path

import pytest
import torch

import message_census  # records every exercise check's message as the run goes (tests/test_check_messages.py)

CENSUS_TEST = "test_every_message_of_every_check_is_given_by_a_test"


def pytest_configure(config):
    torch.set_num_threads(int(os.environ.get("GT_THREADS", "1")))


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: a file run in part does not count as whole
def pytest_collection_modifyitems(config, items):
    """The message census runs last, so that it can read what the check tests raised earlier in this same run
    instead of running them all again (minutes of CI)."""
    census = [item for item in items if item.name == CENSUS_TEST]
    for item in census:
        items.remove(item)
        items.append(item)
    message_census.COLLECTED.update(Path(str(item.fspath)).name for item in items)


def pytest_runtest_setup(item):
    message_census.RECORDING = Path(str(item.fspath)).name in message_census.CHECK_TESTS


def pytest_runtest_logreport(report):
    name = Path(report.fspath).name  # a file's census is whole when each of its tests passed here, and nothing failed
    if report.when == "call" and report.passed:
        message_census.PASSED[name] += 1
    if report.failed:  # in any phase (a teardown too): never whole
        message_census.COLLECTED[name] += 1
