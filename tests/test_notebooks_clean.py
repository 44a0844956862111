"""Every notebook follows the series' conventions (CONTRIBUTING.md) and is committed clean."""

import builtins
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import notebooks as nbtool  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS][:2] == ["01", "02"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_clean(path):
    assert nbtool.is_clean(path), f"run: python tools/notebooks.py refresh {path.relative_to(ROOT)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_follows_the_series_conventions(path):
    nb = nbformat.read(path, as_version=4)
    md = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    first = nb.cells[0].source
    assert re.match(rf"# {path.name[:2]} · ", first), "opens with '# NN · Topic'"
    for part in ("What you'll learn", "What you need", "About how long"):
        assert part in first, f"the opening cell says {part!r}"
    assert "helpers.setup(" in code, "seeds and sets threads through helpers.setup"
    assert "sys.path" not in code and "wget" not in code and "urlopen" not in code
    assert "../" not in code, "no relative paths: load checkpoints with checkpoint.load_named (works from any folder)"
    assert "checks.check_" in code, "has at least one auto-checked exercise"
    assert re.search(r"from helpers\.widgets\.\w+ import", code), "has at least one widget (helpers.widgets)"
    assert "# NBVAL_CHECK_OUTPUT" in code or "assert " in code, "checks its numbers"
    assert "## Summary" in md and "## Check yourself" in md
    checked = [c for c in nb.cells if c.cell_type == "code" and nbtool.MARK in c.source]
    for c in checked:
        assert c.outputs, "a checked cell must store the output nbval compares (tools/notebooks.py refresh)"
        text = "".join(o.get("text", "") for o in c.outputs)
        assert not re.search(r"0x[0-9a-f]{6,}", text), "no memory addresses in checked output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_learner_copy_removes_solutions_and_the_check_says_so(path):
    from helpers.checks import ExerciseError

    nb = nbtool.learner_copy(nbformat.read(path, as_version=4))
    exercises = [c for c in nb.cells if c.cell_type == "code" and nbtool.SOLUTION_START in c.source]
    assert exercises, "every notebook has an exercise between the solution markers"
    for cell in exercises:
        assert "NotImplementedError" in cell.source and not cell.outputs
        # run the exercise cell as a learner would before writing anything
        import torch
        from helpers import checks

        code = compile(cell.source, path.name, "exec")
        namespace = {"torch": torch, "checks": checks}
        # other notebook variables the cell passes to its check (a trained model, say) are stand-ins
        # here: a check must call the learner's function, and say "not written yet", before using them
        namespace |= {name: None for name in code.co_names if name not in namespace and not hasattr(builtins, name)}
        with pytest.raises(ExerciseError, match="not written yet"):
            exec(code, namespace)
