"""The figures notebooks 02, 06 and 09 quote "over 60 runs" are the ones docs/margins.json stores.

Every markdown paragraph (or list item) and every code comment of those notebooks that speaks of the 60 runs (or of
"20 seeds") is read; each figure in it — a range ("0.08-0.27", "45-88 %"), an "at most", an "or more", a count of
runs ("better in 33", "in 56 of the 60") — must be one of FIGURES below, which says how it is computed from the
stored per-run values (tools/margins.py: ``values[label] = [[seed, setting, value], ...]``), and must agree with them
rounded as written: to the nearest in its last digit, or outward (a lower end rounded down, an upper end up). A
negative control: each number of each figure moved two units of its last digit either way agrees with nothing.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
MARGINS = json.loads((ROOT / "docs" / "margins.json").read_text(encoding="utf-8"))
NOTEBOOKS = ("02_zero_layer", "06_mlp", "09_induction_heads")
SPEAKS = re.compile(r"\b60 (?:training )?runs|\bof (?:the |those )?60\b|\ball 60\b|\b20 seeds\b")
NUMBER = re.compile(r"\d+(?:\.\d+)?")
# figure-like text that is not a figure over the runs (a name, a step, a section)
NOT_FIGURES = {"06_mlp": ("steps 230-299", "steps 0-150"), "09_induction_heads": ("sections 3-9", "positions 0-15")}


def normal(text: str) -> str:
    """One space between words, a hyphen for a range's dash, "a to b" as "a-b" (digits on both sides)."""
    text = " ".join(text.replace("–", "-").replace("−", "-").split())
    return re.sub(r"(\d) to (\d)", r"\1-\2", text)


def passages(name: str) -> list[tuple[int, str]]:
    """(cell, text) of every markdown paragraph or list item, and every code comment, that speaks of the runs."""
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            pieces = re.split(r"\n\s*\n|\n(?=\s*- )", cell.source)
        else:
            # a comment continued on the next line is one passage
            joined: list[str] = []
            for line in cell.source.splitlines():
                if "#" in line:
                    comment = line[line.index("#") + 1:]
                    if joined and line.lstrip().startswith("#") and joined[-1] is not None:
                        joined[-1] += " " + comment
                    else:
                        joined.append(comment)
                else:
                    joined.append(None)
            pieces = [c for c in joined if c is not None]
        found += [(i, normal(p)) for p in pieces if SPEAKS.search(normal(p))]
    return found


# ---- the per-run values --------------------------------------------------------------------------------------------

def runs(name: str, label: str) -> dict[tuple[int, str], float]:
    return {(seed, setting): value for seed, setting, value in MARGINS[name]["values"][label] if value is not None}


def column(name: str, *labels: str, scale: float = 1.0) -> list[float]:
    return [v * scale for label in labels for v in runs(name, label).values()]


def paired(name: str, a: str, b: str, how: Callable[[float, float], float]) -> list[float]:
    first, second = runs(name, a), runs(name, b)
    return [how(first[k], second[k]) for k in first if k in second]


# ---- how a written number agrees with a value ----------------------------------------------------------------------

def unit(written: str) -> float:
    return 10.0 ** -(len(written.split(".")[1]) if "." in written else 0)


def near(value: float, written: str) -> bool:
    return abs(value - float(written)) <= unit(written) / 2 + 1e-9


def low_end(value: float, written: str) -> bool:   # to the nearest, or rounded down (outward for a lower end)
    return near(value, written) or float(written) - 1e-9 <= value < float(written) + unit(written)


def high_end(value: float, written: str) -> bool:  # to the nearest, or rounded up
    return near(value, written) or float(written) - unit(written) < value <= float(written) + 1e-9


@dataclass
class Figure:
    notebook: str
    written: str                                    # as the prose writes it (after ``normal``)
    agrees: Callable[[list[str]], bool]             # the figure's numbers, as written -> whether the values say so


def between(name: str, written: str, values: Callable[[], list[float]]) -> Figure:
    """A range "a-b": the lowest and the highest of the per-run values."""
    def agrees(numbers):
        lo, hi = numbers[-2:]
        xs = values()
        return low_end(min(xs), lo) and high_end(max(xs), hi)
    return Figure(name, written, agrees)


def at_most(name: str, written: str, values: Callable[[], list[float]]) -> Figure:
    """"at most x": every value is x or less, and the highest rounds up (or to the nearest) to x."""
    return Figure(name, written, lambda n: max(values()) <= float(n[-1]) + 1e-9 and high_end(max(values()), n[-1]))


def or_more(name: str, written: str, values: Callable[[], list[float]]) -> Figure:
    """"x or more": every value is x or more, and the lowest rounds down (or to the nearest) to x."""
    return Figure(name, written, lambda n: min(values()) >= float(n[0]) - 1e-9 and low_end(min(values()), n[0]))


def counted(name: str, written: str, count: Callable[[], int], of_runs: bool = False) -> Figure:
    """"N of the 60": how many runs have the property (and, when written, the 60 itself is the number of runs)."""
    def agrees(numbers):
        return int(numbers[0]) == count() and (not of_runs or int(numbers[1]) == MARGINS[name]["runs"])
    return Figure(name, written, agrees)


Z, M, I = NOTEBOOKS
NARROW, WIDE = "attention only: facts right", "attention only, wide: facts right"
NEEDS = "exercise 6.2: most neurons a known fact needs"
K0, K1 = "copying by position: p(B) at k = 0", "copying by position: lowest p(B), k = 1-29"

FIGURES = [
    # 02: the zero-layer model
    between(Z, "90.8-92.5 %", lambda: column(Z, "share of the unigram -> bigram gap closed", scale=100)),
    between(Z, "0.908-0.925", lambda: column(Z, "share of the unigram -> bigram gap closed")),
    between(Z, "0.230-0.235", lambda: column(Z, "KL(zero-layer) / KL(unigram)")),
    or_more(Z, "by 1.6 or more", lambda: column(Z, "d_model sweep: smallest ratio of one KL to the next")),
    between(Z, "298-349x", lambda: column(Z, "d_model sweep: KL at 1 / KL at 64")),
    # 06: facts in an MLP
    between(M, "45-88 %", lambda: column(M, NARROW, WIDE, scale=100)),
    counted(M, "better in 33", lambda: sum(d > 0 for d in paired(M, WIDE, NARROW, lambda w, n: w - n))),
    counted(M, "worse in 26", lambda: sum(d < 0 for d in paired(M, WIDE, NARROW, lambda w, n: w - n))),
    counted(M, "beat the narrow one 33 times", lambda: sum(d > 0 for d in paired(M, WIDE, NARROW,
                                                                                  lambda w, n: w - n))),
    counted(M, "lost 26 times", lambda: sum(d < 0 for d in paired(M, WIDE, NARROW, lambda w, n: w - n))),
    Figure(M, "from 31 points worse to 38 points better",   # the wide model's facts right minus the narrow one's
           lambda n: high_end(-min(paired(M, WIDE, NARROW, lambda w, n: 100 * (w - n))), n[0])
           and min(paired(M, WIDE, NARROW, lambda w, n: w - n)) < 0
           and high_end(max(paired(M, WIDE, NARROW, lambda w, n: 100 * (w - n))), n[1])),
    between(M, "scored 95-100 %", lambda: column(M, "attention + MLP: facts right", scale=100)),
    Figure(M, "won every time, by 11-48 points",
           lambda n: min(column(M, "attention + MLP minus the better attention-only model")) > 0
           and between(M, "", lambda: column(M, "attention + MLP minus the better attention-only model",
                                             scale=100)).agrees(n)),
    between(M, "40-54 %", lambda: column(M, "share of (prompt, neuron) pairs with z > 0: above", scale=100)),
    between(M, "99-149", lambda: column(M, "median prompts a neuron fires on")),
    between(M, "50-75 %", lambda: column(M, "facts surviving their strongest neuron's ablation: above", scale=100)),
    between(M, "32-103", lambda: column(M, "facts broken by the most needed neuron")),
    between(M, "63-230", lambda: column(M, "prompts the explorer's opening neuron fires on")),
    Figure(M, "the median was 1 in at least half the runs, 2 in the rest",
           lambda n: 2 * column(M, "exercise 6.2: median neurons a known fact needs").count(float(n[0]))
           >= MARGINS[M]["runs"] and set(column(M, "exercise 6.2: median neurons a known fact needs"))
           == {float(n[0]), float(n[1])}),
    between(M, "30-74 %", lambda: column(M, "exercise 6.2: share of known facts one neuron flips", scale=100)),
    between(M, "4-128", lambda: column(M, NEEDS)),
    Figure(M, "(128, every neuron, in one run only",
           lambda n: float(n[0]) == max(column(M, NEEDS)) and column(M, NEEDS).count(float(n[0])) == 1),
    Figure(M, "in the other 59 runs at most 31",
           lambda n: len(column(M, NEEDS)) - column(M, NEEDS).count(max(column(M, NEEDS))) == int(n[0])
           and sorted(column(M, NEEDS))[-2] == float(n[1])),
    between(M, "23-51 %", lambda: column(M, "exercise 6.2: share of known facts whose strongest-firing neuron is in "
                                            "the set", scale=100)),
    # 09: induction heads
    between(I, "steps 200 and 275", lambda: column(I, "step the induction score passed 0.85")),
    between(I, "steps 350 and 775", lambda: column(I, "step it copied from every position (p(B) > 0.5, k >= 1)")),
    between(I, "steps 200-275", lambda: column(I, "step the induction score passed 0.85")),
    between(I, "steps 350-775", lambda: column(I, "step it copied from every position (p(B) > 0.5, k >= 1)")),
    Figure(I, "the median run: 30 s", lambda n: near(statistics.median(column(I, "training seconds")), n[0])),
    between(I, "8.0-9.8", lambda: column(I, "probe: loss on the first half")),
    between(I, "0.04-0.19", lambda: column(I, "probe: loss on the repeat")),
    between(I, "0.53-0.70", lambda: column(I, "first half: probability on characters already seen minus a uniform "
                                              "guess's")),
    Figure(I, "in all 60 training runs", lambda n: int(n[0]) == MARGINS[I]["runs"]
           and column(I, "both layer-1 heads are induction heads") == [1.0] * MARGINS[I]["runs"]),
    counted(I, "in 3 of those 60 runs", lambda: int(sum(column(I, "both layer-0 heads are previous-token heads"))),
            of_runs=True),
    between(I, "4.2-5.0", lambda: column(I, "repeat loss, previous-token head(s) off")),
    between(I, "0.13-1.6", lambda: column(I, "one induction head off, minus intact")),
    or_more(I, "by 0.15 or more", lambda: column(I, "K minus max(Q, V) composition, clearest previous-token head")),
    between(I, "3.4-4.6", lambda: column(I, "repeat loss, previous-token head(s) out of layer 1's keys only")),
    at_most(I, "at most 0.03", lambda: column(I, "queries, values, direct path (alone or all three): most above "
                                                 "intact")),
    counted(I, "in 58 of the 60 runs", lambda: sum(v < 0 for v in column(I, "all three but the keys at once, minus "
                                                                           "intact")), of_runs=True),
    between(I, "0.14-0.58", lambda: column(I, "segment of 20: loss on the repeat")),
    between(I, "0.54-0.85", lambda: column(I, K1)),
    between(I, "0.25-0.88", lambda: column(I, K0)),
    counted(I, "in 56 of the 60 runs", lambda: sum(d < 0 for d in paired(I, K0, K1, lambda a, b: a - b)),
            of_runs=True),
    between(I, "3.2-4.2", lambda: column(I, "one layer: loss on the repeat")),
    between(I, "21-88 times", lambda: column(I, "one layer / two layers, loss on the repeat")),
    counted(I, "in 57 of 60", lambda: int(sum(column(I, "explorer's guess after 'Mr and Mrs D' is 'u'"))),
            of_runs=True),
    counted(I, "in 57 of the 60", lambda: int(sum(column(I, "explorer's guess after 'Mr and Mrs D' is 'u'"))),
            of_runs=True),
]

# what is left of a passage once its figures are taken out must hold no range, "at most", "or more" or count of runs
FIGURE_LIKE = re.compile(r"\d+(?:\.\d+)?\s*-\s*\d|at most \d|\d+(?:\.\d+)? or more|\d+ of (?:the |those )?\d+|"
                         r"\d+ times\b|\b(?:better|worse|lost|beat|won) (?:in )?\d|\bin \d+ of\b|\d+ (?:training )?runs"
                         r"|\bbetween (?:steps )?\d")


def test_every_passage_on_the_runs_is_read():
    found = {name: passages(name) for name in NOTEBOOKS}
    assert len(found[Z]) >= 4 and len(found[M]) >= 10 and len(found[I]) >= 20, {k: len(v) for k, v in found.items()}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_every_figure_on_the_runs_is_one_the_table_computes(name):
    """Each passage's figures are FIGURES' (so a new one needs a line here), its 60 is the number of runs, its 20 the
    number of seeds."""
    figures = [f for f in FIGURES if f.notebook == name]
    for cell, text in passages(name):
        rest = text
        for figure in sorted(figures, key=lambda f: -len(f.written)):
            rest = rest.replace(figure.written, " ")
        for skip in NOT_FIGURES.get(name, ()):
            rest = rest.replace(skip, " ")
        for runs_ in re.findall(r"\b(\d+) (?:training )?runs", rest) + re.findall(r"\bof (?:the )?(\d+) runs", rest):
            assert int(runs_) == MARGINS[name]["runs"], (cell, text)
        rest = re.sub(rf"\b(?:all )?{MARGINS[name]['runs']} (?:training )?runs", " ", rest)
        assert all(int(n) == len(MARGINS[name]["seeds"]) for n in re.findall(r"\b(\d+) seeds", rest)), (cell, text)
        left = FIGURE_LIKE.findall(rest)
        assert not left, f"{name} cell {cell}: {left} in {text!r} is not in FIGURES: say how it is computed"


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f"{f.notebook[:2]}: {f.written}")
def test_each_figure_agrees_with_the_stored_runs(figure):
    texts = [text for _, text in passages(figure.notebook) if figure.written in text]
    assert texts, f"{figure.written!r} is no longer in a passage of {figure.notebook} on the runs"
    assert figure.agrees(NUMBER.findall(figure.written)), figure.written


@pytest.mark.parametrize("figure", FIGURES, ids=lambda f: f"{f.notebook[:2]}: {f.written}")
def test_a_figure_moved_two_units_agrees_with_nothing(figure):
    """The negative control: each number of the figure moved two units of its last digit, either way, fails."""
    numbers = NUMBER.findall(figure.written)
    for i, written in enumerate(numbers):
        for step in (-2, 2):
            moved = float(written) + step * unit(written)
            if moved < 0:
                continue
            decimals = len(written.split(".")[1]) if "." in written else 0
            shifted = numbers[:i] + [f"{moved:.{decimals}f}"] + numbers[i + 1:]
            assert not figure.agrees(shifted), (figure.written, shifted)
    # the ranges' rounding rule itself: a value half a unit away agrees, a unit and a half away does not
    assert near(0.245, "0.25") and not near(0.235, "0.25") and low_end(0.2599, "0.25") and not high_end(0.2599, "0.25")
    assert math.isclose(unit("0.908"), 0.001)
