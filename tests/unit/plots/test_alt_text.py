"""Every picture's text alternative states its data: the words of helpers.plots.alt on
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

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def said(fig_or_ax) -> str:
    return alt.figure_text(getattr(fig_or_ax, "figure", fig_or_ax))


# --- the words, on hand-made data ----------------------------------------------------------------------------

def test_numbers_are_said_the_way_a_screen_reader_reads_them_well():
    assert [alt._num(v) for v in (2000.0, 747594, 6.4e19, 4.5e-6, -1e-4, 0.5, 3.0)] == [
        "2,000", "747,594", "64 quintillion", "4.5 times 10 to the minus 6", "minus 1 times 10 to the minus 4",
        "0.5", "3"]
    assert alt._num(-1.38e-8, scale=1.0) == "0" and alt._num(-0.0, ".2f") == "0.00"       # noise, and no "-0"
    assert alt._num(-0.001, ".2f") == alt._num(0.003, ".2f") == "nearly 0"      # a weight that rounds to 0 but isn't
    assert [alt._tok(t) for t in (",", ".", "<unk>", " ", "\n", "god")] == [
        "comma", "full stop", "unknown word", "space", "newline", "'god'"]
    assert alt.token_html("god") == "god" and alt.token_html(",").endswith(">comma</span>")


def test_bars_name_the_largest_with_their_values_and_the_rest_as_a_range():
    items = [("the", 0.5), ("a", 0.25), (" ", 0.125), ("\n", 0.0625), ("of", 0.03125), ("x", 0.02), ("y", 0.01),
             (",", 0.0000045)]
    assert alt.bars_text(items) == ("8 bars, largest first: 'the' 0.500, 'a' 0.250, space 0.125, newline 0.062, "
                                    "'of' 0.031; the other 3 from nearly 0 to 0.020.")
    assert alt.bars_text(items[:6]).endswith("'of' 0.031, 'x' 0.020.")           # one more: named, not a range
    assert alt.bars_text([]) == "No bars."


def test_signed_bars_name_all_of_few_or_both_ends_and_the_zeros():
    assert alt.signed_bars_text(["a", "b", "c", "d"], [2.0, -1.5, 0.0, 0.5]) == \
        "4 bars: 'a': 2, 'b': -1.5, 'c': 0, 'd': 0.5."
    assert alt.signed_bars_text([], [0.0, 3.0, 1, 2, -1, 0, 5, 6]) == \
        "8 bars; largest #7: 6, #6: 5, #1: 3; most negative #4: -1; 2 exactly 0."


def test_a_short_curve_is_every_value_and_its_trend():
    assert alt.curve_text("KL", [1, 2, 4, 8], [1.2, 0.7, 0.33, 0.14], x_name="d_model") == \
        "KL, at d_model 1, 2, 4, 8: 1.2, 0.7, 0.33, 0.14; each value smaller than the one before."


def test_a_long_curve_says_start_end_plateau_places_and_its_fastest_stretch():
    xs = list(range(0, 200, 10))                          # 20 points: level at 5, a drop after step 80, a floor
    ys = [5.0] * 9 + [4.0, 1.0] + [0.5] * 9
    text = alt.curve_text("loss", xs, ys, x_name="step")
    assert text.startswith("loss: starts at 5 (step 0), ends at 0.5 (step 190); lowest 0.5 at step 110, "
                           "highest 5 at step 0; it stays at 5 until step 80; at 0: 5, 40: 5, 80: 5, 110: 0.5")
    assert "it falls fastest between step 80 and 100 (from 5 to 1)" in text
    level = alt.curve_text("flat", list(range(20)), [1.0 + 0.001 * (i % 2) for i in range(20)])
    assert level.endswith("nearly level throughout.") and "fastest" not in level
    line = alt.curve_text("ReLU", list(range(20)), list(range(20)))     # a straight line has no fastest stretch
    assert "fastest" not in line and line.endswith("still rising at the end.")


def test_curves_are_compared_where_they_share_their_steps():
    steps = list(range(12))
    below = alt.curves_text({"attn": (steps, [4 - 0.1 * i for i in steps]),
                             "attn + LN": (steps, [3.9 - 0.15 * i for i in steps])}, x_name="step")
    assert below.endswith("attn + LN is below attn at every step; it reaches attn's final 2.9 at step 7.")
    crossing = alt.curves_text({"one": (steps, [4 - 0.1 * i for i in steps]),
                                "two": (steps, [4.2 - 0.13 * i for i in steps])}, x_name="step")
    assert crossing.endswith("one and two cross 1 time, the last between step 6 and 7; after it two is lower.")
    assert alt.level_text("loss", [1, 2, 3, 4], [5, 4.5, 1, 0.5], "ln 64", 4.16, "position") == \
        "loss is above ln 64 up to position 2 and below it from 3 on."


def test_a_histogram_gives_count_range_mean_spread_the_tallest_bin_and_a_long_tail():
    assert alt.histogram_text([0.0, 1.0, 1.0, 1.0, 2.0], bins=4) == \
        "5 values from 0 to 2, mean 1, standard deviation 0.632; the most (3) between 1 and 1.5."
    assert "mean 0," in alt.histogram_text([1e-9, -1e-9, 2.0, -2.0])             # rounding noise said as 0
    assert alt.histogram_text([0.0] * 20 + [10.0]).endswith("a long tail to the right.")


def test_a_grid_names_its_largest_cells_each_rows_largest_and_where_they_sit():
    M = np.array([[0.1, 0.9], [0.7, 0.2]])
    assert alt.grid_text(M, ["p", "q"], ["x", "y"]).startswith(
        "2 by 2 grid; largest row 'p' and column 'y': 0.9, row 'q' and column 'x': 0.7, row 'q' and column 'y': "
        "0.2; values from 0.1 to 0.9. Each row's largest: 'p' → 'y', 'q' → 'x'.")
    assert alt.grid_text(M, ["p", "q"], ["x", "y"], row=1) == "Row 'q': largest column 'x': 0.7; column 'y': 0.2."
    band = np.full((20, 20), np.nan)                      # masked above the diagonal, largest one step left of it
    band[0, 0] = 1.0
    for i in range(1, 20):
        band[i, : i + 1] = 0.1
        band[i, i - 1] = 1.0
    assert alt.grid_text(band).endswith("The most common place of a row's largest entry: one step left of the "
                                        "diagonal (the previous one), for 19 of 19 rows.")
    assert "column's largest entry: on the diagonal" in alt.grid_text(np.eye(20), by="column")


def test_what_a_fresh_reader_found_misleading_is_said_right():
    """A row of zeros has no largest entry; unlabelled rows count from 0 like the figure's ticks; the lowest point of a
    sampled curve is 'near' its sample; a wobble on a plateau is not 'still falling'; a weight that rounds to 0.00
    is 'nearly 0' whatever its size; and a level line never takes a curve's colour."""
    text = alt.grid_text(np.array([[0.0, 0.0], [0.2, 0.9]]), ["tele", "koga"], ["car", "hat"])
    assert "'tele' → all 0, 'koga' → 'hat'" in text
    assert "largest row 1 and column 0: 3" in alt.grid_text(np.array([[0.0, 1.0], [3.0, 2.0]]))
    x = np.arange(-3, 3.001, 0.02)
    gelu = x * 0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    assert "lowest -0.17 near x = -0.76" in alt.curve_text("GELU", x, gelu)
    steps = np.arange(100)
    score = np.r_[np.linspace(0, 0.9, 50), 0.9 + 0.03 * np.sin(np.arange(50))]     # up, then level with a wobble
    assert "still" not in alt.curve_text("induction score", steps, score)
    assert "still falling" in alt.curve_text("loss", steps, 5 - steps / 20)
    assert alt._num(0.0042, ".2f") == "nearly 0" and alt._num(0.0042) == "0.0042"
    ax = basic.lines(None, {f"c{i}": ([0, 1], [i, i + 1]) for i in range(3)}, "step", "loss", levels={"a": 1, "b": 2})
    curve_colours = {line.get_color() for line in ax.lines[:3]}
    assert not curve_colours & {line.get_color() for line in ax.lines[3:]}
    M = np.tril(np.ones((4, 4)))
    M[np.triu_indices(4, 1)] = np.nan
    words = said(basic.heatmap(None, M, xlabel="key position j", ylabel="query position i"))
    assert words.startswith("Rows: query position i; columns: key position j. 4 by 4 grid") and \
        words.endswith("6 cells masked (drawn grey).")


def test_an_attention_pattern_leads_with_what_tells_heads_apart_positions_from_1():
    A = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.6, 0.3]])
    masked = np.triu(np.ones((3, 3), dtype=bool), 1)
    summary = ("attention pattern, 3 by 3. On average a query gives 0.70 of its weight to the previous token and "
               "0.25 to itself; its strongest key is one step left of the diagonal (the previous one) for 2 of 2 "
               "queries (weights 0.60 to 0.80).")
    assert alt.pattern_text(A, ["a", "b", "c"], query=2, masked=masked) == "A" + summary[1:-1] + (
        ". Query 'c' at position 3 looks most at 'b' at position 2 (weight 0.60), 'c' at position 3 (weight 0.30), "
        "'a' at position 1 (weight 0.10).")
    assert alt.pattern_text(A, ["a", ",", "c"], masked=masked, label="head 1").startswith("Head 1: " + summary)
    assert "comma at position 2 looks at 'a' at position 1 (weight 0.80)" in alt.pattern_text(A, ["a", ",", "c"])


def test_a_patterns_frames_are_said_with_the_weight_they_hold():
    """The frames drawn over a pattern (notebook 09's earlier copies and what followed them) are in its words: how
    many cells in how many rows, and the share of those rows' weight they hold; a masked cell is never counted."""
    A = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.6, 0.3]])
    masked = np.triu(np.ones((3, 3), dtype=bool), 1)
    frames = np.zeros((3, 3), dtype=bool)
    frames[1, 0] = frames[2, 1] = frames[0, 2] = True                 # (row 1, column 3) is masked: not a frame
    text = alt.pattern_text(A, ["a", "b", "c"], masked=masked, marks={"#e08214": frames, "#222222": ~np.ones((3, 3),
                            dtype=bool)}, mark_words={"#e08214": "framed orange, the token after"})
    assert text.endswith(". Framed orange, the token after: 2 cells in 2 rows, holding 0.70 of those rows' weight on "
                         "average. Framed cells: none."), text
    assert "Framed" not in alt.pattern_text(A, ["a", "b", "c"], masked=masked)


def test_the_ladder_says_each_rungs_mean_and_seed_range():
    assert alt.dots_text([("bigram", [3.78]), ("1 layer", [3.4, 3.5, 3.6])]) == \
        "bigram 3.78; 1 layer 3.50 (3.40 to 3.60)."


# --- every picture kind carries them ---------------------------------------------------------------------------

def accessible_name(svg_text: str) -> str:
    return html.unescape(re.search(r'aria-label="([^"]*)"', svg_text).group(1))


def test_svg_charts_carry_their_data_in_their_accessible_name_and_desc():
    bars = svg.hbars([("the", 0.5), ("a", 0.25)], title="next token")
    assert accessible_name(bars) == "next token. probability, 2 bars, largest first: 'the' 0.500, 'a' 0.250."
    assert "<desc>" not in bars                           # said once: no description repeating the name
    v = svg.vbars(["1", "2", "P"], [0.2, 0.7, 0.1], title="softmax", ylabel="probability")
    assert accessible_name(v) == "softmax. probability: 3 bars: '1': 0.20, '2': 0.70, 'P': 0.10."
    h = svg.histogram([0.0, 1.0, 1.0, 1.0, 2.0], bins=4, title="x")
    assert "5 values from 0 to 2, mean 1" in accessible_name(h)
    g = svg.grid(np.array([[0.1, 0.9], [0.7, 0.2]]), ["p", "q"], ["x", "y"], title="facts")
    caption = html.unescape(re.search(r"<caption[^>]*>(.*?)</caption>", g).group(1))
    assert caption.startswith("facts: 2 by 2 grid; largest row 'p' and column 'y': 0.9")
    curve = induction.curve_svg([0, 10, 20], {"training loss": ([3.0, 2.0, 1.0], "#000")}, marker=10, label="loss")
    assert accessible_name(curve).startswith("loss. training loss, at step 0, 10, 20: 3, 2, 1; each value smaller than "
                                             "the one before")
    assert "Marked: step 10." in accessible_name(curve)


def test_attention_pictures_name_the_selected_querys_strongest_keys():
    A = np.array([[1.0, 0, 0], [0.8, 0.2, 0], [0.1, 0.6, 0.3]])
    masked = np.triu(np.ones((3, 3), dtype=bool), 1)
    table = attention.pattern_html(A, ["a", "b", "c"], query=2, masked=masked, label="layer 0, head 1")
    caption = html.unescape(re.search(r"<caption[^>]*>(.*?)</caption>", table).group(1))
    assert caption.startswith("Layer 0, head 1: attention pattern, 3 by 3.")
    assert caption.endswith("Query 'c' at position 3 looks most at 'b' at position 2 (weight 0.60), 'c' at position 3 "
                            "(weight 0.30), 'a' at position 1 (weight 0.10).")
    image = attention.pattern_image_html(A, ["a", "b", "c"], query=1, masked=masked, label="head 2 (switched off)")
    words = html.unescape(re.search(r'alt="([^"]*)"', image).group(1))
    assert words.startswith("Head 2 (switched off): attention pattern") and words.endswith(
        "Query 'b' at position 2 looks most at 'a' at position 1 (weight 0.80), 'b' at position 2 (weight 0.20).")
    bars = attention.row_bars_html([0.7, 0.3], ["x", ","], marks={1: "#e08214"}, words={"#e08214": "itself"})
    assert "(itself)</span>" in bars and ">comma</span>" in bars          # a mark's meaning in words, punctuation named


def test_every_matplotlib_helper_describes_its_data():
    ax = basic.bars(None, [("the", 0.5), ("a", 0.25)], title="after of")
    assert said(ax) == "after of: probability, 2 bars, largest first: 'the' 0.500, 'a' 0.250."
    ax = basic.loss_curves(None, {"train": ([1, 2, 3], [3.0, 2.0, 1.5])}, {"bigram": 3.78}, title="zero-layer")
    assert said(ax).startswith("zero-layer: cross-entropy against training step. train, at step 1, 2, 3: 3, 2, 1.5;")
    assert "bigram: 3.78 (a level line). train is below bigram everywhere." in said(ax)
    ax = basic.heatmap(None, np.array([[0.1, 0.9], [0.7, 0.2]]), ["x", "y"], ["p", "q"], title="M")
    assert said(ax).startswith("M: 2 by 2 grid; largest row 'p' and column 'y': 0.9")
    ax = basic.lines(None, {"KL": ([1, 2, 4], [1.2, 0.7, 0.1])}, "d_model", "KL (nats)", scale="logx",
                     levels={"floor": 0.05}, divider=(3, "here"))
    assert said(ax).startswith("KL (nats) against d_model. KL, at d_model 1, 2, 4: 1.2, 0.7, 0.1; each value smaller")
    assert "floor: 0.05 (a dashed level line). KL is above floor everywhere. A dotted line at d_model 3: here." \
        in said(ax)
    ax = attention.weight_bars(None, ["in", "the"], [0.25, 0.75], title="weights")
    assert said(ax).startswith("weights: attention weight of each token, in order: 'in' 0.25, 'the' 0.75.")
    ax = attention.score_variance(None, [1, 2, 4], [1.0, 2.0, 4.0], [1.0, 1.0, 1.0])
    assert "q·k without scaling, at d_head 1, 2, 4: 1, 2, 4; each value larger than the one before" in said(ax)
    S = np.array([[1.0, -np.inf], [0.5, -0.5]])
    ax = attention.score_heatmap(None, S, ["a", "b"])
    assert said(ax).startswith("S  (grey = −∞, masked): 1 entries masked (minus infinity); 2 by 2 grid; largest "
                               "row 'a' and column 'a': 1")
    fig = plt.figure()
    attention.heads_side_by_side(fig, [np.eye(2), np.array([[1.0, 0], [1.0, 0]])], ["a", "b"], ["head 0", "head 1"])
    assert "head 0: Attention pattern, 2 by 2" in said(fig) and "head 1: Attention pattern" in said(fig)
    assert "its strongest key is one step left of the diagonal (the previous one) for 1 of 1 queries" in said(fig)
    ax = ladder.rung_dots(None, [("bigram", 3.78), ("1 layer", [3.4, 3.6])], title="ladder")
    assert said(ax) == ("ladder: held-out cross-entropy, mean over seeds (lowest and highest seed), top to bottom: "
                        "bigram 3.78; 1 layer 3.50 (3.40 to 3.60).")
    ax = ladder.curves(None, {"attn": [[4.0, 3.0], [4.2, 3.2]]}, every=100)
    assert "attn (mean of 2 seeds), at step 100, 200: 4.1, 3.1" in said(ax)
    assert "at the last step the seeds span 3.000 to 3.200" in said(ax)
    ax = mlp.activations(None, {"ReLU": torch.relu})
    assert "ReLU: 0.00, 0.00, 0.00, 0.00, 0.00, 0.50, 1, 2, 4" in said(ax) and "ReLU is never below 0" in said(ax)
    ax = mlp.activations(None, {"GELU": torch.nn.functional.gelu}, title="the nonlinearity")
    words = said(ax)
    assert words.startswith("the nonlinearity. Each function's output") and "lowest, -0.17, near input -0.76" in words
    fig = ngrams.ngram_growth([{"n": 1, "full_table": 10, "distinct_in_train": 8, "heldout_unseen": 0.0},
                               {"n": 2, "full_table": 100, "distinct_in_train": 30, "heldout_unseen": 0.25}])
    assert "Held-out n-grams never seen in training: 0 %, 25 %." in said(fig) and "entries 10, 100" not in said(fig)


def test_phase_change_describes_loss_and_both_scores():
    class Run:
        step, loss = list(range(100)), [5.0] * 50 + [1.0] * 50
        eval_step, induction, previous = [0, 50, 99], [0.0, 0.2, 0.9], [0.1, 0.8, 0.9]
    text = said(induction.phase_change(None, Run()))
    assert "training loss (running mean of 10 steps): starts at 5 (step 0), ends at 1 (step 99)" in text
    assert "it stays at 5 until step 49" in text                          # the plateau before the drop
    assert ("induction score (layer 1, 0 to 1), at step 0, 50, 99: 0.00, 0.20, 0.90; each value larger than the one "
            "before") in text


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


def test_a_diverging_heatmap_is_centred_on_zero_unless_told_otherwise():
    from helpers.plots import basic

    M = np.array([[0.5, 2.0], [-1.0, 0.25]])   # not symmetric about 0: an uncentred map would put white at 0.5
    im = basic.heatmap(None, M, cmap="RdBu_r").images[0]
    assert im.get_clim() == (-2.0, 2.0)
    assert basic.heatmap(None, M, cmap="RdBu_r", vmin=-1, vmax=1).images[0].get_clim() == (-1, 1)
    assert basic.heatmap(None, M).images[0].get_clim() == (-1.0, 2.0)   # a sequential map: the data's range
    plt.close("all")
