"""Determinism: a notebook run twice, on two fresh kernels, prints identical checked numbers.

The checked numbers are the outputs of cells marked ``# NBVAL_CHECK_OUTPUT`` (CONTRIBUTING rule 3);
nbval compares them with the committed notebook, and this test compares two independent runs with
each other, run side by side (two kernels at once on the 2 cores also shows that load does not
change them). By default it takes the first notebook of the series; GT_DETERMINISM=all runs every
notebook, GT_DETERMINISM=02,04 picks by number.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
MARK = "# NBVAL_CHECK_OUTPUT"
FIXTURE = ROOT / "tests" / "browser" / "fixtures" / "fixture_explorer.ipynb"


def chosen() -> list[Path]:
    series = sorted((ROOT / "notebooks").glob("*.ipynb"))
    want = os.environ.get("GT_DETERMINISM", "").strip()
    if want == "all":
        return series or [FIXTURE]
    if want:
        picks = [s.strip() for s in want.split(",")]
        return [nb for nb in series if any(nb.name.startswith(p) for p in picks)]
    return series[:1] or [FIXTURE]


def checked_outputs(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    out = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and MARK in cell.source:
            text = "".join(o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
                           for o in cell.outputs if o.output_type in ("stream", "execute_result"))
            out.append((i, text))
    return out


async def _run(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    await client.async_execute()
    return nb


@pytest.mark.parametrize("path", chosen(), ids=lambda p: p.stem)
def test_two_fresh_runs_print_identical_checked_numbers(path):
    async def both():
        return await asyncio.gather(_run(path), _run(path))

    # (in a thread of its own: an event loop may already run in this one, e.g. Playwright's)
    with ThreadPoolExecutor(1) as pool:
        first, second = pool.submit(asyncio.run, both()).result()
    a, b = checked_outputs(first), checked_outputs(second)
    assert a, f"{path.name} has no `{MARK}` cell: nothing to compare"
    assert all(text.strip() for _, text in a), f"{path.name}: a checked cell printed nothing"
    diffs = [(i, x, y) for (i, x), (_, y) in zip(a, b) if x != y]
    assert not diffs, "\n".join(f"cell {i} differs between two fresh runs:\n--- run 1\n{x}--- run 2\n{y}"
                                for i, x, y in diffs)
