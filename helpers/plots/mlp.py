"""Figures for notebook 06: the nonlinearities of an MLP (the explorer draws the hidden neurons as SVG)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from matplotlib.axes import Axes

from helpers.plots.alt import _num, describe
from helpers.plots.basic import new_axes
from helpers.plots.palette import INK, LINES


def activations(ax: Axes | None, funcs: dict[str, Callable], lo: float = -4, hi: float = 4,
                title: str = "") -> Axes:
    """Plot each named elementwise function (e.g. ReLU, GELU) on [lo, hi] (401 points), titled ``title``."""
    ax = ax or new_axes((6, 3))
    if title:
        ax.set_title(title, fontsize=10)
    x = torch.linspace(lo, hi, 401)
    for i, (name, f) in enumerate(funcs.items()):
        ax.plot(x.numpy(), f(x).numpy(), color=LINES[i % len(LINES)], ls=("-", "--")[i % 2], label=name, lw=2)
    ax.axhline(0, color=INK, lw=0.5)
    ax.axvline(0, color=INK, lw=0.5)
    ax.set_xlabel("input")
    ax.set_ylabel("output")
    ax.legend()
    marks = torch.tensor([lo, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, hi])
    lows = []
    for name, f in funcs.items():
        y = f(x)
        k = int(y.argmin())
        lowest = f"{name} is lowest, {_num(float(y[k]), '.2f')}, near input {_num(float(x[k]), '.2f')}"  # sampled
        lows.append(lowest if float(y[k]) < -1e-6 else f"{name} is never below 0")
    values = "; ".join(f"{name}: " + ", ".join(_num(float(y), ".2f") for y in f(marks)) for name, f in funcs.items())
    describe(ax, (f"{title}. " if title else "") + "Each function's output at inputs "
             + ", ".join(_num(float(v)) for v in marks) + ": " + values + ". " + "; ".join(lows) + ".")
    return ax
