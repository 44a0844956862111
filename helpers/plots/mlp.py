"""Figures for notebook 06: the nonlinearities and the hidden neurons of an MLP."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from matplotlib.axes import Axes

from helpers.plots.basic import new_axes


def activations(ax: Axes | None, funcs: dict[str, Callable], lo: float = -4, hi: float = 4) -> Axes:
    """Plot each named elementwise function (e.g. ReLU, GELU) on [lo, hi]."""
    ax = ax or new_axes((6, 3))
    x = torch.linspace(lo, hi, 401)
    for name, f in funcs.items():
        ax.plot(x.numpy(), f(x).numpy(), label=name, lw=2)
    ax.axhline(0, color="k", lw=0.5)
    ax.axvline(0, color="k", lw=0.5)
    ax.set_xlabel("input")
    ax.set_ylabel("output")
    ax.legend()
    return ax


def neuron_bars(ax: Axes | None, z, top: int = 5, title: str = "") -> Axes:
    """The d_mlp entries of one hidden vector z as bars, the ``top`` most active ones labelled."""
    ax = ax or new_axes((8, 3))
    z = np.asarray(z, dtype=float).ravel()
    order = np.argsort(-z)[:top]
    colors = np.where(z > 0, "tab:orange", "tab:gray")
    ax.bar(range(len(z)), z, color=colors, width=1.0)
    for i in order:
        if z[i] > 0:
            ax.annotate(str(i), (i, z[i]), ha="center", va="bottom", fontsize=8)
    ax.set_xlabel(f"hidden neuron (0 ... d_mlp - 1 = {len(z) - 1})")
    ax.set_ylabel("z (after ReLU)")
    ax.set_xlim(-1, len(z))
    ax.set_title(title, fontsize=10)
    return ax


def neuron_table(ax: Axes, values: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str],
                 title: str = "") -> Axes:
    """How strongly one neuron fires for each (row, column) prompt, as a small heatmap."""
    im = ax.imshow(values, cmap="Oranges", aspect="auto", vmin=0)
    ax.set_yticks(range(len(row_labels)), row_labels, fontsize=7)
    ax.set_xticks(range(len(col_labels)), col_labels, fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return ax
