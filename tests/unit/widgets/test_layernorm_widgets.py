"""Notebook 07's explorer: the output moves only with gamma and beta, and the caption says when eps shows."""

import pytest
import torch


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
