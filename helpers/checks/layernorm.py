"""Notebook 07: write LayerNorm for column vectors; what ε does to the output's spread; the gradient through
LayerNorm by hand, checked against autograd."""

from __future__ import annotations

from typing import Callable

import torch

from helpers.checks.base import (ExerciseError, as_tensor, call, close, exercise, expect_real, expect_shape, named,
                                 passed, tensor_result)
from helpers.model.layernorm import layer_norm, normalize


_FORBID_NORMALIZE = ("helpers.model.layernorm.normalize", "helpers.model.layernorm.layer_norm",
                     "torch.nn.functional.layer_norm", "torch.layer_norm", "torch.nn.functional.batch_norm",
                     "torch.batch_norm", "torch.nn.functional.group_norm", "torch.nn.functional.instance_norm")


COLUMN_HINTS = {"must match the size": "gamma and beta hold one number per row (d_model,): to scale every position's "
                                       "column, use them as columns, gamma[:, None] and beta[:, None]."}


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-4) -> bool:
    return bool(torch.isfinite(a).all()) and close(a, b, atol=tol, rtol=1e-5)


@exercise(answered_by=("helpers.model.layernorm.layer_norm",))
def check_layer_norm(fn: Callable) -> bool:
    """fn(x, gamma, beta, eps) with x (d_model, n), gamma and beta (d_model,) -> (d_model, n)."""
    g = torch.Generator().manual_seed(7)
    d_model, n = 6, 4
    x = torch.randn(d_model, n, generator=g) * 3 + 2
    gamma = torch.rand(d_model, generator=g) + 0.5
    beta = torch.randn(d_model, generator=g)
    eps = 1e-5
    what = named(fn, "layer_norm", "(x, gamma, beta, eps)")
    opts = dict(what=what, forbid=_FORBID_NORMALIZE, hints=COLUMN_HINTS)
    out = as_tensor(call(fn, x.clone(), gamma.clone(), beta.clone(), eps, **opts), what)
    expect_shape(out, (d_model, n), what, "LayerNorm keeps the shape of x: one normalised column per position.")
    want = layer_norm(x, gamma, beta, eps)
    if _close(out, want):
        # a second case where eps's place shows: other sizes, a large eps, one column of variance near eps
        x2 = torch.tensor([[0.02, 3.0, -1.0], [-0.03, -2.0, 4.0], [0.05, 1.0, 0.5], [-0.04, 0.5, -3.0],
                           [0.0, -2.5, 2.0]])
        g2, b2, eps2 = torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0]), torch.tensor([0.0, 1.0, -1.0, 0.5, 0.0]), 0.01
        out2 = as_tensor(call(fn, x2.clone(), g2.clone(), b2.clone(), eps2, **opts), what)
        expect_shape(out2, (5, 3), what, "LayerNorm keeps the shape of x, whatever d_model and n are.")
        if not _close(out2, layer_norm(x2, g2, b2, eps2)):
            mu2, var2 = x2.mean(0), x2.var(0, unbiased=False)
            outside = (x2 - mu2) / (var2.sqrt() + eps2) * g2[:, None] + b2[:, None]
            without = (x2 - mu2) / var2.sqrt() * g2[:, None] + b2[:, None]
            if _close(out2, outside):
                raise ExerciseError(f"{what}: eps is outside the square root. With eps = 0.01 and a column of "
                                    "variance 0.001 it matters: divide by sqrt(variance + eps), not "
                                    "sqrt(variance) + eps.")
            if _close(out2, without):
                raise ExerciseError(f"{what} ignores eps: with eps = 0.01 and a column of variance 0.001 the "
                                    "result must be (x - mu) / sqrt(variance + eps).")
            raise ExerciseError(f"{what} is right on the first test but not on a (5, 3) input with eps = 0.01: is "
                                "a size or the value of eps written into the code instead of taken from x and eps?")
        # (A column whose entries are all equal, sigma = 0, needs no test of its own: an answer right with eps = 0.01
        # on a column of variance 0.001, just above, has eps inside the square root, and is finite there.)
        return passed(f"{named(fn, 'layer_norm')} is right: each column gets mean 0 and variance 1, then * gamma "
                      "+ beta.")
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


# --- exercise 7.2: what epsilon does to the spread ---------------------------------------------------------

@exercise(answered_by=())
def check_std_after(fn: Callable) -> bool:
    """fn(var, eps) with var a tensor of variances (any shape) -> the standard deviation of normalize(x) for a
    column x of that (biased) variance: sqrt(var / (var + eps)), 0 for a constant column."""
    what = named(fn, "std_after", "(var, eps)")
    opts = dict(what=what, forbid=_FORBID_NORMALIZE,
                hints={"converted to": "math.sqrt takes one number, and var is a tensor of them: use torch.sqrt "
                                       "(or ** 0.5), which works on every entry."})
    var = torch.tensor([0.0, 1e-8, 1e-6, 1e-5, 1.2e-4, 3e-3, 1.0, 250.0], dtype=torch.float64)
    out = call(fn, var.clone(), 1e-5, **opts)
    out = as_tensor(out, what)
    if out.numel() == 1 and var.numel() > 1:
        raise ExerciseError(f"{what} returned one number for {var.numel()} variances: compute it entry by entry "
                            "(tensor arithmetic and torch.sqrt work on every entry at once), not with a sum or a mean.")
    expect_shape(out, tuple(var.shape), what, "One standard deviation per variance: the same shape as var.")
    if torch.isnan(out.double()).any() and bool(torch.isnan(out.double())[0]):
        raise ExerciseError(f"{what} gives NaN for var = 0 (a column whose entries are all equal): 0/0 somewhere. "
                            "With eps under the square root nothing divides by zero: the answer there is 0.")
    got = expect_real(out, what)
    for eps in (1e-5, 1e-2):
        want = torch.sqrt(var / (var + eps))
        got = expect_real(as_tensor(call(fn, var.clone(), eps, **opts), what), what)
        if got.shape != var.shape:
            expect_shape(got, tuple(var.shape), what)
        if close(got, want, rtol=1e-4, atol=1e-6):
            continue
        sd = var.sqrt()
        mistakes = [
            (var / (var + eps), "That is the *variance* after normalising, var / (var + eps). The question asks for "
                                "the standard deviation: its square root."),
            (sd / (sd + eps), "eps sits outside the square root. LayerNorm divides by sqrt(var + eps), not by "
                              "sqrt(var) + eps: the output's std is sqrt(var) / sqrt(var + eps)."),
            (torch.ones_like(var), "Without eps every column would come out with std exactly 1, but eps is there: "
                                   "a column of variance var is divided by sqrt(var + eps), not sqrt(var)."),
            (torch.sqrt(var + eps) / sd.clamp(min=1e-300), "Upside down: the output's std is sqrt(var) / "
                                                           "sqrt(var + eps), which is at most 1."),
        ]
        live = var > 0                      # (at var = 0 a wrong formula may give anything)
        for wrong, message in mistakes:
            if close(got[live], wrong.double()[live], rtol=1e-4, atol=1e-6):
                raise ExerciseError(message)
        i = int((got - want).abs().argmax())
        raise ExerciseError(f"{what} with eps = {eps:g}: for var = {float(var[i]):g} it gives {float(got[i]):.4g}, "
                            f"but the normalised column has std {float(want[i]):.4g}. Subtracting the mean leaves "
                            "the std at sqrt(var); dividing by sqrt(var + eps) divides it by that.")
    # (its value at a variance of 12 eps or 1200 eps is what the notebook asks next: not said here)
    return passed(f"{named(fn, 'std_after')} is right on variances from 0 to 250 with two values of eps, and gives 0, "
                  "not NaN, for a constant column.")


# --- exercise 7.3: the gradient through LayerNorm -------------------------------------------------------

_FORBID_AUTOGRAD = ("torch.autograd.grad", "torch.autograd.backward", "torch.autograd.functional.vjp",
                    "torch.autograd.functional.jacobian")


def _ln_reference(x, gamma, beta, eps, g, dim=0):
    x = x.double().detach().requires_grad_(True)
    mu = x.mean(dim, keepdim=True)
    y = (x - mu) / torch.sqrt(((x - mu) ** 2).mean(dim, keepdim=True) + eps)
    y = y * gamma.double()[:, None] + beta.double()[:, None]
    (grad,) = torch.autograd.grad(y, x, g.double())
    return grad


@exercise(answered_by=())
def check_layer_norm_grad(fn: Callable) -> bool:
    """fn(x, gamma, eps, g) with x, g (d_model, n) and gamma (d_model,) -> dL/dx (d_model, n), where g = dL/dy
    and y = LayerNorm(x) column by column; computed by hand, compared with autograd."""
    gen = torch.Generator().manual_seed(73)
    d_model, n, eps = 7, 3, 1e-5
    x = (torch.randn(d_model, n, generator=gen) * 2 + 1).double()
    gamma = (torch.rand(d_model, generator=gen) + 0.5).double()
    beta = torch.randn(d_model, generator=gen).double()
    g = torch.randn(d_model, n, generator=gen).double()
    what = named(fn, "layer_norm_grad", "(x, gamma, eps, g)")
    opts = dict(what=what, forbid=_FORBID_AUTOGRAD, hints=COLUMN_HINTS)
    out = call(fn, x.clone(), gamma.clone(), eps, g.clone(), **opts)
    got = tensor_result(out, (d_model, n), what, "dL/dx has the shape of x: one column per position.")
    want = _ln_reference(x, gamma, beta, eps, g)
    if close(got, want, rtol=1e-4, atol=1e-6):
        # a second case: other sizes, a large input, gamma with negative entries
        x2 = torch.randn(5, 4, generator=gen).double() * 30 - 7
        gamma2, g2 = torch.randn(5, generator=gen).double(), torch.randn(5, 4, generator=gen).double()
        got2 = tensor_result(call(fn, x2.clone(), gamma2.clone(), eps, g2.clone(), **opts), (5, 4), what)
        if not close(got2, _ln_reference(x2, gamma2, torch.zeros(5), eps, g2), rtol=1e-4, atol=1e-6):
            raise ExerciseError(f"{what} is right on the first test but not on a (5, 4) input of size ~30 with some "
                                "negative gamma: is a size or a value of the first case written into the code?")
        # a third case where eps shows: eps = 0.1 and a column of variance about 0.001
        x3 = torch.tensor([[0.02, 1.0], [-0.03, -2.0], [0.05, 0.5], [-0.04, 3.0]], dtype=torch.float64)
        gamma3, g3 = torch.tensor([1.0, -0.5, 2.0, 0.7], dtype=torch.float64), torch.randn(4, 2, generator=gen).double()
        got3 = tensor_result(call(fn, x3.clone(), gamma3.clone(), 0.1, g3.clone(), **opts), (4, 2), what)
        if not close(got3, _ln_reference(x3, gamma3, torch.zeros(4), 0.1, g3), rtol=1e-4, atol=1e-6):
            fixed = close(got3, _ln_reference(x3, gamma3, torch.zeros(4), eps, g3), rtol=1e-4, atol=1e-6)
            none = close(got3, _ln_reference(x3, gamma3, torch.zeros(4), 0.0, g3), rtol=1e-3, atol=1e-4)
            raise ExerciseError(f"{what} is wrong with eps = 0.1 on a column of variance about 0.001, where eps "
                                "matters: " + ("eps is written into the code (1e-5) instead of the eps it is given."
                                               if fixed else "eps is left out of sigma." if none else
                                               "sigma = sqrt(variance + eps), with the eps it is given."))
        return passed(f"{named(fn, 'layer_norm_grad')} is right, and equals autograd's: "
                      "dL/dx = (h - mean(h) - x_hat mean(h x_hat)) / sigma with h = gamma * g, column by column.")
    mu = x.mean(0, keepdim=True)
    sigma = torch.sqrt(((x - mu) ** 2).mean(0, keepdim=True) + eps)
    x_hat = (x - mu) / sigma
    h = g * gamma[:, None]
    mean = lambda t: t.mean(0, keepdim=True)  # noqa: E731
    no_gamma = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma
    mistakes = [
        (h / sigma, "You treated mu and sigma as constants: dL/dx = gamma * g / sigma is only the first of three "
                    "terms. mu and sigma are computed from x too, so moving one entry of x moves them: subtract "
                    "mean(h) (through mu) and x_hat * mean(h * x_hat) (through sigma), with h = gamma * g."),
        ((h - mean(h)) / sigma, "The mean's part is there, but sigma depends on x too: subtract "
                                "x_hat * mean(h * x_hat) as well (h = gamma * g)."),
        ((h - x_hat * mean(h * x_hat)) / sigma, "The sigma part is there, but mu depends on x too: subtract mean(h) "
                                                "as well (h = gamma * g)."),
        (no_gamma, "gamma is missing: y = x_hat * gamma + beta, so the gradient reaching x_hat is h = gamma * g, "
                   "not g."),
        (h - mean(h) - x_hat * mean(h * x_hat), "Almost: divide the whole thing by sigma = sqrt(var + eps) (x_hat is "
                                                "(x - mu) / sigma, so every path to x goes through 1 / sigma)."),
    ]
    # the formula with sigma from the unbiased variance (d_model - 1), torch.var's and torch.std's default
    sigma_u = torch.sqrt(x.var(0, keepdim=True, unbiased=True) + eps)
    x_hat_u = (x - mu) / sigma_u
    mistakes.append(((h - mean(h) - x_hat_u * mean(h * x_hat_u)) / sigma_u,
                     "The formula is right, but sigma comes from the unbiased variance (divided by d_model - 1, "
                     "the default of torch.var and torch.std). LayerNorm divides by d_model: use "
                     "((x - mu) ** 2).mean(0) or var(0, unbiased=False)."))
    # rows instead of columns: LayerNorm over the n positions (dim -1), gamma still one per row
    xr = x.detach().requires_grad_(True)
    mur = xr.mean(-1, keepdim=True)
    yr = (xr - mur) / torch.sqrt(((xr - mur) ** 2).mean(-1, keepdim=True) + eps) * gamma[:, None]
    (rows,) = torch.autograd.grad(yr, xr, g)
    mistakes.append((rows, "You normalised each row (over the n positions, dim -1). In the post a position is a "
                          "column x_i of d_model numbers: every mean is over dim 0."))
    for wrong, message in mistakes:
        if close(got, wrong, rtol=1e-4, atol=1e-6):
            raise ExerciseError(message)
    ones = float((got.sum(0)).abs().max())
    extra = (" Your columns do not sum to 0, but they should: adding the same number to every entry of x leaves "
             "LayerNorm(x) unchanged, so dL/dx has no component along the all-ones direction." if ones > 1e-6 else "")
    raise ExerciseError(f"Not the gradient yet: the largest difference from autograd is "
                        f"{float((got - want).abs().max()):.3g}.{extra} With h = gamma * g and everything per "
                        "column: dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sigma.")
