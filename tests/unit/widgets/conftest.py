"""Models the explorer tests build alike (tests/unit/conftest.py has the ones other unit tests share too)."""

import pytest

from helpers.model.config import Config
from helpers.train import fresh_model


@pytest.fixture
def zero_layer_word_model():
    """A zero-layer model on the series' words (d_model 8, n_ctx 4), untrained, seed 0: an explorer's first rung."""
    from helpers.data import default_data

    return fresh_model(Config(n_vocab=default_data().n_vocab, d_model=8, n_ctx=4), seed=0)
