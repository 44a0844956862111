"""General-purpose figures: probability bars, loss curves, labelled heatmaps."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def new_axes(figsize=(7, 3)) -> Axes:
    """A fresh Axes on a pyplot figure (shown inline by Jupyter at the end of the cell)."""
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def bars(ax: Axes | None, items: Sequence[tuple[str, float]], title: str = "",
         xlabel: str = "probability", color: str = "tab:blue") -> Axes:
    """Horizontal bars of (label, value), first item on top; labels show tokens readably."""
    ax = ax or new_axes()
    labels = [_show(t) for t, _ in items][::-1]
    values = [v for _, v in items][::-1]
    ax.barh(range(len(values)), values, color=color)
    ax.set_yticks(range(len(values)), labels)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3f}", va="center", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, max(values + [1e-9]) * 1.25)
    ax.set_title(title, fontsize=10)
    return ax


def loss_curves(ax: Axes | None, curves: dict[str, tuple[Sequence[float], Sequence[float]]],
                baselines: dict[str, float] | None = None, title: str = "") -> Axes:
    """Loss against training step for each named curve, with horizontal lines for baselines."""
    ax = ax or new_axes()
    for name, (x, y) in curves.items():
        ax.plot(x, y, label=name)
    for i, (name, value) in enumerate((baselines or {}).items()):
        ax.axhline(value, ls="--", lw=1, color=f"C{i + len(curves)}", label=f"{name} ({value:.2f})")
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats / token)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return ax


def heatmap(ax: Axes | None, M, xlabels: Sequence[str] | None = None, ylabels: Sequence[str] | None = None,
            title: str = "", cmap: str = "Blues", vmin=None, vmax=None, colorbar: bool = True) -> Axes:
    """A matrix as colours with token labels on both axes."""
    ax = ax or new_axes((5, 4.5))
    M = np.asarray(M, dtype=float)
    im = ax.imshow(M, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    if xlabels is not None:
        ax.set_xticks(range(len(xlabels)), [_show(t) for t in xlabels], rotation=90, fontsize=8)
    if ylabels is not None:
        ax.set_yticks(range(len(ylabels)), [_show(t) for t in ylabels], fontsize=8)
    ax.set_title(title, fontsize=10)
    if colorbar:
        fig: Figure = ax.figure
        fig.colorbar(im, ax=ax, shrink=0.8)
    return ax


def _show(token: str) -> str:
    """Make invisible tokens visible in labels."""
    return {"\n": "⏎", " ": "␣"}.get(token, token)
