"""Threads and seeds in one place, and giving freed memory back.

Every notebook starts with ``helpers.setup()``. Change the number of torch threads there (or with
the ``GT_THREADS`` environment variable): on a busy 2-core machine one thread is often *faster*
than two, and it also makes runs bit-for-bit repeatable. In a notebook, ``setup`` also makes the
kernel give freed memory back to the system after every cell (``release_memory``): a class's server
holds every student's kernel, so a kernel should hold only what its variables need.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import random

import numpy as np
import torch


class Settings(dict):
    """What ``setup`` set: ``{"seed": ..., "threads": ..., "torch": <torch's version>}``, a plain dict that Jupyter
    does not echo when ``helpers.setup(seed=0)`` ends a cell, so the set-up cell stays quiet. ``print`` it (or
    ``dict(...)``) to see it."""

    def _ipython_display_(self) -> None:  # IPython's display hook shows nothing for the result of a cell
        pass


def setup(seed: int = 0, threads: int | None = None) -> Settings:
    """Seed python, numpy and torch, and set torch's thread count.

    threads: None -> ``$GT_THREADS`` if set, else 1.
    ``$GT_SEED``, if set, replaces ``seed``: how ``tools/margins.py`` and the seed tests run a whole notebook as
    another learner's run (the notebooks that train pass ``setup(...)["seed"]`` on to their training).
    Returns the settings used (``Settings``: a dict, which a notebook cell does not display unless printed).
    """
    if threads is None:
        threads = int(os.environ.get("GT_THREADS", "1"))
    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    if os.environ.get("GT_SEED", "").strip():
        try:
            seed = int(os.environ["GT_SEED"])
        except ValueError:
            raise ValueError(f"GT_SEED must be a whole number, got {os.environ['GT_SEED']!r}") from None
    torch.set_num_threads(threads)
    seed_everything(seed)
    release_memory_after_every_cell()
    return Settings(seed=seed, threads=torch.get_num_threads(), torch=torch.__version__)


def seed_everything(seed: int) -> None:
    """Seed python's, numpy's and torch's global generators."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    """glibc's malloc_trim, or None (another C library: macOS, musl, Windows)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def release_memory() -> bool:
    """Give the memory that freed tensors leave inside the C heap back to the operating system.

    A training loop allocates and frees the same few megabyte-sized tensors thousands of times; glibc keeps
    the freed blocks for reuse, so a kernel's memory stays ~100 MB higher after training than during it.
    The trainers and ``evaluate`` call this at their end, and in a notebook it runs after every cell (a few
    milliseconds; ``release_memory_after_every_cell``). Returns False where there is nothing to call.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def ipython_shell():
    """The running IPython shell (a notebook's kernel), or None outside IPython (a script, a test)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def release_memory_after_every_cell() -> bool:
    """In IPython (a notebook's kernel), call ``release_memory`` after every cell: a cell's big temporary
    tensors (a table, a batch of logits) leave their memory inside the C heap otherwise, and the next cell
    starts ~50-100 MB higher. A few milliseconds per cell; widgets' redraws are not cells and don't pay it.
    Returns False outside IPython. Calling it again adds nothing."""
    shell = ipython_shell()
    if shell is None:
        return False
    if _after_cell not in shell.events.callbacks["post_run_cell"]:
        shell.events.register("post_run_cell", _after_cell)
    return True


def _after_cell(result=None) -> None:
    release_memory()
