"""No exercise check refuses or crashes on a right answer of another type.

Every notebook runs with its solutions; after each exercise's check cell, the check is run again on the solution
with its result converted: float tensors to float64, tensors to Python lists, tensors to numpy arrays and floats to
numpy float32 scalars. Each must pass: the checks compare through one guarded path (``helpers.checks.base.close``
and ``number_result``), so a learner who computed in float64, or returned ``.tolist()`` or a numpy value, is told
the answer is right, never shown "Double did not match Float" from inside torch.

The same run (the inline backend on, as in JupyterLab) also collects every static figure the notebooks show, to
check that each comes with its data in words (``helpers.plots.alt``)."""

from __future__ import annotations

import ast
import html
import json
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tools import notebooks as nbtool

pytestmark = pytest.mark.slow  # every exercise's right answer in three containers, in kernels

ROOT = Path(__file__).resolve().parents[2]

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
EXERCISES = [(p, ex["number"]) for p in NOTEBOOKS for ex in nbtool.exercises(p)]
CONVERSIONS = ("float64", "list", "numpy")

PROBE = r'''
import json as _json, numpy as _np, torch as _t
from helpers.checks.base import ExerciseError as _ExerciseError


def _convert(out, how):
    if isinstance(out, _t.Tensor):
        x = out.detach()
        return {"float64": x.double() if x.is_floating_point() else x, "list": x.tolist(), "numpy": x.numpy()}[how]
    if isinstance(out, (tuple, list)) and how != "list":
        return type(out)(_convert(o, how) for o in out)
    if isinstance(out, float) and how == "numpy":
        return _np.float32(out)
    return out


_said = {}
for _how in %(conversions)r:
    _converted = (lambda f, how: (lambda *a, **k: _convert(f(*a, **k), how)))(%(fn)s, _how)
    try:
        %(call)s
        _said[_how] = "passed"
    except _ExerciseError as e:
        _said[_how] = f"refused: {e}"
    except Exception as e:
        _said[_how] = f"crashed: {type(e).__name__}: {e}"
print("PROBE " + _json.dumps({"exercise": %(number)r, "said": _said}))
'''


def probed(path: Path) -> nbformat.NotebookNode:
    """The notebook with a probe cell after each check cell."""
    nb = nbformat.read(path, as_version=4)
    for ex in sorted(nbtool.exercises(path), key=lambda e: -e["cells"][2]):
        check_cell = ex["cells"][2]
        tree = ast.parse(nb.cells[check_cell].source)
        call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr.startswith("check_"))
        fn = ast.unparse(call.args[0])
        call.args[0] = ast.Name(id="_converted")
        cell = nbformat.v4.new_code_cell(PROBE % {"conversions": CONVERSIONS, "fn": fn, "call": ast.unparse(call),
                                                  "number": ex["number"]})
        cell.pop("id", None)
        nb.cells.insert(check_cell + 1, cell)
    return nb


FIGURES: list[tuple[str, int, dict]] = []   # (notebook, cell, output data) of every figure shown, filled below


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], dict[str, str]]:
    found = {}
    env_before = os.environ.get("MPLBACKEND")
    os.environ.pop("MPLBACKEND", None)      # the kernel's own inline backend: it shows figures as JupyterLab does
    try:
        for path in NOTEBOOKS:
            nb = probed(path)
            NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            for index, cell in enumerate(nb.cells):
                for out in cell.get("outputs", []):
                    if out.output_type in ("display_data", "execute_result") and "image/png" in out.data:
                        FIGURES.append((path.name, index, dict(out.data)))
                    if out.output_type == "stream" and "PROBE " in out.text:
                        for line in out.text.splitlines():
                            if line.startswith("PROBE "):
                                got = json.loads(line[6:])
                                found[path.name, got["exercise"]] = got["said"]
    finally:
        if env_before is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = env_before
    return found


@pytest.mark.parametrize("path, number", EXERCISES, ids=[f"{p.name[:2]}-{n}" for p, n in EXERCISES])
def test_a_right_answer_of_another_type_passes(results, path, number):
    said = results.get((path.name, number))
    assert said is not None, f"the probe after exercise {number}'s check did not run (an earlier cell failed?)"
    assert said == {how: "passed" for how in CONVERSIONS}, said


def test_every_figure_the_notebooks_show_carries_its_data_in_words(results):
    assert len(FIGURES) >= 20, f"only {len(FIGURES)} figures were shown: is the inline backend on?"
    for name, cell, data in FIGURES:
        shown = data.get("text/html", "")
        alt = re.search(r'<img [^>]*alt="([^"]*)"', shown)
        assert alt, f"{name}, cell {cell}: a figure without its HTML form (helpers.plots.alt.figure_html)"
        words = html.unescape(alt.group(1))
        assert "no description of its data" not in words, f"{name}, cell {cell}: drawn without a helper: {words}"
        assert re.search(r"\d", words), f"{name}, cell {cell}: the text names no number: {words}"
        assert "the figure in words</summary>" in shown
