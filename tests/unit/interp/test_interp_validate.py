"""helpers.interp.validate: every index that does not exist is named in the post's terms."""

import numpy as np
import pytest
import torch

from helpers.interp import validate
from helpers.model.config import Config
from helpers.train import fresh_model

MODEL = fresh_model(Config(n_vocab=10, d_model=8, n_ctx=4, n_layers=2, n_heads=4, d_mlp=16))


def test_indices_of_any_integer_type_are_accepted():
    assert validate.check_head(MODEL, np.int64(1), torch.tensor(3)) == (1, 3)
    assert validate.check_neuron(MODEL, 0, 15) == (0, 15)
    assert validate.check_position(5, -1) == 4 and validate.check_position(5, 0) == 0
    assert validate.check_token_id(MODEL, 9) == 9


@pytest.mark.parametrize("call, message", [
    (lambda: validate.check_layer(MODEL, 3),
     "layer 3 does not exist: this model has n_layers = 2 \\(layers 0 ... 1\\)"),
    (lambda: validate.check_layer(MODEL, -1), "layer -1 does not exist"),
    (lambda: validate.check_head(MODEL, 0, 4), "head 4 does not exist: layer 0 has n_heads = 4 \\(heads 0 ... 3\\)"),
    (lambda: validate.check_neuron(MODEL, 1, 16), "neuron 16 does not exist: the MLP of layer 1 has d_mlp = 16"),
    (lambda: validate.check_position(3, 3), "position 3 does not exist: the context has n = 3 tokens"),
    (lambda: validate.check_position(3, -4), "position -4 does not exist"),
    (lambda: validate.check_token_id(MODEL, 10), "token id 10 is outside the vocabulary \\(0 ... 9, n_vocab = 10\\)"),
    (lambda: validate.batch_of_tokens(MODEL, [1, 2, 3, 4, 5]),
     "the context has n = 5 tokens but this model's n_ctx is 4"),
    (lambda: validate.check_layer(MODEL, 0, needs="embedding"), "needs must be 'attention' or 'mlp'"),
])
def test_what_does_not_exist_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("call", [lambda: validate.check_layer(MODEL, 1.0), lambda: validate.check_head(MODEL, 0, True),
                                  lambda: validate.check_token_id(MODEL, "the"), lambda: validate.check_model("attn1")])
def test_wrong_types_are_named(call):
    with pytest.raises(TypeError, match="whole number|Transformer"):
        call()
