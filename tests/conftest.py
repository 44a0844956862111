"""Shared test set-up: one torch thread (GT_THREADS), so tests are fast and repeatable on a busy
2-core machine (two threads under contention run 3-5x slower than one)."""

import os

import torch


def pytest_configure(config):
    torch.set_num_threads(int(os.environ.get("GT_THREADS", "1")))
