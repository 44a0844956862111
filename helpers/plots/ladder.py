"""Notebook 08: the loss ladder — one bar per model, all on the same held-out text."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from helpers.plots.basic import new_axes


def ladder(ax: Axes | None, rungs: Sequence[tuple[str, float]], title: str = "") -> Axes:
    """Horizontal bars of (name, cross-entropy), first rung on top, values written at the bar ends."""
    ax = ax or new_axes((7, 3.2))
    names = [n for n, _ in rungs][::-1]
    values = [v for _, v in rungs][::-1]
    colors = ["tab:gray" if i >= len(values) - 3 else "tab:blue" for i in range(len(values))]
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)), names, fontsize=9)
    for i, v in enumerate(values):
        ax.text(v, i, f" {v:.3f}", va="center", fontsize=8)
    ax.set_xlim(0, max(values) * 1.15)
    ax.set_xlabel("held-out cross-entropy (nats / token; lower is better)")
    ax.set_title(title, fontsize=10)
    return ax
