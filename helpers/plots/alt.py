"""Text alternatives that carry a picture's data (issue 31): one place for every picture the series draws.

A screen-reader user, or anyone who cannot tell two shades apart, should be able to answer a notebook's
predict-then-check question from the words alone. So a picture's text states what it shows, not only what it is:

bars_text(items)           bars, largest first: the top entries with their values (and the rest's range)
signed_bars_text(...)      bars that may be negative: the largest and the most negative, and how many are zero
curve_text(name, xs, ys)   a curve: where it starts and ends, its lowest and highest point, its steepest stretch
histogram_text(values)     how many values, their range, mean and spread, the tallest bin
grid_text(M, rows, cols)   a heatmap: the largest entries, and each row's largest (or a selected row's top three)
pattern_text(A, tokens)    an attention pattern: the selected query's strongest keys, or each query's strongest key
dots_text(rungs)           the loss ladder: each rung's mean and seed range

The SVG and HTML pictures of the explorers (``svg.py``, ``attention.py``, ``induction.py``) put this text in their
accessible name (``aria-label``), a ``<desc>`` or a table ``<caption>``. The static matplotlib figures get it through
``describe(ax, text)``, called by every helper that draws one, and ``figure_html(fig)``: in a notebook, importing
``helpers.plots`` registers it as the figure's HTML form, so JupyterLab shows the PNG inside a ``<figure>`` whose
``<img alt>`` is the text, with the same words under a "the figure in words" disclosure for everyone.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence

import numpy as np

TOP = 3               # entries named per bar chart, row or curve
# read by a screen reader, not drawn: the usual "visually hidden" recipe (an element of 1 px, clipped)
SR_ONLY = "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);" \
          "white-space:nowrap;border:0"


def _num(value: float, fmt: str = ".3g") -> str:
    """A number as a screen reader should say it: a real minus sign is read as "minus" by some, not all; a
    hyphen-minus always is. No "-0"."""
    s = format(float(value), fmt)
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def _tok(token) -> str:
    """A token in quotes; the invisible ones named."""
    t = str(token)
    return {"\n": "newline", " ": "space", "": "empty"}.get(t, f"'{t}'")


def bars_text(items: Sequence[tuple[str, float]], fmt: str = ".3f", top: int = 5) -> str:
    """Bars of (label, value), as drawn (the first on top): the largest ``top`` with their values."""
    items = [(str(k), float(v)) for k, v in items]
    if not items:
        return "No bars."
    ranked = sorted(items, key=lambda kv: -kv[1])
    named = ", ".join(f"{_tok(k)} {_num(v, fmt)}" for k, v in ranked[:top])
    rest = ranked[top:]
    tail = (f"; the other {len(rest)} from {_num(rest[-1][1], fmt)} to {_num(rest[0][1], fmt)}" if len(rest) > 1
            else f"; then {_tok(rest[0][0])} {_num(rest[0][1], fmt)}" if rest else "")
    return f"{len(items)} bars, largest first: {named}{tail}."


def signed_bars_text(labels: Sequence[str], values: Sequence[float], fmt: str = ".2f", top: int = TOP) -> str:
    """Bars that may be negative (logits, hidden neurons): the largest, the most negative, how many are zero.
    Without labels, a bar is named by its index."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return "No bars."
    names = [_tok(lab) for lab in labels] if len(labels) else [f"#{i}" for i in range(v.size)]
    order = np.argsort(-v, kind="stable")
    pos = [i for i in order if v[i] > 0][:top]
    neg = [i for i in order[::-1] if v[i] < 0][:top]
    parts = [f"{v.size} bars"]
    if pos:
        parts.append("largest " + ", ".join(f"{names[i]} {_num(v[i], fmt)}" for i in pos))
    if neg:
        parts.append("most negative " + ", ".join(f"{names[i]} {_num(v[i], fmt)}" for i in neg))
    zero = int((v == 0).sum())
    if zero:
        parts.append(f"{zero} exactly 0")
    return "; ".join(parts) + "."


def curve_text(name: str, xs: Sequence[float], ys: Sequence[float], fmt: str = ".3g", x_name: str = "") -> str:
    """One curve: start, end, lowest and highest point, and its steepest stretch (about a tenth of its length:
    where a phase change or a plateau's end shows)."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    at = f"{x_name} " if x_name else "x = "
    if y.size == 0:
        return f"{name}: no points."
    if y.size == 1:
        return f"{name}: one point, {_num(y[0], fmt)} at {at}{_num(x[0])}."
    lo, hi = int(np.argmin(y)), int(np.argmax(y))
    text = (f"{name}: starts at {_num(y[0], fmt)} ({at}{_num(x[0])}), ends at {_num(y[-1], fmt)} ({at}{_num(x[-1])}); "
            f"lowest {_num(y[lo], fmt)} at {at}{_num(x[lo])}, highest {_num(y[hi], fmt)} at {at}{_num(x[hi])}")
    span = max(1, len(y) // 10)
    if len(y) > 2 * span:
        change = y[span:] - y[:-span]
        k = int(np.argmax(np.abs(change)))
        if abs(change[k]) > 0.05 * (y[hi] - y[lo] + 1e-12):
            way = "falls" if change[k] < 0 else "rises"
            text += (f"; it {way} fastest between {at}{_num(x[k])} and {_num(x[k + span])} "
                     f"(from {_num(y[k], fmt)} to {_num(y[k + span], fmt)})")
    return text + "."


def curves_text(curves: dict[str, tuple[Sequence[float], Sequence[float]]], fmt: str = ".3g",
                x_name: str = "") -> str:
    return " ".join(curve_text(name, xs, ys, fmt, x_name) for name, (xs, ys) in curves.items())


def histogram_text(values, fmt: str = ".3g", bins: int = 24) -> str:
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return "No values."
    counts, edges = np.histogram(v, bins=bins)
    k = int(np.argmax(counts))
    return (f"{v.size} values from {_num(v.min(), fmt)} to {_num(v.max(), fmt)}, mean {_num(v.mean(), fmt)}, "
            f"standard deviation {_num(v.std(), fmt)}; the most ({int(counts[k])}) between {_num(edges[k], fmt)} "
            f"and {_num(edges[k + 1], fmt)}.")


def grid_text(M, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
              fmt: str = ".2f", row: int | None = None, top: int = TOP, rows_named: int = 16) -> str:
    """A matrix drawn as colours. With ``row``: that row's ``top`` largest entries. Otherwise the largest entries
    of the whole matrix, and each row's largest column (for up to ``rows_named`` rows; beyond that, how many rows
    have their largest entry on the diagonal, the pattern a reader looks for). NaN (masked) entries are skipped."""
    A = np.asarray(M, dtype=float)
    n, m = A.shape
    rl = [_tok(t) for t in row_labels] if row_labels is not None else [f"row {i}" for i in range(n)]
    cl = [_tok(t) for t in col_labels] if col_labels is not None else [f"column {j}" for j in range(m)]
    finite = np.where(np.isfinite(A), A, -np.inf)
    if row is not None:
        order = [j for j in np.argsort(-finite[row], kind="stable")[:top] if np.isfinite(finite[row, j])]
        return (f"Row {rl[row]} (row {row}): largest " + ", ".join(f"{cl[j]} {_num(A[row, j], fmt)}" for j in order)
                + ".")
    flat = [divmod(int(k), m) for k in np.argsort(-finite, axis=None, kind="stable")[:top]]
    text = f"{n} by {m} grid; largest " + ", ".join(f"{rl[i]}, {cl[j]}: {_num(A[i, j], fmt)}" for i, j in flat
                                                    if np.isfinite(A[i, j]))
    best = [int(np.argmax(finite[i])) if np.isfinite(finite[i]).any() else -1 for i in range(n)]
    if n <= rows_named:
        text += ". Each row's largest: " + ", ".join(f"{rl[i]} → {cl[j]}" for i, j in enumerate(best) if j >= 0)
    elif n == m:
        text += f". {sum(i == j for i, j in enumerate(best))} of the {n} rows have their largest on the diagonal"
    return text + "."


def pattern_text(A, tokens: Sequence[str], query: int | None = None, masked=None, top: int = TOP) -> str:
    """An attention pattern (row i = query i, column j = key j): the selected query's strongest keys with their
    weights, or else each query's strongest key (for up to 16 queries) and how many look at themselves or at the
    previous token, the two patterns the series asks about."""
    A = np.asarray(A, dtype=float).copy()
    if masked is not None:
        A[np.asarray(masked, dtype=bool)] = np.nan
    n = len(tokens)
    name = [f"{_tok(t)} ({i})" for i, t in enumerate(tokens)]
    if query is not None:
        w = np.where(np.isfinite(A[query]), A[query], -np.inf)
        order = [j for j in np.argsort(-w, kind="stable")[:top] if np.isfinite(w[j])]
        return (f"Query {name[query]} attends most to " + ", ".join(f"{name[j]} {_num(A[query, j], '.2f')}"
                                                                   for j in order) + ".")
    best = [int(np.nanargmax(A[i])) if np.isfinite(A[i]).any() else -1 for i in range(n)]
    text = f"Attention pattern, {n} by {n}"
    if n <= 16:
        text += "; each query's strongest key: " + ", ".join(f"{name[i]} → {name[j]} {_num(A[i, j], '.2f')}"
                                                             for i, j in enumerate(best) if j >= 0)
    itself = sum(i == j for i, j in enumerate(best))
    previous = sum(j == i - 1 for i, j in enumerate(best))
    return text + f". {itself} of {n} queries look most at themselves, {previous} at the previous token."


def dots_text(rungs: Sequence[tuple[str, list[float]]], fmt: str = ".2f") -> str:
    """The ladder: each rung's mean over its seeds and their range, in the order drawn."""
    parts = []
    for name, vals in rungs:
        mean = sum(vals) / len(vals)
        parts.append(f"{name} {_num(mean, fmt)}" + (f" ({_num(min(vals), fmt)} to {_num(max(vals), fmt)})"
                                                      if len(vals) > 1 else ""))
    return "; ".join(parts) + "."


# --- static matplotlib figures ------------------------------------------------------------------------------

def describe(ax_or_fig, text: str) -> None:
    """Attach ``text`` to the figure that ``ax_or_fig`` belongs to (a figure's texts are read in the order its
    helpers drew them)."""
    from matplotlib.figure import Figure

    fig = ax_or_fig
    while not isinstance(fig, Figure):       # an Axes, or a SubFigure: up to the figure that is shown
        fig = fig.figure
    texts = fig.__dict__.setdefault("_gt_alt", [])
    texts.append(text)


def figure_text(fig) -> str:
    """The figure's text alternative: each panel's title and its data, as its helpers described them. A figure
    drawn without a helper gets its titles and axis labels only, marked as such (tests require none in the
    notebooks)."""
    said = fig.__dict__.get("_gt_alt")
    if said:
        return " ".join(said)
    labels = []
    for ax in fig.axes:
        bits = [ax.get_title(), ax.get_xlabel() and f"x: {ax.get_xlabel()}",
                ax.get_ylabel() and f"y: {ax.get_ylabel()}"]
        labels.append(", ".join(b for b in bits if b))
    return "A figure (no description of its data): " + "; ".join(b for b in labels if b) + "."


def panel(ax, text: str) -> str:
    """``text`` preceded by the panel's title, if it has one."""
    title = ax.get_title() if hasattr(ax, "get_title") else ""
    return f"{title}: {text}" if title else text


def figure_html(fig, dpi: int = 100) -> str:
    """The figure as HTML: its PNG in a ``<figure>`` with the text as ``alt``, and the same words in a
    disclosure under it (closed; a keyboard and a screen reader reach it like any button)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    src = base64.b64encode(buf.getvalue()).decode("ascii")
    text = html.escape(figure_text(fig), quote=True)
    return (f'<figure class="gt-figure" style="margin:0"><img src="data:image/png;base64,{src}" alt="{text}">'
            f'<details style="font:12px sans-serif;color:#333;max-width:60em"><summary>the figure in words</summary>'
            f"{text}</details></figure>")


def register_figure_html(shell=None) -> bool:
    """In IPython, show every matplotlib figure through ``figure_html`` (JupyterLab prefers HTML to PNG). Returns
    whether a shell was there to register with."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    from matplotlib.figure import Figure

    formatter = shell.display_formatter.formatters["text/html"]

    def ensure(*_):
        if Figure not in formatter.type_printers:
            formatter.for_type(Figure, figure_html)
    ensure()
    # The inline backend drops every figure formatter but its own when it loads (with the first figure a cell
    # draws) and when its settings change: put ours back before each cell, and after it, before the backend's own
    # post-execute hook (registered later, at its load) shows the cell's figures.
    for event in ("pre_run_cell", "post_execute"):
        if not any(getattr(f, "__qualname__", "") == ensure.__qualname__ for f in shell.events.callbacks[event]):
            shell.events.register(event, ensure)
    return True
