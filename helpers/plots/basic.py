"""General-purpose figures: probability bars, loss curves, labelled heatmaps, curves of any measurement.

Each one also describes its data in words (``helpers.plots.alt``), the figure's text alternative."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from helpers.plots.alt import bars_text, curves_text, describe, grid_text, level_text, panel
from helpers.plots.palette import BLUE, DIVERGING, GREY, INK, LINES, MASKED, RED


def new_axes(figsize=(7, 3)) -> Axes:
    """A fresh Axes on a pyplot figure (shown inline by Jupyter at the end of the cell)."""
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def bars(ax: Axes | None, items: Sequence[tuple[str, float]], title: str = "",
         xlabel: str = "probability", color: str = BLUE) -> Axes:
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
    describe(ax, panel(ax, f"{xlabel}, " + bars_text(items)))
    return ax


def loss_curves(ax: Axes | None, curves: dict[str, tuple[Sequence[float], Sequence[float]]],
                baselines: dict[str, float] | None = None, title: str = "") -> Axes:
    """Loss against training step for each named curve, with horizontal lines for baselines."""
    ax = ax or new_axes()
    for i, (name, (x, y)) in enumerate(curves.items()):
        ax.plot(x, y, color=LINES[i % len(LINES)], label=name)
    for i, (name, value) in enumerate((baselines or {}).items(), start=len(curves)):
        ax.axhline(value, ls="--", lw=1, color=LINES[i % len(LINES)], label=f"{name} ({value:.2f})")
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (nats / token)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    levels = _levels_said(baselines or {}, curves, "step", ".2f", "level line")
    describe(ax, panel(ax, "cross-entropy against training step. " + curves_text(curves, x_name="step") +
                       (" " + levels if levels else "")))
    return ax


def _levels_said(levels: dict[str, float], curves: dict, x_name: str, fmt: str, line: str) -> str:
    """Each level line's value, then where each curve runs above and below it."""
    return " ".join(f"{name}: {format(y, fmt)} (a {line}). "
                    + " ".join(level_text(c, cx, cy, name, y, x_name) for c, (cx, cy) in curves.items())
                    for name, y in levels.items())


def heatmap(ax: Axes | None, M, xlabels: Sequence[str] | None = None, ylabels: Sequence[str] | None = None,
            title: str = "", cmap: str = "Blues", vmin=None, vmax=None, colorbar: bool = True,
            text: str | None = None, by: str = "row", xlabel: str = "", ylabel: str = "") -> Axes:
    """A matrix as colours with token labels on both axes; ``text`` says what it shows in words (by default its
    largest entries and where each row's largest sits, or each column's with ``by="column"``: ``alt.grid_text``),
    after what the rows and columns are (``ylabel``, ``xlabel``: also the axes' labels). NaN entries (masked) are
    drawn grey and counted in the words. A diverging ``cmap`` (palette.DIVERGING) without vmin and vmax is centred
    on 0, so that its middle colour means 0."""
    ax = ax or new_axes((5, 4.5))
    M = np.asarray(M, dtype=float)
    colours = colormaps[cmap].with_extremes(bad=MASKED)   # a masked cell is not the colour of any value
    if cmap in DIVERGING and vmin is None and vmax is None and np.isfinite(M).any():
        vmax = float(np.nanmax(np.abs(M))) or 1.0         # a signed map centred on 0: white means 0, not the middle
        vmin = -vmax
    im = ax.imshow(M, cmap=colours, vmin=vmin, vmax=vmax, aspect="auto")
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if xlabels is not None:
        ax.set_xticks(range(len(xlabels)), [_show(t) for t in xlabels], rotation=90, fontsize=8)
    if ylabels is not None:
        ax.set_yticks(range(len(ylabels)), [_show(t) for t in ylabels], fontsize=8)
    ax.set_title(title, fontsize=10)
    if colorbar:
        fig: Figure = ax.figure
        fig.colorbar(im, ax=ax, shrink=0.8)
    axes = f"Rows: {ylabel}; columns: {xlabel}. " if xlabel and ylabel else ""
    masked = int(np.isnan(M).sum())
    masked = f" {masked:,} cells masked (drawn grey)." if masked else ""
    describe(ax, panel(ax, axes + (text if text is not None else grid_text(M, ylabels, xlabels, by=by)) + masked))
    return ax


def lines(ax: Axes | None, curves: dict[str, tuple[Sequence[float], Sequence[float]]], xlabel: str, ylabel: str,
          title: str = "", scale: str = "linear", levels: dict[str, float] | None = None, style: str = "-",
          divider: tuple[float, str] | None = None, figsize=(6, 3), x_name: str | None = None) -> Axes:
    """Curves of any measurement, {label: (xs, ys)}, with dashed level lines ``levels`` {label: y} and a
    dotted vertical ``divider`` (x, label). ``scale``: "linear", "logx" (base 2), or "loglog". ``x_name``: what
    the words call x (default: ``xlabel``)."""
    ax = ax or new_axes(figsize)
    for i, (name, (x, y)) in enumerate(curves.items()):
        ax.plot(x, y, style, ms=3, color=LINES[i % len(LINES)], label=name)
    free = [c for c in (INK, GREY, RED) if c not in LINES[:len(curves)]]   # a level never shares a curve's colour
    for i, (name, y) in enumerate((levels or {}).items()):
        ax.axhline(y, ls="--", lw=1, color=free[i % len(free)], label=name)
    if divider is not None:
        ax.axvline(divider[0], color=GREY, ls=":", label=divider[1])
    if scale == "logx":
        ax.set_xscale("log", base=2)
    elif scale == "loglog":
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if len(curves) + len(levels or {}) + (divider is not None) > 1:
        ax.legend(fontsize=8)
    x_name = x_name or xlabel
    extra = _levels_said(levels or {}, curves, x_name, ".3g", "dashed level line")
    if divider is not None:
        extra += f" A dotted line at {x_name} {divider[0]:g}: {divider[1]}."
    describe(ax, panel(ax, f"{ylabel} against {xlabel}. " + curves_text(curves, x_name=x_name, log=scale != "linear")
                       + (" " + extra.strip() if extra.strip() else "")))
    return ax


def _show(token: str) -> str:
    """Make invisible tokens visible in labels."""
    return {"\n": "⏎", " ": "␣"}.get(token, token)
