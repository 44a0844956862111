"""helpers.interp.patching and helpers.interp.lens, worked out by hand on tests/interp_models.py's uniform model:
W_E sends token 0 -> (1, 0), 1 -> (0, 1), 2 -> (2, 2); the one head averages x0 over tokens 1 ... i (o = mean);
W_U reads the two coordinates as the logits of tokens 0 and 1 (token 2's logit is 0).

    clean      [0, 1, 2]: x0_3 = (2, 2), o_3 = (1, 1),       x1_3 = (3, 3)         logit 0 - logit 1 =  0
    corrupted  [1, 1, 2]: x0_3 = (2, 2), o_3 = (2/3, 4/3),   x1_3 = (8/3, 10/3)    logit 0 - logit 1 = -2/3
"""

import math

import pytest
import torch
from interp_models import uniform_model

from helpers.interp.lens import lens_table, logit_lens
from helpers.interp.patching import logit_difference, patch_heads, patch_resid, patched, restored
from helpers.model import names

CLEAN, CORRUPTED = torch.tensor([0, 1, 2]), torch.tensor([1, 1, 2])
DIFF = logit_difference(0, 1)      # logit of token 0 minus token 1 at the last position


def test_the_runs_are_as_worked_out():
    model = uniform_model()
    assert DIFF(model(CLEAN)) == pytest.approx(0.0)
    assert DIFF(model(CORRUPTED)) == pytest.approx(-2 / 3)


@pytest.mark.parametrize("what, positions, fraction", [
    (names.head(0, 0), None, 1.0),     # the head's clean output everywhere: x1_3 = (2, 2) + (1, 1), all of it back
    (names.head(0, 0), [2], 1.0),      # ... only where the metric reads: the same
    (names.head(0, 0), [0], 0.0),      # ... only at the first position: the last position's output is still corrupted
    (names.resid(0), [0], 1.0),         # the stream x0 at the token that differs: everything after is recomputed clean
    (names.resid(0), [2], 0.0),         # x0 at the last token, where both inputs agree: nothing changes
    (names.resid(1), [2], 1.0),         # the last state where the metric reads it: all of it
    (names.resid(1), [0, 1], 0.0),      # the last state elsewhere: the logits at the last position do not read it
])
def test_fraction_restored_by_hand(what, positions, fraction):
    assert restored(uniform_model(), CLEAN, CORRUPTED, what, DIFF, positions) == pytest.approx(fraction, abs=1e-6)


def test_a_patched_head_output_is_exactly_the_clean_one_at_the_patched_positions():
    model = uniform_model()
    _, clean = model.run_with_cache(CLEAN)
    _, bad = model.run_with_cache(CORRUPTED)
    with patched(model, clean, names.head(0, 0), positions=[-1]):
        logits, cache = model.run_with_cache(CORRUPTED)
    o = names.key(0, "o_heads")
    torch.testing.assert_close(cache[o][..., 2], clean[o][..., 2])
    torch.testing.assert_close(cache[o][..., :2], bad[o][..., :2])
    torch.testing.assert_close(logits[:2, 2], torch.tensor([3.0, 3.0]))       # x1_3 = (2, 2) + (1, 1)


def test_a_neuron_patch_by_hand():
    """With the MLP (z = ReLU(x1), m = z, so x2 = x1 + z): patching neuron 0 at the last position gives
    x2_3 = (8/3 + 3, 10/3 + 10/3); logit difference -1, between the corrupted -4/3 and the clean 0: a quarter."""
    model = uniform_model(mlp=True)
    assert restored(model, CLEAN, CORRUPTED, names.neuron(0, 0), DIFF, [-1]) == pytest.approx(0.25)
    _, clean = model.run_with_cache(CLEAN)
    with patched(model, clean, [names.neuron(0, 0)], positions=-1):
        _, cache = model.run_with_cache(CORRUPTED)
    torch.testing.assert_close(cache[names.key(0, "z")][:, 2], torch.tensor([3.0, 10 / 3]))


def test_the_sweeps_give_each_patch_alone():
    model = uniform_model()
    heads = patch_heads(model, CLEAN, CORRUPTED, DIFF)
    assert heads.shape == (1, 1) and heads[0, 0] == pytest.approx(1.0)
    resid = patch_resid(model, CLEAN, CORRUPTED, DIFF)            # rows x0, x1; columns the 3 positions
    torch.testing.assert_close(resid, torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    mlp = uniform_model(mlp=True)                                 # rows x0, x1, x2
    assert patch_resid(mlp, CLEAN, CORRUPTED, DIFF).shape == (3, 3)


def test_patches_nest_and_the_model_is_restored_even_after_an_error():
    model = uniform_model(mlp=True)
    before = model(CORRUPTED)
    _, clean = model.run_with_cache(CLEAN)
    with pytest.raises(RuntimeError, match="inside"):
        with patched(model, clean, [names.head(0, 0), names.neuron(0, 1), "x0", "x2"]):
            torch.testing.assert_close(model(CORRUPTED), model(CLEAN))   # x0 everywhere: the clean run
            raise RuntimeError("inside")
    assert not any(p.fns for p in model.hook_points.values())
    torch.testing.assert_close(model(CORRUPTED), before)


@pytest.mark.parametrize("what, message", [
    (names.key(0, "q"), "no activation called 'L0.q' can be patched"),
    (names.head(0, 1), "head 1 does not exist"),
    (names.head(1, 0), "layer 1"),
    (names.resid(2), "states x0 ... x1, not x2"),
    (names.neuron(0, 0), "no MLP"),
    (3, "name the activation to patch as a string"),
    ([], "name at least one activation"),
])
def test_what_cannot_be_patched_is_said(what, message):
    model = uniform_model()
    _, clean = model.run_with_cache(CLEAN)
    with pytest.raises((ValueError, TypeError), match=message):
        with patched(model, clean, what):
            pass


def test_bad_runs_and_positions_are_said():
    model = uniform_model()
    _, clean = model.run_with_cache(CLEAN)
    with pytest.raises(ValueError, match="position 3 does not exist"):
        with patched(model, clean, names.resid(0), positions=[3]):
            pass
    with pytest.raises(ValueError, match="same shape"):
        restored(model, CLEAN, torch.tensor([1, 2]), names.resid(0), DIFF)
    with pytest.raises(ValueError, match="no difference for a patch to restore"):
        restored(model, CLEAN, CLEAN, names.resid(0), DIFF)
    with pytest.raises(ValueError, match="outside the vocabulary"):
        restored(model, CLEAN, CORRUPTED, "x0", logit_difference(0, 7))
    with pytest.raises(TypeError, match="cache of a clean run"):
        with patched(model, {"x0": torch.zeros(2, 3)}, "x0"):
            pass
    with pytest.raises(ValueError, match="same number of tokens"):     # a cache of another length, used by hand
        with patched(model, clean, names.resid(1)):
            model(torch.tensor([1, 1]))


def test_the_logit_lens_by_hand():
    """x0_3 = (2, 2) reads as logits (2, 2, 0); x1_3 = (3, 3) as (3, 3, 0), the model's own prediction."""
    model = uniform_model()
    p = logit_lens(model, CLEAN)
    assert p.shape == (2, 3)
    e2, e3 = math.exp(2), math.exp(3)
    torch.testing.assert_close(p[0], torch.tensor([e2, e2, 1.0]) / (2 * e2 + 1))
    torch.testing.assert_close(p[1], torch.tensor([e3, e3, 1.0]) / (2 * e3 + 1))
    torch.testing.assert_close(p[-1], model.next_token_probs(CLEAN))
    assert logit_lens(model, torch.stack([CLEAN, CORRUPTED])).shape == (2, 2, 3)
    rows = lens_table(model, CLEAN, ["a", "b", "c"], top=1)
    assert [name for name, _ in rows] == ["x0", "x1"] and rows[1][1][0][0] == "a"
    with pytest.raises(ValueError, match="position 5 does not exist"):
        logit_lens(model, CLEAN, position=5)


def test_the_lens_last_row_is_the_prediction_with_layernorm_and_mlps():
    from helpers.model.config import Config
    from helpers.train import fresh_model

    model = fresh_model(Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=2, n_heads=2, d_mlp=16), seed=0)
    t = torch.tensor([1, 5, 2, 7])
    p = logit_lens(model, t, position=2)
    assert p.shape == (5, 11)                                          # x0 ... x4
    torch.testing.assert_close(p[-1], torch.softmax(model(t)[:, 2], dim=0))
