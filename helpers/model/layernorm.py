"""LayerNorm and RMSNorm — the post's "LayerNorm" section.

For each column x_i of the residual stream (one position, d_model numbers):

    LayerNorm(x_i) = (x_i - mu(x_i)) / sigma(x_i) * gamma + beta

where mu and sigma are the mean and standard deviation of the d_model entries of x_i (scalars),
and gamma, beta (d_model,) are learned. Column vectors as in the post, so a sequence x is
(d_model, n) (or (batch, d_model, n)) and we normalise over dim -2, the d_model axis. PyTorch's
``torch.nn.LayerNorm`` works on rows (n, d_model) and normalises the last axis; transposing
turns one into the other (tests/unit/model/test_layernorm.py checks they agree).

sigma uses the *biased* variance (divide by d_model, not d_model - 1) and a small ``eps`` inside
the square root, exactly like torch, so a constant vector does not divide by zero.

RMSNorm (used by LLaMA and many recent models) skips the mean and beta:
    RMSNorm(x_i) = x_i / sqrt(mean(x_i ** 2) + eps) * gamma
"""

from __future__ import annotations

import torch
from torch import nn


def _check(x: torch.Tensor, d_model: int | None, what: str) -> torch.Tensor:
    x = torch.as_tensor(x)
    if not x.is_floating_point():
        x = x.float()
    if x.dim() == 0:
        raise ValueError(f"{what} needs a vector or a (d_model, n) sequence, got a scalar")
    rows = x.shape[0] if x.dim() == 1 else x.shape[-2]
    if d_model is not None and rows != d_model:
        raise ValueError(
            f"{what} expects column vectors with d_model = {d_model} entries, but x has shape "
            f"{tuple(x.shape)} (dim -2 is {rows}); a sequence is (d_model, n) — did you pass rows (n, d_model)?")
    return x


def _as_column(p: torch.Tensor | None, x: torch.Tensor) -> torch.Tensor | None:
    """gamma / beta of shape (d_model,) -> (d_model, 1) so they broadcast over the n columns."""
    if p is None:
        return None
    p = torch.as_tensor(p, dtype=x.dtype)
    return p if x.dim() == 1 else p[:, None]


def normalize(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """(x - mu(x)) / sigma(x) per column: entries of every column get mean 0 and variance 1.

    x: (d_model,), (d_model, n) or (batch, d_model, n); returns the same shape.
    """
    x = _check(x, None, "normalize")
    dim = 0 if x.dim() == 1 else -2
    mu = x.mean(dim=dim, keepdim=True)  # one scalar per position
    var = x.var(dim=dim, keepdim=True, unbiased=False)
    return (x - mu) / torch.sqrt(var + eps)


def layer_norm(x: torch.Tensor, gamma: torch.Tensor | None = None, beta: torch.Tensor | None = None,
               eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm(x) = (x - mu) / sigma * gamma + beta, column by column.

    x: (d_model,), (d_model, n) or (batch, d_model, n); gamma, beta: (d_model,) or None (= 1, 0).
    """
    d_model = None if gamma is None else len(gamma)
    x = _check(x, d_model, "LayerNorm")
    out = normalize(x, eps)
    if gamma is not None:
        out = out * _as_column(gamma, x)
    if beta is not None:
        out = out + _as_column(beta, x)
    return out


def rms_norm(x: torch.Tensor, gamma: torch.Tensor | None = None, eps: float = 1e-5) -> torch.Tensor:
    """RMSNorm(x) = x / sqrt(mean(x ** 2) + eps) * gamma: rescale only, no centring, no beta."""
    d_model = None if gamma is None else len(gamma)
    x = _check(x, d_model, "RMSNorm")
    dim = 0 if x.dim() == 1 else -2
    out = x / torch.sqrt(x.pow(2).mean(dim=dim, keepdim=True) + eps)
    return out if gamma is None else out * _as_column(gamma, x)


class _Norm(nn.Module):
    """What LayerNorm and RMSNorm share: d_model, eps and the scale gamma (ones)."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        if d_model < 1:
            raise ValueError(f"d_model must be at least 1, got {d_model}")
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))


class LayerNorm(_Norm):
    """x (batch, d_model, n) -> LayerNorm(x), same shape. Parameters gamma (ones), beta (zeros)."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__(d_model, eps)
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return layer_norm(x, self.gamma, self.beta, self.eps)

    def extra_repr(self) -> str:
        return f"d_model={len(self.gamma)}, eps={self.eps}"


class RMSNorm(_Norm):
    """x (batch, d_model, n) -> RMSNorm(x), same shape. Parameter gamma (ones)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.gamma, self.eps)

    def extra_repr(self) -> str:
        return f"d_model={len(self.gamma)}, eps={self.eps}"
