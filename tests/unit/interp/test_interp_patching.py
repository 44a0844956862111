"""helpers.interp.patching and helpers.interp.lens, worked out by hand on tests/support/interp_models.py's uniform
model: W_E sends token 0 -> (1, 0), 1 -> (0, 1), 2 -> (2, 2); the one head averages x0 over tokens 1 ... i (o = mean);
W_U reads the two coordinates as the logits of tokens 0 and 1 (token 2's logit is 0).

    clean      [0, 1, 2]: x0_3 = (2, 2), o_3 = (1, 1),       x1_3 = (3, 3)         logit 0 - logit 1 =  0
    corrupted  [1, 1, 2]: x0_3 = (2, 2), o_3 = (2/3, 4/3),   x1_3 = (8/3, 10/3)    logit 0 - logit 1 = -2/3
"""

import math

import pytest
import torch
from support.interp_models import uniform_model

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


def test_holding_the_mlp_splits_a_one_layer_model_by_hand():
    """With the MLP (x2 = x1 + ReLU(x1), every entry positive here): the clean x1_3 = (3, 3), the corrupted (8/3, 10/3).
    The MLP's z patched alone: x2_3 = (8/3 + 3, 10/3 + 3), difference -2/3, half of the way from -4/3 to 0. The head
    patched with the MLP held at its corrupted z: x2_3 = (3 + 8/3, 3 + 10/3), the other half. Without the hold the
    head's patch also changes what the MLP reads: all of it back."""
    model = uniform_model(mlp=True)
    mlp = [names.neuron(0, 0), names.neuron(0, 1)]
    assert restored(model, CLEAN, CORRUPTED, mlp, DIFF, [-1]) == pytest.approx(0.5)
    assert restored(model, CLEAN, CORRUPTED, names.head(0, 0), DIFF, [-1], hold=mlp) == pytest.approx(0.5)
    assert restored(model, CLEAN, CORRUPTED, names.head(0, 0), DIFF, [-1]) == pytest.approx(1.0)
    assert restored(model, CLEAN, CORRUPTED, names.head(0, 0), DIFF, [-1], hold=()) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="both patched .what. and held"):
        restored(model, CLEAN, CORRUPTED, mlp, DIFF, [-1], hold=names.neuron(0, 1))


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
    for bad in (1.5, True, "3"):                                       # not a position, nor a list of them
        with pytest.raises(TypeError, match="positions is a position"):
            restored(model, CLEAN, CORRUPTED, names.resid(0), DIFF, positions=bad)
    assert restored(model, CLEAN, CORRUPTED, names.resid(0), DIFF, positions=torch.tensor(-1)) == \
        restored(model, CLEAN, CORRUPTED, names.resid(0), DIFF, positions=-1)   # a 0-d tensor is a position


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


def _random_model(**kw):
    from helpers.model.config import Config
    from helpers.train import fresh_model

    model = fresh_model(Config(**{"n_vocab": 40, "d_model": 24, "n_ctx": 16, "n_layers": 3, "n_heads": 3,
                                  "d_mlp": 48, **kw}), seed=0)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():            # weights far from init, so every head moves the metric
            p.copy_(torch.randn(p.shape, generator=g) * 0.4)
    return model


SHAPES = {"GPT-2's kind": dict(activation="gelu_tanh", attn_biases=True, tied_unembed=True),
          "attention only, no LayerNorm": dict(d_mlp=0, layernorm=False),
          "no W_pos": dict(positional=False)}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("positions", [None, [-1], [3, 9], 6, [0]])
def test_the_head_sweep_equals_one_full_patched_pass_per_head(shape, positions):
    """patch_heads runs a layer's heads together, from the corrupted run's stream, on the columns from the first
    patched position on; each entry is still what a full forward pass with that one head patched gives."""
    model = _random_model(**SHAPES[shape])
    g = torch.Generator().manual_seed(2)
    clean = torch.randint(0, 40, (3, 12), generator=g)
    corrupted = clean.clone()
    corrupted[:, 3] = (corrupted[:, 3] + 5) % 40
    metric = logit_difference(7, 11)
    sweep = patch_heads(model, clean, corrupted, metric, positions)
    one_by_one = torch.tensor([[restored(model, clean, corrupted, names.head(layer, h), metric, positions)
                                for h in range(3)] for layer in range(3)])
    assert sweep.shape == (3, 3)
    torch.testing.assert_close(sweep, one_by_one, atol=1e-4, rtol=1e-4)
    if positions == [0]:                     # before the token that differs, the two runs are the same: nothing back
        assert sweep.abs().max() < 1e-4
    else:
        assert one_by_one.abs().max() > 0.05


def test_the_head_sweep_reads_every_column_a_metric_may_read():
    """A metric may read any position: the columns before the patch are the corrupted run's, the rest recomputed."""
    model = _random_model()
    clean = torch.tensor([1, 5, 9, 2, 7, 3, 8, 4])
    corrupted = clean.clone()
    corrupted[1] = 30

    def spread(logits):                              # reads positions 2, 5 and 7, every text
        return float(logits[..., 0, [2, 5, 7]].sum() - logits[..., 1, [2, 5, 7]].sum())
    sweep = patch_heads(model, clean, corrupted, spread, positions=[5, 7])
    one_by_one = torch.tensor([[restored(model, clean, corrupted, names.head(layer, h), spread, [5, 7])
                                for h in range(3)] for layer in range(3)])
    torch.testing.assert_close(sweep, one_by_one, atol=1e-4, rtol=1e-4)


def test_inside_another_intervention_or_without_the_mask_the_sweep_takes_the_long_way(monkeypatch):
    """With a head switched off around the call, or the causal mask off (a later token changes an earlier one), every
    head gets its own full pass, and the answers are those of the model as it is. Patched at position 3 of 8, where
    the shortcut would be far off without the mask (a later column changes an earlier one), and the shortcut itself
    made to fail, so the test tells which way was taken; so does a model without layers."""
    from helpers.interp import patching
    from helpers.interp.ablation import ablated
    from helpers.model.transformer import mask_switched

    model = _random_model()
    clean = torch.tensor([1, 5, 9, 2, 7, 3, 8, 4])
    corrupted = clean.clone()
    corrupted[2] = 30
    metric = logit_difference(7, 11)
    sweep_ran = []
    real_sweep = patching._head_sweep
    monkeypatch.setattr(patching, "_head_sweep", lambda *a: sweep_ran.append(1) or real_sweep(*a))
    for context in (lambda: ablated(model, heads=[(0, 1)]), lambda: mask_switched(model, on=False)):
        with context():
            sweep = patch_heads(model, clean, corrupted, metric, positions=[3])
            one_by_one = torch.tensor([[restored(model, clean, corrupted, names.head(layer, h), metric, [3])
                                        for h in range(3)] for layer in range(3)])
        torch.testing.assert_close(sweep, one_by_one, atol=1e-5, rtol=1e-5)
    assert not sweep_ran and not any(p.fns for p in model.hook_points.values())
    patch_heads(model, clean, corrupted, metric, positions=[3])
    assert sweep_ran == [1]                          # and without them it takes the shortcut


def test_run_from_and_stream_into_name_a_layer_that_is_not_there():
    model = _random_model()  # 3 layers
    x0 = torch.zeros(1, model.cfg.d_model, 4)
    assert model.run_from(3, x0).shape == (1, model.cfg.n_vocab, 4)   # n_layers: the unembedding alone
    for bad in (4, -1, 1.0, True):
        with pytest.raises(ValueError, match="from 0 to n_layers = 3"):
            model.run_from(bad, x0)
        with pytest.raises(ValueError, match="from 0 to n_layers = 3"):
            model.stream_into(bad)
    with pytest.raises(ValueError, match=r"\(batch, d_model"):
        model.run_from(0, torch.tensor([[1, 2, 3]]))


def test_the_causal_mask_of_the_last_m_queries_is_the_last_m_rows():
    from helpers.model.attention import masked

    S = torch.randn(2, 5, 7, 7)
    for m in (7, 3, 1):
        torch.testing.assert_close(masked(S[..., 7 - m:, :]), masked(S)[..., 7 - m:, :], rtol=0, atol=0)
