"""Text alternatives that carry a picture's data: one place for every picture the series draws.

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
import re
import io
from collections.abc import Sequence

import numpy as np

TOP = 3               # entries named per bar chart, row or curve
# read by a screen reader, not drawn: the usual "visually hidden" recipe (an element of 1 px, clipped)
SR_ONLY = "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);" \
          "white-space:nowrap;border:0"


_BIG = ((1e18, "quintillion"), (1e15, "quadrillion"), (1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
_SAID = {"\n": "newline", "⏎": "newline", " ": "space", "␣": "space", "": "empty", ",": "comma", ".": "full stop",
         ":": "colon", ";": "semicolon", "?": "question mark", "!": "exclamation mark", "'": "apostrophe",
         '"': "quotation mark", "-": "hyphen", "(": "opening bracket", ")": "closing bracket",
         "<unk>": "unknown word"}


def _num(value: float, fmt: str = ".3g", scale: float | None = None) -> str:
    """A number as a screen reader says it well: whole numbers with thousands separators (2,000, not 2e+03),
    large ones in words (64 quintillion), tiny ones as "4.5 times 10 to the minus 6", no "-0". ``scale``: the
    size of the data around it; a value below a millionth of it is rounding noise and said as 0."""
    v = float(value)
    if v != v:
        return "not a number"
    if scale is not None and abs(v) < 1e-6 * abs(scale):
        v = 0.0
    sign = "minus " if v < 0 else ""
    if re.fullmatch(r"\.\d+f", fmt) and 0 < abs(v) < 0.5 * 10.0 ** -int(fmt[1:-1]):
        return "nearly 0"                          # (fixed decimals, as a weight: 0.003 is not "0.00" nor 3e-3)
    if abs(v) >= 1e6:
        for size, word in _BIG:
            if abs(v) >= size:
                return f"{sign}{format(abs(v) / size, '.3g')} {word}"
    if v == int(v) and abs(v) >= 1:
        return f"{int(v):,}"
    if 0 < abs(v) < 1e-3:
        m, e = f"{abs(v):.1e}".split("e")
        return f"{sign}{m.removesuffix('.0')} times 10 to the minus {abs(int(e))}"
    s = format(v, fmt)
    if "e" in s:                                   # (only between 1e-3 and 1e6 here: never, but safe)
        s = f"{v:.6f}".rstrip("0").rstrip(".")
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def _tok(token) -> str:
    """A token as a screen reader should hear it: punctuation and invisible tokens by name, words in quotes."""
    t = str(token)
    return _SAID.get(t, f"'{t}'")


def token_html(token) -> str:
    """A token for an HTML caption or label: drawn readably (⏎ for a newline, ␣ for a space), and, where a screen
    reader would drop or garble it (punctuation, <unk>, the invisible ones), its name for the screen reader."""
    shown = {"\n": "⏎", " ": "␣"}.get(str(token), str(token))
    said = _SAID.get(str(token))
    if said is None:
        return html.escape(shown)
    return f'<span aria-hidden="true">{html.escape(shown)}</span><span style="{SR_ONLY}">{said}</span>'


def _at(tokens: Sequence[str], j: int) -> str:
    """Token j (a Python index) with its position counted from 1, as the explorers' captions and sliders count."""
    return f"{_tok(tokens[j])} at position {j + 1}"


def bars_text(items: Sequence[tuple[str, float]], fmt: str = ".3f", top: int = 5) -> str:
    """Bars of (label, value), as drawn (the first on top): the largest ``top`` with their values."""
    items = [(str(k), float(v)) for k, v in items]
    if not items:
        return "No bars."
    ranked = sorted(items, key=lambda kv: -kv[1])
    if len(items) <= top + 1:
        top = len(items)
    named = ", ".join(f"{_tok(k)} {_num(v, fmt)}" for k, v in ranked[:top])
    rest = ranked[top:]
    tail = f"; the other {len(rest)} from {_num(rest[-1][1], fmt)} to {_num(rest[0][1], fmt)}" if rest else ""
    return f"{len(items)} bars, largest first: {named}{tail}."


def signed_bars_text(labels: Sequence[str], values: Sequence[float], fmt: str = ".3g", top: int = TOP) -> str:
    """Bars that may be negative (logits, hidden neurons): all of them if there are few, else the largest, the most
    negative and how many are zero. Without labels, a bar is named by its number (from 1)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return "No bars."
    names = [_tok(lab) for lab in labels] if len(labels) else [f"#{i}" for i in range(v.size)]   # #j: z[j]
    if v.size <= 6:
        return f"{v.size} bars: " + ", ".join(f"{names[i]}: {_num(v[i], fmt)}" for i in range(v.size)) + "."
    order = np.argsort(-v, kind="stable")
    pos = [i for i in order if v[i] > 0][:top]
    neg = [i for i in order[::-1] if v[i] < 0][:top]
    parts = [f"{v.size} bars"]
    if pos:
        parts.append("largest " + ", ".join(f"{names[i]}: {_num(v[i], fmt)}" for i in pos))
    if neg:
        parts.append("most negative " + ", ".join(f"{names[i]}: {_num(v[i], fmt)}" for i in neg))
    zero = int((v == 0).sum())
    if zero:
        parts.append(f"{zero} exactly 0")
    return "; ".join(parts) + "."


def _trend(y: np.ndarray) -> str:
    d = np.diff(y)
    if (d < 0).all():
        return "each value smaller than the one before"
    if (d > 0).all():
        return "each value larger than the one before"
    return ""


def curve_text(name: str, xs: Sequence[float], ys: Sequence[float], fmt: str = ".3g", x_name: str = "",
               log: bool = False) -> str:
    """One curve in words. Up to 10 points: every value, and whether it only falls or only rises. Longer: where it
    starts and ends, its lowest and highest point, a plateau at the start (when the first tenth of its change
    comes late), its values at six evenly spaced places, its steepest stretch when one stands out (not on a log
    scale, where a straight line has none), and whether it is still falling or rising at the end."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    at = f"{x_name} " if x_name else "x = "
    scale = float(np.abs(y).max()) if y.size else 1.0
    say = lambda v: _num(v, fmt, scale)  # noqa: E731
    if y.size == 0:
        return f"{name}: no points."
    if y.size <= 10:
        trend = _trend(y)
        return (f"{name}, at {at}" + ", ".join(_num(v) for v in x) + ": " + ", ".join(say(v) for v in y)
                + (f"; {trend}" if trend else "") + ".")
    lo, hi = int(np.argmin(y)), int(np.argmax(y))
    near = "at" if (x == np.round(x)).all() else "near"   # a sampled grid: the true extreme lies between samples
    parts = [f"{name}: starts at {say(y[0])} ({at}{_num(x[0])}), ends at {say(y[-1])} ({at}{_num(x[-1])}); "
             f"lowest {say(y[lo])} {near} {at}{_num(x[lo])}, highest {say(y[hi])} {near} {at}{_num(x[hi])}"]
    spread = y[hi] - y[lo]
    if spread < 0.05 * max(scale, 1e-12):
        return parts[0] + "; nearly level throughout."
    moved = np.nonzero(np.abs(y - y[0]) > 0.1 * spread)[0]
    if moved.size and moved[0] >= max(3, 0.2 * len(y)):
        k = int(moved[0]) - 1
        seg = y[: k + 1]
        level = f"at {say(seg[0])}" if say(seg.min()) == say(seg.max()) else \
            f"between {say(seg.min())} and {say(seg.max())}"
        parts.append(f"it stays {level} until {at}{_num(x[k])}")
    marks = np.unique(np.linspace(0, len(y) - 1, 6).round().astype(int))
    parts.append("at " + ", ".join(f"{_num(x[i])}: {say(y[i])}" for i in marks))
    span = max(1, len(y) // 10)
    change = y[span:] - y[:-span]
    k = int(np.argmax(np.abs(change)))
    if not log and abs(change[k]) >= 3 * float(np.median(np.abs(change))) and abs(change[k]) > 0.2 * spread:
        way = "falls" if change[k] < 0 else "rises"
        parts.append(f"it {way} fastest between {at}{_num(x[k])} and {_num(x[k + span])} "
                     f"(from {say(y[k])} to {say(y[k + span])})")
    k = max(1, len(y) // 10)                       # the last tenth against the tenth before it, on average
    drift = float(y[-k:].mean() - y[-2 * k:-k].mean())   # (a wobble on a plateau is not a trend)
    if drift < -0.05 * spread:
        parts.append("still falling at the end")
    elif drift > 0.05 * spread:
        parts.append("still rising at the end")
    return "; ".join(parts) + "."


def curves_text(curves: dict[str, tuple[Sequence[float], Sequence[float]]], fmt: str = ".3g",
                x_name: str = "", log: bool = False) -> str:
    """Each curve, then how each pair compares where they share their x values: one below the other throughout, or
    where they cross; and, when one ends lower, where it first reached the other's final value."""
    text = [curve_text(name, xs, ys, fmt, x_name, log) for name, (xs, ys) in curves.items()]
    at = f"{x_name} " if x_name else "x = "
    items = [(name, np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)) for name, (xs, ys) in curves.items()]
    for (a, xa, ya), (b, xb, yb) in ((p, q) for i, p in enumerate(items) for q in items[i + 1:]):
        if len(xa) != len(xb) or len(xa) < 2 or not np.allclose(xa, xb):
            continue
        d = ya - yb
        sides = np.sign(d[d != 0])
        if sides.size and (sides == sides[0]).all():
            low, high, yl, yh = (a, b, ya, yb) if sides[0] < 0 else (b, a, yb, ya)
            level = " or level with" if (d == 0).any() else ""
            sentence = f"{low} is below{level} {high} at every {x_name or 'x'}"
            reached = np.nonzero(yl <= yh[-1])[0]
            if reached.size and yl[0] > yh[-1]:          # falling curves: where the lower one got to the other's end
                sentence += f"; it reaches {high}'s final {_num(yh[-1], fmt)} at {at}{_num(xa[int(reached[0])])}"
            text.append(sentence + ".")
        elif sides.size:
            where = np.nonzero(d != 0)[0]
            flips = [k for k in range(len(where) - 1) if np.sign(d[where[k]]) != np.sign(d[where[k + 1]])]
            last = int(where[flips[-1]])
            now_low = a if sides[-1] < 0 else b
            text.append(f"{a} and {b} cross {len(flips)} time{'s' if len(flips) != 1 else ''}, the last between "
                        f"{at}{_num(xa[last])} and {_num(xa[last + 1])}; after it {now_low} is lower.")
    return " ".join(text)


def level_text(name: str, xs: Sequence[float], ys: Sequence[float], level_name: str, level: float,
               x_name: str = "") -> str:
    """Where a curve is above and below a level line."""
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    at = f"{x_name} " if x_name else "x = "
    above = y > level
    if above.all() or (~above).all():
        return f"{name} is {'above' if above.all() else 'below'} {level_name} everywhere."
    flips = np.nonzero(above[1:] != above[:-1])[0]
    if len(flips) == 1:
        k = int(flips[0])
        return (f"{name} is {'above' if above[0] else 'below'} {level_name} up to {at}{_num(x[k])} and "
                f"{'below' if above[0] else 'above'} it from {_num(x[k + 1])} on.")
    return f"{name} crosses {level_name} {len(flips)} times; it ends {'above' if above[-1] else 'below'} it."


def histogram_text(values, fmt: str = ".3g", bins: int = 24) -> str:
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return "No values."
    counts, edges = np.histogram(v, bins=bins)
    k = int(np.argmax(counts))
    sd = float(v.std())
    scale = float(np.abs(v).max())
    skew = float(((v - v.mean()) ** 3).mean() / sd ** 3) if sd > 0 else 0.0
    tail = "; a long tail to the right" if skew > 0.5 else "; a long tail to the left" if skew < -0.5 else ""
    mean = _num(v.mean(), fmt, sd if sd > 0 else scale)
    return (f"{v.size} values from {_num(v.min(), fmt)} to {_num(v.max(), fmt)}, mean {mean}, "
            f"standard deviation {_num(sd, fmt)}; the most ({int(counts[k])}) between {_num(edges[k], fmt)} "
            f"and {_num(edges[k + 1], fmt)}{tail}.")


def _offsets(best: list[int], first: int) -> tuple[int, int]:
    """The most common offset i - j of each row's largest entry (rows from ``first``), and how many rows have it."""
    offs = [i - j for i, j in enumerate(best) if j >= 0 and i >= first]
    if not offs:
        return 0, 0
    values, counts = np.unique(offs, return_counts=True)
    k = int(np.argmax(counts))
    return int(values[k]), int(counts[k])


def _offset_words(offset: int) -> str:
    steps = lambda k: f"{k} step{'s' if k != 1 else ''}"  # noqa: E731
    return {0: "on the diagonal (itself)", 1: "one step left of the diagonal (the previous one)"}.get(
        offset, f"{steps(offset)} left of the diagonal" if offset > 0 else f"{steps(-offset)} right of the diagonal")


def grid_text(M, row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
              fmt: str = ".3g", row: int | None = None, top: int = TOP, rows_named: int = 12, by: str = "row") -> str:
    """A matrix drawn as colours. With ``row``: that row's ``top`` largest entries. Otherwise the largest entries,
    each row's largest (for up to ``rows_named`` rows), and for a square matrix where each row's (or, ``by="column"``,
    each column's) largest entry sits: on the diagonal, one step left of it, ... (the most common place, and how
    many rows share it). Without labels, rows and columns are numbered from 0, as a figure's axis ticks count; a label
    that repeats gets its position counted from 1, as the explorers count. NaN (masked) entries are skipped."""
    A = np.asarray(M, dtype=float)
    if by == "column":
        A = A.T
        row_labels, col_labels = col_labels, row_labels
    n, m = A.shape

    def names(labels, k):   # a label that repeats ('the' three times) gets its position too
        if labels is None:
            return [str(i) for i in range(k)]
        twice = len(set(map(str, labels))) < len(labels)
        return [_tok(t) + (f" at {i + 1}" if twice else "") for i, t in enumerate(labels)]
    rl, cl = names(row_labels, n), names(col_labels, m)
    what, other = ("row", "column") if by == "row" else ("column", "row")
    finite = np.where(np.isfinite(A), A, -np.inf)
    scale = float(np.abs(A[np.isfinite(A)]).max()) if np.isfinite(A).any() else 1.0
    say = lambda v: _num(v, fmt, scale)  # noqa: E731
    if row is not None:
        order = [j for j in np.argsort(-finite[row], kind="stable")[:top] if np.isfinite(finite[row, j])]
        return f"{what.capitalize()} {rl[row]}: largest " + "; ".join(f"{other} {cl[j]}: {say(A[row, j])}"
                                                                      for j in order) + "."
    flat = [divmod(int(k), m) for k in np.argsort(-finite, axis=None, kind="stable")[:top]]
    text = f"{n} by {m} grid; largest " + ", ".join(f"{what} {rl[i]} and {other} {cl[j]}: {say(A[i, j])}"
                                                    for i, j in flat if np.isfinite(A[i, j]))
    best = [int(np.argmax(finite[i])) if np.isfinite(finite[i]).any() else -1 for i in range(n)]
    if np.isfinite(A).any():
        text += f"; values from {say(np.nanmin(A))} to {say(np.nanmax(A))}"
    if n <= rows_named:
        def largest(i, j):   # a row whose entries are all the same has no largest one
            row_ = A[i][np.isfinite(A[i])]
            return f"all {say(row_[0])}" if row_.size > 1 and row_.min() == row_.max() else cl[j]
        text += f". Each {what}'s largest: " + ", ".join(f"{rl[i]} → {largest(i, j)}" for i, j in enumerate(best)
                                                        if j >= 0)
    if n == m:
        masked_first = n > 1 and bool(np.isnan(A[0, 1:]).all())     # a causal mask: row 1 has one entry
        offset, count = _offsets(best, first=1 if masked_first else 0)
        rows = sum(j >= 0 for j in best) - masked_first
        text += (f". The most common place of a {what}'s largest entry: {_offset_words(offset)}, for {count} of "
                 f"{rows} {what}s")
        if not masked_first:   # and of the other axis' (notebook 10 reads its OV table by columns)
            down = [int(np.argmax(finite[:, j])) if np.isfinite(finite[:, j]).any() else -1 for j in range(m)]
            on = sum(i == j for j, i in enumerate(down))
            text += f"; a {other}'s largest entry is on the diagonal for {on} of {m} {other}s"
    return text + "."


def pattern_text(A, tokens: Sequence[str], query: int | None = None, masked=None, top: int = TOP,
                 label: str = "", marks: dict[str, object] | None = None,
                 mark_words: dict[str, str] | None = None) -> str:
    """An attention pattern (row i = query i, column j = key j), positions counted from 1. First the summary that
    tells heads apart: the mean weight a query gives the previous token and itself, and where most queries' strongest
    key sits (with the range of those weights). Then, with ``query``, that query's strongest keys; without, each
    query's strongest key when there are at most 8. The first query (which can only see itself) is left out of the
    summary. Last, for each kind of frame drawn over the pattern (``marks``: colour -> (n, n) bool), what it frames
    (``mark_words``: colour -> words, e.g. "framed orange, the token after an earlier copy"), how many cells in how
    many rows, and how much of those rows' weight the framed cells hold: what an induction head's pattern is read
    for."""
    W = np.asarray(A, dtype=float).copy()
    if masked is not None:
        W[np.asarray(masked, dtype=bool)] = np.nan
    n = len(tokens)
    head = f"{label}: " if label else ""
    # each row's strongest key (np.nanargmax row by row, in one call: NaN, the masked cells, never wins); -1: none
    best = np.where(np.isfinite(W).any(-1), np.argmax(np.where(np.isnan(W), -np.inf, W), -1), -1).tolist()
    parts = [f"{head}attention pattern, {n} by {n}"]
    if n > 1:
        prev = float(np.nanmean(np.diagonal(W, -1)))     # W[i, i - 1], i = 1 ... n - 1
        self_ = float(np.nanmean(np.diagonal(W)[1:]))    # W[i, i], the first query left out
        offset, count = _offsets(best, first=1)
        strongest = [W[i, j] for i, j in enumerate(best) if i >= 1 and j >= 0 and i - j == offset]
        parts.append(f"on average a query gives {_num(prev, '.2f')} of its weight to the previous token and "
                     f"{_num(self_, '.2f')} to itself; its strongest key is {_offset_words(offset)} for {count} of "
                     f"{n - 1} queries (weights {_num(min(strongest), '.2f')} to {_num(max(strongest), '.2f')})")
    if query is not None:
        w = np.where(np.isfinite(W[query]), W[query], -np.inf)
        order = [j for j in np.argsort(-w, kind="stable")[:top] if np.isfinite(w[j])]
        parts.append(f"query {_at(tokens, query)} looks most at "
                     + ", ".join(f"{_at(tokens, j)} (weight {_num(W[query, j], '.2f')})" for j in order))
    elif n <= 8:
        parts.append("each query's strongest key: " + ", ".join(
            f"{_at(tokens, i)} looks at {_at(tokens, j)} (weight {_num(W[i, j], '.2f')})"
            for i, j in enumerate(best) if j >= 0))
    for colour, m in (marks or {}).items():
        framed = np.asarray(m, dtype=bool) & np.isfinite(W)      # a masked cell holds no weight: not counted
        rows = framed.any(-1)
        what = (mark_words or {}).get(colour, "framed cells")
        if not rows.any():
            parts.append(f"{what}: none")
            continue
        held = np.where(framed, W, 0.0).sum(-1)[rows]           # each framed row's weight in its framed cells
        cells, lines = int(framed.sum()), int(rows.sum())
        parts.append(f"{what}: {cells} cell{'s' * (cells != 1)} in {lines} row{'s' * (lines != 1)}, holding "
                     f"{_num(held.mean(), '.2f')} of those rows' weight on average")
    return ". ".join(p[0].upper() + p[1:] for p in parts) + "."


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
            f'<details style="font:12px sans-serif;max-width:60em"><summary>the figure in words</summary>'
            f"{text}</details></figure>")


def register_figure_html(shell=None) -> bool:
    """In IPython, show every matplotlib figure through ``figure_html`` (JupyterLab prefers HTML to PNG). Returns
    whether a shell was there to register with."""
    if shell is None:
        from helpers.runtime import ipython_shell

        shell = ipython_shell()
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
