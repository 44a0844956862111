"""Notebook 07's exercise checks (right and typical wrong answers)."""

import math

import pytest
import torch

from helpers.checks.base import ExerciseError
from helpers.checks.layernorm import check_layer_norm, check_layer_norm_grad, check_std_after
from helpers.model.layernorm import layer_norm


def right(x, g, b, eps):
    mu = x.mean(0, keepdim=True)
    return (x - mu) / torch.sqrt(((x - mu) ** 2).mean(0, keepdim=True) + eps) * g[:, None] + b[:, None]


@pytest.mark.parametrize("wrong, message", [
    (lambda x, g, b, eps: (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True, unbiased=False) * g[:, None]
     + b[:, None], "each row"),
    (lambda x, g, b, eps: (x - x.mean(0)) / torch.sqrt(x.var(0) + eps) * g[:, None] + b[:, None], "unbiased"),
    (lambda x, g, b, eps: (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + eps), "gamma and beta are missing"),
    (lambda x, g, b, eps: (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + eps) * b[:, None] + g[:, None],
     "swapped"),
    (lambda x, g, b, eps: (x - x.mean(0)) / (x.var(0, unbiased=False) + eps) * g[:, None] + b[:, None],
     "divided by the variance"),
    (lambda x, g, b, eps: x / torch.sqrt(x.var(0, unbiased=False) + eps) * g[:, None] + b[:, None],
     "subtract the mean"),
    (lambda x, g, b, eps: (x - x.mean(0)) / x.std(0, unbiased=False) * g[:, None] + b[:, None], "eps"),
    (lambda x, g, b, eps: (x - x.mean(0)) / (x.std(0, unbiased=False) + eps) * g[:, None] + b[:, None],
     "eps is outside the square root"),                               # finite on a constant column, yet wrong
    (lambda x, g, b, eps: right(x, g, b, 1e-5), "the value of eps written into the code"),
    (lambda x, g, b, eps: right(x, g, b, eps) if x.shape == (6, 4) else torch.zeros(6, 4), "whatever d_model"),
    (lambda x, g, b, eps: x.T, "shape"),
    (lambda x, g, b, eps: (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + eps) * g + b,
     r"use them as columns, gamma\[:, None\]"),                       # gamma as a row: torch's size error, explained
    (lambda x, g, b, eps: x * 2, "Not LayerNorm yet"),
])
def test_wrong_answers_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_layer_norm(wrong)


@pytest.mark.parametrize("one_call, name", [
    (lambda x, g, b, eps: torch.layer_norm(x.T, (x.shape[0],), g, b, eps).T, "torch.layer_norm"),
    (lambda x, g, b, eps: torch.nn.functional.batch_norm(x, None, None, training=True, eps=eps) * g[:, None]
     + b[:, None], "batch_norm"),
])
def test_layer_norm_refuses_other_one_call_norms(one_call, name):
    with pytest.raises(ExerciseError, match=f"calls .*{name}, which does the whole exercise"):
        check_layer_norm(one_call)


def test_right_answer_and_unwritten():
    assert check_layer_norm(right)

    def todo(x, g, b, eps):
        raise NotImplementedError

    with pytest.raises(ExerciseError, match="not written yet"):
        check_layer_norm(todo)


@pytest.mark.parametrize("helper", [
    lambda x, g, b, eps: layer_norm(x, g, b, eps),
    lambda x, g, b, eps: torch.nn.functional.layer_norm(x.mT, (x.shape[0],), g, b, eps).mT,
])
def test_layer_norm_refuses_the_one_liners(helper):
    with pytest.raises(ExerciseError, match="does the whole exercise in one call"):
        check_layer_norm(helper)


# --- exercise 7.2: the spread after LayerNorm, with eps ------------------------------------------------------

def test_std_after_right_answers():
    assert check_std_after(lambda var, eps: torch.sqrt(var / (var + eps)))
    assert check_std_after(lambda var, eps: var.sqrt() / (var + eps).sqrt())


@pytest.mark.parametrize("wrong, message", [
    (lambda var, eps: var / (var + eps), "its square root"),
    (lambda var, eps: var.sqrt() / (var.sqrt() + eps), "outside the square root"),
    (lambda var, eps: torch.ones_like(var), "std exactly 1"),
    (lambda var, eps: torch.sqrt((var + eps) / var.clamp(min=1e-300)), "Upside down"),
    (lambda var, eps: var.sqrt() / var.sqrt(), "NaN for var = 0"),
    (lambda var, eps: torch.sqrt(var / (var + eps)).mean(), "one number"),
    (lambda var, eps: torch.sqrt(var / (var + 1e-5)), "with eps = 0.01"),
    (lambda var, eps: torch.sqrt(var / (var + eps))[:3], "shape"),
    (lambda var, eps: (var > 0).int(), "integer"),
    (lambda var, eps: None, "None"),
    (lambda var, eps: math.sqrt(var / (var + eps)), "use torch.sqrt"),
])
def test_std_after_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_std_after(wrong)


def test_std_after_refuses_normalising_a_test_column():
    from helpers.model.layernorm import normalize

    def measured(var, eps):
        col = torch.tensor([-1.0, 1.0])[:, None] * var.sqrt()
        return normalize(col, eps).std(0, unbiased=False)
    with pytest.raises(ExerciseError, match="calls helpers.model.layernorm.normalize"):
        check_std_after(measured)


# --- exercise 7.3: the gradient through LayerNorm -------------------------------------------------------------

def ln_grad(x, gamma, eps, g, with_mu=True, with_sigma=True, with_gamma=True, over_sigma=True, dim=0,
            unbiased=False, eps_outside=False):
    mean = lambda t: t.mean(dim, keepdim=True)  # noqa: E731
    mu = mean(x)
    var = x.var(dim, keepdim=True) if unbiased else mean((x - mu) ** 2)
    sigma = torch.sqrt(var) + eps if eps_outside else torch.sqrt(var + eps)
    x_hat = (x - mu) / sigma
    h = g * gamma[:, None] if with_gamma else g
    out = h - (mean(h) if with_mu else 0) - (x_hat * mean(h * x_hat) if with_sigma else 0)
    return out / sigma if over_sigma else out


def test_layer_norm_grad_right_answer():
    assert check_layer_norm_grad(ln_grad)
    assert check_layer_norm_grad(lambda *a: ln_grad(*a).float())   # float32 is close enough


@pytest.mark.parametrize("wrong, message", [
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, with_mu=False, with_sigma=False), "constants"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, with_sigma=False), "sigma depends on x too"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, with_mu=False), "mu depends on x too"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, with_gamma=False), "gamma is missing"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, over_sigma=False), "divide the whole thing by sigma"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, dim=-1), "each row"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, unbiased=True), "unbiased variance"),
    (lambda x, gm, eps, g: ln_grad(x, gm, 0.0, g), "eps is left out of sigma"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g) * gm, r"use them as columns, gamma\[:, None\]"),  # gamma as a row
    (lambda x, gm, eps, g: ln_grad(x, gm, 1e-5, g), "eps is written into the code"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g, eps_outside=True), r"sigma = sqrt\(variance \+ eps\), with"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g) + 1, "all-ones direction"),
    (lambda x, gm, eps, g: torch.where(x.abs() > 20, 0.0, ln_grad(x, gm, eps, g)), "size ~30"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g)[:, :2], "shape"),
    (lambda x, gm, eps, g: ln_grad(x, gm, eps, g) * float("nan"), "NaN"),
    (lambda x, gm, eps, g: 1 / 0, "raised ZeroDivisionError"),
])
def test_layer_norm_grad_mistakes_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_layer_norm_grad(wrong)


def test_layer_norm_grad_refuses_autograd():
    def auto(x, gamma, eps, g):
        x = x.clone().requires_grad_(True)
        layer_norm(x, gamma, torch.zeros_like(gamma), eps).backward(g)
        return x.grad

    def auto2(x, gamma, eps, g):
        x = x.clone().requires_grad_(True)
        mu = x.mean(0, keepdim=True)
        y = (x - mu) / torch.sqrt(((x - mu) ** 2).mean(0, keepdim=True) + eps) * gamma[:, None]
        return torch.autograd.grad(y, x, g)[0]
    for fn in (auto, auto2):
        with pytest.raises(ExerciseError, match="calls torch.autograd"):
            check_layer_norm_grad(fn)
