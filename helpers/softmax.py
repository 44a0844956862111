"""softmax and temperature — the post's "Unembedding" section.

softmax(x)_i = exp(x_i) / sum_j exp(x_j). Two properties make its output a probability
distribution: every entry is positive, and the entries sum to 1. Computing it naively overflows
for large logits (exp(1000) = inf); subtracting max(x) first changes nothing mathematically
(the factor exp(-max) cancels) and keeps every exponent <= 0.
"""

from __future__ import annotations

import torch


def softmax(x: torch.Tensor, dim: int = 0) -> torch.Tensor:
    """Numerically stable softmax along ``dim`` (default 0: the post's column vectors).

    x: (..., n, ...) logits; returns the same shape, entries > 0 (or 0 for -inf) summing to 1
    along ``dim``. A slice that is all -inf has no probability to share out: it becomes NaN, as in
    torch.softmax.
    """
    x = torch.as_tensor(x)
    if not x.is_floating_point():
        x = x.float()
    shifted = x - x.amax(dim=dim, keepdim=True)
    if torch.is_grad_enabled() and shifted.requires_grad:
        e = shifted.exp()
        return e / e.sum(dim=dim, keepdim=True)
    e = shifted.exp_()  # the same numbers without two more tensors of x's size (no gradient to keep)
    return e.div_(e.sum(dim=dim, keepdim=True))


def with_temperature(p: torch.Tensor, temperature: float, dim: int = 0) -> torch.Tensor:
    """Rescale a probability distribution by a temperature: softmax(log p / T).

    T = 1 leaves p unchanged, T -> 0 puts all mass on the most likely token, large T flattens
    towards uniform. Zero probabilities stay zero.
    """
    if not temperature > 0:
        raise ValueError(f"temperature must be positive (T -> 0 means 'always the top token'), got {temperature}")
    return softmax(torch.log(p) / temperature, dim=dim)
