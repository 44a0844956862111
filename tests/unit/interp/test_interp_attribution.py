"""helpers.interp.attribution: the terms of a logit, by hand on a tiny model; they always add up to the
model's logit; with no later layer and no final LayerNorm a head's term is exactly what zeroing it removes."""

import pytest
import torch
from support.interp_models import uniform_model

from helpers.interp.ablation import ablated
from helpers.interp.attribution import direct_logit_attribution
from helpers.model import names
from helpers.model.config import Config
from helpers.train import fresh_model


def test_terms_by_hand():
    model = uniform_model()
    # tokens [0, 1, 0]: x0_3 = (1, 0); o_3 = mean((1,0), (0,1), (1,0)) = (2/3, 1/3); logit 0 = 5/3
    a = direct_logit_attribution(model, [0, 1, 0], target=0)
    assert float(a.embed) == pytest.approx(1.0) and float(a.heads[0, 0]) == pytest.approx(2 / 3)
    assert float(a.pos) == 0 and float(a.ln_beta) == 0 and a.neurons.shape == (1, 0) and not a.ln_frozen
    assert float(a.logit) == pytest.approx(5 / 3) and float(a.total()) == pytest.approx(5 / 3)
    d = direct_logit_attribution(model, [0, 1, 0], target=0, minus=1, position=1)  # x0_2 = (0,1), o_2 = (.5,.5)
    assert float(d.embed) == pytest.approx(-1.0) and float(d.heads[0, 0]) == pytest.approx(0.0)
    assert d.terms() == pytest.approx({"W_E t": -1.0, "W_pos": 0.0, names.head(0, 0): 0.0})


def test_neurons_by_hand():
    model = uniform_model(mlp=True)  # z = ReLU(x1) = x1 >= 0 here, m = z
    a = direct_logit_attribution(model, [0, 1, 0], target=1)  # x1_3 = (5/3, 1/3): neuron 1 adds 1/3 to logit 1
    torch.testing.assert_close(a.neurons, torch.tensor([[0.0, 1 / 3]]))
    assert float(a.logit) == pytest.approx(2 / 3) and float(a.mlp_bias[0]) == 0
    assert set(a.terms()) == {"W_E t", "W_pos", names.head(0, 0), names.neuron(0, 0), names.neuron(0, 1),
                              names.mlp_bias(0)}


def _big(cfg, seed):
    model = fresh_model(cfg, seed)
    with torch.no_grad():
        for p in model.parameters():
            p.normal_()  # larger weights than at initialisation, so the effects are not tiny
    return model


def test_a_term_is_what_zeroing_it_removes_when_nothing_reads_it_later():
    """Nothing after it and no final LayerNorm: a head's (or a last-layer neuron's) direct effect is its
    whole effect."""
    ids, target = torch.tensor([3, 7, 1, 9, 4]), 5
    model = _big(Config(n_vocab=30, d_model=16, n_ctx=8, n_layers=1, n_heads=4), seed=1)
    a = direct_logit_attribution(model, ids, target)
    for h in range(4):
        with ablated(model, heads=[(0, h)]), torch.no_grad():
            drop = a.logit - model(ids)[target, -1]
        assert float(drop) == pytest.approx(float(a.heads[0, h]), abs=1e-3)
    model = _big(Config(n_vocab=30, d_model=16, n_ctx=8, n_layers=1, n_heads=4, d_mlp=32), seed=1)
    a = direct_logit_attribution(model, ids, target)
    firing = int(a.neurons[0].abs().argmax())
    for j in (firing, 11):
        with ablated(model, neurons=[(0, j)]), torch.no_grad():
            drop = a.logit - model(ids)[target, -1]
        assert float(drop) == pytest.approx(float(a.neurons[0, j]), abs=1e-3)
    assert float(a.neurons[0, firing]) != 0
    with ablated(model, heads=[(0, 0)]), torch.no_grad():  # the MLP reads the head: its effect is not only direct
        assert float(a.logit - model(ids)[target, -1]) != pytest.approx(float(a.heads[0, 0]), abs=1e-3)


def test_the_terms_add_up_with_a_final_layernorm_and_a_batch():
    model = _big(Config(n_vocab=30, d_model=16, n_ctx=8, n_layers=2, n_heads=4, d_mlp=32, layernorm=True), seed=2)
    ids = torch.tensor([[3, 7, 1, 9, 4], [1, 1, 2, 2, 3]])
    a = direct_logit_attribution(model, ids, target=5, minus=6, position=2)
    assert a.heads.shape == (2, 2, 4) and a.neurons.shape == (2, 2, 32) and a.ln_frozen
    with torch.no_grad():
        logits = model(ids)
    torch.testing.assert_close(a.logit, logits[:, 5, 2] - logits[:, 6, 2])
    torch.testing.assert_close(a.total(), a.logit, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(a.ln_beta, (model.unembed.W_U[5] - model.unembed.W_U[6]) @ model.ln_final.beta.detach()
                               * torch.ones(2))
    # the frozen scale: the embedding's term is W_U . (gamma * (c - mean c)) / sigma, sigma from this input
    _, cache = model.run_with_cache(ids)
    x = cache[cache.resid_names[-1]][0, :, 2]
    sigma = torch.sqrt(x.var(unbiased=False) + model.ln_final.eps)
    c = model.embed.W_E[:, ids[0, 2]].detach()
    u = (model.unembed.W_U[5] - model.unembed.W_U[6]).detach()
    by_hand = u @ (model.ln_final.gamma.detach() * (c - c.mean())) / sigma
    assert float(a.embed[0]) == pytest.approx(float(by_hand), abs=1e-5)


def test_attn1_keeps_the_attribution_measured_when_the_series_was_planned():
    """Per-head attribution for "earth" on notebook 03's sentence, attn1: 0.86, -0.03, 0.60, 1.89, the figures
    measured on the shipped checkpoint before the notebooks were written (a changed model or attribution moves them)."""
    from helpers.data import default_data
    from helpers.model import checkpoint
    from helpers.tokens import prepare_prompt

    tok = default_data().tokenizer
    model, _ = checkpoint.load_named("attn1")
    ids = prepare_prompt("in the beginning god created the heaven and the", tok, model.cfg.n_ctx).ids
    a = direct_logit_attribution(model, ids, tok.vocab.index("earth"))
    assert [round(v, 2) for v in a.heads[0].tolist()] == [0.86, -0.03, 0.60, 1.89]


def test_bad_input_is_explained():
    model = uniform_model()
    with pytest.raises(ValueError, match="target token id 3 is outside the vocabulary \\(0 ... 2, n_vocab = 3\\)"):
        direct_logit_attribution(model, [0, 1], target=3)
    with pytest.raises(ValueError, match="token id to subtract -1 is outside"):
        direct_logit_attribution(model, [0, 1], target=0, minus=-1)
    with pytest.raises(ValueError, match="position 2 does not exist: the context has n = 2 tokens"):
        direct_logit_attribution(model, [0, 1], target=0, position=2)
    with pytest.raises(ValueError, match="n_ctx is 6"):
        direct_logit_attribution(model, [0] * 7, target=0)
    with pytest.raises(ValueError, match="token id 5 is outside the vocabulary"):
        direct_logit_attribution(model, [0, 5], target=0)
    with pytest.raises(TypeError, match="target token id must be a whole number"):
        direct_logit_attribution(model, [0, 1], target=1.0)
    with pytest.raises(ValueError, match="one text"):
        direct_logit_attribution(model, [[0, 1], [1, 0]], target=0).terms()
