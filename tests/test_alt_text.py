"""Every picture's text alternative states its data (issue 31, deliverable 1): the words of helpers.plots.alt on
hand-made data, each picture kind carrying them (SVG, HTML table, image, static figure), the figure's HTML form in
IPython, and no notebook drawing a figure around the helpers."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import matplotlib
import numpy as np
import pytest
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from helpers.plots import alt, attention, basic, induction, ladder, mlp, ngrams, svg

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def said(fig_or_ax) -> str:
    return alt.figure_text(getattr(fig_or_ax, "figure", fig_or_ax))


# --- the words, on hand-made data ----------------------------------------------------------------------------

def test_bars_name_the_largest_with_their_values_and_the_rest_as_a_range():
    items = [("the", 0.5), ("a", 0.25), (" ", 0.125), ("\n", 0.0625), ("of", 0.03125), ("x", 0.02), ("y", 0.01)]
    assert alt.bars_text(items) == ("7 bars, largest first: 'the' 0.500, 'a' 0.250, space 0.125, newline 0.062, "
                                    "'of' 0.031; the other 2 from 0.010 to 0.020.")
    assert alt.bars_text(items[:6]).endswith("; then 'x' 0.020.")
    assert alt.bars_text([]) == "No bars."


def test_signed_bars_name_both_ends_and_the_zeros():
    assert alt.signed_bars_text(["a", "b", "c", "d"], [2.0, -1.5, 0.0, 0.5]) == \
        "4 bars; largest 'a' 2.00, 'd' 0.50; most negative 'b' -1.50; 1 exactly 0."
    assert alt.signed_bars_text([], [0.0, 3.0]) == "2 bars; largest #1 3.00; 1 exactly 0."


def test_a_curve_says_where_it_starts_ends_turns_and_changes_fastest():
    xs = list(range(0, 200, 10))                          # 20 points: a plateau, a drop after step 80, a floor
    ys = [5.0] * 9 + [4.0, 1.0] + [0.5] * 9
    text = alt.curve_text("loss", xs, ys, x_name="step")
    assert text.startswith("loss: starts at 5 (step 0), ends at 0.5 (step 190); lowest 0.5 at step 110, "
                           "highest 5 at step 0")
    assert "it falls fastest between step 80 and 100 (from 5 to 1)" in text
    assert alt.curve_text("flat", [1, 2, 3], [1.0, 1.0, 1.0]).endswith("highest 1 at x = 1.")  # no fastest stretch
    assert alt.curve_text("one", [3], [2.0]) == "one: one point, 2 at x = 3."


def test_a_histogram_gives_count_range_mean_spread_and_the_tallest_bin():
    text = alt.histogram_text([0.0, 1.0, 1.0, 1.0, 2.0], bins=4)
    assert text == ("5 values from 0 to 2, mean 1, standard deviation 0.632; the most (3) between 1 and 1.5.")


def test_a_grid_names_its_largest_cells_each_rows_largest_or_one_row():
    M = np.array([[0.1, 0.9], [0.7, 0.2]])
    assert alt.grid_text(M, ["p", "q"], ["x", "y"]) == \
        "2 by 2 grid; largest 'p', 'y': 0.90, 'q', 'x': 0.70, 'q', 'y': 0.20. Each row's largest: 'p' → 'y', 'q' → 'x'."
    assert alt.grid_text(M, ["p", "q"], ["x", "y"], row=1) == "Row 'q' (row 1): largest 'x' 0.70, 'y' 0.20."
    big = np.eye(20)
    assert "20 of the 20 rows have their largest on the diagonal" in alt.grid_text(big)


def test_an_attention_pattern_names_the_selected_querys_strongest_keys():
    A = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.6, 0.3]])
    masked = np.triu(np.ones((3, 3), dtype=bool), 1)
    assert alt.pattern_text(A, ["a", "b", "c"], query=2, masked=masked) == \
        "Query 'c' (2) attends most to 'b' (1) 0.60, 'c' (2) 0.30, 'a' (0) 0.10."
    assert alt.pattern_text(A, ["a", "b", "c"], masked=masked) == (
        "Attention pattern, 3 by 3; each query's strongest key: 'a' (0) → 'a' (0) 1.00, 'b' (1) → 'a' (0) 0.80, "
        "'c' (2) → 'b' (1) 0.60. 1 of 3 queries look most at themselves, 2 at the previous token.")


def test_the_ladder_says_each_rungs_mean_and_seed_range():
    assert alt.dots_text([("bigram", [3.78]), ("1 layer", [3.4, 3.5, 3.6])]) == \
        "bigram 3.78; 1 layer 3.50 (3.40 to 3.60)."


# --- every picture kind carries them ---------------------------------------------------------------------------

def accessible_name(svg_text: str) -> str:
    return html.unescape(re.search(r'aria-label="([^"]*)"', svg_text).group(1))


def test_svg_charts_carry_their_data_in_their_accessible_name_and_desc():
    bars = svg.hbars([("the", 0.5), ("a", 0.25)], title="next token")
    assert accessible_name(bars) == "next token. probability, 2 bars, largest first: 'the' 0.500, 'a' 0.250."
    assert "<desc>probability, 2 bars" in bars
    v = svg.vbars(["1", "2", "P"], [0.2, 0.7, 0.1], title="softmax", ylabel="probability")
    assert accessible_name(v) == "softmax. probability: 3 bars; largest '2' 0.70, '1' 0.20, 'P' 0.10."
    h = svg.histogram([0.0, 1.0, 1.0, 1.0, 2.0], bins=4, title="x")
    assert "5 values from 0 to 2, mean 1" in accessible_name(h)
    g = svg.grid(np.array([[0.1, 0.9], [0.7, 0.2]]), ["p", "q"], ["x", "y"], title="facts")
    caption = html.unescape(re.search(r"<caption[^>]*>(.*?)</caption>", g).group(1))
    assert caption.startswith("facts: 2 by 2 grid; largest 'p', 'y': 0.90")
    curve = induction.curve_svg([0, 10, 20], {"training loss": ([3.0, 2.0, 1.0], "#000")}, marker=10, label="loss")
    assert accessible_name(curve).startswith("loss. training loss: starts at 3 (step 0), ends at 1 (step 20)")
    assert "Marked: step 10." in accessible_name(curve)


def test_attention_pictures_name_the_selected_querys_strongest_keys():
    A = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.6, 0.3]])
    masked = np.triu(np.ones((3, 3), dtype=bool), 1)
    table = attention.pattern_html(A, ["a", "b", "c"], query=2, masked=masked)
    assert html.unescape(re.search(r"<caption[^>]*>(.*?)</caption>", table).group(1)) == \
        "Query 'c' (2) attends most to 'b' (1) 0.60, 'c' (2) 0.30, 'a' (0) 0.10."
    image = attention.pattern_image_html(A, ["a", "b", "c"], query=1, masked=masked)
    assert html.unescape(re.search(r'alt="([^"]*)"', image).group(1)) == \
        "Query 'b' (1) attends most to 'a' (0) 0.80, 'b' (1) 0.20."


def test_every_matplotlib_helper_describes_its_data():
    ax = basic.bars(None, [("the", 0.5), ("a", 0.25)], title="after of")
    assert said(ax) == "after of: probability, 2 bars, largest first: 'the' 0.500, 'a' 0.250."
    ax = basic.loss_curves(None, {"train": ([1, 2, 3], [3.0, 2.0, 1.5])}, {"bigram": 3.78}, title="zero-layer")
    assert said(ax).startswith("zero-layer: cross-entropy against training step. train: starts at 3 (step 1)")
    assert "bigram: 3.78 (a level line)." in said(ax)
    ax = basic.heatmap(None, np.array([[0.1, 0.9], [0.7, 0.2]]), ["x", "y"], ["p", "q"], title="M")
    assert said(ax).startswith("M: 2 by 2 grid; largest 'p', 'y': 0.90")
    ax = basic.lines(None, {"KL": ([1, 2, 4], [1.2, 0.7, 0.1])}, "d_model", "KL (nats)", scale="logx",
                     levels={"floor": 0.05}, divider=(3, "here"))
    assert said(ax).startswith("KL (nats) against d_model. KL: starts at 1.2 (d_model 1), ends at 0.1 (d_model 4)")
    assert "floor: 0.05 (a dashed level line). A dotted line at d_model 3: here." in said(ax)
    ax = attention.weight_bars(None, ["in", "the"], [0.25, 0.75], title="weights")
    assert said(ax).startswith("weights: attention weight of each token, in order: 'in' 0.25, 'the' 0.75.")
    ax = attention.score_variance(None, [1, 2, 4], [1.0, 2.0, 4.0], [1.0, 1.0, 1.0])
    assert "q·k: starts at 1 (d_head 1), ends at 4 (d_head 4)" in said(ax)
    S = np.array([[1.0, -np.inf], [0.5, -0.5]])
    ax = attention.score_heatmap(None, S, ["a", "b"])
    assert said(ax).startswith("S  (grey = −∞, masked): 1 entries masked (minus infinity); 2 by 2 grid; largest "
                               "'a', 'a': 1.00")
    fig = plt.figure()
    attention.heads_side_by_side(fig, [np.eye(2), np.array([[1.0, 0], [1.0, 0]])], ["a", "b"], ["head 0", "head 1"])
    assert "head 0: Attention pattern, 2 by 2" in said(fig) and "head 1: Attention pattern" in said(fig)
    assert "1 of 2 queries look most at themselves, 1 at the previous token" in said(fig)
    ax = ladder.rung_dots(None, [("bigram", 3.78), ("1 layer", [3.4, 3.6])], title="ladder")
    assert said(ax) == ("ladder: held-out cross-entropy, mean over seeds (lowest and highest seed), top to bottom: "
                        "bigram 3.78; 1 layer 3.50 (3.40 to 3.60).")
    ax = ladder.curves(None, {"attn": [[4.0, 3.0], [4.2, 3.2]]}, every=100)
    assert "attn (mean of 2 seeds): starts at 4.1 (step 100), ends at 3.1 (step 200)" in said(ax)
    assert "at the last step the seeds span 3.000 to 3.200" in said(ax)
    ax = mlp.activations(None, {"ReLU": torch.relu})
    assert "ReLU: 0.00, 0.00, 0.00, 1.00, 4.00" in said(ax)
    fig = ngrams.ngram_growth([{"n": 1, "full_table": 10, "distinct_in_train": 8, "heldout_unseen": 0.0},
                               {"n": 2, "full_table": 100, "distinct_in_train": 30, "heldout_unseen": 0.25}])
    assert "Held-out n-grams never seen in training: 0 %, 25 %." in said(fig)


def test_phase_change_describes_loss_and_both_scores():
    class Run:
        step, loss = list(range(100)), [5.0] * 50 + [1.0] * 50
        eval_step, induction, previous = [0, 50, 99], [0.0, 0.2, 0.9], [0.1, 0.8, 0.9]
    text = said(induction.phase_change(None, Run()))
    assert "training loss (running mean of 10 steps): starts at 5 (step 0), ends at 1 (step 99)" in text
    assert "induction score (layer 1, 0 to 1): starts at 0.00 (step 0), ends at 0.90 (step 99)" in text


def test_a_figure_drawn_without_a_helper_says_so():
    _, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    ax.set_title("raw")
    assert alt.figure_text(ax.figure) == "A figure (no description of its data): raw."


# --- the figure's HTML form in IPython ----------------------------------------------------------------------------

def test_figure_html_is_the_png_with_the_words_as_alt_and_under_it():
    ax = basic.bars(None, [("the", 0.5)], title="t")
    out = alt.figure_html(ax.figure)
    assert out.startswith('<figure class="gt-figure"') and 'src="data:image/png;base64,' in out
    assert 'alt="t: probability, 1 bars, largest first: &#x27;the&#x27; 0.500."' in out
    assert "<summary>the figure in words</summary>t: probability" in out


def test_registered_in_ipython_it_survives_the_inline_backend_dropping_it():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.pylabtools import select_figure_formats
    from matplotlib.figure import Figure

    shell = InteractiveShell.instance()
    try:
        assert alt.register_figure_html(shell)
        alt.register_figure_html(shell)                       # twice: still one hook per event
        html_formatter = shell.display_formatter.formatters["text/html"]
        ax = basic.bars(None, [("the", 0.5)], title="t")
        assert "the figure in words" in html_formatter(ax.figure)
        select_figure_formats(shell, {"png"})                  # what the inline backend does when it loads
        assert Figure not in html_formatter.type_printers
        shell.events.trigger("post_execute")                   # ... and ours is back before the cell's figures show
        assert "the figure in words" in html_formatter(ax.figure)
        assert sum("ensure" in getattr(f, "__qualname__", "") for f in shell.events.callbacks["pre_run_cell"]) == 1
    finally:
        InteractiveShell.clear_instance()
    assert alt.register_figure_html(None) is False             # no IPython shell here: nothing to do


def test_no_notebook_draws_a_figure_around_the_helpers():
    drawing = re.compile(r"\.(plot|bar|barh|imshow|semilogx|semilogy|loglog|scatter|hist|fill_between|axhline|"
                         r"axvline)\(")
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                found = drawing.search("".join(cell["source"]))
                assert not found, f"{path.name} cell {i} draws with matplotlib directly ({found.group(0)}): use a " \
                                  "helpers.plots helper, which gives the figure its data in words"
