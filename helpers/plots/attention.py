"""Figures and HTML views of attention (notebooks 03-05): weights over the context, score variance
against d_head, patterns as heatmaps (matplotlib, or a light HTML table that redraws in
milliseconds), and a readable table of activations and their shapes."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.image  # mpl.image.imsave: a PNG without a figure
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import TwoSlopeNorm

from helpers.plots.alt import (SR_ONLY, _tok, curves_text, describe, grid_text, panel, pattern_text, signed_bars_text,
                               token_html)
from helpers.plots.basic import _show, heatmap, new_axes
from helpers.plots.palette import BLUE, DIVERGING, GREY, HATCH, LINES, MASKED, ORANGE, SELECTED, TEXT_MUTED, WHITE


def weight_bars(ax: Axes | None, tokens: Sequence[str], a, title: str = "", color: str = ORANGE) -> Axes:
    """Vertical bars: the attention weight a_i of each context token (in order, left to right)."""
    ax = ax or new_axes((7, 2.8))
    a = np.asarray(a, dtype=float)
    ax.bar(range(len(a)), a, color=color)
    ax.set_xticks(range(len(a)), [f"{_show(t)}" for t in tokens], rotation=60, ha="right", fontsize=8)
    ax.set_ylim(0, max(1e-9, float(a.max())) * 1.15)
    ax.set_ylabel("attention weight")
    ax.set_title(title, fontsize=10)
    describe(ax, panel(ax, "attention weight of each token, in order: "
                       + ", ".join(f"{_tok(t)} {w:.2f}" for t, w in zip(tokens, a)) + ". "
                       + signed_bars_text(list(tokens), a)))
    return ax


def score_variance(ax: Axes | None, d_heads: Sequence[int], raw: Sequence[float], scaled: Sequence[float]) -> Axes:
    """Variance of q.k (grows like d_head) and of q.k / sqrt(d_head) (stays near 1) against d_head."""
    ax = ax or new_axes((5.5, 3.2))
    ax.plot(d_heads, raw, "o-", color=LINES[0], label=r"$q^\top k$")
    ax.plot(d_heads, scaled, "s-", color=LINES[1], label=r"$q^\top k / \sqrt{d_\mathrm{head}}$")
    ax.plot(d_heads, d_heads, ":", color=GREY, label=r"$d_\mathrm{head}$")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel(r"$d_\mathrm{head}$")
    ax.set_ylabel("variance of the score")
    ax.legend(fontsize=8)
    describe(ax, "Variance of the score against d_head (both axes log 2; a dotted line marks variance = d_head). "
             + curves_text({"q·k without scaling": (d_heads, raw),
                            "q·k divided by the square root of d_head": (d_heads, scaled)}, x_name="d_head", log=True))
    return ax


def heads_side_by_side(fig, patterns, tokens: Sequence[str], titles: Sequence[str]) -> list[Axes]:
    """One heatmap per head, same colour scale (0 to 1), tokens on both axes of the first one."""
    axes = fig.subplots(1, len(patterns), squeeze=False)[0]
    for i, (ax, A, title) in enumerate(zip(axes, patterns, titles)):
        heatmap(ax, A, xlabels=tokens, ylabels=tokens if i == 0 else None, title=title,
                vmin=0, vmax=1, colorbar=False, text=pattern_text(A, tokens))
        if i:
            ax.set_yticks([])
    return list(axes)


MASKED_GREY = MASKED  # cells the causal mask set to -inf: darker than any near-zero score


def score_heatmap(ax: Axes | None, S, tokens: Sequence[str], title: str = "S") -> Axes:
    """The score matrix S (n, n), row i = query i, column j = key j, on a diverging scale centred at
    0 (white = score 0, red > 0, blue < 0, symmetric limits), so a near-white cell means a score near
    0. Entries equal to -inf (the masked future) are painted grey, never white; the title says so."""
    ax = ax or new_axes((5, 4.5))
    S = np.asarray(S, dtype=float)
    finite = S[np.isfinite(S)]
    lim = max(1e-6, float(np.abs(finite).max())) if finite.size else 1.0
    cmap = mpl.colormaps[DIVERGING[0]].with_extremes(bad=MASKED_GREY)
    shown = np.where(np.isneginf(S), np.nan, S)
    im = ax.imshow(shown, cmap=cmap, norm=TwoSlopeNorm(vcenter=0.0, vmin=-lim, vmax=lim), aspect="auto")
    ax.set_xticks(range(len(tokens)), [_show(t) for t in tokens], rotation=90, fontsize=8)
    ax.set_yticks(range(len(tokens)), [_show(t) for t in tokens], fontsize=8)
    masked = bool(np.isneginf(S).any())
    ax.set_title(f"{title}  (grey = −∞, masked)" if masked else title, fontsize=10)
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    shown_as = f"{int(np.isneginf(S).sum())} entries masked (minus infinity); " if masked else ""
    describe(ax, panel(ax, shown_as + grid_text(np.where(np.isneginf(S), np.nan, S), tokens, tokens)))
    return ax


def pattern_css(cell: int = 14) -> str:
    """The stylesheet ``pattern_html`` tables share. An explorer shows it once, in a widget that never changes,
    and draws its tables with ``css=False``: a ``<style>`` element inserted on every redraw would make the
    browser restyle the whole notebook each time."""
    return (f"<style>table.gt-pattern.gt-c{cell} td{{width:{cell}px;height:{cell}px;padding:0;"
            f"border:1px solid {WHITE}}}"
            f"table.gt-pattern td.m{{background:{HATCH[0]} repeating-linear-gradient(45deg,{HATCH[1]} 0 2px,"
            f"{HATCH[2]} 2px 4px)}}"
            "table.gt-pattern th.k{writing-mode:vertical-rl;transform:rotate(180deg);padding:2px;font-weight:normal}"
            "table.gt-pattern th.q{text-align:right;padding-right:4px;font-weight:normal}"
            f"table.gt-pattern tr.sel{{outline:2px solid {SELECTED}}}table.gt-pattern tr.sel th.q{{font-weight:bold}}"
            "</style>")


def pattern_html(A, tokens: Sequence[str], query: int | None = None, masked=None, cell: int = 14,
                 marks: dict[str, object] | None = None, css: bool = True, label: str = "",
                 mark_words: dict[str, str] | None = None) -> str:
    """An attention pattern as an HTML table: row i = query token i, column j = key token j, cell
    shade = a_ij (hover a cell to read it). ``query`` outlines one row; ``masked`` (n, n bool)
    hatches cells the mask removes; ``cell`` is the side of a cell in pixels; ``marks`` maps a CSS
    colour to an (n, n) bool array of cells to frame in it (e.g. where an induction head should look),
    ``mark_words`` a colour to what its frames mean, for the table's caption (``alt.pattern_text``).
    Rendering is string building: a redraw costs well under 10 ms. What every cell shares is one
    stylesheet (``pattern_css``; ``css=False`` leaves it out for an explorer that shows it once), so a cell
    costs ~50 characters."""
    A = np.asarray(A, dtype=float)
    n = len(tokens)
    frames = [(colour, np.asarray(m, dtype=bool)) for colour, m in (marks or {}).items()]
    labels = [html.escape(_show(t)) for t in tokens]
    size = f"gt-c{cell}"
    head = "".join(f'<th class="k">{lab}</th>' for lab in labels)
    rows = []
    for i in range(n):
        cells = []
        for j in range(n):
            a = A[i, j]
            off = masked is not None and bool(masked[i, j])
            style = [] if off else [f"background:{BLUE}{round(255 * min(max(a, 0.0), 1.0)):02x}"]
            style += [f"box-shadow:inset 0 0 0 2px {colour}" for colour, m in frames if m[i, j]][-1:]  # (rare) frame
            attrs = (' class="m"' if off else f' title="{labels[i]} → {labels[j]}: {a:.3f}"')  # (a masked cell is 0)
            cells.append(f'<td{attrs} style="{";".join(style)}"></td>' if style else f"<td{attrs}></td>")
        rows.append(f'<tr{" class=sel" if query == i else ""}><th class="q">{labels[i]}</th>{"".join(cells)}</tr>')
    return (f'{pattern_css(cell) if css else ""}<table class="gt-pattern {size}" '
            f'style="border-collapse:collapse;font:{min(11, cell)}px monospace">'
            f'<caption style="{SR_ONLY}">'
            f'{html.escape(pattern_text(A, tokens, query, masked, label=label, marks=marks, mark_words=mark_words))}'
            f"</caption><tr>"
            f'<th style="font-size:10px;color:{TEXT_MUTED}">query&darr; key&rarr;</th>{head}</tr>'
            f'{"".join(rows)}</table>')


def pattern_image_html(A, tokens: Sequence[str], query: int | None = None, masked=None, cell: int = 9,
                       marks: dict[str, object] | None = None, label: str = "", labels: bool = True,
                       mark_words: dict[str, str] | None = None) -> str:
    """The same picture as ``pattern_html`` (shade = a_ij on white, masked cells light grey, ``marks`` framed,
    the ``query`` row outlined) for long sequences: the n x n weights travel as one small PNG, n pixels a side,
    scaled up without smoothing, with the frames drawn over it in SVG. Two 32 x 32 patterns as table cells
    are ~2,000 elements for the browser to lay out on every key press; as images they are two. The price:
    no per-cell tooltip; hovering a query token shows its row's three largest weights instead.
    labels=False: the picture alone, n x cell pixels a side, without the tokens along its sides (a grid of many
    small patterns; the image's text alternative still names the tokens and the strongest weights).

    One picture, one text alternative: the image's alt says what the overlay draws too (the outlined query's
    strongest keys; with ``mark_words``, what each kind of frame marks and the weight it holds), so the overlay
    is ``aria-hidden``: named on its own it would be a second image of the same picture (and with no frames, as in
    notebook 05's and 11's patterns, an empty one)."""
    A = np.clip(np.asarray(A, dtype=float), 0.0, 1.0)
    n = len(tokens)
    blue = np.array([int(BLUE[k:k + 2], 16) for k in (1, 3, 5)]) / 255.0
    rgb = 1.0 - A[..., None] * (1.0 - blue)  # a over white, as the table's rgba shade
    if masked is not None:
        rgb[np.asarray(masked, dtype=bool)] = int(HATCH[0][1:3], 16) / 255.0
    buf = io.BytesIO()
    mpl.image.imsave(buf, rgb, format="png")
    src = base64.b64encode(buf.getvalue()).decode("ascii")
    side = n * cell
    overlay = []
    for colour, m in (marks or {}).items():
        for i, j in zip(*np.nonzero(np.asarray(m, dtype=bool))):
            overlay.append(f'<rect x="{j * cell + 1}" y="{i * cell + 1}" width="{cell - 2}" height="{cell - 2}" '
                           f'fill="none" stroke="{colour}" stroke-width="2"/>')
    if query is not None:
        overlay.append(f'<rect x="0.5" y="{query * cell + 0.5}" width="{side - 1}" height="{cell - 1}" fill="none" '
                       f'stroke="{SELECTED}" stroke-width="1.5"/>')
    alt = html.escape(pattern_text(A, tokens, query, masked, label=label, marks=marks, mark_words=mark_words),
                      quote=True)
    picture = (f'<div style="position:relative;width:{side}px;height:{side}px">'
               f'<img alt="{alt}" src="data:image/png;base64,{src}" width="{side}" height="{side}" '
               f'style="image-rendering:pixelated;display:block">'
               f'<svg width="{side}" height="{side}" aria-hidden="true" style="position:absolute;left:0;top:0">'
               f'{"".join(overlay)}</svg>'
               f"</div>")
    if not labels:
        return f'<div class="gt-pattern-image" title="{alt}">{picture}</div>'
    labels = [html.escape(_show(t)) for t in tokens]
    font = f"font:{min(11, cell)}px monospace;line-height:{cell}px"
    # key labels run upwards, one cell wide each, so words longer than a cell do not run into each other
    keys = "".join(f'<div style="width:{cell}px;writing-mode:vertical-rl;transform:rotate(180deg);'
                   f'white-space:nowrap;padding-top:2px">{lab}</div>' for lab in labels)

    def tip(i):  # hover a query token: where its row's weight goes (the image itself has no per-cell tooltip)
        top = np.argsort(-A[i], kind="stable")[:3]
        return f"{labels[i]} → " + ", ".join(f"{labels[j]} {A[i, j]:.2f}" for j in top if A[i, j] > 0)
    rows = "".join(f'<div title="{tip(i)}" style="height:{cell}px;{"font-weight:bold" if query == i else ""}">'
                   f"{lab}</div>" for i, lab in enumerate(labels))
    return (f'<div class="gt-pattern-image" style="display:grid;grid-template-columns:auto {side}px;{font}">'
            f'<div style="font-size:10px;color:{TEXT_MUTED};align-self:end">query&darr; key&rarr;</div>'
            f'<div style="display:flex;align-items:flex-end">{keys}</div>'
            f'<div style="text-align:right;padding-right:4px">{rows}</div>'
            f"{picture}</div>")


def row_bars_html(weights, tokens: Sequence[str], title: str = "", marks: dict[int, str] | None = None,
                  words: dict[str, str] | None = None) -> str:
    """One query's weights as horizontal HTML bars, largest value labelled. ``marks`` colours some
    keys' bars (key index -> CSS colour), e.g. the tokens an induction head should attend to; ``words`` says in
    text what each mark colour means (colour -> words, written after the value), so colour is never alone."""
    w = np.asarray(weights, dtype=float)
    top = float(w.max()) if len(w) else 1.0
    marks = marks or {}
    lines = [f'<div style="font:12px sans-serif;margin:2px 0"><b>{html.escape(title)}</b></div>']
    for j, (t, a) in enumerate(zip(tokens, w)):
        width = 0 if top <= 0 else 180 * a / top
        lines.append(f'<div style="font:11px monospace;display:flex;align-items:center;height:14px">'
                     f'<span style="width:7em;text-align:right;padding-right:4px">{token_html(t)}</span>'
                     f'<span style="display:inline-block;width:{width:.0f}px;height:10px;'
                     f'background:{marks.get(j, BLUE)}"></span>'
                     f'<span style="padding-left:4px">{a:.3f}</span>'
                     + (f'<span style="padding-left:4px">({html.escape(words[marks[j]])})</span>'
                        if words and j in marks and marks[j] in words else "") + "</div>")
    return "".join(lines)


def shape_table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """A plain HTML table (for IPython.display.HTML): one row per activation."""
    th = "".join(f'<th style="text-align:left;padding:2px 8px">{html.escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(f'<td style="text-align:left;padding:2px 8px">{c}</td>' for c in r) + "</tr>"
                   for r in rows)
    return f'<table class="gt-table"><tr>{th}</tr>{body}</table>'
