"""Notebook 10's circuit explorer: a head's QK row and OV column for a token, a hand-made copying head seen as
one, and bad tokens, heads and models named."""

import pytest
import torch

from helpers.lessons.induction import ALPHABET, config
from helpers.train import fresh_model


@pytest.fixture
def chars_model():
    """An untrained model of notebook 09's shape with two layers, seed 1."""
    return fresh_model(config(n_layers=2), seed=1)


@pytest.fixture(scope="module")
def copying_model():
    """A 2-layer model of notebook 09's shape whose layer-1 head 0 copies the first d_head tokens exactly,
    made by hand (W_U W_OV W_E = diag(1, ..., 1, 0, ..., 0)), so the explorer's answer is known without training."""
    model = fresh_model(config(n_layers=2), seed=0)
    with torch.no_grad():
        attn = model.blocks[1].attn
        d_head, d_model = attn.W_V.shape[1:]
        E = torch.linalg.qr(torch.randn(d_model, d_model, generator=torch.Generator().manual_seed(0)))[0]
        model.embed.W_E.copy_(E)                       # 64 orthonormal token directions
        model.unembed.W_U.copy_(E.T)                   # W_U W_E = I
        attn.W_V[0].copy_(E.T[:d_head])                # reads the first d_head token directions
        attn.W_O[0].copy_(E[:, :d_head])               # and writes them back
    return model


def test_explorer_shows_qk_row_and_ov_column(chars_model):
    from helpers.interp.circuits import token_ov_table, token_qk_table
    from helpers.widgets.circuits import CircuitExplorer

    model = chars_model
    ex = CircuitExplorer(model, layer=1, head=1, token="q")
    qk, ov = token_qk_table(model, 1, 1), token_ov_table(model, 1, 1)
    a = ALPHABET.index("q")
    assert ex.last_state["layer"] == 1 and ex.last_state["head"] == 1 and ex.last_state["token"] == "q"
    assert ex.last_state["top_key"] == ALPHABET[int(qk[a].argmax())]
    assert ex.last_state["top_written"] == ALPHABET[int(ov[:, a].argmax())]
    assert 'class="gt-caption"' in ex.caption.value and "data-state=" in ex.caption.value
    assert "layer=1;head=1;text=q;token=q" in ex.caption.value
    ex.layer.value = 0
    ex.head.value = 0
    ex.token.value = "Z"
    assert ex.last_state["layer"] == 0 and ex.last_state["token"] == "Z"
    assert ex.last_state["top_written"] == ALPHABET[int(token_ov_table(model, 0, 0)[:, ALPHABET.index("Z")].argmax())]
    assert ex.seconds  # each redraw timed for the bench, which prints the figures


def test_explorer_sees_a_copying_head(copying_model):
    from helpers.widgets.circuits import CircuitExplorer

    ex = CircuitExplorer(copying_model, layer=1, head=0, token="a")
    assert ex.last_state["top_written"] == "a"
    assert "itself" in ex.caption.value


@pytest.mark.parametrize("text, message", [("", "empty"), ("é", "is not a token"), ("the ü", "is not a token")])
def test_explorer_bad_token_goes_to_the_caption(chars_model, text, message):
    from helpers.widgets.circuits import CircuitExplorer

    ex = CircuitExplorer(chars_model, token="a")
    ex.token.value = text
    assert message in ex.last_error
    assert "gt-error" in ex.caption.value and ex.token.value == text   # the text is kept
    ex.token.value = "b"
    assert not ex.last_error and ex.last_state["token"] == "b"


def test_explorer_reads_the_last_character_of_a_longer_text(chars_model):
    from helpers.widgets.circuits import CircuitExplorer

    ex = CircuitExplorer(chars_model, token="the")
    assert not ex.last_error and ex.last_state["text"] == "the" and ex.last_state["token"] == "e"
    assert "3 tokens" in ex.caption.value and "the last one" in ex.caption.value


def test_explorer_rejects_bad_heads_and_models(chars_model):
    from helpers.model.config import Config
    from helpers.widgets.circuits import CircuitExplorer

    model = chars_model
    with pytest.raises(ValueError):
        CircuitExplorer(model, layer=2, head=0)
    with pytest.raises(ValueError):
        CircuitExplorer(model, layer=0, head=5)
    with pytest.raises(ValueError, match="n_vocab"):
        CircuitExplorer(fresh_model(Config(n_vocab=10, d_model=8, n_ctx=4, n_layers=1, n_heads=1)), layer=0, head=0)
