"""Notebook 07: write LayerNorm for column vectors."""

from __future__ import annotations

from typing import Callable

import torch

from helpers.checks.base import ExerciseError, as_tensor, call, exercise, expect_shape, passed
from helpers.model.layernorm import layer_norm, normalize


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-4) -> bool:
    return a.shape == b.shape and bool(torch.isfinite(a).all()) and torch.allclose(a.double(), b.double(), atol=tol)


@exercise(answered_by=("helpers.model.layernorm.layer_norm",))
def check_layer_norm(fn: Callable) -> bool:
    """fn(x, gamma, beta, eps) with x (d_model, n), gamma and beta (d_model,) -> (d_model, n)."""
    g = torch.Generator().manual_seed(7)
    d_model, n = 6, 4
    x = torch.randn(d_model, n, generator=g) * 3 + 2
    gamma = torch.rand(d_model, generator=g) + 0.5
    beta = torch.randn(d_model, generator=g)
    eps = 1e-5
    what = "your layer_norm(x, gamma, beta, eps)"
    out = as_tensor(call(fn, x.clone(), gamma.clone(), beta.clone(), eps, what=what), what)
    expect_shape(out, (d_model, n), what, "LayerNorm keeps the shape of x: one normalised column per position.")
    want = layer_norm(x, gamma, beta, eps)
    if _close(out, want):
        const = torch.ones(d_model, 2) * 5.0  # a column whose entries are all equal: sigma = 0
        c_out = as_tensor(call(fn, const, gamma, beta, eps, what=what), what)
        if not torch.isfinite(c_out).all():
            raise ExerciseError("Right on ordinary input, but a column whose entries are all equal gives NaN or inf: "
                                "sigma is 0 there. Divide by sqrt(variance + eps), with eps inside the square root.")
        return passed("layer_norm is right: each column gets mean 0 and variance 1, then * gamma + beta.")
    col = lambda p: p[:, None]  # noqa: E731
    # typical mistakes, each computed the wrong way and compared
    over_positions = (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + eps)
    unbiased = (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=True) + eps)
    by_var = (x - x.mean(0)) / (x.var(0, unbiased=False) + eps)
    no_centre = x / torch.sqrt(x.var(0, unbiased=False) + eps)
    mistakes = [
        (over_positions * col(gamma) + col(beta),
         "You normalised each row (over the n positions, dim -1) instead of each column. In the post's notation "
         "a position is a column x_i with d_model entries: take mu and sigma over dim 0 (or -2)."),
        (unbiased * col(gamma) + col(beta),
         "Close, but sigma uses the unbiased variance (divide by d_model - 1; torch.std's default). LayerNorm divides "
         "by d_model: use x.var(dim, unbiased=False) or ((x - mu) ** 2).mean(dim)."),
        (normalize(x, eps),
         "The normalising is right but gamma and beta are missing: multiply by gamma and add beta "
         "(as columns, gamma[:, None], so they apply to every position)."),
        (normalize(x, eps) * col(beta) + col(gamma),
         "gamma and beta are swapped: gamma scales (the new standard deviation), beta shifts (the new mean)."),
        (by_var * col(gamma) + col(beta),
         "You divided by the variance; divide by the standard deviation sigma = sqrt(variance + eps)."),
        (no_centre * col(gamma) + col(beta),
         "You forgot to subtract the mean mu(x_i) before dividing."),
    ]
    for wrong, message in mistakes:
        if _close(out, wrong):
            raise ExerciseError(message)
    m, s = out.mean(0), out.std(0, unbiased=False)
    raise ExerciseError(f"Not LayerNorm yet. Before gamma and beta each column should have mean 0 and std 1; "
                        f"after them, your output's columns have means {[round(float(v), 2) for v in m]} and stds "
                        f"{[round(float(v), 2) for v in s]}. Check: mean and variance per column (dim 0), "
                        f"(x - mu) / sqrt(var + eps), then * gamma[:, None] + beta[:, None].")
