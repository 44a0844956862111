"""Notebook 01-02 widgets: the right picture for each control value, clear messages for bad input,
and the learner's text kept. (The browser test checks they render and respond in JupyterLab.)"""

import pytest

from helpers import ngrams
from helpers.data import default_data
from helpers.model import Config
from helpers.train import fresh_model
from helpers.widgets.embeddings import SoftmaxPlayground, ZeroLayerVsBigram
from helpers.widgets.ngrams import NgramExplorer


@pytest.fixture(scope="module")
def data():
    return default_data()


def test_ngram_explorer_follows_its_controls(data):
    e = NgramExplorer(data, prompt="the children of", n=2)
    assert 'data-state="prompt=the children of;n=2;T=1.0;order=2"' in e.caption.value
    first = e.view.value
    e.n.value = 3
    assert e.last_state["n"] == 3 and e.last_state["order"] == 3
    assert e.view.value != first
    assert "israel" in e.caption.value  # 3-gram continuation of "children of"


@pytest.mark.parametrize("prompt, message", [
    ("", "prompt is empty"),
    ("   \t ", "prompt is empty"),
])
def test_ngram_explorer_bad_prompt_shows_message_and_keeps_text(data, prompt, message):
    e = NgramExplorer(data)
    e.prompt.value = prompt
    assert "gt-error" in e.caption.value and message in e.caption.value
    assert e.prompt.value == prompt  # nothing the learner typed is lost
    e.prompt.value = "thus saith the"
    assert "gt-error" not in e.caption.value  # and it recovers


def test_ngram_explorer_unknown_words_and_backoff(data):
    e = NgramExplorer(data, prompt="the zyzzyva quux", n=3)
    assert "shown as &lt;unk&gt;" in e.caption.value and "zyzzyva" in e.caption.value
    e.prompt.value = "lord lord lord lord"
    e.n.value = 5
    assert e.last_state["order"] < 5 and "backed off" in e.caption.value


def test_zero_layer_vs_bigram(data):
    model = fresh_model(Config(data.n_vocab, 8, positional=False))
    P = ngrams.normalize_columns(ngrams.bigram_counts(data.train_ids, data.n_vocab))
    e = ZeroLayerVsBigram(model, P, data.tokenizer, token="holy")
    assert e.last_state == {"token": "holy", "k": 8}
    for bad, message in [("", "Type a token"), ("zyzzyva", "not in the vocabulary"),
                         ("the lord", "One token at a time")]:
        e.token.value = bad
        assert "gt-error" in e.caption.value and message in e.caption.value
        assert e.token.value == bad
    e.token.value = "Burnt "
    assert e.last_state["token"] == "burnt"


def test_softmax_playground_state_and_probabilities():
    s = SoftmaxPlayground()
    s.sliders[0].value = 5.0
    s.temperature.value = 0.1
    assert s.last_state["lord"] == 5.0 and s.last_state["T"] == 0.1
    assert "the largest is 1.00" in s.caption.value


def test_ngram_explorer_short_prompt_is_not_called_unseen(data):
    e = NgramExplorer(data, prompt="the", n=3)
    assert e.last_state["order"] == 2
    assert "only 1 token" in e.caption.value and "never occurs" not in e.caption.value


def test_every_explorer_and_named_box_carries_the_slider_names(data):
    """The front-end code that names slider handles (helpers.widgets.a11y) sits inside every explorer's box, whose
    class it looks for, and inside a box made by `named`; what it does in the page is tested in tests/browser."""
    import ipywidgets as W

    from helpers.widgets.a11y import ESM, SliderNames, named

    ex = NgramExplorer(data)
    assert "gt-explorer" in ex.box._dom_classes and ".gt-explorer" in ESM
    assert sum(isinstance(c, SliderNames) for c in ex.box.children) == 1
    s = W.IntSlider(description="n")
    box = named(s)
    assert box.children[0] is s and isinstance(box.children[-1], SliderNames)
