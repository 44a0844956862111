"""Small charts as inline SVG strings, for the explorers that redraw on every key press.

Every explorer in the series draws its picture as HTML/SVG built in the kernel: building
the string costs about a millisecond where a matplotlib PNG redraw cost 150-500 ms on a 2-core machine,
and the browser paints it without decoding an image. The charts keep what makes the matplotlib
figures readable: a title, labelled axes with round tick values (matplotlib's own ``MaxNLocator``
picks them), values written on the bars, colours that stay distinct for colour-blind readers
(ColorBrewer blue / orange / grey), and an ``aria-label`` plus ``<title>`` as text alternatives.

hbars(items)          horizontal bars of (label, value), first on top: next-token probabilities.
vbars(labels, values) vertical bars that may be negative: logits, softmax outputs, hidden neurons.
histogram(values)     a histogram with the mean and mean +- one standard deviation marked.
grid(values)          a small heatmap with row and column labels (an HTML table, one cell per value).
row(*charts)          charts side by side.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.ticker import MaxNLocator

from helpers.plots.alt import SR_ONLY, bars_text, grid_text, histogram_text, signed_bars_text
from helpers.plots.basic import _show

from helpers.plots.palette import AXIS, BLUE, GREY, INK, ORANGE, RED, WHITE  # noqa: F401  (the explorers' names)
FONT = "font-family:sans-serif;font-size:11px"


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """Round tick values covering [lo, hi] (matplotlib's locator, without a figure)."""
    if hi <= lo:
        hi = lo + 1.0
    return [float(t) for t in MaxNLocator(nbins=n).tick_values(lo, hi) if lo - 1e-12 <= t <= hi + 1e-12]


def signed(value: float, fmt: str = ".2f") -> str:
    """``value`` formatted with a real minus sign and never as "-0.00" (a rounding artefact, not a sign): a value
    that rounds to zero is written as zero is, "0.00" (or "+0.00" with ``fmt="+.2f"``);
    tick labels use ``fmt=".4g"``: short, no float noise."""
    s = format(value, fmt)
    if s.startswith("-") and float(s) == 0:
        s = format(0.0, fmt)
    return s.replace("-", "−")


def _svg(width: int, height: int, title: str, body: list[str], desc: str) -> str:
    """The chart's accessible name is its title and its data in words (``desc``, from ``alt``), said once: no
    ``<desc>`` repeats it as a description (``<title>``, the title alone, is the tooltip)."""
    name = f"{title}. {desc}" if title else desc
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="{_e(name)}" style="{FONT};background:{WHITE}"><title>{_e(title)}</title>'
            + "".join(body) + "</svg>")


def _title(width: int, title: str) -> str:
    return f'<text x="{width / 2:.0f}" y="13" text-anchor="middle" font-weight="bold">{_e(title)}</text>'


def hbars(items: Sequence[tuple[str, float]], title: str = "", xlabel: str = "probability", color: str = BLUE,
          width: int = 300, bar: int = 16, fmt: str = ".3f", xmax: float | None = None) -> str:
    """Horizontal bars of (label, value >= 0), the first item on top, each value written at its bar's end."""
    labels = [_show(str(t)) for t, _ in items]
    values = [max(float(v), 0.0) for _, v in items]
    left = 12 + 7 * max([len(s) for s in labels] + [3])
    right, top, bottom = 46, 20, 34
    height = top + bar * len(values) + bottom
    top_value = xmax if xmax is not None else max(values + [1e-9]) * 1.05
    scale = (width - left - right) / top_value
    body = [_title(width, title)]
    for i, (lab, v) in enumerate(zip(labels, values)):
        y = top + i * bar
        body.append(f'<text x="{left - 4}" y="{y + bar * 0.72:.1f}" text-anchor="end">{_e(lab)}</text>'
                    f'<rect x="{left}" y="{y + 2}" width="{v * scale:.1f}" height="{bar - 4}" fill="{color}"/>'
                    f'<text x="{left + v * scale + 3:.1f}" y="{y + bar * 0.72:.1f}">{v:{fmt}}</text>')
    axis_y = top + bar * len(values) + 2
    body.append(f'<line x1="{left}" y1="{axis_y}" x2="{width - right}" y2="{axis_y}" stroke="{AXIS}"/>')
    for t in ticks(0.0, top_value):
        x = left + t * scale
        body.append(f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 4}" stroke="{AXIS}"/>'
                    f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle">{signed(t, ".4g")}</text>')
    body.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" text-anchor="middle">{_e(xlabel)}</text>')
    return _svg(width, height, title, body, f"{xlabel}, " + bars_text(items, fmt))


def vbars(labels: Sequence[str], values: Sequence[float], title: str = "", ylabel: str = "",
          ylim: tuple[float, float] | None = None, colors: Sequence[str] | str = BLUE, fmt: str | None = ".2f",
          width: int = 300, height: int = 190, marks: Sequence[int] = (), xlabel: str = "") -> str:
    """Vertical bars (values may be negative; a line marks zero). ``fmt`` writes each value above its bar
    (None: no values, e.g. for many thin bars); ``marks`` writes the index above those bars instead;
    ``labels`` may be empty (no tick labels)."""
    v = np.asarray(values, dtype=float)
    if ylim is None:
        ylim = (min(0.0, float(v.min(initial=0))), max(float(v.max(initial=0)), 1e-9) * 1.15)
    lo, hi = ylim
    tick_values = ticks(lo, hi)
    left, right, top = 22 + 6 * max(len(signed(t, ".4g")) for t in tick_values), 8, 20
    bottom = 34 if (labels or xlabel) else 12
    plot_h, plot_w = height - top - bottom, width - left - right
    n = max(len(v), 1)
    step = plot_w / n
    gap = 0.2 * step if n <= 40 else 0.0

    def y(value):
        return top + plot_h * (hi - min(max(value, lo), hi)) / (hi - lo)

    cols = [colors] * n if isinstance(colors, str) else list(colors)
    body = [_title(width, title)]
    for t in tick_values:
        body.append(f'<line x1="{left - 4}" y1="{y(t):.1f}" x2="{left}" y2="{y(t):.1f}" stroke="{AXIS}"/>'
                    f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{signed(t, ".4g")}</text>')
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="{AXIS}"/>')
    for i, value in enumerate(v):
        x, y0, y1 = left + i * step + gap / 2, y(0.0), y(value)
        body.append(f'<rect x="{x:.1f}" y="{min(y0, y1):.1f}" width="{max(step - gap, 0.6):.1f}" '
                    f'height="{abs(y1 - y0):.1f}" fill="{cols[i]}"><title>{_e(labels[i] if labels else i)}: '
                    f'{value:.3g}</title></rect>')
        above = y1 - 3 if value >= 0 else y1 + 11
        if fmt is not None:
            body.append(f'<text x="{x + (step - gap) / 2:.1f}" y="{above:.1f}" text-anchor="middle">'
                        f'{signed(value, fmt)}</text>')
        elif i in marks:
            body.append(f'<text x="{x + step / 2:.1f}" y="{above:.1f}" text-anchor="middle">{i}</text>')
        if labels:
            body.append(f'<text x="{x + (step - gap) / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
                        f"{_e(_show(str(labels[i])))}</text>")
    body.append(f'<line x1="{left}" y1="{y(0.0):.1f}" x2="{width - right}" y2="{y(0.0):.1f}" stroke="{AXIS}"/>')
    if ylabel:
        body.append(f'<text transform="translate(11,{top + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle">'
                    f"{_e(ylabel)}</text>")
    if xlabel:
        body.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 4}" text-anchor="middle">{_e(xlabel)}</text>')
    return _svg(width, height, title, body, (f"{ylabel}: " if ylabel else "")
                + signed_bars_text(list(labels), v, fmt or ".2f"))


def histogram(values, bins: int = 24, title: str = "", xlabel: str = "entry value",
              ylabel: str = "how many entries", color: str = BLUE, width: int = 320, height: int = 190) -> str:
    """A histogram of ``values`` with the mean (solid line) and mean +- one standard deviation (dashed)."""
    v = np.asarray(values, dtype=float).ravel()
    mu, sd = float(v.mean()), float(v.std())
    lo, hi = float(v.min()), float(v.max())
    if hi - lo < 1e-9:  # all equal: one bar of width 1 around the value
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(v, bins=bins, range=(lo, hi))
    left, right, top, bottom = 40, 10, 20, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    cmax = max(int(counts.max()), 1) * 1.1

    def x(value):
        return left + plot_w * (value - lo) / (hi - lo)

    def y(c):
        return top + plot_h * (1 - c / cmax)

    body = [_title(width, title)]
    for c, a, b in zip(counts, edges[:-1], edges[1:]):
        if c:
            body.append(f'<rect x="{x(a):.1f}" y="{y(c):.1f}" width="{max(x(b) - x(a) - 0.5, 0.5):.1f}" '
                        f'height="{top + plot_h - y(c):.1f}" fill="{color}" fill-opacity="0.85"/>')
    for t in ticks(0, cmax):
        body.append(f'<line x1="{left - 4}" y1="{y(t):.1f}" x2="{left}" y2="{y(t):.1f}" stroke="{AXIS}"/>'
                    f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{signed(t, ".4g")}</text>')
    for t in ticks(lo, hi, 5):
        body.append(f'<line x1="{x(t):.1f}" y1="{top + plot_h}" x2="{x(t):.1f}" y2="{top + plot_h + 4}" '
                    f'stroke="{AXIS}"/><text x="{x(t):.1f}" y="{top + plot_h + 14}" text-anchor="middle">'
                    f"{signed(t, '.4g')}</text>")
    body.append(f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" stroke="{AXIS}"/>'
                f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="{AXIS}"/>')
    for at, dash in ((mu, ""), (mu - sd, ' stroke-dasharray="4,3"'), (mu + sd, ' stroke-dasharray="4,3"')):
        if lo <= at <= hi:
            body.append(f'<line x1="{x(at):.1f}" y1="{top}" x2="{x(at):.1f}" y2="{top + plot_h}" '
                        f'stroke="{INK}" stroke-width="1.3"{dash}/>')
    body.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 4}" text-anchor="middle">{_e(xlabel)}</text>'
                f'<text transform="translate(11,{top + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle">'
                f"{_e(ylabel)}</text>")
    return _svg(width, height, title, body, f"{xlabel}: " + histogram_text(v))


def grid(values, row_labels: Sequence[str], col_labels: Sequence[str], title: str = "", cmap: str = "Oranges",
         cell: int = 16, fmt: str = ".2f") -> str:
    """A small heatmap as an HTML table: one cell per value, coloured from 0 (white) to the largest
    value (the colour map's darkest), each cell's value in its tooltip, and a two-stop legend."""
    v = np.asarray(values, dtype=float)
    top = max(float(v.max(initial=0.0)), 1e-9)
    colours = colormaps[cmap](np.clip(v / top, 0, 1))
    head = "".join(f'<th scope="col" style="font-weight:normal;writing-mode:vertical-rl;transform:rotate(180deg);'
                   f'padding:0 1px">{_e(c)}</th>' for c in col_labels)
    rows = []
    for i, lab in enumerate(row_labels):
        cells = "".join(
            f'<td title="{_e(lab)} {_e(c)}: {v[i, j]:{fmt}}" style="width:{cell}px;height:{cell - 3}px;'
            f'background:rgb({int(255 * r)},{int(255 * g)},{int(255 * b)})"></td>'
            for j, (c, (r, g, b, _)) in enumerate(zip(col_labels, colours[i])))
        rows.append(f'<tr><th scope="row" style="font-weight:normal;text-align:right;padding-right:4px">{_e(lab)}</th>'
                    f"{cells}</tr>")
    dark = colours.reshape(-1, 4)[int(np.argmax(v))] if v.size else (0, 0, 0, 1)
    legend = (f'<div style="margin-top:3px">0 <span style="display:inline-block;width:60px;height:9px;'
              f'background:linear-gradient(90deg,{WHITE},rgb({int(255 * dark[0])},{int(255 * dark[1])},'
              f'{int(255 * dark[2])}))"></span> {top:{fmt}}</div>')
    return (f'<div style="{FONT}"><div style="font-weight:bold;text-align:center;margin-bottom:2px">{_e(title)}</div>'
            f'<table style="border-collapse:collapse;{FONT};line-height:1">'
            f'<caption style="{SR_ONLY}">{_e(title)}: {_e(grid_text(v, row_labels, col_labels, fmt))}</caption>'
            f'<tr><td></td>{head}</tr>{"".join(rows)}'  # (the corner heads nothing: a plain cell)
            f"</table>{legend}</div>")


def row(*charts: str, gap: int = 24) -> str:
    """Charts side by side (wrapping on a narrow page)."""
    return (f'<div style="display:flex;flex-wrap:wrap;gap:{gap}px;align-items:flex-start">'
            + "".join(f"<div>{c}</div>" for c in charts) + "</div>")


def strip(runs: Sequence[float], this: float | None, lo: float, hi: float, bounds: Sequence[float] = (),
          name: str = "", width: int = 420, fmt=lambda v: signed(v, ".4g")) -> str:
    """One row of dots: every measured run (blue), this run (an orange diamond, labelled) and the claim's bound(s)
    (dashed lines), on an axis from ``lo`` to ``hi``. ``name``: the words that carry its data (the caller's sentence),
    its accessible name."""
    left, right, top = 14, 14, 22
    height = top + 40
    span = (hi - lo) or 1.0
    pad = 0.04 * span
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (width - left - right)

    body = []
    axis_y = top + 22

    def anchor(px: float) -> str:   # labels near an end are written inward, so that none is cut off
        return "end" if px > width * 0.85 else ("start" if px < width * 0.15 else "middle")

    for b in bounds:
        body.append(f'<line x1="{x(b):.1f}" y1="{top - 10}" x2="{x(b):.1f}" y2="{axis_y}" stroke="{RED}" '
                    f'stroke-width="1.5" stroke-dasharray="4 3"/>'
                    f'<text x="{x(b):.1f}" y="{top - 12}" text-anchor="{anchor(x(b))}" fill="{RED}">'
                    f'bound {fmt(b)}</text>')
    # the runs: dots on one line, stacked a little where they would overlap, so that a crowd reads as a crowd
    placed: list[tuple[float, int]] = []
    for v in sorted(runs):
        px, level = x(v), 0
        while any(abs(px - qx) < 4 and ql == level for qx, ql in placed):
            level += 1
        placed.append((px, level))
        cy = axis_y - 6 - 4 * (level % 4)
        body.append(f'<circle cx="{px:.1f}" cy="{cy}" r="2.6" fill="{BLUE}" fill-opacity="0.7"/>')
    if this is not None:
        tx, ty = x(this), axis_y - 10
        body.append(f'<path d="M{tx:.1f} {ty - 7} L{tx + 6:.1f} {ty} L{tx:.1f} {ty + 7} L{tx - 6:.1f} {ty} Z" '
                    f'fill="{ORANGE}" stroke="{INK}" stroke-width="1"/>')
        if not bounds or min(abs(tx - x(b)) for b in bounds) > 40:
            body.append(f'<text x="{tx:.1f}" y="{top - 12}" text-anchor="{anchor(tx)}" fill="{INK}">this run</text>')
    body.append(f'<line x1="{left}" y1="{axis_y}" x2="{width - right}" y2="{axis_y}" stroke="{AXIS}"/>')
    for t in ticks(lo, hi, 5):
        body.append(f'<line x1="{x(t):.1f}" y1="{axis_y}" x2="{x(t):.1f}" y2="{axis_y + 4}" stroke="{AXIS}"/>'
                    f'<text x="{x(t):.1f}" y="{axis_y + 15}" text-anchor="middle" fill="{AXIS}">'
                    f'{fmt(t)}</text>')
    return _svg(width, height, "", body, name)
