"""The attention explorers: right state in the caption, learner mistakes shown not raised, fast redraws."""

import statistics

import pytest
import torch

from helpers.data import default_data
from helpers.model.config import Config
from helpers.train import fresh_model
from helpers.widgets.attention import LastTokenExplorer, PatternExplorer


@pytest.fixture(scope="module")
def model_and_tok():
    tok = default_data().tokenizer
    cfg = Config(n_vocab=tok.n_vocab, d_model=64, n_ctx=32, n_layers=2, n_heads=4)
    return fresh_model(cfg, seed=0), tok


def test_pattern_explorer_state_and_controls(model_and_tok):
    ex = PatternExplorer(*model_and_tok, text="in the beginning god created the heaven")
    assert 'data-state="layer=0;head=0;mask=on;query=6;text=in the beginning god created the heaven"' \
        in ex.caption.value
    assert ex.view.value.count("<tr") == 1 + 7  # header + one row per token
    ex.layer.value, ex.head.value, ex.mask.value = 1, 3, False
    assert "layer=1;head=3;mask=off" in ex.caption.value and "peeking" in ex.caption.value
    ex.query.value = 2
    assert "query=2" in ex.caption.value and "Query 3" in ex.caption.value
    ex.text.value = "and god said"  # shorter text: the query row follows into range
    assert ex.query.max == 2 and "query=2" in ex.caption.value


def test_mask_on_gives_no_weight_to_the_future(model_and_tok):
    ex = PatternExplorer(*model_and_tok, text="and god said , let there be light")
    assert "hatched" in ex.caption.value and "peeking" not in ex.caption.value


def test_learner_mistakes_show_in_the_caption(model_and_tok):
    for cls in (PatternExplorer, LastTokenExplorer):
        ex = cls(*model_and_tok, text="   ")
        assert "gt-error" in ex.caption.value and "empty" in ex.caption.value
        ex.text.value = "the zzyzx of " + "the lord " * 30
        assert "gt-error" not in ex.caption.value
        assert "were cut" in ex.caption.value and "&lt;unk&gt;" in ex.caption.value


def test_last_token_explorer(model_and_tok):
    ex = LastTokenExplorer(*model_and_tok, text="and god said , let there be")
    assert 'data-state="head=0;n=7;text=and god said , let there be"' in ex.caption.value
    assert "without attention" in ex.caption.value and "with attention" in ex.view.value
    ex.head.value = 2
    assert "head=2" in ex.caption.value


def test_pattern_explorer_redraws_fast(model_and_tok):
    """Python-side cost of a redraw at the full context (n_ctx = 32); the browser adds its paint."""
    torch.set_num_threads(1)
    ex = PatternExplorer(*model_and_tok, text="the lord " * 16)
    for h in [1, 2, 3, 0] * 5:
        ex.head.value = h
    assert statistics.median(ex.seconds) < 0.1


def test_padding_explorer():
    from helpers.widgets.attention import PaddingExplorer

    ex = PaddingExplorer(P=0.0)
    assert 'data-state="P=0.0"' in ex.caption.value
    ex.P.value = -30.0
    assert "[0.2689, 0.7311, 0.0000]" in ex.caption.value


def test_heads_explorer(model_and_tok):
    from helpers.widgets.attention import HeadsExplorer

    ex = HeadsExplorer(*model_and_tok, text="and god said")
    assert 'data-state="layer=0;n=3;text=and god said"' in ex.caption.value
    assert ex.view.value.count("gt-pattern") == 4
    ex.layer.value = 1
    assert "layer=1" in ex.caption.value
    ex.text.value = ""
    assert "gt-error" in ex.caption.value and "empty" in ex.caption.value
