"""Model runs an explorer keeps, so that a change that needs no new run (another layer, another state to read) runs no
model: each result is keyed by the model's state (``model_state``) and what it was run on, and only the last few are
kept (``keep``). Notebook 11's heads explorer and logit-lens explorer (GPT-2 Small: a pass is ~0.2-0.4 s) use both.
"""

from __future__ import annotations

import torch

from helpers.model.transformer import Transformer


def strided_sample(p: torch.Tensor) -> torch.Tensor:
    """A few entries of p, every dimension stepped so that at most about 5 of its indices are taken: a view, never
    a copy (a tied or transposed weight is not contiguous, and flattening it would copy all of it)."""
    q = p.detach()
    for dim, size in enumerate(q.shape):
        q = q[(slice(None),) * dim + (slice(None, None, max(1, size // 5)),)]
    return q


def model_state(model: Transformer) -> tuple:
    """Changes whenever a weight of the model is changed in place (training, an edit, even through ``.data``,
    which torch does not count: a few entries of every weight are summed), a causal mask is switched or another
    intervention is attached to the model or taken off: results kept from before are then not used."""
    with torch.no_grad():
        sample = sum(float(strided_sample(p).double().sum()) for p in model.parameters())
    attached = tuple((name, tuple(map(id, point.fns))) for name, point in model.hook_points.items() if point.fns)
    return (tuple((id(p), p._version) for p in model.parameters()), sample,
            tuple(b.attn.masked for b in model.blocks), attached)


def keep(table: dict, key, value, most: int):
    """table[key] = value, then the oldest entries dropped until at most ``most`` are left; returns value."""
    table[key] = value
    while len(table) > most:  # the oldest first
        del table[next(iter(table))]
    return value
