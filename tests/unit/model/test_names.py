"""Activation names are built in one place (helpers.model.names) and the model's cache uses exactly them."""

import pytest
import torch

from helpers.model import names
from helpers.train import fresh_model


def test_keys_have_the_posts_names():
    assert names.key(0, "A") == "L0.A" and names.key(1, "z") == "L1.z" and names.key(12, "o_heads") == "L12.o_heads"
    assert names.resid(0) == "x0" and names.resid_index("x12") == 12
    assert names.head(0, 2) == "L0.h2" and names.neuron(1, 17) == "L1.n17" and names.mlp_bias(3) == "L3.b_2"
    assert names.is_resid("x3") and not names.is_resid("x") and not names.is_resid("logits")


def test_a_full_model_caches_exactly_the_named_activations(small_cfg):
    model = fresh_model(small_cfg)
    _, cache = model.run_with_cache(torch.tensor([1, 2, 3]))
    expected = {names.TOKENS, names.LOGITS, names.PROBS} | {names.resid(i) for i in range(5)}
    expected |= {names.key(layer, n) for layer in (0, 1) for n in names.ATTENTION + names.MLP}
    assert set(cache) == expected


def test_bad_names_are_explained():
    with pytest.raises(ValueError, match="no activation called 'pattern'.*q, k, v, S, A"):
        names.key(0, "pattern")
    with pytest.raises(ValueError, match="block number"):
        names.key(-1, "A")
    with pytest.raises(ValueError, match="numbered 0, 1"):
        names.resid(True)
    with pytest.raises(ValueError, match="head must be a number"):
        names.head(0, -1)
    with pytest.raises(ValueError, match="not a residual-stream name"):
        names.resid_index("L0.A")
