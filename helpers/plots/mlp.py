"""Figures for notebook 06: the nonlinearities of an MLP (the explorer draws the hidden neurons as SVG)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from matplotlib.axes import Axes

from helpers.plots.alt import curve_text, describe
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
    marks = torch.tensor([lo, -1.0, 0.0, 1.0, hi])
    describe(ax, f"{ax.get_title() or 'Nonlinearities'}: each function's output at inputs "
             f"{', '.join(f'{v:g}' for v in marks.tolist())}: "
             + "; ".join(f"{name}: " + ", ".join(f"{float(y):.2f}" for y in f(marks)) for name, f in funcs.items())
             + ". " + " ".join(curve_text(name, x.numpy(), f(x).numpy(), x_name="input") for name, f in funcs.items()))
    return ax
