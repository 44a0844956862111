"""Figures for notebook 07: the entries of a vector before and after LayerNorm."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes


def before_after(ax_before: Axes, ax_after: Axes, before, after, bins: int = 24) -> tuple[Axes, Axes]:
    """Histograms of the d_model entries of one residual vector before and after a normalisation,
    with the mean (solid line) and mean +- one standard deviation (dashed) marked."""
    for ax, vals, title, color in ((ax_before, before, "before: x", "tab:gray"),
                                   (ax_after, after, "after: LayerNorm(x)", "tab:blue")):
        vals = np.asarray(vals, dtype=float).ravel()
        mu, sd = vals.mean(), vals.std()
        ax.hist(vals, bins=bins, color=color, alpha=0.8)
        ax.axvline(mu, color="k", lw=1.5)
        for s in (-1, 1):
            ax.axvline(mu + s * sd, color="k", lw=1, ls="--")
        ax.set_title(f"{title}   mean {mu:.2f}, std {sd:.2f}", fontsize=10)
        ax.set_xlabel("entry value")
    ax_before.set_ylabel("how many of the d_model entries")
    return ax_before, ax_after
