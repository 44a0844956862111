"""Notebook 09's pictures: the phase change (matplotlib) and a small loss curve as SVG for the widget."""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes

from helpers.plots.alt import curves_text, describe
from helpers.plots.basic import new_axes
from helpers.plots.palette import AXIS, BLUE, GREY, INK, ORANGE, SELECTED, WHITE


def smooth(values: Sequence[float], window: int = 10) -> np.ndarray:
    """Running mean over ``window`` steps (the first values average what there is so far)."""
    v = np.asarray(values, dtype=float)
    c = np.cumsum(np.insert(v, 0, 0.0))
    i = np.arange(1, len(v) + 1)
    lo = np.maximum(i - window, 0)
    return (c[i] - c[lo]) / (i - lo)


def phase_change(ax: Axes | None, run, title: str = "the phase change") -> Axes:
    """Training loss (left axis) with the induction and previous-token scores (right axis) of an InductionRun."""
    ax = ax or new_axes((7, 3.2))
    ax.plot(run.step, smooth(run.loss), color=BLUE, label="training loss")
    ax.set_xlabel("training step")
    ax.set_ylabel("loss (nats/token)")
    right = ax.twinx()
    right.plot(run.eval_step, run.induction, "o-", ms=3, color=ORANGE, label="induction score (layer 1)")
    right.plot(run.eval_step, run.previous, "s--", ms=3, color=GREY, label="previous-token score (layer 0)")
    right.set_ylim(0, 1)
    right.set_ylabel("score")
    lines = ax.get_lines() + right.get_lines()
    ax.legend(lines, [ln.get_label() for ln in lines], fontsize=8, loc="center right")
    ax.set_title(title, fontsize=10)
    describe(ax, f"{title}: " + curves_text({"training loss (running mean of 10 steps)": (run.step, smooth(run.loss))},
                                             x_name="step") + " "
             + curves_text({"induction score (layer 1, 0 to 1)": (run.eval_step, run.induction),
                            "previous-token score (layer 0, 0 to 1)": (run.eval_step, run.previous)},
                           fmt=".2f", x_name="step"))
    return ax


def curve_svg(xs: Sequence[float], curves: dict[str, tuple[Sequence[float], str]], marker: float | None = None,
              width: int = 360, height: int = 140, ymax: float | None = None, label: str = "") -> str:
    """Line chart as an inline SVG string: ``curves`` name -> (ys, colour), a vertical marker at x = ``marker``.
    Used by widgets that redraw on every key press (string building costs well under a millisecond)."""
    xs = np.asarray(xs, dtype=float)
    top = ymax if ymax is not None else max(float(np.max(ys)) for ys, _ in curves.values())
    x0, x1 = float(xs.min()), float(xs.max()) if len(xs) > 1 else float(xs.min()) + 1
    pad = 28

    def px(x):
        return pad + (width - pad - 6) * (x - x0) / (x1 - x0 or 1)

    def py(y):
        return height - 18 - (height - 26) * min(max(y, 0.0), top) / (top or 1)

    said = html.escape(f"{label}. " + curves_text({name: (xs, ys) for name, (ys, _) in curves.items()}, x_name="step")
                       + (f" Marked: step {marker:.0f}." if marker is not None else ""), quote=True)
    parts = [f'<svg width="{width}" height="{height}" role="img" aria-label="{said}" '
             f'style="font:10px sans-serif;background:{WHITE}">',
             f'<line x1="{pad}" y1="{height - 18}" x2="{width - 6}" y2="{height - 18}" stroke="{AXIS}"/>',
             f'<line x1="{pad}" y1="8" x2="{pad}" y2="{height - 18}" stroke="{AXIS}"/>',
             f'<text x="{pad - 3}" y="12" text-anchor="end">{top:.3g}</text>',
             f'<text x="{pad - 3}" y="{height - 18}" text-anchor="end">0</text>',
             f'<text x="{width - 6}" y="{height - 4}" text-anchor="end">step {x1:.0f}</text>',
             f'<text x="{pad}" y="{height - 4}">{x0:.0f}</text>']
    for k, (name, (ys, colour)) in enumerate(curves.items()):
        pts = " ".join(f"{px(x):.1f},{py(float(y)):.1f}" for x, y in zip(xs, ys))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{pts}"/>')
        # the name in dark text (a coloured one would fail contrast on white), a swatch of the curve's colour before it
        parts.append(f'<text x="{width - 8}" y="{20 + 12 * k}" text-anchor="end" fill="{INK}">{html.escape(name)}'
                     f'</text><line x1="{width - 14 - 5.5 * len(name)}" y1="{17 + 12 * k}" '
                     f'x2="{width - 26 - 5.5 * len(name)}" y2="{17 + 12 * k}" stroke="{colour}" stroke-width="3"/>')
    if marker is not None:
        parts.append(f'<line x1="{px(marker):.1f}" y1="8" x2="{px(marker):.1f}" y2="{height - 18}" '
                     f'stroke="{SELECTED}" stroke-dasharray="3,2"/>')
    parts.append("</svg>")
    return "".join(parts)
