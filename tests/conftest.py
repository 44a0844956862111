"""Shared test set-up: one torch thread (GT_THREADS), so tests are fast and repeatable on a busy
2-core machine (two threads under contention run 3-5x slower than one)."""

import os
from pathlib import Path

import torch

import message_census  # records every exercise check's message as the run goes (tests/test_check_messages.py)

CENSUS_TEST = "test_every_message_of_every_check_is_given_by_a_test"


def pytest_configure(config):
    torch.set_num_threads(int(os.environ.get("GT_THREADS", "1")))


def pytest_collection_modifyitems(config, items):
    """The message census runs last, so that it can read what the check tests raised earlier in this same run
    instead of running them all again (minutes of CI)."""
    census = [item for item in items if item.name == CENSUS_TEST]
    for item in census:
        items.remove(item)
        items.append(item)
    message_census.RAN.update(Path(str(item.fspath)).name for item in items)


def pytest_runtest_setup(item):
    message_census.RECORDING = Path(str(item.fspath)).name in message_census.CHECK_TESTS


def pytest_runtest_logreport(report):
    if report.failed or (report.skipped and report.when == "call"):  # that file's census is not whole
        message_census.RAN.discard(Path(report.fspath).name)
