"""Models and configs that unit tests in several files build alike, as fixtures: built afresh for each test that
asks (tests scale, train and edit them) unless a scope says otherwise, with the config and seed the tests wrote
inline before. A test whose point is a shape of its own still builds it in the test."""

import pytest

from helpers.model.config import Config


@pytest.fixture
def small_cfg() -> Config:
    """Two layers of two heads, an MLP and LayerNorm (n_vocab 11, d_model 8, n_ctx 6): every kind of activation in a
    model built in milliseconds."""
    return Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=2, n_heads=2, d_mlp=16, layernorm=True)


@pytest.fixture
def small_attention_cfg() -> Config:
    """Three layers of two heads, attention only (n_vocab 11, d_model 8, n_ctx 6): a head of layer 0 reaches layer 2
    through layer 1 and around it."""
    return Config(n_vocab=11, d_model=8, n_ctx=6, n_layers=3, n_heads=2)


@pytest.fixture
def larger_than_any_series_model() -> Config:
    """A config larger than any model the series trains (GPT-2 Small aside): the explorers' cost rules must not
    split its redraws."""
    return Config(n_vocab=2000, d_model=128, n_ctx=128, n_layers=4, n_heads=4, d_mlp=512)


@pytest.fixture(scope="module")
def trained():
    """Notebook 09's induction model as shipped (checkpoint induction_s0, the recipe and seed a learner trains):
    the trained model exercise 9.3's check reports and exercise 10.4's check and explorer compare with. One per test
    file, read only."""
    from helpers.model import checkpoint

    return checkpoint.load_named("induction_s0")[0]
