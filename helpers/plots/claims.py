"""A live-training claim shown to the learner: one line of words and a strip of the measured runs.

``claim(words, value, op, bound)`` is what a notebook cell calls (``helpers.claims`` checks and measures; this draws):
the sentence says whether this run keeps the claim, the range of the runs the series measured ahead of time and
where this run falls; the strip shows every measured run as a dot, this run as an orange diamond and the bound as a
dashed line. Its words are the strip's text alternative. A yes/no claim gets the sentence alone.
"""

from __future__ import annotations

import html

from helpers.claims import ClaimFailed, Evidence, evidence, recording, spread
from helpers.plots.palette import TEXT_ERROR, TEXT_MUTED
from helpers.plots.svg import strip


class ClaimView:
    """What a claim shows: HTML (words + strip) in a notebook, the sentence in plain text."""

    def __init__(self, ev: Evidence):
        self.evidence = ev

    def __repr__(self) -> str:
        return self.evidence.sentence()

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(repr(self))

    def _repr_html_(self) -> str:
        ev = self.evidence
        colour = {True: "inherit", False: TEXT_ERROR, None: "inherit"}[ev.ok]
        head = {True: "✓", False: "✗", None: "·"}[ev.ok]
        said = {True: "holds", False: "fails", None: "measured"}[ev.ok]
        text = ev.sentence()
        picture = ""
        interval = spread(ev) if ev.is_measured else None
        if interval is not None:
            bounds = () if ev.op is None else (tuple(ev.bound) if ev.op == "between" else (ev.bound,))
            picture = strip([float(v) for v in ev.runs], None if ev.value is None else float(ev.value), *interval,
                            bounds=[float(b) for b in bounds], name=text, fmt=ev.num)
        body = html.escape(text.split(" — ", 1)[1])
        return (f'<div class="gt-claim" data-claim="{html.escape(ev.words, quote=True)}" data-holds="{said}" '
                f'style="margin:2px 0 6px 0">'
                f'<div style="color:{colour}"><span aria-hidden="true">{head} </span>'
                f'<strong>{said}</strong> — {body}</div>'
                + (f'<div style="color:{TEXT_MUTED}">{picture}</div>' if picture else "") + "</div>")


def claim(words: str, value, op: str | None = None, bound=None, fmt: str | None = None) -> None:
    """Check a live-training claim in this run and show it among the measured runs (``helpers.claims.evidence``
    says what each argument is). Raises ``ClaimFailed`` after showing it if this run breaks the claim (never while
    tools/margins.py records a run)."""
    from IPython.display import display

    ev = evidence(words, value, op, bound, fmt)
    display(ClaimView(ev))
    if ev.ok is False and not recording():
        raise ClaimFailed(ev.problem())
