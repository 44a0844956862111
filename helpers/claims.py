"""This run among the measured runs: the evidence behind a notebook's live-training claims.

A notebook that trains a model live (02, 05's timings, 06, 09) makes claims about what the training gives:
"the loss on the repeat is below 0.5", "the induction score passes 0.85 by step 1000". A learner's run is one sample
of the recipe: another CPU rounds the last bit differently, training amplifies it, and the run goes elsewhere. So
the series measures each claim over many runs ahead of time (20 seeds, each under three CPU settings:
``python -m tools.margins``) and ships what it saw in ``helpers/margins.json``. A claim is then one call::

    claim("probe: loss on the repeat", repeat, "<", 0.5)

which checks this run against the bound and shows it among the measured runs: their range, where this run falls,
and a strip of every run (``helpers.plots.claims`` draws it). Nothing about other runs is written anywhere else:
the notebook's prose says what the claim means, the output shows the numbers.

This module is the compute part: ``evidence`` checks and measures, ``Evidence.sentence()`` says it in words.
When ``$GT_CLAIMS_FILE`` names a file, every call also appends what it saw to it (one JSON line) and never raises:
that is how ``tools/margins.py`` records a run, with no second copy of any claim.

A claim the margins have not measured yet still checks its bound, and says it has no measured runs to show: a test
(tests/notebooks/test_margins.py) fails on it, never a learner.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().with_name("margins.json")
RECORD = "GT_CLAIMS_FILE"   # set by tools/margins.py: where each call appends what it saw

OPS = {"<": "below", "<=": "at most", ">": "above", ">=": "at least", "==": "equal to", "between": "between"}


class ClaimFailed(AssertionError):
    """This run's value is on the wrong side of a claim's bound (an AssertionError, as the assert it replaces)."""


def _plain(value):
    """A bool, a float or None from what a notebook passes (a Python number, a 0-d tensor or numpy scalar)."""
    if value is None or isinstance(value, bool):
        return value
    if hasattr(value, "item"):
        if getattr(value, "ndim", 0) not in (0,) and getattr(value, "numel", lambda: 1)() != 1:
            raise TypeError(f"a claim's value must be one number, got a tensor of shape {tuple(value.shape)}")
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    raise TypeError(f"a claim's value must be a number, True/False or None, got {type(value).__name__}")


def recording() -> bool:
    """Whether tools/margins.py is recording this run (``$GT_CLAIMS_FILE`` set)."""
    return bool(os.environ.get(RECORD, "").strip())


def holds(op: str | None, bound, value) -> bool | None:
    """Whether ``value op bound``; None when there is nothing to check (no bound, or no value in this run)."""
    if op is None or value is None:
        return None
    if op == "between":
        return bound[0] < value < bound[1]
    return {"<": value < bound, "<=": value <= bound, ">": value > bound, ">=": value >= bound,
            "==": value == bound}[op]


@functools.lru_cache(maxsize=1)
def _load(path: str, stamp: float) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def measured() -> dict:
    """helpers/margins.json: for each notebook, how it was measured and every claim's value in every run."""
    if not DATA.exists():
        return {}
    return _load(str(DATA), DATA.stat().st_mtime)


def find(words: str) -> tuple[str, dict, dict] | None:
    """(notebook, its measurement, the claim's record) for a claim's words, or None if never measured."""
    for name, nb in measured().items():
        if words in nb.get("claims", {}):
            return name, nb, nb["claims"][words]
    return None


@dataclass(frozen=True)
class Evidence:
    """One claim in one run, beside the runs measured ahead of time.

    ``runs``: the measured values (None where the claim did not apply in a run is left out); ``n_runs``: how many
    runs were measured; ``how``: "20 seeds x 3 CPU settings"-style words; ``fmt``: how to write a value."""

    words: str
    value: float | bool | None
    op: str | None
    bound: float | bool | tuple | None
    runs: tuple = ()
    n_runs: int = 0
    how: str = ""
    fmt: str | None = None

    @property
    def ok(self) -> bool | None:
        return holds(self.op, self.bound, self.value)

    @property
    def is_measured(self) -> bool:
        return self.n_runs > 0

    @property
    def numeric(self) -> bool:
        return not isinstance(self.value, bool) and not any(isinstance(v, bool) for v in self.runs) and \
            not isinstance(self.bound, bool)

    def num(self, v) -> str:
        """A value as the claim writes it: whole numbers whole, else ``fmt`` (default 3 significant digits)."""
        if isinstance(v, bool):
            return "yes" if v else "no"
        if self.fmt:
            return format(v, self.fmt).replace("-", "−")
        if float(v).is_integer() and abs(v) < 1e6 and all(float(r).is_integer() for r in self.runs):
            return f"{int(v):,}".replace("-", "−")
        text = f"{v:.3g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"
        return text.replace("-", "−")

    def bound_words(self) -> str:
        if self.op is None:
            return "not claimed, only measured"
        if self.op == "between":
            return f"the claim: between {self.num(self.bound[0])} and {self.num(self.bound[1])}"
        if isinstance(self.bound, bool):
            return f"the claim: {'yes' if self.bound else 'no'}"
        return f"the claim: {self.op.replace('<=', '≤').replace('>=', '≥')} {self.num(self.bound)}"

    def position(self) -> str:
        """Where this run lies among the measured runs, in words."""
        if not self.is_measured or self.value is None:
            return ""
        if not self.numeric:
            return ""
        lower = sum(r < self.value for r in self.runs)
        higher = sum(r > self.value for r in self.runs)
        same = len(self.runs) - lower - higher
        if higher == len(self.runs):
            return "below every one of them"
        if lower == len(self.runs):
            return "above every one of them"
        return f"within their range: {lower} of them lower, " + (f"{same} the same, " if same else "") + \
            f"{higher} higher"

    def measured_words(self) -> str:
        if not self.is_measured:
            return "no runs measured for this claim yet"
        if not self.runs:
            return f"it applied in none of the {self.n_runs} measured runs ({self.how})"
        if not self.numeric:
            yes = sum(bool(r) for r in self.runs)
            return f"yes in {yes} of {len(self.runs)} runs ({self.how})"
        skipped = "" if len(self.runs) == self.n_runs else \
            f"; in {self.n_runs - len(self.runs)} more it did not apply, the notebook says when"
        return f"{self.num(min(self.runs))} to {self.num(max(self.runs))} over {len(self.runs)} runs " \
               f"({self.how}{skipped})"

    def sentence(self) -> str:
        """The whole evidence in one sentence, the text a screen reader and a plain-text front end get."""
        mark = {True: "✓ holds", False: "✗ fails", None: "·"}[self.ok]
        this = "does not apply in this run" if self.value is None else f"this run {self.num(self.value)}"
        where = self.position()
        return f"{mark} — {self.words}: {this} ({self.bound_words()}). Measured ahead: {self.measured_words()}" + \
            (f"; this run is {where}." if where else ".")

    def problem(self) -> str:
        """What a failed claim tells the learner."""
        return (f"{self.words}: this run gave {self.num(self.value)}, which breaks the notebook's claim "
                f"({self.bound_words()[len('the claim: '):]}); measured ahead: {self.measured_words()}. "
                "Your machine made a run outside what the series measured: rerun the notebook from the top, and if "
                "it happens again, tell the series' maintainers the notebook, this claim and your CPU.")


def _how(nb: dict) -> str:
    seeds, settings = nb.get("seeds", []), nb.get("settings", [])
    if seeds and settings:
        return f"{len(seeds)} seeds × {len(settings)} CPU settings"
    return f"{nb.get('runs', 0)} runs"


def evidence(words: str, value, op: str | None = None, bound=None, fmt: str | None = None) -> Evidence:
    """Check one claim in this run and set it beside the measured runs (no display: ``helpers.plots.claims``).

    words: the claim, as the notebook says it (unique in the series: it names the claim in helpers/margins.json).
    value: this run's number (a Python number, a one-element tensor), True/False, or None where it does not apply.
    op, bound: the claim, ``value op bound`` with op one of < <= > >= == between (bound a (low, high) pair for
    between); None: only measured, nothing claimed. fmt: a format for the numbers (default: 3 significant digits).
    With $GT_CLAIMS_FILE set (tools/margins.py), the call appends {words, value, op, bound} to that file."""
    if not isinstance(words, str) or not words.strip():
        raise ValueError("a claim needs its words: what it says, e.g. 'probe: loss on the repeat'")
    if op is not None and op not in OPS:
        raise ValueError(f"a claim's op must be one of {', '.join(OPS)} (or None: only measured), got {op!r}")
    if op is not None and bound is None:
        raise ValueError(f"the claim {words!r} has op {op!r} but no bound to compare with")
    if op == "between" and not (isinstance(bound, (tuple, list)) and len(bound) == 2 and bound[0] < bound[1]):
        raise ValueError(f"the claim {words!r}: 'between' needs a (low, high) pair, got {bound!r}")
    value = _plain(value)
    if isinstance(bound, list):
        bound = tuple(bound)
    if recording():
        with open(os.environ[RECORD].strip(), "a", encoding="utf-8") as f:
            f.write(json.dumps({"words": words, "value": value, "op": op, "bound": bound}) + "\n")
    found = find(words)
    if found is None:
        return Evidence(words, value, op, bound, fmt=fmt)
    _, nb, record = found
    values = record.get("values", [])
    runs = tuple(v for v in values if v is not None)
    return Evidence(words, value, op, bound, runs=runs, n_runs=len(values), how=_how(nb), fmt=fmt)


def check(words: str, value, op: str | None = None, bound=None, fmt: str | None = None) -> Evidence:
    """``evidence``, then raise ``ClaimFailed`` with the learner's explanation if this run breaks the claim (never
    while tools/margins.py records: a run outside the bound is exactly what it measures)."""
    ev = evidence(words, value, op, bound, fmt)
    if ev.ok is False and not recording():
        raise ClaimFailed(ev.problem())
    return ev


def spread(ev: Evidence) -> tuple[float, float] | None:
    """The interval a strip of this evidence must show: every run, this run and the bound."""
    if not ev.numeric:
        return None
    points = [float(v) for v in ev.runs]
    if ev.value is not None:
        points.append(float(ev.value))
    if ev.op == "between":
        points += [float(b) for b in ev.bound]
    elif ev.op is not None:
        points.append(float(ev.bound))
    if not points:
        return None
    lo, hi = min(points), max(points)
    if math.isclose(lo, hi):
        lo, hi = lo - 0.5 * (abs(lo) or 1), hi + 0.5 * (abs(hi) or 1)
    return lo, hi
