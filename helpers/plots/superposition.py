"""Notebook 12's picture: the toy model's feature directions in its small space (columns of W, m = 2), as arrows (and
an autoencoder's decoder directions in the same space).

A feature i is the column W[:, i] of the toy model's W (m, n). Drawn from the origin, its length says how strongly
the model keeps it (near 1: kept; near 0: dropped) and the angles between arrows say how much two features
interfere (at right angles: not at all). The unit circle is drawn for scale. An SVG string, like every explorer's
picture (``helpers.plots.svg`` says why), with the arrows in words as its accessible name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from helpers.plots.palette import AXIS, BLUE, GREY, ORANGE
from helpers.plots.svg import _e, _svg, _title


def directions_text(W: torch.Tensor, labels: Sequence[str] | None = None, what: str = "feature") -> str:
    """Each arrow in words: its label, length and angle (degrees, counter-clockwise from the first axis)."""
    lengths = W.norm(dim=0).tolist()
    angles = [math.degrees(math.atan2(float(W[1, i]), float(W[0, i]))) % 360 for i in range(W.shape[1])]
    labels = [str(i) for i in range(W.shape[1])] if labels is None else list(labels)
    kept = sum(v > 0.5 for v in lengths)
    return (f"{kept} of {W.shape[1]} {what}s have length above 0.5. "
            + "; ".join(f"{what} {lab}: length {v:.2f}" + (f" at {a:.0f} degrees" if v > 0.05 else "")
                        for lab, v, a in zip(labels, lengths, angles)))


def directions(W: torch.Tensor, title: str = "", size: int = 240, labels: Sequence[str] | None = None,
               orange: int | None = 0, what: str = "feature") -> str:
    """W (2, n): column i's direction W[:, i] as an arrow from the origin, labelled ``labels[i]`` (default i); the unit
    circle for scale. Arrow ``orange`` is drawn orange (feature 0, the most important; None: all blue). ``what``
    names an arrow in the words (feature, latent)."""
    if W.dim() != 2 or W.shape[0] != 2:
        raise ValueError(f"directions draws a 2-dimensional small space: W must be (2, n), got {tuple(W.shape)}")
    W = W.detach().float()
    top = 22
    r = (size - 40) / 2 / max(1.2, float(W.norm(dim=0).max()) * 1.1)   # pixels per unit
    cx, cy = size / 2, top + (size - top) / 2
    body = [_title(size, title),
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r:.1f}" fill="none" stroke="{GREY}" stroke-dasharray="3 3"/>',
            f'<line x1="{cx - r * 1.1:.1f}" y1="{cy:.1f}" x2="{cx + r * 1.1:.1f}" y2="{cy:.1f}" stroke="{AXIS}" '
            'stroke-width="0.5"/>',
            f'<line x1="{cx:.1f}" y1="{cy - r * 1.1:.1f}" x2="{cx:.1f}" y2="{cy + r * 1.1:.1f}" stroke="{AXIS}" '
            'stroke-width="0.5"/>']
    labels = [str(i) for i in range(W.shape[1])] if labels is None else list(labels)
    if len(labels) != W.shape[1]:
        raise ValueError(f"one label per arrow: {W.shape[1]} arrows, {len(labels)} labels")
    for i in range(W.shape[1]):
        x, y = cx + r * float(W[0, i]), cy - r * float(W[1, i])
        colour = ORANGE if i == orange else BLUE
        body.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y:.1f}" stroke="{colour}" '
                    'stroke-width="2.5"/>')
        body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>')
        dx, dy = x - cx, y - cy
        d = max(math.hypot(dx, dy), 1e-9)
        lx, ly = x + 10 * dx / d, y + 10 * dy / d + 4
        body.append(f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="middle">{_e(labels[i])}</text>')
    return _svg(size, size, title, body, directions_text(W, labels, what))
