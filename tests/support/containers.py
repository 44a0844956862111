"""A right answer of another type, and figures in words: probes run inside a notebook's "other machine A" run.

tests/notebooks/test_determinism.py runs every solution notebook on a fresh kernel under "other machine A"; that run
also carries these probes, so the series is not executed once more for them:

- after each exercise's check cell, a probe cell runs the check again on the solution with its result converted:
  float tensors to float64, tensors to Python lists, tensors to numpy arrays and floats to numpy float32 scalars.
  Each must pass: the checks compare through one guarded path (``helpers.checks.base.close`` and
  ``number_result``), so a learner who computed in float64, or returned ``.tolist()`` or a numpy value, is told the
  answer is right, never shown "Double did not match Float" from inside torch;
- the kernel uses its own inline backend (as in JupyterLab), and every static figure a notebook shows must come with
  its data in words (``helpers.plots.alt``).

Probe cells are marked in their metadata and taken out again (``without_probes``) before the run's checked outputs
are compared with the committed ones.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

import nbformat

from tools import notebooks as nbtool

CONVERSIONS = ("float64", "list", "numpy")
MARK = "gt_probe"  # cell metadata key of a probe cell

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

BACKEND = 'import matplotlib as _mpl\nprint("PROBE " + __import__("json").dumps({"backend": _mpl.get_backend()}))'


def _cell(source: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    cell.pop("id", None)
    cell.metadata[MARK] = True
    return cell


def probed(path: Path) -> nbformat.NotebookNode:
    """The notebook with a probe cell after each exercise's check cell, and one at the end naming the backend."""
    nb = nbformat.read(path, as_version=4)
    for ex in sorted(nbtool.exercises(path), key=lambda e: -e["cells"][2]):
        check_cell = ex["cells"][2]
        tree = ast.parse(nb.cells[check_cell].source)
        call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr.startswith("check_"))
        fn = ast.unparse(call.args[0])
        call.args[0] = ast.Name(id="_converted")
        nb.cells.insert(check_cell + 1, _cell(PROBE % {"conversions": CONVERSIONS, "fn": fn,
                                                        "call": ast.unparse(call), "number": ex["number"]}))
    nb.cells.append(_cell(BACKEND))
    return nb


def findings(nb: nbformat.NotebookNode) -> tuple[dict[str, dict[str, str]], list[tuple[int, dict]], str | None]:
    """From an executed probed notebook: exercise -> {conversion: what the check said}, the (cell, data) of every
    figure shown, and the kernel's matplotlib backend."""
    said, figures, backend, probes = {}, [], None, 0
    for index, cell in enumerate(nb.cells):
        probes += bool(cell.metadata.get(MARK))
        for out in cell.get("outputs", []):
            if out.output_type in ("display_data", "execute_result") and "image/png" in out.get("data", {}):
                figures.append((index - probes, dict(out.data)))  # the cell's index in the notebook itself
            if out.output_type == "stream" and "PROBE " in out.text:
                for line in out.text.splitlines():
                    if line.startswith("PROBE "):
                        got = json.loads(line[6:])
                        if "backend" in got:
                            backend = got["backend"]
                        else:
                            said[got["exercise"]] = got["said"]
    return said, figures, backend


def without_probes(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.cells = [c for c in nb.cells if not c.metadata.get(MARK)]
    return nb


def problems(path: Path, nb: nbformat.NotebookNode) -> list[str]:
    """What the probes of an executed probed notebook found wrong (empty: nothing)."""
    said, figures, backend = findings(nb)
    found = []
    if backend is None or "inline" not in backend:
        found.append(f"the kernel's matplotlib backend is {backend!r}, not the inline one JupyterLab uses")
    for ex in nbtool.exercises(path):
        got = said.get(ex["number"])
        if got is None:
            found.append(f"exercise {ex['number']}: the probe after its check did not run")
        elif got != {how: "passed" for how in CONVERSIONS}:
            found.append(f"exercise {ex['number']}: a right answer of another type is not accepted: {got}")
    for cell, data in figures:
        shown = data.get("text/html", "")
        alt = re.search(r'<img [^>]*alt="([^"]*)"', shown)
        if not alt:
            found.append(f"cell {cell}: a figure without its HTML form (helpers.plots.alt.figure_html)")
            continue
        words = html.unescape(alt.group(1))
        if "no description of its data" in words:
            found.append(f"cell {cell}: a figure drawn without a helper: {words}")
        elif not re.search(r"\d", words):
            found.append(f"cell {cell}: a figure whose text names no number: {words}")
        elif "the figure in words</summary>" not in shown:
            found.append(f"cell {cell}: a figure without its folded 'the figure in words'")
    return found
