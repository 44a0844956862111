"""Notebook 08: the loss ladder — every seed of every model on the same held-out text — and training curves."""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.axes import Axes

from helpers.plots.alt import curves_text, describe, dots_text, panel
from helpers.plots.basic import new_axes
from helpers.plots.palette import BLUE, GREY, INK, LINES


def _values(value: float | Sequence[float]) -> list[float]:
    return [float(v) for v in value] if isinstance(value, Sequence) else [float(value)]


def rung_dots(ax: Axes | None, rungs: Sequence[tuple[str, float | Sequence[float]]], title: str = "",
              baselines: int = 1) -> Axes:
    """One row per rung, first on top: a dot per seed, a bar at their mean, "mean (min-max)" written beside.

    The x axis spans only the values shown (not from 0), so that differences of a few hundredths of a nat — the
    size of the spread between seeds — are visible. The first ``baselines`` rungs (counting models) are grey.
    """
    ax = ax or new_axes((7, 0.42 * len(rungs) + 0.8))
    everything = [v for _, value in rungs for v in _values(value)]
    for i, (name, value) in enumerate(rungs):
        y = len(rungs) - 1 - i
        vals = _values(value)
        mean = sum(vals) / len(vals)
        color = GREY if i < baselines else BLUE
        ax.plot(vals, [y] * len(vals), "o", color=color, markersize=5, alpha=0.8)
        ax.plot([mean, mean], [y - 0.3, y + 0.3], color=INK, linewidth=1.5)
        text = f"  {mean:.2f} ({min(vals):.2f}–{max(vals):.2f})" if len(vals) > 1 else f"  {mean:.2f}"
        ax.text(max(vals), y, text, va="center", fontsize=8)
    low, high = min(everything), max(everything)
    ax.set_xlim(low - 0.05 * (high - low), high + 0.35 * (high - low))
    ax.set_yticks(range(len(rungs)), [name for name, _ in rungs][::-1], fontsize=9)
    ax.set_xlabel("held-out cross-entropy (nats / token; lower is better; a dot per seed, | = mean)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(title, fontsize=10)
    describe(ax, panel(ax, "held-out cross-entropy, mean over seeds (lowest and highest seed), top to bottom: "
                       + dots_text([(name, _values(value)) for name, value in rungs])))
    return ax


def curves(ax: Axes | None, runs: dict[str, Sequence[Sequence[float]]], every: int, title: str = "") -> Axes:
    """Held-out loss against training step: per label, the mean over its seeds (a line) and their range (a band).

    runs: {label: [curve of seed 0, curve of seed 1, ...]}, each curve measured every ``every`` steps.
    """
    ax = ax or new_axes((6.5, 3.2))
    means, spread = {}, []
    for k, (label, per_seed) in enumerate(runs.items()):
        n = min(len(c) for c in per_seed)
        steps = [every * (i + 1) for i in range(n)]
        columns = [[c[i] for c in per_seed] for i in range(n)]
        line, = ax.plot(steps, [sum(col) / len(col) for col in columns], marker=".", color=LINES[k % len(LINES)],
                        label=label)
        ax.fill_between(steps, [min(col) for col in columns], [max(col) for col in columns],
                        color=line.get_color(), alpha=0.2, linewidth=0)
        means[f"{label} (mean of {len(per_seed)} seeds)"] = (steps, [sum(col) / len(col) for col in columns])
        spread.append(f"{label}: at the last step the seeds span {min(columns[-1]):.3f} to {max(columns[-1]):.3f}.")
    ax.set_xlabel("training step")
    ax.set_ylabel("held-out loss (nats / token)")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    describe(ax, panel(ax, "held-out loss against training step. " + curves_text(means, x_name="step") + " "
                       + " ".join(spread)))
    return ax
