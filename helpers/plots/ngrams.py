"""Figures for notebook 01: how n-gram tables grow and go unseen as n grows."""

from __future__ import annotations

from matplotlib.figure import Figure

from helpers.plots.alt import _num, describe
from helpers.plots.palette import BLUE, ORANGE, RED


def ngram_growth(rows: list[dict], fig: Figure | None = None) -> Figure:
    """Two panels from ``ngrams.ngram_table_stats`` rows: table sizes (log scale) and the share of
    held-out n-grams never seen in training."""
    if fig is None:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(9, 3.2), layout="constrained")
    n = [r["n"] for r in rows]
    ax1, ax2 = fig.subplots(1, 2)
    ax1.semilogy(n, [r["full_table"] for r in rows], "o--", color=BLUE, label="full table: n_vocab$^n$ entries")
    ax1.semilogy(n, [r["distinct_in_train"] for r in rows], "o-", color=ORANGE, label="n-grams that occur in training")
    ax1.set_xlabel("n")
    ax1.set_ylabel("count")
    ax1.set_title("How big an n-gram table gets", fontsize=10)
    ax1.legend(fontsize=8)
    ax2.plot(n, [100 * r["heldout_unseen"] for r in rows], "o-", color=RED)
    ax2.set_ylim(0, 100)
    ax2.set_xlabel("n")
    ax2.set_ylabel("% of held-out n-grams")
    ax2.set_title("Held-out n-grams never seen in training", fontsize=10)
    for a in (ax1, ax2):
        a.set_xticks(n)
    describe(fig, "How big an n-gram table gets, for n = " + ", ".join(map(str, n)) + ": the full table has "
             + ", ".join(_num(r["full_table"]) for r in rows) + " entries; the n-grams that occur in training "
             "number "
             + ", ".join(_num(r["distinct_in_train"]) for r in rows) + ". Held-out n-grams never seen in training: "
             + ", ".join(f"{100 * r['heldout_unseen']:.0f} %" for r in rows) + ".")
    return fig
