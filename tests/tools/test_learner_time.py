"""Learner time: each notebook's opening and README's table give the estimate tools/learner_time.py computes from the
notebook as it is now (words, code lines, predictions, explorers, self-check questions, the exercises' stated
minutes), the method counts what it says it counts, and each opening's run time is the bench's (docs/speed.md)."""

import math
import re

import nbformat
import pytest


from tools import learner_time as lt
ESTIMATES = [lt.estimate(p) for p in sorted(lt.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]


@pytest.mark.parametrize("est", ESTIMATES, ids=[e["notebook"] for e in ESTIMATES])
def test_opening_and_readme_row_give_the_estimate(est):
    nb = nbformat.read(lt.NOTEBOOKS / f"{est['notebook']}.ipynb", as_version=4)
    assert lt.opening(est) in nb.cells[0].source, \
        f"{est['notebook']}'s opening is not the current estimate: run `python -m tools.learner_time --write`"
    row = next(ln for ln in lt.README.read_text(encoding="utf-8").splitlines()
               if ln.startswith(f"| {est['notebook'][:2]} | [") and f"](notebooks/{est['notebook']}.ipynb)" in ln)
    assert row.endswith(f"| {lt.readme_cell(est)} |"), "README's table: run `python -m tools.learner_time --write`"
    assert est["exercises"] and est["predictions"] >= 2 and est["words"] > 1000


def test_readme_totals_are_the_sum():
    text = lt.README.read_text(encoding="utf-8")
    assert lt.totals(ESTIMATES) in " ".join(text.split()), "README's totals: run `python -m tools.learner_time --write`"
    for lo, hi in lt.groups():
        total = sum(e["reading"] + e["exercise_minutes"] for e in ESTIMATES if lo <= e["notebook"][:2] <= hi)
        section = text.split("### Learner time", 1)[1]
        assert re.search(rf"{total / 60:.1f}(\s+hours)?\s+(for|and)\s", section), (lo, hi, total)


def test_the_method_on_a_made_up_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# T\n\n" + "word " * 198),                  # 200 words with the heading
        nbformat.v4.new_code_cell("import sys  # the Colab cell: skipped"),
        nbformat.v4.new_code_cell("import torch"),                                  # imports: skipped
        nbformat.v4.new_code_cell("a = 1\n\n# a comment\nb = 2\n" + "c = 3\n" * 10),  # 12 lines: 1 minute
        nbformat.v4.new_markdown_cell("**Predict, then check.** x"),                 # 2 min, 4 words
        nbformat.v4.new_code_cell("Explorer(model)"),                               # 4 min, 1 line
        nbformat.v4.new_markdown_cell("### Exercise 1.1 · T\n★☆☆ · about 10 min · checks: x"),
        nbformat.v4.new_code_cell("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"),
        nbformat.v4.new_markdown_cell("## Check yourself\n\n1. a?\n2. b?\n\n<details>1. x</details>"),
    ]
    path = tmp_path / "99_test.ipynb"
    nbformat.write(nb, path)
    est = lt.estimate(path)
    assert est["code_lines"] == 13 and est["predictions"] == 1 and est["explorers"] == 1
    assert est["check_yourself"] == 2 and est["exercises"] == [10]
    minutes = est["words"] / 100 + 13 * 5 / 60 + 2 + 4 + 2 * 1.5
    assert est["reading"] == lt.round5(minutes) and est["exercise_minutes"] == 10


def test_each_notebooks_run_time_matches_the_benchmark():
    """Each opening's "Running every cell takes about N seconds" is the bench's figure for it (docs/speed.md, a row
    per notebook that `bash run.sh bench --no-browser --write` writes), rounded up to the next 5 seconds: at least the
    measured time, never twice a rounding."""
    measured = lt.measured_run_times()
    notebooks = sorted((lt.ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert sorted(measured) == [p.stem for p in notebooks], "docs/speed.md: a row per notebook"
    for path in notebooks:
        seconds = measured[path.stem]
        opening = nbformat.read(path, as_version=4).cells[0].source
        stated = int(re.search(r"Running every cell takes about (\d+) seconds", opening).group(1))
        assert stated == 5 * math.ceil(seconds / 5) == lt.run_time_said(seconds), (path.name, stated, seconds)
