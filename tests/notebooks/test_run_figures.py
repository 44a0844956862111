"""No figure about other runs in the text a learner reads unless an output on screen shows it.

The learner sees one run: their own. A figure about other runs ("over 60 runs: steps 200-275", "in 57 of the 60",
"0.82 to 0.93 in the three seeds") belongs to the output beside it: a ``claim(...)`` call prints the measured runs of
a live-training claim (tests/notebooks/test_margins.py), a checked cell prints the shipped checkpoints' numbers. So every
sentence of a learner copy — markdown, and the comments of code cells — that speaks of other runs or seeds may hold
a figure only if that figure is printed by a checked cell of the same notebook (outputs that nbval compares on every
test run, so they are on screen for every learner). Anything else is a second copy of a claim, and is refused.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
LEARN = ROOT / "learn"
NOTEBOOKS = ROOT / "notebooks"

# a sentence speaks of other runs when it names runs or seeds in the plural, every/other/measured run(s), or counts
# of runs ("in 57 of the 60", "in all 20")
# ("runs" as a noun: after a count or a determiner, not the verb of "axis -1 runs over the positions")
OTHER_RUNS = re.compile(r"(?<![−-])\b(\d+|the|those|these|all|many|most|other|some|measured|training|several|few|more|"
                        r"both|our|such|twenty|sixty|three|five)\s+runs\b|\bruns (of|in|with)\b|\bseeds\b|"
                        r"\b(every|each|other|another|measured|training) runs?\b|"
                        r"\b\d+ of (the|those) \d+( training| measured)? (runs|seeds)\b|\bin all \d+\b", re.IGNORECASE)
FIGURE = re.compile(r"(?<![\w.])[−-]?\d+(?:,\d{3})*(?:\.\d+)?(?:\s?%)?(?![\w])")
# a number that names a thing rather than measures it: a notebook, section, exercise, layer, head, step of a recipe
NAMES = re.compile(r"\b(notebooks?|sections?|exercises?|layers?|heads?|seeds?|cells?|L|k =|d_\w+ =|n_\w+ =)\s*"
                   r"[−-]?\d+(?:,\d{3})*(?:\.\d+)?(\s*(,|and|or|to|–|-)\s*\d[\d.]*)*", re.IGNORECASE)


def _sentences(text: str) -> list[str]:
    text = re.sub(r"\$[^$]*\$", " ", text)                    # LaTeX: symbols, not figures about runs
    text = re.sub(r"`[^`]*`", " ", text)                      # code in prose: names
    return [s.strip() for s in re.split(r"(?<=[.!?:;])\s+|\n\s*\n|\n(?=[-*] )", text) if s.strip()]


def _comments(source: str) -> str:
    try:
        return "\n".join(t.string.lstrip("#").strip() for t in tokenize.generate_tokens(io.StringIO(source).readline)
                         if t.type == tokenize.COMMENT)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return ""


def shown(name: str) -> str:
    """The text every learner sees printed in a notebook: its checked cells' committed outputs."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type == "code" and "nbval-check-output" in cell.metadata.get("tags", []):
            for o in cell.get("outputs", []):
                out.append(o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


def unbacked(nb, printed: str) -> list[tuple[int, str, str]]:
    """(cell, sentence, figure) for each figure about other runs that no checked output of the notebook shows."""
    found = []
    digits = re.sub(r"(?<=\d),(?=\d{3})", "", printed.replace("−", "-"))   # 1,000 and 1000 are one figure
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            sentences = _sentences(cell.source)
        elif cell.cell_type == "code":   # each comment on its own: comments of different lines say different things
            sentences = [s for line in _comments(cell.source).splitlines() for s in _sentences(line)]
        else:
            sentences = []
        for sentence in sentences:
            if not OTHER_RUNS.search(sentence):
                continue
            for figure in FIGURE.findall(NAMES.sub(" ", sentence)):
                plain = figure.replace("−", "-").replace(" ", "").rstrip("%").replace(",", "")
                if not re.search(rf"(?<![\d.]){re.escape(plain)}(?![\d])", digits):
                    found.append((index, sentence[:160], figure))
    return found


@pytest.mark.parametrize("path", sorted(LEARN.glob("[0-9][0-9]_*.ipynb")), ids=lambda p: p.stem[:2])
def test_no_figure_about_other_runs_that_no_output_shows(path):
    nb = nbformat.read(path, as_version=4)
    bad = unbacked(nb, shown(path.stem))
    assert not bad, (f"{path.name}: figures about other runs that nothing on screen shows (state them with "
                     "claim(...) beside the run, print them in a checked cell, or cut them):\n"
                     + "\n".join(f"  cell {i}: {fig!r} in: {s}" for i, s, fig in bad))


def test_the_rule_catches_what_it_is_for():
    """Negative control: the kinds of sentence the series used to hold, each refused; names and this run pass."""
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Over those 60 runs the induction score passed 0.85 between steps 200 and 275."),
        nbformat.v4.new_markdown_cell("It did in 57 of the 60 training runs of this recipe."),
        nbformat.v4.new_code_cell("assert x > 3.5   # over 60 runs: first 8.0-9.8"),
        nbformat.v4.new_markdown_cell("The MLP's: 0.82 to 0.93 of the difference in the three seeds."),
        nbformat.v4.new_markdown_cell("Your run is one sample: the claims below show the measured runs. "
                                      "Notebook 10 reads layer 1's heads; the next cell prints this run's loss."),
    ])
    bad = unbacked(nb, printed="seed 0: 0.82\nseed 1: 0.93")
    cells = {i for i, *_ in bad}
    assert cells == {0, 1, 2}, bad                      # 3 is backed by the printed 0.82 and 0.93; 4 has no figure
    assert {f for i, _, f in bad if i == 0} >= {"60", "0.85", "200", "275"}
