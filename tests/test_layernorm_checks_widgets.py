"""Notebook 07's exercise check (right and typical wrong answers) and its widget."""

import pytest
import torch

from helpers.checks.base import ExerciseError
from helpers.checks.layernorm import check_layer_norm
from helpers.model.layernorm import layer_norm


def right(x, g, b, eps):
    return layer_norm(x, g, b, eps)


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
    (lambda x, g, b, eps: x.T, "shape"),
    (lambda x, g, b, eps: x * 2, "Not LayerNorm yet"),
])
def test_wrong_answers_are_explained(wrong, message):
    with pytest.raises(ExerciseError, match=message):
        check_layer_norm(wrong)


def test_right_answer_and_unwritten():
    assert check_layer_norm(right)

    def todo(x, g, b, eps):
        raise NotImplementedError

    with pytest.raises(ExerciseError, match="not written yet"):
        check_layer_norm(todo)


def test_layernorm_explorer_moves_only_with_gamma_beta():
    from helpers.widgets.layernorm import LayerNormExplorer

    e = LayerNormExplorer(d_model=64)
    _, y1 = e.values()
    e.scale.value, e.shift.value = 100.0, 3.0
    _, y2 = e.values()
    assert torch.allclose(y1, y2, atol=1e-4)
    e.gamma.value, e.beta.value = 2.0, -1.0
    _, y3 = e.values()
    assert abs(float(y3.mean()) + 1) < 1e-4 and abs(float(y3.std(unbiased=False)) - 2) < 1e-3
    assert 'data-state="scale=100.0;shift=3.0;gamma=2.0;beta=-1.0"' in e.caption.value
    assert 'class="gt-caption"' in e.caption.value and e.view.value
    with pytest.raises(ValueError, match="at least 2"):
        LayerNormExplorer(d_model=1)


def test_layernorm_explorer_says_when_eps_shows():
    from helpers.widgets.layernorm import LayerNormExplorer

    e = LayerNormExplorer()
    assert "(= |γ|)" in e.caption.value
    e.scale.value = e.scale.min  # variance ~1e-4: eps in sqrt(var + eps) shrinks the output
    assert "a little below |γ|" in e.caption.value and "ε" in e.caption.value
