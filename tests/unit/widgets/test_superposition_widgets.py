"""Notebook 12's explorer (the toy model's directions) and its picture."""

import pytest
import torch

from helpers.lessons import superposition as S
from helpers.plots.superposition import directions
from helpers.widgets.superposition import ToyExplorer

PS, DECAYS = [1.0, 0.01], [0.9, 1.0]


@pytest.fixture(scope="module")
def run():
    return S.sweep(PS, DECAYS, steps=300, batch=256, lr=0.02, seed=0)


def test_each_setting_shows_its_own_model(run):
    e = ToyExplorer(run, PS, DECAYS)
    norms = S.feature_norms(run.W)
    for decay in DECAYS:
        for p in PS:
            e.decay.value, e.p.value = decay, p
            k = DECAYS.index(decay) * len(PS) + PS.index(p)
            assert e.last_state == {"p": f"{p:g}", "decay": f"{decay:g}", "kept": int((norms[k] > 0.5).sum())}
            assert f"p = {p:g}, decay {decay:g}" in e.view.value and not e.last_error


def test_a_run_that_does_not_match_the_controls_is_named(run):
    with pytest.raises(ValueError, match=r"3 probabilities x 2 decays = 6 expected"):
        ToyExplorer(run, [1.0, 0.1, 0.01], DECAYS)


def test_the_picture_says_its_arrows_in_words():
    W = torch.tensor([[1.0, 0.0, 0.01], [0.0, 1.0, 0.0]])
    pic = directions(W, title="two kept")
    assert "2 of 3 features have length above 0.5" in pic and "feature 1: length 1.00 at 90 degrees" in pic
    with pytest.raises(ValueError, match=r"W must be \(2, n\)"):
        directions(torch.zeros(3, 5))
