"""PyTorch before use: the series assumes no PyTorch, and shows each operation before a learner needs it.

No PyTorch is assumed, so every PyTorch idiom a learner meets — in a visible code cell or an exercise scaffold of a
learner copy (learn/), in a folded hint or answer, or in the series' own solution of an exercise (what the exercise
needs, shown by `checks.answer` after an attempt) — must be on the list (helpers/idioms.py), and the list says where
it is first shown: a notebook and a section, in which a cell uses it or names it in a code span. The test fails,
naming notebook, cell and idiom, when an idiom is used before that cell or is not on the list at all.
tools/idioms.py says what counts as an idiom and reads them.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from helpers import idioms as listed
from tools import idioms

ROOT = Path(__file__).resolve().parents[2]
HEADING = re.compile(r"^#{2,3} (.+)$", re.M)


def shown_at(notebooks: dict[str, nbformat.NotebookNode], idiom: str) -> tuple[int, int] | str:
    """(notebook's place in the series, cell) where the list says an idiom is shown: the first cell of the listed
    section that uses or names it. A string says why there is none."""
    stem_prefix, section = listed.WHERE[idiom]
    order = sorted(notebooks)
    stem = next((s for s in order if s.startswith(stem_prefix)), None)
    if stem is None:
        return f"the list puts {idiom!r} in notebook {stem_prefix}, which does not exist"
    cells = notebooks[stem].cells
    start = next((i for i, c in enumerate(cells) if c.cell_type == "markdown"
                  and any(section in h for h in HEADING.findall(c.source))), None)
    if start is None:
        return f"the list puts {idiom!r} in {stem}'s section {section!r}, which is not there"
    end = next((i for i in range(start + 1, len(cells)) if cells[i].cell_type == "markdown"
                and HEADING.search(cells[i].source)), len(cells))
    for i in range(start, end):
        if idioms.mentions(cells[i], idiom):
            return order.index(stem), i
    return f"the list says {stem}'s section {section!r} shows {idiom!r}, but no cell of it uses or names it"


def all_uses(notebooks: dict[str, nbformat.NotebookNode], solutions: dict[str, list[idioms.Use]]):
    for place, stem in enumerate(sorted(notebooks)):
        for use in idioms.uses(notebooks[stem]) + solutions.get(stem, []):
            yield place, stem, use


def problems(notebooks: dict[str, nbformat.NotebookNode],
             solutions: dict[str, list[idioms.Use]] | None = None) -> list[str]:
    """Every use of an idiom before the list says it is shown, or of one not on the list."""
    found, where = [], {}
    for place, stem, use in all_uses(notebooks, solutions or {}):
        if use.idiom not in listed.WHERE:
            found.append(f"{stem} cell {use.cell} ({use.where}): {use.idiom!r} is not on the list of "
                         f"helpers/idioms.py, in: {use.line}")
            continue
        if use.idiom not in where:
            where[use.idiom] = shown_at(notebooks, use.idiom)
        shown = where[use.idiom]
        if isinstance(shown, str):
            found.append(f"{stem} cell {use.cell} ({use.where}): {shown}")
        elif (place, use.cell) < shown:
            nb, cell = sorted(notebooks)[shown[0]], shown[1]
            found.append(f"{stem} cell {use.cell} ({use.where}): {use.idiom!r} used before it is shown "
                         f"({nb} cell {cell}), in: {use.line}")
    return list(dict.fromkeys(found))


def series() -> tuple[dict[str, nbformat.NotebookNode], dict[str, list[idioms.Use]]]:
    notebooks = {p.stem: nbformat.read(p, as_version=4) for p in idioms.learner_notebooks()}
    solutions = {p.stem: idioms.solution_uses(p) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    return notebooks, solutions


def test_every_idiom_is_shown_before_it_is_used():
    found = problems(*series())
    assert not found, ("PyTorch used before the series shows it; show it first (a line of demo and a sentence, "
                       "or a comment at its first use) and say where in helpers/idioms.py, or use what is "
                       "shown:\n  " + "\n  ".join(found))


def test_every_listed_idiom_is_used_and_shown_where_the_list_says():
    notebooks, solutions = series()
    used = {use.idiom for _, _, use in all_uses(notebooks, solutions)}
    assert not set(listed.WHERE) - used, f"on the list but used nowhere: {sorted(set(listed.WHERE) - used)}"
    wrong = [s for idiom in listed.WHERE if isinstance(s := shown_at(notebooks, idiom), str)]
    assert not wrong, "\n".join(wrong)
    assert len(listed.WHERE) == len(listed.IDIOMS), "an idiom is listed twice"


def test_the_table_a_learner_can_print():
    table = listed.table()
    assert table.count("\n") == len(listed.IDIOMS) + 1 and "| `torch.arange` |" in table
    assert all(row.startswith("| `") for row in listed.table("05").splitlines()[2:])


def notebook(*cells: tuple[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    return nb


@pytest.fixture
def planted(monkeypatch):
    """A two-notebook series and its own list: torch.arange shown in 02's section "Tools"."""
    monkeypatch.setattr(listed, "WHERE", {"torch.arange": ("02", "Tools"), ".sum": ("01", "Sums"),
                                          "dim=": ("01", "Sums"), "torch.tensor": ("01", "Sums")})
    first = [("md", "## Sums\n`M.sum(dim=0)` adds down the rows."),
             ("code", "M = torch.tensor([[1.0, 2.0]])\nM.sum(dim=0)")]
    second = [("md", "## Tools\n`torch.arange(3)` is 0, 1, 2."), ("code", "x = torch.arange(3)")]
    return first, second


def test_a_planted_use_before_it_is_shown_is_caught(planted):
    first, second = planted
    assert problems({"01_a": notebook(*first), "02_b": notebook(*second)}) == []
    early = problems({"01_a": notebook(*first, ("code", "ids = torch.arange(5)")), "02_b": notebook(*second)})
    assert early == ["01_a cell 2 (code): 'torch.arange' used before it is shown (02_b cell 0), in: "
                     "ids = torch.arange(5)"]
    in_hint = notebook(*first, ("md", "### Exercise\n<details><summary>Hint 1</summary>\n\n"
                                      "`torch.arange(n)` numbers the positions.\n</details>"))
    assert "'torch.arange' used before" in problems({"01_a": in_hint, "02_b": notebook(*second)})[0]
    in_solution = {"01_a": [idioms.Use("torch.arange", 1, "solution 1.1", "torch.arange(n)")]}
    assert "(solution 1.1): 'torch.arange' used before" in problems(
        {"01_a": notebook(*first), "02_b": notebook(*second)}, in_solution)[0]


def test_an_idiom_not_on_the_list_or_not_where_it_says_is_caught(planted):
    first, second = planted
    unlisted = problems({"01_a": notebook(*first, ("code", "y = M.T @ M")), "02_b": notebook(*second)})
    assert any("'.T' is not on the list" in p for p in unlisted) and any("'@' is not on the list" in p
                                                                        for p in unlisted)
    later = notebook(("md", "## Tools\nNothing here."), ("md", "## Later"), ("code", "x = torch.arange(3)"))
    moved = problems({"01_a": notebook(*first), "02_b": later})
    assert moved == ["02_b cell 2 (code): the list says 02_b's section 'Tools' shows 'torch.arange', but no cell "
                     "of it uses or names it"]


@pytest.mark.parametrize(("code", "want"), [
    ("import torch.nn.functional as G\nG.softmax(x, dim=0)", ["F.softmax", "dim="]),
    ("from torch import nn\nnn.Linear(2, 3)", ["torch.nn.Linear"]),
    ("x[rows, cols] = 1.0\nd = {}\nd['a'] = 1\nnames = []\nnames[0] = 'b'", ["x[i] = v"]),
    ("import math\nmath.exp(1) + math.sqrt(2)", []),                       # Python's own modules
    ("from helpers import ngrams\nngrams.normalize_columns(C).sum()", [".sum"]),   # the helpers are not PyTorch
    ("', '.join(words)\ntext.split()\nscores.values()", []),              # a string's and a dict's methods
    ("history.step[-1]", []),                                             # a field named like a method
    ("A.mT @ B.T", [".mT", "@", ".T"]),
])
def test_what_counts_as_an_idiom(code, want):
    assert sorted(i for i, _ in idioms.read_code(code, {"torch": "torch"}, set())) == sorted(want)
