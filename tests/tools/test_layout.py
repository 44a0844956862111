"""The package's layering, checked on the source: compute never imports plots or widgets, tools never
import from tests/, notebooks take compute from helpers (not from the widgets), and activation names
are never written by hand (helpers.model.names builds them)."""

import ast
import importlib
import json
import re
from pathlib import Path

from helpers.widgets.base import Explorer

ROOT = Path(__file__).resolve().parents[2]


def _imports(source: str) -> set[str]:
    mods = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
            mods |= {f"{node.module}.{a.name}" for a in node.names}
    return mods


def _code_cells(nb: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]


def test_interp_is_compute_only():
    for path in (ROOT / "helpers" / "interp").glob("*.py"):
        above = ("helpers.plots", "helpers.widgets", "helpers.checks", "matplotlib", "ipywidgets")
        bad = {m for m in _imports(path.read_text()) if m.startswith(above)}
        assert not bad, f"{path.name} imports {bad}: helpers.interp is compute only, below plots and widgets"


def test_tools_do_not_import_from_tests():
    for path in (ROOT / "tools").glob("*.py"):
        text = path.read_text()
        assert not {m for m in _imports(text) if m.split(".")[0] == "tests"}, path.name
        assert not re.search(r"""["']tests["']\s*[,/)]""", text), f"{path.name} puts tests/ on its path"


def test_notebooks_import_only_explorers_from_widgets():
    """From helpers.widgets a notebook takes Explorer classes, nothing it computes with."""
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in _code_cells(nb):
            for node in ast.walk(ast.parse(cell)):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("helpers.widgets"):
                    names = [a.name for a in node.names]
                    module = importlib.import_module(node.module)
                    assert all(isinstance(getattr(module, n), type) and issubclass(getattr(module, n), Explorer)
                               for n in names), \
                        f"{nb.name} imports {names} from {node.module}: compute comes from helpers, not the widgets"
    assert any("from helpers.widgets" in c for nb in (ROOT / "notebooks").glob("*.ipynb") for c in _code_cells(nb))


def _hand_written_keys(source: str) -> list[int]:
    """Lines with a string that is a whole cache key ("L0.A") or an f-string that builds one (f"L{layer}.A")."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"L\d+\.\w+", node.value):
            lines.append(node.lineno)
        elif (isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant)
              and node.values[0].value == "L" and len(node.values) > 2):
            lines.append(node.lineno)
    return lines


def test_activation_names_are_built_not_written():
    files = [p for d in ("helpers", "tests", "tools") for p in (ROOT / d).rglob("*.py")]
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in files if p.name not in ("names.py", "test_names.py")
                 for i in _hand_written_keys(p.read_text())]
    assert not offenders, f"write helpers.model.names.key(layer, name), not 'L0.A' by hand: {offenders}"
    assert _hand_written_keys('c["L0.A"]; c[f"L{layer}.z"]; "not L0.A a key"') == [1, 1]  # the detector works
